"""``reward-memory health-check``: classify corpus health for a fixture case or a request file.

``--case`` (default ``retrieval-verified``) classifies one of the ten reference
fixtures; ``--input FILE`` (``-`` for stdin) classifies a real
``reward_memory_corpus_health_request_v0`` packet (which may carry ``now``,
``source_observed_at`` and ``record_expires_at``). ``--now TIMESTAMP`` judges
record expiry and the freshness window at that time, for a reproducible check
(it wins over the request's ``now``; default the current UTC time). A
contradictory or invalid request, or a bad ``--now``, is an error packet and
exit 2, naming the field path.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reward_memory.cli._common import Outcome

if TYPE_CHECKING:
    import argparse

# Kept here (not imported from reward_memory.health) so that building the
# parser costs nothing; tests pin the two lists together.
CASES = (
    "unavailable",
    "empty",
    "stale",
    "wrong-project",
    "wrong-surface",
    "index-unavailable",
    "retrieval-failed",
    "readback-unverified",
    "retrieval-verified",
    "applied-verified",
)
DEFAULT_CASE = "retrieval-verified"


def configure(parser: argparse.ArgumentParser) -> None:
    """``--case NAME`` or ``--input FILE`` (mutually exclusive), and ``--now``."""
    source = parser.add_mutually_exclusive_group()
    source.add_argument(
        "--case",
        choices=CASES,
        default=None,
        metavar="CASE",
        help=f"a fixture case: {', '.join(CASES)} (default {DEFAULT_CASE})",
    )
    source.add_argument(
        "--input",
        default=None,
        metavar="FILE",
        help="a reward_memory_corpus_health_request_v0 JSON file (- for stdin)",
    )
    parser.add_argument(
        "--now",
        default=None,
        metavar="TIMESTAMP",
        help="judge expiry and freshness at this ISO-8601 time with offset (default: now, UTC)",
    )


def run(args: argparse.Namespace) -> Outcome:
    """Classify, and print the ``reward_memory_corpus_health_v0`` packet."""
    from reward_memory.grammars import parse_timestamp
    from reward_memory.health import classify_request, health_case
    from reward_memory.records._plain import to_plain as as_plain

    now = None if args.now is None else parse_timestamp(args.now, "--now")

    if args.input is not None:
        # Untrusted input: one strict pass (the schema names an error only).
        from reward_memory._boundary import strict_packet
        from reward_memory.cli._common import read_json_object
        from reward_memory.records.health import HealthRequest

        request = strict_packet(read_json_object(args.input), HealthRequest)
    else:
        request = health_case(args.case or DEFAULT_CASE)
    health = classify_request(request, now=now)
    pipeline = as_plain(health.pipeline)
    lines = (
        f"  may_apply_memory: {str(health.may_apply_memory).lower()}",
        "  pipeline: "
        + ", ".join(f"{key}={str(value).lower()}" for key, value in pipeline.items()),
    )
    return Outcome(packet=as_plain(health), text_lines=lines)
