"""Per-call medians of application (``apply``) and corpus health, fresh input per call.

    .venv/bin/python benchmarks/bench_apply_health.py [--calls N]

Rows (CPU time of the calling thread, ``time.thread_time_ns``, medians):

- ``apply, fresh session``: ``apply`` on a session no earlier call has seen (each
  from its own recall over its own store of 3 records nobody had read), with the
  model callback returning a JSON-ready decision naming a recalled ref; the
  sessions are built before the clock starts.
- ``apply, warm``: the same session applied again and again.
- ``health from JSON, fresh``: a ``reward_memory_corpus_health_request_v0``
  given as parsed JSON with its own observation per call, typed at the
  boundary (one strict pass: :func:`reward_memory._boundary.strict_packet`) and
  classified.
- ``health, typed request (warm)``: one typed request classified again and again.
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from _util import report
from bench_recall import NOW, _corpus, _real_store, _request_dict, _request_of

from reward_memory._boundary import strict_packet
from reward_memory.application import apply
from reward_memory.guarded_recall import recall
from reward_memory.health import classify_request
from reward_memory.records.health import HealthRequest
from reward_memory.records.recall import ProviderBinding, ReadAuthorityCheckpoint

if TYPE_CHECKING:
    from collections.abc import Callable

    from reward_memory.guarded_recall import RecallSession

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
WARMUP = 30


def _median_us(fn: Callable[[int], object], calls: int) -> float:
    clock = time.thread_time_ns
    samples = []
    for index in range(WARMUP + calls):
        start = clock()
        fn(index)
        samples.append(clock() - start)
    return statistics.median(samples[WARMUP:]) / 1000


def _model(base: Any, items: Any) -> dict[str, Any]:
    return {
        "outcome": "applied",
        "output": {"summary": base["summary"] + " (kept short)", "lines": list(base["lines"])},
        "memory_refs": [items[0].provider_ref],
        "reasoning_summary": "The recalled tone preference fits this summary.",
        "current_artifact_verified": True,
    }


def _sessions(count: int) -> list[RecallSession]:
    corpus = _corpus()
    binding = ProviderBinding(
        corpus_id=corpus.corpus_id,
        provider_id=corpus.provider_id,
        namespace="reward_memory",
        scope_ref="viking://resources/reward-memory/review-policy",
    )
    checkpoint = ReadAuthorityCheckpoint(
        verified=True,
        corpus_id=corpus.corpus_id,
        workspace_ref="workspace:main",
        project_ref="project:alpha",
        surface_id=corpus.scope.surface_ids[0],
        read_authority="module_scoped",
        source_ref="authority:review-team",
    )
    sessions = []
    for index in range(count):
        session = recall(
            _request_of(_request_dict(index)),
            corpus=corpus,
            checkpoint=checkpoint,
            binding=binding,
            provider=_real_store(binding, 5_000_000 + index),
            now=NOW,
        )
        if session.status != "completed":
            raise SystemExit(f"unexpected recall status {session.status}")
        sessions.append(session)
    return sessions


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000)
    args = parser.parse_args()
    total = WARMUP + args.calls
    rows: list[dict[str, Any]] = []

    sessions = _sessions(total)
    bases = [
        {"summary": f"Summary of change {index}", "lines": ["a", "b"]} for index in range(total)
    ]

    def applied(session: RecallSession, base: Any) -> object:
        receipt = apply(
            base,
            session,
            application_id="application:bench",
            artifact_ref="artifact:bench",
            apply_memory=_model,
        )
        if receipt.status != "applied":
            raise SystemExit(f"unexpected application status {receipt.status}")
        return receipt

    rows.append(
        _row(
            "apply, fresh session", _median_us(lambda i: applied(sessions[i], bases[i]), args.calls)
        )
    )
    rows.append(
        _row("apply, warm", _median_us(lambda _: applied(sessions[0], bases[0]), args.calls))
    )

    base = json.loads((EXAMPLES / "health-request.json").read_text(encoding="utf-8"))
    requests = []
    for index in range(total):
        data = copy.deepcopy(base)
        data["observation"]["record_count"] = index % 50 + 1
        data["observation"]["current_source_revision"] = f"revision:r{index}"
        requests.append(data)

    def classified(data: dict[str, Any]) -> object:
        return classify_request(strict_packet(data, HealthRequest), now=NOW)

    rows.append(
        _row("health from JSON, fresh", _median_us(lambda i: classified(requests[i]), args.calls))
    )
    typed = strict_packet(base, HealthRequest)
    rows.append(
        _row(
            "health, typed request (warm)",
            _median_us(lambda _: classify_request(typed, now=NOW), args.calls),
        )
    )
    return report("bench_apply_health", rows, targets={})


def _row(what: str, value: float) -> dict[str, Any]:
    return {"what": what, "value": value, "unit": "us"}


if __name__ == "__main__":
    raise SystemExit(main())
