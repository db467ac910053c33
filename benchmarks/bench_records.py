"""The record seams on the real path: fresh input every call, beside the warm figure.

    .venv/bin/python benchmarks/bench_records.py [--calls N] [--repeat N]

Each "fresh" row feeds a new input per call, built before the clock starts:

- ``propose, JSON dicts``: a proposal and a checkpoint as a module passes them
  (parsed JSON, schema checked at the boundary), with a unique content
  summary, source ref and reasoning per call;
- ``review accept``: accepting a candidate packet proposed for that call alone
  (unique summary, so a new ``candidate_ref``);
- ``parse stored record``: one ``reward_memory_active_record_v1`` from provider
  bytes never seen before (unique summary, candidate, activation, review and
  source refs, so no verdict or parse cache can answer), through
  :func:`reward_memory.records.active.load_stored`; ``..., own timestamps``
  gives every record its own activation and observation time too;
- ``import reward_memory``: a whole ``python -c "import reward_memory"`` minus a
  bare interpreter (and the whole process beside it), bytecode caches enabled
  as on a user's machine.

The "warm" rows repeat one prepared input (the caches this library keeps then
answer). Figures are medians over ``--repeat`` interleaved rounds of CPU time
(``time.thread_time_ns``) per call, so a busy shared machine slows them less.
Targets (issue 11): propose from JSON <= 50 us, review accept <= 7 us, parsing
one stored record <= 15 us, import <= 0.06 s, warm propose (typed) <= 15 us.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from datetime import UTC, datetime
from typing import Any

from _util import report, wall_median

from reward_memory.adapters.issue_fix import (
    issue_fix_proposal,
    verified_contributor_checkpoint,
    verified_contributor_event,
)
from reward_memory.candidates import propose, review
from reward_memory.records._plain import to_plain
from reward_memory.records.active import (
    ActivationLineage,
    ActiveRecord,
    ReviewSummary,
    load_stored,
)
from reward_memory.records.candidate import ReviewDecision
from reward_memory.records.envelope import (
    Confidence,
    Expiry,
    Privacy,
    RecordAuthority,
    RecordScope,
    RecordSource,
)

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)
TARGETS = {
    "propose, JSON dicts (fresh)": 50.0,
    "review accept (fresh candidate)": 7.0,
    "parse stored record (fresh bytes)": 15.0,
    "propose, typed (warm)": 15.0,
    "import reward_memory": 0.06,
}
ACCEPT = ReviewDecision(
    decision="accept",
    reviewer_ref="github:user:maintainer",
    review_ref="review:bench:accept",
    reasoning_summary="The compact evidence and scope were reviewed.",
)


def _proposal_dicts(count: int, seed: int) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    base = to_plain(issue_fix_proposal(verified_contributor_event()))
    checkpoint = to_plain(verified_contributor_checkpoint())
    text = json.dumps(base)
    made = []
    for index in range(seed, seed + count):
        data = json.loads(text)
        data["content_summary"] = f"Keep fix {index} within the affected module and its tests."
        data["source"]["source_ref"] = f"github:example/repository#{index}:comment:1"
        data["reasoning"]["summary"] = f"Maintainer correction {index} narrowed the patch."
        made.append((data, json.loads(json.dumps(checkpoint))))
    return made


def _stored(index: int, *, unique_times: bool = False) -> bytes:
    activated, observed = "2026-02-01T00:00:00Z", "2026-01-31T12:00:00Z"
    if unique_times:  # as a real corpus has them: every record written at its own second
        day, hour, minute, second = 1 + index % 28, index % 24, index % 60, index // 60 % 60
        activated = f"2026-02-{day:02d}T{hour:02d}:{minute:02d}:{second:02d}Z"
        observed = activated.replace("2026-02", "2026-01", 1)
    record = ActiveRecord(
        activation_ref=f"activation:{index:020x}",
        activated_at=activated,
        corpus_id="review_policy",
        candidate_ref=f"candidate:{index:020x}",
        content_summary=f"Reviewer summary {index}: keep review comments short and concrete.",
        class_id="soft_preference",
        source=RecordSource(
            source_kind="maintainer_feedback",
            source_ref=f"review:{index}:comment",
            actor_ref="actor:maintainer",
            actor_role="maintainer",
            observed_at=observed,
        ),
        scope=RecordScope(
            workspace_ref="workspace:main",
            project_ref="project:alpha",
            surface_ids=("reviewer_artifact.summary",),
        ),
        authority=RecordAuthority(level="advisory"),
        confidence=Confidence(level="high", basis="explicit maintainer review"),
        lifecycle_state="active",
        expiry=Expiry(expires_at="2026-12-31T00:00:00Z"),
        privacy=Privacy(visibility="public_safe", retention_class="durable_until_revoked"),
        review=ReviewSummary(
            reviewer_ref="reviewer:bob", review_ref=f"review:{index}", reasoning_summary="scoped"
        ),
        activation_lineage=ActivationLineage(review_ref=f"review:{index}"),
    )
    return json.dumps(to_plain(record), sort_keys=True).encode("utf-8")


def _per_call_us(call: Any, inputs: list[Any]) -> float:
    start = time.thread_time_ns()
    for item in inputs:
        call(item)
    return (time.thread_time_ns() - start) / len(inputs) / 1e3


def _import_seconds(runs: int) -> tuple[float, float]:
    """(the import alone, the whole process): medians of wall time."""
    python = sys.executable
    bare = wall_median([python, "-c", "pass"], runs=runs)
    full = wall_median([python, "-c", "import reward_memory"], runs=runs)
    return max(0.0, full - bare), full


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=400, help="fresh inputs per round")
    parser.add_argument("--repeat", type=int, default=9, help="interleaved rounds")
    parser.add_argument("--import-runs", type=int, default=15)
    args = parser.parse_args()
    calls = args.calls
    proposal = issue_fix_proposal(verified_contributor_event())
    checkpoint = verified_contributor_checkpoint()
    warm_dict = _proposal_dicts(1, 0)[0]
    warm_packet = propose(proposal, checkpoint, now=NOW)
    warm_bytes = _stored(0)
    # Compile the schema checks and the builders once (the process's first call).
    propose(*warm_dict, now=NOW)
    load_stored(warm_bytes)

    samples: dict[str, list[float]] = {name: [] for name in TARGETS if "import" not in name}
    samples.update(
        {
            "propose, JSON dicts (warm)": [],
            "review accept (warm)": [],
            "parse stored record (fresh bytes, own timestamps)": [],
            "parse stored record (warm)": [],
        }
    )
    seed = 1_000
    for _ in range(args.repeat):
        seed += calls
        dicts = _proposal_dicts(calls, seed)
        packets = [propose(data, cp, now=NOW) for data, cp in _proposal_dicts(calls, seed + 10**6)]
        blobs = [_stored(seed + index) for index in range(calls)]
        repeat_n = [None] * calls
        samples["propose, JSON dicts (fresh)"].append(
            _per_call_us(lambda pair: propose(pair[0], pair[1], now=NOW), dicts)
        )
        samples["propose, JSON dicts (warm)"].append(
            _per_call_us(lambda _: propose(warm_dict[0], warm_dict[1], now=NOW), repeat_n)
        )
        samples["review accept (fresh candidate)"].append(
            _per_call_us(lambda packet: review(packet, ACCEPT, now=NOW), packets)
        )
        samples["review accept (warm)"].append(
            _per_call_us(lambda _: review(warm_packet, ACCEPT, now=NOW), repeat_n)
        )
        samples["parse stored record (fresh bytes)"].append(_per_call_us(load_stored, blobs))
        timed = [_stored(seed + index, unique_times=True) for index in range(calls)]
        samples["parse stored record (fresh bytes, own timestamps)"].append(
            _per_call_us(load_stored, timed)
        )
        samples["parse stored record (warm)"].append(
            _per_call_us(lambda _: load_stored(warm_bytes), repeat_n)
        )
        samples["propose, typed (warm)"].append(
            _per_call_us(lambda _: propose(proposal, checkpoint, now=NOW), repeat_n)
        )
    rows = [
        {"what": name, "value": statistics.median(values), "unit": "us"}
        for name, values in samples.items()
        if values
    ]
    alone, whole = _import_seconds(args.import_runs)
    rows.append({"what": "import reward_memory", "value": alone, "unit": "s"})
    rows.append({"what": "python -c 'import reward_memory' (process)", "value": whole, "unit": "s"})
    return report("records", rows, targets=TARGETS)


if __name__ == "__main__":
    raise SystemExit(main())
