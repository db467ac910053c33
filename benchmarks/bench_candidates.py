"""Per-call medians of the Stage-2 seam: propose, review, activate (timeit repeats, warm).

    .venv/bin/python benchmarks/bench_candidates.py [--repeat N] [--number N]

Target on the reference 2-core machine: ``propose`` on typed input <= 15 µs. Its
work is one guard pass, the v0 candidate_ref (J1 text + sha256) and the packet
records (the candidate is made from its already-checked proposal); it touches
neither jsonschema nor cattrs. The other rows are reported without a target:
``review``, ``propose`` on a JSON-ready dict (the compiled schema check, then
the records in one pass), and ``activate`` (the full active-record envelope).

These rows repeat one prepared input, so the caches the library keeps answer;
``bench_records.py`` measures the same seams on fresh input per call.
"""

from __future__ import annotations

import argparse
import statistics
import timeit
from datetime import UTC, datetime
from typing import Any

import attrs
from _util import report

from reward_memory.activation import activate
from reward_memory.adapters.issue_fix import (
    issue_fix_proposal,
    verified_contributor_checkpoint,
    verified_contributor_event,
)
from reward_memory.candidates import propose, review
from reward_memory.records._plain import to_plain
from reward_memory.records.candidate import ReviewDecision
from reward_memory.records.corpus import CorpusScope
from reward_memory.registry import reference_corpus

PROPOSE_TARGET_US = 15.0
NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)


def _median_us(call: Any, *, number: int, repeat: int) -> float:
    samples = timeit.repeat(call, number=number, repeat=repeat)
    return statistics.median(samples) / number * 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--number", type=int, default=5000)
    args = parser.parse_args()
    timing = {"number": args.number, "repeat": args.repeat}

    proposal = issue_fix_proposal(verified_contributor_event())
    checkpoint = verified_contributor_checkpoint()
    packet = propose(proposal, checkpoint, now=NOW)
    accept = ReviewDecision(
        decision="accept",
        reviewer_ref="github:user:maintainer",
        review_ref="review:bench:accept",
        reasoning_summary="The compact evidence and scope were reviewed.",
    )
    accepted = review(packet, accept)
    corpus = attrs.evolve(
        reference_corpus("authority_policy_sources"),
        scope=CorpusScope(
            workspace_ref="workspace:example",
            project_ref="repository:example",
            surface_ids=("issue_fix.patch_planning",),
        ),
    )
    plain_proposal = to_plain(proposal)
    plain_checkpoint = to_plain(checkpoint)
    propose(plain_proposal, plain_checkpoint, now=NOW)  # compile the schema checks once

    rows = [
        {
            "what": "propose (typed)",
            "value": _median_us(lambda: propose(proposal, checkpoint, now=NOW), **timing),
            "unit": "us",
        },
        {
            "what": "propose (typed, default now)",
            "value": _median_us(lambda: propose(proposal, checkpoint), **timing),
            "unit": "us",
        },
        {
            "what": "review accept",
            "value": _median_us(lambda: review(packet, accept), **timing),
            "unit": "us",
        },
        {
            "what": "propose (dict, schema checked)",
            "value": _median_us(
                lambda: propose(plain_proposal, plain_checkpoint, now=NOW),
                number=max(1, args.number // 20),
                repeat=args.repeat,
            ),
            "unit": "us",
        },
        {
            "what": "activate (hard policy)",
            "value": _median_us(
                lambda: activate(accepted, corpus, checkpoint=checkpoint, now=NOW),
                number=max(1, args.number // 5),
                repeat=args.repeat,
            ),
            "unit": "us",
        },
    ]
    return report("candidates", rows, targets={"propose (typed)": PROPOSE_TARGET_US})


if __name__ == "__main__":
    raise SystemExit(main())
