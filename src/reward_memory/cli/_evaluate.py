"""``reward-memory evaluate``: the Stage-4 contract suite and release gate; exit 2 on hold.

``--provider URL`` runs it against any installed provider (default: a new
in-memory provider): the fixture is seeded in a namespace of that store dedicated
to this run (``reward_memory_evaluation.<run id>``) and deleted again afterwards.
``--now TIMESTAMP`` fixes the clock.
The packet is ``reward_memory_evaluation_v0``; the exit code is 0 only when the
gate is ``ready_for_bounded_dogfood`` (a broken provider holds it: exit 2).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reward_memory.cli._common import Outcome

if TYPE_CHECKING:
    import argparse

HOLD_EXIT: int = 2


def configure(parser: argparse.ArgumentParser) -> None:
    """``--provider URL`` and ``--now``."""
    parser.add_argument(
        "--provider",
        default=None,
        metavar="URL",
        help="provider URL, e.g. sqlite:///abs/eval.db or memory:// (default: in-memory)",
    )
    parser.add_argument(
        "--now",
        default=None,
        metavar="TIMESTAMP",
        help="evaluate at this ISO-8601 time with offset (default: now, UTC)",
    )


def run(args: argparse.Namespace) -> Outcome:
    """Evaluate; the packet, and exit 2 unless the gate is ready."""
    from reward_memory.evaluation import evaluate
    from reward_memory.grammars import parse_timestamp
    from reward_memory.records._plain import to_plain

    now = None if args.now is None else parse_timestamp(args.now, "--now")
    result = evaluate(provider=args.provider, now=now)
    gate = result.release_gate
    lines = [
        f"  release_gate: {gate.status} ({gate.decision})",
        f"  gate_reason_codes: {', '.join(gate.reason_codes) or '-'}",
        f"  latency_ms: {result.metrics.latency_ms:.3f}",
    ]
    lines.extend(
        f"  {'pass' if case.passed else 'FAIL'} {case.case_id}"
        + ("" if case.passed else f" ({', '.join(case.failed_assertions) or case.failure_kind})")
        for case in result.cases
    )
    return Outcome(
        packet=to_plain(result), exit_code=0 if result.ok else HOLD_EXIT, text_lines=tuple(lines)
    )
