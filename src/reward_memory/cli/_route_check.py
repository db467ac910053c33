"""``reward-memory route-check``: the pilot/meta delegation guard for one observed change.

Three sources, one at a time: ``--case pr-3237`` (the seeds' negative
regression, which routes to ``meta_design_gate``), ``--input FILE`` (a
``reward_memory_pilot_meta_route_observation_v0`` object, ``-`` for stdin;
``schema_version`` may be left out), or one flag per observation field, whose
defaults are a confirmed bug on one surface, low complexity, every boolean
false (so no flags at all give ``hold_for_evidence``). Observation flags next
to ``--case`` or ``--input`` are refused (exit 2), never silently ignored.
Bad input of any kind is an error packet naming the field, exit 2.
"""

from __future__ import annotations

import argparse
import re
from typing import Any, Final

from reward_memory.cli._common import Outcome

CASES: Final = ("pr-3237",)
_BEHAVIOR: Final = ("bug_confirmed", "by_design", "uncertain")
_COMPLEXITY: Final = ("low", "medium", "high")
# Observation booleans, in the order of the record (their flags: --semantic-contract-change ...).
FLAGS: Final = (
    "semantic_contract_change",
    "generic_boundary_for_specific_policy",
    "user_visible_behavior_change",
    "hot_path_or_storage_change",
    "retrieval_or_memory_quality_claim",
    "named_reproduction",
    "named_validation",
    "effect_evidence",
    "ux_evidence",
    "benchmark_evidence",
    "performance_evidence",
)
_VALUED: Final = ("case_ref", "behavior_status", "surface_count", "edge_case_complexity")
_COUNT: Final = re.compile(r"[+-]?[0-9]{1,6}")  # a signed count: its range is the record's


def configure(parser: argparse.ArgumentParser) -> None:
    """``--case`` or ``--input`` or the observation flags."""
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--case", choices=CASES, default=None, help="a fixture case: pr-3237")
    source.add_argument(
        "--input",
        default=None,
        metavar="FILE",
        help="a reward_memory_pilot_meta_route_observation_v0 JSON file (- for stdin)",
    )
    fields = parser.add_argument_group("observation (when neither --case nor --input)")
    fields.add_argument(
        "--case-ref", default=None, metavar="REF", help="default manual_observation"
    )
    fields.add_argument(
        "--behavior-status", choices=_BEHAVIOR, default=None, help="default bug_confirmed"
    )
    fields.add_argument(
        "--surface-count", default=None, metavar="N", help="surfaces touched, 1-20 (default 1)"
    )
    fields.add_argument(
        "--edge-case-complexity", choices=_COMPLEXITY, default=None, help="default low"
    )
    for name in FLAGS:
        fields.add_argument(
            "--" + name.replace("_", "-"),
            dest=name,
            action=argparse.BooleanOptionalAction,
            default=None,
            help="default false",
        )


def _surface_count(raw: str | None) -> int:
    from reward_memory.errors import RecordValidationError

    if raw is None:
        return 1
    if _COUNT.fullmatch(raw) is None:
        raise RecordValidationError("must be an integer", path="$.surface_count", code="wrong_type")
    return int(raw)


def run(args: argparse.Namespace) -> Outcome:
    """Route the observation; print the ``reward_memory_pilot_meta_route_v0`` packet."""
    from reward_memory.records._plain import to_plain
    from reward_memory.routing import PR_3237_OBSERVATION, RouteObservation, route_check

    given = [name for name in (*_VALUED, *FLAGS) if getattr(args, name) is not None]
    if (args.case is not None or args.input is not None) and given:
        from reward_memory.cli import UsageError

        flag = "--" + given[0].replace("_", "-")
        source = "--case" if args.case is not None else "--input"
        raise UsageError(f"{flag} cannot be combined with {source}")
    if args.case is not None:
        route = route_check(PR_3237_OBSERVATION)
    elif args.input is not None:
        from reward_memory.cli._common import read_json_object

        route = route_check(read_json_object(args.input))
    else:
        values: dict[str, Any] = {name: bool(getattr(args, name)) for name in FLAGS}
        values.update(
            case_ref=args.case_ref if args.case_ref is not None else "manual_observation",
            behavior_status=args.behavior_status or "bug_confirmed",
            surface_count=_surface_count(args.surface_count),
            edge_case_complexity=args.edge_case_complexity or "low",
        )
        route = route_check(RouteObservation(**values))
    lines = (
        f"  required_evidence: {', '.join(route.required_evidence)}",
        f"  missing_required_evidence: {', '.join(route.missing_required_evidence) or '-'}",
        f"  pilot_authorized: {str(route.pilot_authorized).lower()}",
    )
    return Outcome(packet=to_plain(route), text_lines=lines)
