"""The eight Stage-4 contract cases, in their fixed order, over the real core.

Each case drives the real seams -- ingest (which runs the Issue Fix adapter,
propose, the standing-policy guard, review and activate), propose/review,
activate, guarded recall, apply and the route check -- against the counted
provider, and records named assertions plus a public-safe evidence object
(booleans, counts, statuses and reason codes only). Seeding the store is the
corpus owner's write and runs inside :meth:`Context.seeding`; everything else
is the evaluated operation, whose writes the release gate counts.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any, Final

import attrs

from reward_memory._recall.readback import seed
from reward_memory.activation import activate, activation_ref_of
from reward_memory.adapters.issue_fix import issue_fix_proposal
from reward_memory.application import apply
from reward_memory.candidates import propose, review
from reward_memory.digests import canonical_json
from reward_memory.evaluation import fixture as fx
from reward_memory.evaluation.context import Check
from reward_memory.grammars import parse_timestamp
from reward_memory.guarded_recall import recall
from reward_memory.ingestion import ingest
from reward_memory.records._plain import to_plain
from reward_memory.records.candidate import ReviewDecision
from reward_memory.records.envelope import Revocation, Supersession
from reward_memory.records.recall import FreshnessContext
from reward_memory.routing import PR_3237_OBSERVATION, route_check

if TYPE_CHECKING:
    from collections.abc import Callable

    from reward_memory.evaluation.context import Context
    from reward_memory.records.active import ActiveRecord

__all__ = ["CASES"]

_REVIEWER: Final = "review:reward-memory-stage4"


def compact_restart_survival(ctx: Context) -> Check:
    """An ingested record survives a real restart and is recalled exactly, compactly."""
    check = Check()
    f = ctx.fixture
    with ctx.seeding():
        before = ctx.provider.meters["fixture"].write_bytes
        receipt = ingest(
            f.event,
            adapter="issue_fix",
            corpus=f.corpus,
            standing_policy=f.policy,
            binding=f.binding,
            provider=ctx.provider,
            authority=f.authority,
            observed_at=f.observed_at,
            execute=True,
            now=ctx.now,
        )
        written = ctx.provider.meters["fixture"].write_bytes - before
        restarted = ctx.restart()
    calls_before = ctx.provider.meters["case"].calls
    session = ctx.fail_open(
        recall,
        f.request,
        corpus=f.corpus,
        checkpoint=f.checkpoint,
        binding=f.binding,
        provider=ctx.provider,
        now=ctx.now,
    )
    calls = ctx.provider.meters["case"].calls - calls_before
    packet = session.packet
    items = session.items
    check.that("seed_activated", receipt.status == "activated")
    check.that("restarted_on_a_new_provider_object", restarted)
    check.that("recall_completed", packet.status == "completed")
    check.that("readback_verified", packet.result_readback_verified)
    check.that("one_result", packet.result_count == 1 and len(items) == 1)
    check.that(
        "same_record_after_restart",
        bool(items) and items[0].record.activation_ref == receipt.activation_ref,
    )
    check.that("provider_counted_every_call", calls == packet.provider_call_count and calls > 0)
    check.that("record_is_compact", 0 < written <= 4096)
    check.false_application(any(item.candidate_ref != receipt.candidate_ref for item in items))
    check.evidence = {
        "seed_status": receipt.status,
        "serialized_bytes": written,
        "restarted": restarted,
        "recall_status": packet.status,
        "readback_verified": packet.result_readback_verified,
        "result_count": packet.result_count,
        "provider_call_count": calls,
    }
    return check


def project_module_scope_isolation(ctx: Context) -> Check:
    """Another project, another module's surface, a sibling scope: nothing crosses."""
    check = Check()
    f = ctx.fixture
    meter = ctx.provider.meters["case"]
    calls_before = meter.calls
    project = ctx.fail_open(
        recall,
        f.request_for(project_ref=fx.OTHER_PROJECT),
        corpus=f.corpus,
        checkpoint=fx.read_checkpoint(fx.CORPUS_ID, project_ref=fx.OTHER_PROJECT),
        binding=f.binding,
        provider=ctx.provider,
        now=ctx.now,
    ).packet
    surface = ctx.fail_open(
        recall,
        f.request_for(surface_id=fx.OTHER_SURFACE),
        corpus=f.corpus,
        checkpoint=fx.read_checkpoint(fx.CORPUS_ID, surface_id=fx.OTHER_SURFACE),
        binding=f.binding,
        provider=ctx.provider,
        now=ctx.now,
    ).packet
    blocked_calls = meter.calls - calls_before
    sibling = ctx.fail_open(
        recall,
        f.request_for(project_ref=fx.OTHER_PROJECT),
        corpus=f.sibling_corpus,
        checkpoint=fx.read_checkpoint(fx.SIBLING_CORPUS_ID, project_ref=fx.OTHER_PROJECT),
        binding=f.sibling_binding,
        provider=ctx.provider,
        now=ctx.now,
    ).packet
    check.that("project_blocked", project.status == "guard_blocked")
    check.that("project_scope_mismatch", "project_scope_mismatch" in project.reason_codes)
    check.that("surface_blocked", surface.status == "guard_blocked")
    check.that("surface_scope_mismatch", "surface_scope_mismatch" in surface.reason_codes)
    check.that("blocked_requests_made_no_provider_call", blocked_calls == 0)
    check.that("sibling_scope_sees_nothing", sibling.status == "empty" and not sibling.results)
    check.false_application(blocked_calls)
    check.false_application(sibling.result_count)
    check.evidence = {
        "project_status": project.status,
        "surface_status": surface.status,
        "provider_call_count": blocked_calls,
        "sibling_status": sibling.status,
        "sibling_result_count": sibling.result_count,
    }
    return check


def _accepted(ctx: Context, summary: str | None = None) -> tuple[ActiveRecord, str]:
    """The fixture candidate (or an edit of it) proposed, accepted and activated in the
    lifecycle corpus; also the ref of its edited successor."""
    f = ctx.fixture
    checkpoint = fx.authority_checkpoint()
    proposal = issue_fix_proposal(f.event, observed_at=f.observed_at)
    if summary is not None:
        proposal = attrs.evolve(proposal, content_summary=summary)
    packet = propose(proposal, checkpoint, now=ctx.now)
    accept = ReviewDecision(
        decision="accept",
        reviewer_ref=_REVIEWER,
        review_ref=f"{_REVIEWER}:accept",
        reasoning_summary="The compact evidence and scope were reviewed.",
    )
    edit = ReviewDecision(
        decision="edit",
        reviewer_ref=_REVIEWER,
        review_ref=f"{_REVIEWER}:edit",
        reasoning_summary="The reviewer narrowed the policy to the edge case at hand.",
        edited_content_summary=fx.EDITED_SUMMARY,
    )
    # Activated at the observation time, as ingest does: the same bytes at any clock.
    record = activate(
        review(packet, accept, checkpoint=checkpoint, now=ctx.now),
        f.lifecycle_corpus,
        checkpoint=checkpoint,
        now=parse_timestamp(f.observed_at),
    )
    successor = review(packet, edit, checkpoint=checkpoint, now=ctx.now).record.candidate_ref
    return record, successor


def _relabelled(record: ActiveRecord, **changes: Any) -> ActiveRecord:
    changed = attrs.evolve(record, activation_ref="activation:pending", **changes)
    return attrs.evolve(changed, activation_ref=activation_ref_of(changed))


def supersede_revoke_rejection(ctx: Context) -> Check:
    """A superseded and a revoked copy of a record are never recalled."""
    check = Check()
    f = ctx.fixture
    record, successor = _accepted(ctx)
    superseded = _relabelled(
        record,
        lifecycle_state="superseded",
        supersession=Supersession(superseded_by_ref=successor),
    )
    revoked = _relabelled(
        record,
        lifecycle_state="revoked",
        revocation=Revocation(
            revoked_by_ref=fx.OWNER,
            revoked_at=f.observed_at,
            reason="Revoked by the corpus owner.",
        ),
    )
    scope = f.lifecycle_binding.provider_scope
    with ctx.seeding():
        for name, stored in (("superseded", superseded), ("revoked", revoked)):
            content = canonical_json(to_plain(stored)).decode("utf-8")
            # The writer built these bytes from the record: their first parse may reuse
            # it, as ingest's own readback does (any other bytes are decoded as usual).
            seed(content, stored)
            ctx.provider.write(
                scope=scope,
                key=f"stage4-{name}.json",
                content=content,
                timeout=f.lifecycle_binding.timeout_seconds,
            )
    session = ctx.fail_open(
        recall,
        f.request,
        corpus=f.lifecycle_corpus,
        checkpoint=fx.read_checkpoint(fx.LIFECYCLE_CORPUS_ID),
        binding=f.lifecycle_binding,
        provider=ctx.provider,
        now=ctx.now,
    )
    packet = session.packet
    check.that("recall_empty", packet.status == "empty")
    check.that("no_result", packet.result_count == 0 and not session.items)
    check.that("nothing_read_back_as_usable", not packet.result_readback_verified)
    check.that("provider_was_asked", packet.provider_call_count > 0)
    check.false_application(packet.result_count)
    check.evidence = {
        "recall_status": packet.status,
        "accepted_result_count": packet.result_count,
        "stored_states": ["revoked", "superseded"],
    }
    return check


def stale_source_rejection(ctx: Context) -> Check:
    """A stale revision stops recall before the provider, and a stale source stops a candidate."""
    check = Check()
    f = ctx.fixture
    meter = ctx.provider.meters["case"]
    calls_before = meter.calls
    packet = ctx.fail_open(
        recall,
        f.request_for(
            revision_ref=fx.STALE_REVISION,
            freshness_context=FreshnessContext(
                source_truth_current=True, source_revision=fx.STALE_REVISION
            ),
        ),
        corpus=f.corpus,
        checkpoint=f.checkpoint,
        binding=f.binding,
        provider=ctx.provider,
        now=ctx.now,
    ).packet
    calls = meter.calls - calls_before
    stale_event = attrs.evolve(
        f.event,
        guard_context=attrs.evolve(f.event.guard_context, source_freshness="stale"),
    )
    candidate = propose(
        issue_fix_proposal(stale_event, observed_at=f.observed_at),
        fx.authority_checkpoint(),
        now=ctx.now,
    )
    wanted = ("source_revision_mismatch", "request_revision_mismatch")
    check.that("recall_blocked", packet.status == "guard_blocked")
    check.that("source_revision_mismatch", wanted[0] in packet.reason_codes)
    check.that("request_revision_mismatch", wanted[1] in packet.reason_codes)
    check.that("no_provider_call", calls == 0)
    check.that("stale_candidate_blocked", candidate.status == "guard_blocked")
    check.that(
        "stale_candidate_reason",
        "source_freshness_not_current" in candidate.guard.reason_codes,
    )
    check.false_application(calls)
    check.evidence = {
        "recall_status": packet.status,
        "reason_codes": [code for code in packet.reason_codes if code in wanted],
        "provider_call_count": calls,
        "candidate_status": candidate.status,
    }
    return check


def multi_person_authority_conditions(ctx: Context) -> Check:
    """Authority binds the exact person and role: another actor gains nothing."""
    check = Check()
    f = ctx.fixture
    proposal = issue_fix_proposal(f.event, observed_at=f.observed_at)
    matching = propose(proposal, fx.authority_checkpoint(), now=ctx.now)
    other = propose(proposal, fx.authority_checkpoint(actor_ref=fx.OTHER_ACTOR), now=ctx.now)
    role = propose(proposal, fx.authority_checkpoint(actor_role=fx.OTHER_ROLE), now=ctx.now)
    attempted = review(
        other,
        ReviewDecision(
            decision="accept",
            reviewer_ref=_REVIEWER,
            review_ref=f"{_REVIEWER}:other-actor",
            reasoning_summary="An attempt to accept a candidate another actor vouched for.",
        ),
        now=ctx.now,
    )
    vouched = f.authority.checkpoint_for(
        actor_ref=fx.OTHER_ACTOR,
        actor_role=fx.ROLE,
        project_ref=fx.PROJECT,
        action_scopes=(fx.ACTION_SCOPE,),
        now=ctx.now,
    )
    check.that("matching_actor_passes", matching.status == "review_ready")
    check.that("other_actor_blocked", other.status == "guard_blocked")
    check.that("authority_actor_mismatch", "authority_actor_mismatch" in other.guard.reason_codes)
    check.that(
        "authority_actor_role_mismatch",
        "authority_actor_role_mismatch" in role.guard.reason_codes,
    )
    check.that("accept_becomes_no_write", attempted.effective_decision == "no_write")
    check.that("authority_source_does_not_vouch", vouched is None)
    check.false_application(attempted.status == "active")
    check.false_application(vouched is not None)
    check.evidence = {
        "matching_actor_guard": matching.guard.passed,
        "mismatched_actor_guard": other.guard.passed,
        "mismatched_role_guard": role.guard.passed,
        "reason_codes": sorted(set(other.guard.reason_codes) | set(role.guard.reason_codes)),
        "attempted_accept": attempted.effective_decision,
    }
    return check


def _recalled(ctx: Context) -> object:
    f = ctx.fixture
    return ctx.fail_open(
        recall,
        f.request,
        corpus=f.corpus,
        checkpoint=f.checkpoint,
        binding=f.binding,
        provider=ctx.provider,
        now=ctx.now,
    )


def gate_non_override(ctx: Context) -> Check:
    """An applied memory grants no authority, and no memory opens a closed gate."""
    check = Check()
    f = ctx.fixture
    session = _recalled(ctx)
    model = ctx.model()
    applied = ctx.fail_open(
        apply,
        fx.base_plan(),
        session,
        application_id="application:stage4:gate",
        artifact_ref=f"{fx.REVISION}:patch-plan",
        apply_memory=model,
    )
    receipt = applied.receipt
    items = session.items  # type: ignore[attr-defined]
    scopes = items[0].record.authority.action_scopes if items else ()
    closed = ctx.fail_open(
        recall,
        f.request,
        corpus=f.corpus,
        checkpoint=fx.read_checkpoint(fx.CORPUS_ID, verified=False),
        binding=f.binding,
        provider=ctx.provider,
        now=ctx.now,
    )
    calls_before = model.calls
    base = fx.base_plan()
    shut = ctx.fail_open(
        apply,
        base,
        closed,
        application_id="application:stage4:closed-gate",
        artifact_ref=f"{fx.REVISION}:patch-plan",
        apply_memory=model,
    )
    check.that("application_applied", applied.status == "applied")
    check.that("grants_no_new_action_authority", receipt.grants_new_action_authority is False)
    check.that("current_artifact_verified", receipt.current_artifact_verified)
    check.that("no_external_write", receipt.external_writes_performed is False)
    check.that("authority_not_widened", set(scopes) <= {fx.ACTION_SCOPE})
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
    applied = ctx.fail_open(
        apply,
        base,
        session,
        application_id="application:stage4:ranking",
        artifact_ref=f"{fx.REVISION}:patch-plan",
        apply_memory=ctx.model(),
    )
    unverified = ctx.fail_open(
        apply,
        base,
        session,
        application_id="application:stage4:unverified",
        artifact_ref=f"{fx.REVISION}:patch-plan",
        apply_memory=ctx.model(verify=False),
    )
    items = session.items  # type: ignore[attr-defined]
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
    check.false_application(unverified.status == "applied")
    check.evidence = {
        "top_candidate": top,
        "application_status": applied.status,
        "unverified_application_status": unverified.status,
        "memory_ref_digest_count": len(applied.receipt.memory_ref_digests),
    }
    return check


def large_edge_case_patch_protection(ctx: Context) -> Check:
    """PR #3237 routes to the design gate; the same fix, narrowed and evidenced, to the pilot."""
    del ctx
    check = Check()
    route = route_check(PR_3237_OBSERVATION)
    narrowed = route_check(
        attrs.evolve(
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
    )
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


CASES: Final[tuple[tuple[str, Callable[[Context], Check]], ...]] = (
    ("compact_restart_survival", compact_restart_survival),
    ("project_module_scope_isolation", project_module_scope_isolation),
    ("supersede_revoke_rejection", supersede_revoke_rejection),
    ("stale_source_rejection", stale_source_rejection),
    ("multi_person_authority_conditions", multi_person_authority_conditions),
    ("gate_non_override", gate_non_override),
    ("candidate_ranking_influence", candidate_ranking_influence),
    ("large_edge_case_patch_protection", large_edge_case_patch_protection),
)
