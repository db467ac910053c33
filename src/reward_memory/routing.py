"""The pilot/meta route check (``reward_memory_pilot_meta_route_v0``): a deterministic guard.

The seeds' delegation contract ("Pilot/meta delegation"), applied to one
observation the live agent made of a change:

- **meta reasons**, in this order: ``semantics_by_design`` / ``semantics_uncertain``
  (behaviour not a confirmed bug), ``semantic_contract_change``,
  ``cross_surface_change`` (more than one surface),
  ``generic_boundary_for_specific_policy``, ``high_edge_case_complexity``;
- **required evidence**, relevance-gated and listed effect, ux, benchmark,
  performance: effect always; ux for a user-visible behaviour change; benchmark
  only for a retrieval or memory-quality claim; performance for a hot-path or
  storage change. Required evidence that is absent is *missing*.

Decision:

====================  ============================================================
``meta_design_gate``  any meta reason; reasons: the meta reasons, then
                      ``missing_<kind>_evidence`` for each missing kind
``hold_for_evidence`` no meta reason, but missing evidence or no named
                      reproduction / validation; reasons
                      ``missing_<kind>_evidence``..., ``missing_named_reproduction``,
                      ``missing_named_validation``
``pilot_fix``         otherwise; reasons ``confirmed_bug_semantics``,
                      ``single_bounded_surface``, ``no_semantic_contract_change``,
                      ``no_generic_boundary_for_specific_policy``,
                      ``edge_case_complexity_<low|medium>``,
                      ``reproduction_validation_and_relevant_evidence_present``
====================  ============================================================

This is guarded routing, not authority: the packet's ``memory_patch_authority``
and ``external_write_authorized`` are always ``false``, and nothing in an
observation can come from a memory hit (the pilot cannot bypass the design gate
with one). It is a regression fixture for obvious escalation conditions such as
PR #3237 (:data:`PR_3237_OBSERVATION`, which routes to ``meta_design_gate``),
not the live Issue Fix decision engine.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from reward_memory.errors import RecordValidationError
from reward_memory.records.route import (
    OBSERVATION_SCHEMA,
    EvidenceKind,
    RouteCheck,
    RouteObservation,
)

__all__ = ["PR_3237_CASE", "PR_3237_OBSERVATION", "RouteCheck", "RouteObservation", "route_check"]

PR_3237_CASE: Final = "pr-3237"
# OpenViking PR #3237, the negative regression of the seeds: generic directory
# listing made to reflect session activity across backend and Web Studio, though
# the directory-mtime behaviour was by design; it changed a generic contract for
# one product edge case, added metadata reads on a listing/storage path, and had
# no effect, UX or performance evidence (and made no retrieval-quality claim).
PR_3237_OBSERVATION: Final = RouteObservation(
    case_ref="https://github.com/volcengine/OpenViking/pull/3237",
    behavior_status="by_design",
    surface_count=2,
    edge_case_complexity="high",
    semantic_contract_change=True,
    generic_boundary_for_specific_policy=True,
    user_visible_behavior_change=True,
    hot_path_or_storage_change=True,
    retrieval_or_memory_quality_claim=False,
    named_reproduction=True,
    named_validation=True,
    effect_evidence=False,
    ux_evidence=False,
    benchmark_evidence=False,
    performance_evidence=False,
)


def as_observation(observation: RouteObservation | Mapping[str, Any]) -> RouteObservation:
    """A typed observation; a mapping is validated strictly (field path named).

    A mapping may leave out ``schema_version`` (the original's observations have
    none); when present it must be the observation schema. The record's own
    checks are the whole boundary here -- exact keys, real booleans, a real
    integer 1-20, the enums, public-safe ``case_ref`` -- and they accept exactly
    what the observation schema accepts (``tests/test_routing.py`` holds the two
    together), so the CLI skips loading the JSON Schema machinery.
    """
    if isinstance(observation, RouteObservation):
        return observation
    if not isinstance(observation, Mapping):
        raise RecordValidationError(
            f"an observation is a RouteObservation or a {OBSERVATION_SCHEMA} object",
            path="$",
            code="wrong_type",
        )
    from reward_memory.records._plain import from_plain  # noqa: PLC0415 - the JSON boundary

    data = dict(observation)
    data.setdefault("schema_version", OBSERVATION_SCHEMA)
    typed: RouteObservation = from_plain(RouteObservation, data)
    return typed


def meta_reasons(observation: RouteObservation) -> tuple[str, ...]:
    """The meta-design triggers of ``observation``, in their fixed order."""
    reasons: list[str] = []
    if observation.behavior_status != "bug_confirmed":
        reasons.append(f"semantics_{observation.behavior_status}")
    if observation.semantic_contract_change:
        reasons.append("semantic_contract_change")
    if observation.surface_count > 1:
        reasons.append("cross_surface_change")
    if observation.generic_boundary_for_specific_policy:
        reasons.append("generic_boundary_for_specific_policy")
    if observation.edge_case_complexity == "high":
        reasons.append("high_edge_case_complexity")
    return tuple(reasons)


def required_evidence(observation: RouteObservation) -> tuple[EvidenceKind, ...]:
    """The evidence kinds this change needs (relevance-gated), in the order effect, ux,
    benchmark, performance."""
    required: list[EvidenceKind] = ["effect"]
    if observation.user_visible_behavior_change:
        required.append("ux")
    if observation.retrieval_or_memory_quality_claim:
        required.append("benchmark")
    if observation.hot_path_or_storage_change:
        required.append("performance")
    return tuple(required)


def _present(observation: RouteObservation, kind: EvidenceKind) -> bool:
    present: bool = getattr(observation, f"{kind}_evidence")
    return present


def route_check(observation: RouteObservation | Mapping[str, Any]) -> RouteCheck:
    """Route one observed change to ``pilot_fix``, ``meta_design_gate`` or ``hold_for_evidence``.

    Args:
        observation: a :class:`RouteObservation`, or a JSON-ready mapping of one
            (validated strictly: unknown or missing fields, a non-boolean flag, a
            surface count outside 1-20 raise with the field path named).

    Pure: no provider, no clock, no I/O. See the module docs for the rules.

    Raises:
        RecordValidationError: an invalid observation.
    """
    typed = as_observation(observation)
    meta = meta_reasons(typed)
    required = required_evidence(typed)
    missing = tuple(kind for kind in required if not _present(typed, kind))
    missing_codes = [f"missing_{kind}_evidence" for kind in missing]
    if meta:
        decision = "meta_design_gate"
        reasons = [*meta, *missing_codes]
    elif missing or not typed.named_reproduction or not typed.named_validation:
        decision = "hold_for_evidence"
        reasons = missing_codes
        if not typed.named_reproduction:
            reasons.append("missing_named_reproduction")
        if not typed.named_validation:
            reasons.append("missing_named_validation")
    else:
        decision = "pilot_fix"
        reasons = [
            "confirmed_bug_semantics",
            "single_bounded_surface",
            "no_semantic_contract_change",
            "no_generic_boundary_for_specific_policy",
            f"edge_case_complexity_{typed.edge_case_complexity}",
            "reproduction_validation_and_relevant_evidence_present",
        ]
    return RouteCheck(
        case_ref=typed.case_ref,
        decision=decision,  # type: ignore[arg-type]
        reason_codes=tuple(reasons),
        required_evidence=required,
        missing_required_evidence=missing,
        pilot_authorized=decision == "pilot_fix",
        meta_review_required=decision == "meta_design_gate",
    )
