"""Route-check records: the observation in, the pilot/meta routing decision out.

``reward_memory_pilot_meta_route_observation_v0`` is the input (reference §14):
every field is required but ``case_ref`` (default ``manual_observation``) and
``schema_version`` (the original's observations carry none). Booleans are real
booleans, ``surface_count`` a real integer 1-20, and ``case_ref`` public-safe
text that is never a local path.

``reward_memory_pilot_meta_route_v0`` is the decision. Its validators hold the
invariants a reader relies on: ``pilot_authorized`` exactly for ``pilot_fix``,
``meta_review_required`` exactly for ``meta_design_gate``, the missing evidence
a subset of the required evidence, and the authority flags constant ``false``:
a route check grants nothing (it is a regression fixture, not a live reasoner).
"""

from __future__ import annotations

from typing import Any, Final, Literal

import attrs

from reward_memory._frozen import frozen
from reward_memory.errors import RecordValidationError
from reward_memory.records import _fields as f

__all__ = [
    "BEHAVIOR_STATUSES",
    "COMPLEXITIES",
    "DECISIONS",
    "EVIDENCE_KINDS",
    "OBSERVATION_SCHEMA",
    "ROUTE_SCHEMA",
    "RouteCheck",
    "RouteObservation",
]

OBSERVATION_SCHEMA: Final = "reward_memory_pilot_meta_route_observation_v0"
ROUTE_SCHEMA: Final = "reward_memory_pilot_meta_route_v0"
DEFAULT_CASE_REF: Final = "manual_observation"
BEHAVIOR_STATUSES: Final = ("bug_confirmed", "by_design", "uncertain")
COMPLEXITIES: Final = ("low", "medium", "high")
DECISIONS: Final = ("pilot_fix", "meta_design_gate", "hold_for_evidence")
# The order evidence is listed in, everywhere (reference §14).
EVIDENCE_KINDS: Final = ("effect", "ux", "benchmark", "performance")
MAX_SURFACES: Final = 20
ROUTE_ROLE: Final = "deterministic_guard_fixture_not_live_reasoner"
# Every reason code a route check can give (reference §14), for the packet's validator.
META_REASON_CODES: Final = (
    "semantics_by_design",
    "semantics_uncertain",
    "semantic_contract_change",
    "cross_surface_change",
    "generic_boundary_for_specific_policy",
    "high_edge_case_complexity",
)
HOLD_REASON_CODES: Final = (
    *(f"missing_{kind}_evidence" for kind in EVIDENCE_KINDS),
    "missing_named_reproduction",
    "missing_named_validation",
)
PILOT_REASON_CODES: Final = (
    "confirmed_bug_semantics",
    "single_bounded_surface",
    "no_semantic_contract_change",
    "no_generic_boundary_for_specific_policy",
    "edge_case_complexity_low",
    "edge_case_complexity_medium",
    "reproduction_validation_and_relevant_evidence_present",
)
ROUTE_REASON_CODES: Final = frozenset((*META_REASON_CODES, *HOLD_REASON_CODES, *PILOT_REASON_CODES))

BehaviorStatus = Literal["bug_confirmed", "by_design", "uncertain"]
Complexity = Literal["low", "medium", "high"]
Decision = Literal["pilot_fix", "meta_design_gate", "hold_for_evidence"]
EvidenceKind = Literal["effect", "ux", "benchmark", "performance"]


def _not_a_path(_: Any, attribute: attrs.Attribute[Any], value: str) -> None:
    # The text grammar already refuses credential and path shapes; a leading
    # "/" or "~" is refused outright, as in the original.
    if value.startswith(("/", "~")):
        raise RecordValidationError(
            "must not look like a local path", path=f"$.{attribute.name}", code="unsafe_text"
        )


@frozen(kw_only=True)
class RouteObservation:
    """``reward_memory_pilot_meta_route_observation_v0``: what the caller observed of one change.

    The caller (the live agent) owns these judgements; the route check only
    applies the delegation contract's rules to them.
    """

    schema_version: Literal["reward_memory_pilot_meta_route_observation_v0"] = f.const(
        OBSERVATION_SCHEMA
    )
    case_ref: str = f.text(240, default=DEFAULT_CASE_REF, validator=_not_a_path)
    behavior_status: BehaviorStatus = f.enum(*BEHAVIOR_STATUSES)
    surface_count: int = f.integer(minimum=1, maximum=MAX_SURFACES)
    edge_case_complexity: Complexity = f.enum(*COMPLEXITIES)
    semantic_contract_change: bool = f.strict_bool()
    generic_boundary_for_specific_policy: bool = f.strict_bool()
    user_visible_behavior_change: bool = f.strict_bool()
    hot_path_or_storage_change: bool = f.strict_bool()
    retrieval_or_memory_quality_claim: bool = f.strict_bool()
    named_reproduction: bool = f.strict_bool()
    named_validation: bool = f.strict_bool()
    effect_evidence: bool = f.strict_bool()
    ux_evidence: bool = f.strict_bool()
    benchmark_evidence: bool = f.strict_bool()
    performance_evidence: bool = f.strict_bool()


def _evidence_list(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    path = f"$.{attribute.name}"
    if type(value) is not tuple or any(item not in EVIDENCE_KINDS for item in value):
        raise RecordValidationError(
            f"must be a list of: {', '.join(EVIDENCE_KINDS)}", path=path, code="invalid_value"
        )
    if list(value) != [kind for kind in EVIDENCE_KINDS if kind in value]:
        raise RecordValidationError(
            f"must list each kind once, in the order {', '.join(EVIDENCE_KINDS)}",
            path=path,
            code="invalid_value",
        )


def _reason_codes(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    # The route vocabulary is closed: a code from elsewhere is refused, not scanned.
    path = f"$.{attribute.name}"
    if type(value) is not tuple or not value:
        raise RecordValidationError("must be a non-empty list", path=path, code="invalid_value")
    for index, code in enumerate(value):
        if type(code) is not str or code not in ROUTE_REASON_CODES:
            raise RecordValidationError(
                "is not a route-check reason code", path=f"{path}[{index}]", code="invalid_value"
            )
    if len(set(value)) != len(value):
        raise RecordValidationError("must not repeat a code", path=path, code="duplicate_item")


def _tuple(value: Any) -> Any:
    return tuple(value) if type(value) is list else value


@frozen(kw_only=True)
class RouteCheck:
    """``reward_memory_pilot_meta_route_v0``: the delegation decision for one observation."""

    ok: Literal[True] = f.const(True)
    schema_version: Literal["reward_memory_pilot_meta_route_v0"] = f.const(ROUTE_SCHEMA)
    case_ref: str = f.text(240)
    decision: Decision = f.enum(*DECISIONS)
    reason_codes: tuple[str, ...] = attrs.field(converter=_tuple, validator=_reason_codes)
    required_evidence: tuple[EvidenceKind, ...] = attrs.field(
        converter=_tuple, validator=_evidence_list
    )
    missing_required_evidence: tuple[EvidenceKind, ...] = attrs.field(
        converter=_tuple, validator=_evidence_list
    )
    pilot_authorized: bool = f.strict_bool()
    meta_review_required: bool = f.strict_bool()
    route_check_role: Literal["deterministic_guard_fixture_not_live_reasoner"] = f.const(ROUTE_ROLE)
    live_reasoning_required: Literal[True] = f.const(True)
    memory_patch_authority: Literal[False] = f.const(False)
    external_write_authorized: Literal[False] = f.const(False)
    raw_issue_or_memory_captured: Literal[False] = f.const(False)

    def __attrs_post_init__(self) -> None:
        if self.pilot_authorized is not (self.decision == "pilot_fix"):
            raise RecordValidationError(
                "is true exactly when the decision is pilot_fix",
                path="$.pilot_authorized",
                code="invalid_value",
            )
        if self.meta_review_required is not (self.decision == "meta_design_gate"):
            raise RecordValidationError(
                "is true exactly when the decision is meta_design_gate",
                path="$.meta_review_required",
                code="invalid_value",
            )
        if not set(self.missing_required_evidence) <= set(self.required_evidence):
            raise RecordValidationError(
                "lists only required evidence",
                path="$.missing_required_evidence",
                code="invalid_value",
            )
        if self.decision == "pilot_fix" and self.missing_required_evidence:
            raise RecordValidationError(
                "must be empty for pilot_fix",
                path="$.missing_required_evidence",
                code="invalid_value",
            )
