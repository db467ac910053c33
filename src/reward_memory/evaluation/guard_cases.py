"""The guard cases: scope isolation, stale sources and person-bound authority.

Each asks a real guard (recall's request guard, the candidate guard, the
authority source) to stop what must not pass, and checks that it does so before
any provider call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from reward_memory.adapters.issue_fix import issue_fix_proposal
from reward_memory.candidates import propose, review
from reward_memory.evaluation import fixture as fx
from reward_memory.evaluation.context import Check
from reward_memory.records.candidate import ReviewDecision
from reward_memory.records.recall import FreshnessContext

if TYPE_CHECKING:
    from reward_memory.evaluation.context import Context

__all__ = [
    "multi_person_authority_conditions",
    "project_module_scope_isolation",
    "stale_source_rejection",
]


def project_module_scope_isolation(ctx: Context) -> Check:
    """Another project, another module's surface, a sibling scope: nothing crosses."""
    check = Check()
    f = ctx.fixture
    meter = ctx.provider.meters["case"]
    calls_before = meter.calls
    project = ctx.recall(
        f.request_for(project_ref=fx.OTHER_PROJECT),
        corpus=f.corpus,
        checkpoint=fx.read_checkpoint(fx.CORPUS_ID, project_ref=fx.OTHER_PROJECT),
        binding=f.binding,
    ).packet
    surface = ctx.recall(
        f.request_for(surface_id=fx.OTHER_SURFACE),
        corpus=f.corpus,
        checkpoint=fx.read_checkpoint(fx.CORPUS_ID, surface_id=fx.OTHER_SURFACE),
        binding=f.binding,
    ).packet
    blocked_calls = meter.calls - calls_before
    sibling = ctx.recall(
        f.request_for(project_ref=fx.OTHER_PROJECT),
        corpus=f.sibling_corpus,
        checkpoint=fx.read_checkpoint(fx.SIBLING_CORPUS_ID, project_ref=fx.OTHER_PROJECT),
        binding=f.sibling_binding,
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


def stale_source_rejection(ctx: Context) -> Check:
    """A stale revision stops recall before the provider, and a stale source stops a candidate."""
    check = Check()
    f = ctx.fixture
    meter = ctx.provider.meters["case"]
    calls_before = meter.calls
    packet = ctx.recall(
        f.request_for(
            revision_ref=fx.STALE_REVISION,
            freshness_context=FreshnessContext(
                source_truth_current=True, source_revision=fx.STALE_REVISION
            ),
        ),
        corpus=f.corpus,
        checkpoint=f.checkpoint,
        binding=f.binding,
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
            reviewer_ref=fx.REVIEWER,
            review_ref=f"{fx.REVIEWER}:other-actor",
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
