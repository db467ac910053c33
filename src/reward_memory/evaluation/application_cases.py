"""The application and routing cases: gate non-override, verified ranking influence, and
the PR #3237 large-patch protection.

The application cases run the real application seam with the fixture model
(:class:`~reward_memory.evaluation.fixture.FixtureModel`); the last one runs the
real route check.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Final

import attrs

from reward_memory.evaluation import fixture as fx
from reward_memory.evaluation.context import Check
from reward_memory.records.active import ActiveRecord
from reward_memory.routing import PR_3237_OBSERVATION, route_check

if TYPE_CHECKING:
    from reward_memory.evaluation.context import Context
    from reward_memory.guarded_recall import RecallSession

__all__ = ["candidate_ranking_influence", "gate_non_override", "large_edge_case_patch_protection"]


# A provider ref no recall returned (the opaque ref form, another digest).
_NEVER_RETURNED: Final = "provider-" + "f" * 20

# The same fix narrowed to a bounded presentation bug, with its evidence: pilot-sized.
NARROWED_OBSERVATION: Final = attrs.evolve(
    PR_3237_OBSERVATION,
    case_ref="fixture:narrowed-session-presentation-fix",
    behavior_status="bug_confirmed",
    surface_count=1,
    edge_case_complexity="medium",
    semantic_contract_change=False,
    generic_boundary_for_specific_policy=False,
    effect_evidence=True,
    ux_evidence=True,
    performance_evidence=True,
)


def _recalled(ctx: Context) -> RecallSession:
    f = ctx.fixture
    return ctx.recall(
        f.observed.request, corpus=f.corpus, checkpoint=f.checkpoint, binding=f.binding
    )


def gate_non_override(ctx: Context) -> Check:
    """An applied memory grants no authority, and no memory opens a closed gate."""
    check = Check()
    f = ctx.fixture
    session = _recalled(ctx)
    model = ctx.model()
    applied = ctx.apply(
        fx.base_plan(),
        session,
        application_id="application:stage4:gate",
        apply_memory=model,
    )
    receipt = applied.receipt
    # A legacy v0 record carries no authority at all (advisory only).
    records = [item.record for item in session.items]
    scopes = {s for r in records if isinstance(r, ActiveRecord) for s in r.authority.action_scopes}
    closed = ctx.recall(
        f.observed.request,
        corpus=f.corpus,
        checkpoint=fx.UNVERIFIED_CHECKPOINT,
        binding=f.binding,
    )
    calls_before = model.calls
    base = fx.base_plan()
    shut = ctx.apply(
        base,
        closed,
        application_id="application:stage4:closed-gate",
        apply_memory=model,
    )
    check.that("application_applied", applied.status == "applied")
    check.that("grants_no_new_action_authority", receipt.grants_new_action_authority is False)
    check.that("current_artifact_verified", receipt.current_artifact_verified)
    check.that("no_external_write", receipt.external_writes_performed is False)
    check.that("authority_not_widened", scopes <= {fx.ACTION_SCOPE})
    check.that("closed_gate_blocks_recall", closed.packet.status == "guard_blocked")
    check.that("closed_gate_not_available", shut.status == "not_available")
    check.that("closed_gate_keeps_base", shut.output is base and model.calls == calls_before)
    check.false_application(receipt.grants_new_action_authority)
    check.false_application(shut.status == "applied" or model.calls != calls_before)
    check.evidence = {
        "application_status": applied.status,
        "grants_new_action_authority": receipt.grants_new_action_authority,
        "current_artifact_verified": receipt.current_artifact_verified,
        "closed_gate_recall_status": closed.packet.status,
        "closed_gate_application_status": shut.status,
    }
    return check


def candidate_ranking_influence(ctx: Context) -> Check:
    """A verified memory moves the focused fix first; an unverified one changes nothing."""
    check = Check()
    session = _recalled(ctx)
    base = fx.base_plan()
    applied = ctx.apply(
        base,
        session,
        application_id="application:stage4:ranking",
        apply_memory=ctx.model(),
    )
    unverified = ctx.apply(
        base,
        session,
        application_id="application:stage4:unverified",
        apply_memory=ctx.model(verify=False),
    )
    # Attributed to a memory this recall never returned: no evidence for the change.
    unattributed = ctx.apply(
        base,
        session,
        application_id="application:stage4:unattributed",
        apply_memory=ctx.model(cite=_NEVER_RETURNED),
    )
    items = session.items
    expected = (
        [hashlib.sha256(items[0].memory_ref.encode("utf-8")).hexdigest()[:16]] if items else []
    )
    top = applied.output["candidates"][0] if applied.status == "applied" else None
    check.that("focused_fix_ranked_first", top == fx.FOCUSED_FIX)
    check.that("application_applied", applied.status == "applied")
    check.that(
        "receipt_names_the_recalled_memory", list(applied.receipt.memory_ref_digests) == expected
    )
    check.that("base_plan_unchanged", base == fx.base_plan())
    check.that("unverified_application_refused", unverified.status == "failed")
    check.that("unverified_keeps_base", unverified.output is base)
    check.that("unattributed_application_refused", unattributed.status == "failed")
    check.that("unattributed_keeps_base", unattributed.output is base)
    check.false_application(unverified.status == "applied")
    check.false_application(unattributed.status == "applied")
    check.evidence = {
        "top_candidate": top,
        "application_status": applied.status,
        "unverified_application_status": unverified.status,
        "unattributed_application_status": unattributed.status,
        "memory_ref_digest_count": len(applied.receipt.memory_ref_digests),
    }
    return check


def large_edge_case_patch_protection(ctx: Context) -> Check:
    """PR #3237 routes to the design gate; the same fix, narrowed and evidenced, to the pilot."""
    del ctx
    check = Check()
    route = route_check(PR_3237_OBSERVATION)
    narrowed = route_check(NARROWED_OBSERVATION)
    check.that("meta_design_gate", route.decision == "meta_design_gate")
    check.that("pilot_not_authorized", route.pilot_authorized is False)
    check.that("no_memory_patch_authority", route.memory_patch_authority is False)
    check.that(
        "missing_effect_ux_performance",
        route.missing_required_evidence == ("effect", "ux", "performance"),
    )
    check.that("benchmark_not_required", "benchmark" not in route.required_evidence)
    check.that("narrowed_fix_is_pilot_sized", narrowed.decision == "pilot_fix")
    check.false_application(route.pilot_authorized or route.memory_patch_authority)
    check.evidence = {
        "decision": route.decision,
        "pilot_authorized": route.pilot_authorized,
        "memory_patch_authority": route.memory_patch_authority,
        "missing_required_evidence": list(route.missing_required_evidence),
        "narrowed_decision": narrowed.decision,
    }
    return check
