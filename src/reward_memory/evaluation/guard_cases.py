"""The guard cases: scope isolation, stale sources and person-bound authority.

Each asks a real guard (recall's request guard, the candidate guard, the
authority source) to stop what must not pass, and checks that it does so before
any provider call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reward_memory.candidates import propose, review
from reward_memory.evaluation import fixture as fx
from reward_memory.evaluation.context import Check
from reward_memory.evaluation.store_cases import lifecycle_seeds, recall_lifecycle, store_seed

if TYPE_CHECKING:
    from reward_memory.evaluation.context import Context
    from reward_memory.guarded_recall import RecallSession

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
        f.observed.other_project_request,
        corpus=f.corpus,
        checkpoint=fx.OTHER_PROJECT_CHECKPOINT,
        binding=f.binding,
    ).packet
    surface = ctx.recall(
        f.observed.other_surface_request,
        corpus=f.corpus,
        checkpoint=fx.OTHER_SURFACE_CHECKPOINT,
        binding=f.binding,
    ).packet
    workspace = ctx.recall(
        f.observed.other_workspace_request,
        corpus=f.corpus,
        checkpoint=f.checkpoint,
        binding=f.binding,
    ).packet
    blocked_calls = meter.calls - calls_before
    sibling = ctx.recall(
        f.observed.other_project_request,
        corpus=f.sibling_corpus,
        checkpoint=fx.SIBLING_CHECKPOINT,
        binding=f.sibling_binding,
    ).packet
    home, leaked = _store_isolation(ctx)
    shared, foreign = _shared_scope(ctx)
    expected_reads = len(lifecycle_seeds(ctx.fixture.observed_at).foreign)
    check.that(
        "shared_scope_read_every_foreign_record",
        shared.packet.provider_call_count >= 1 + expected_reads,
    )
    check.that("shared_scope_returns_nothing_foreign", foreign == 0)
    check.that("project_blocked", project.status == "guard_blocked")
    check.that("project_scope_mismatch", "project_scope_mismatch" in project.reason_codes)
    check.that("surface_blocked", surface.status == "guard_blocked")
    check.that("surface_scope_mismatch", "surface_scope_mismatch" in surface.reason_codes)
    check.that("workspace_blocked", workspace.status == "guard_blocked")
    check.that("workspace_scope_mismatch", "workspace_scope_mismatch" in workspace.reason_codes)
    check.that("blocked_requests_made_no_provider_call", blocked_calls == 0)
    check.that("sibling_scope_sees_nothing", sibling.status == "empty" and not sibling.results)
    # The store itself keeps them apart, not only the item filter: a search in the sibling
    # scope, or in another namespace under the same scope ref, finds none of the records
    # the same search finds at home (the control: it does find them there).
    check.that("home_scope_search_finds_its_records", home >= 1)
    check.that("store_keeps_sibling_and_namespace_apart", leaked == 0)
    check.false_application(blocked_calls)
    check.false_application(sibling.result_count)
    check.false_application(foreign)
    check.evidence = {
        "project_status": project.status,
        "surface_status": surface.status,
        "provider_call_count": blocked_calls,
        "sibling_status": sibling.status,
        "sibling_result_count": sibling.result_count,
        "shared_scope_result_count": shared.packet.result_count,
        "shared_scope_foreign_result_count": foreign,
        "store_leaked_hit_count": leaked,
    }
    return check


def _store_isolation(ctx: Context) -> tuple[int, int]:
    """(hits at home, hits elsewhere) of one search: the main scope, then the sibling scope
    (its ref only extends the main one) and the main scope ref in another namespace."""
    from reward_memory.providers.spi import ProviderScope  # noqa: PLC0415

    f = ctx.fixture
    home = f.binding.provider_scope
    query = f.observed.other_project_request.queries[0].query
    elsewhere = (
        f.sibling_binding.provider_scope,
        ProviderScope(namespace=f"{home.namespace}.other", scope_ref=home.scope_ref),
    )
    timeout = float(f.binding.timeout_seconds)
    found = len(ctx.provider.search(scope=home, query=query, limit=8, timeout=timeout).hits)
    leaked = sum(
        len(ctx.provider.search(scope=scope, query=query, limit=8, timeout=timeout).hits)
        for scope in elsewhere
    )
    return found, leaked


def _shared_scope(ctx: Context) -> tuple[RecallSession, int]:
    """One provider scope shared with records of another project, workspace, surface and
    corpus (the lifecycle scope; the same content, so the search finds every one): a
    matching recall reads each back and returns none -- the item filter, not the store,
    keeps them out. The lifecycle case that follows recalls the scope's own record beside
    them (its control). Returns the session and the foreign results seen."""
    seeds = lifecycle_seeds(ctx.fixture.observed_at)
    with ctx.seeding():
        for name, content in seeds.foreign:
            store_seed(ctx, name, content)
    session = recall_lifecycle(ctx, limit=8)  # no limit hides one of them
    foreign = sum(item.record.activation_ref != seeds.active_ref for item in session.items)
    return session, foreign


def stale_source_rejection(ctx: Context) -> Check:
    """A stale revision stops recall before the provider, and a stale source stops a candidate."""
    check = Check()
    f = ctx.fixture
    meter = ctx.provider.meters["case"]
    calls_before = meter.calls
    packet = ctx.recall(
        f.observed.stale_request,
        corpus=f.corpus,
        checkpoint=f.checkpoint,
        binding=f.binding,
    ).packet
    # A higher authority's conflict left unresolved: recall waits for it, never guesses.
    conflicted = ctx.recall(
        f.observed.conflicted_request,
        corpus=f.corpus,
        checkpoint=f.checkpoint,
        binding=f.binding,
    ).packet
    calls = meter.calls - calls_before
    # The same event, its source no longer current (mapped by the Issue Fix adapter).
    candidate = propose(f.observed.stale_proposal, fx.AUTHORITY_CHECKPOINT, now=ctx.now)
    wanted = ("source_revision_mismatch", "request_revision_mismatch")
    check.that("recall_blocked", packet.status == "guard_blocked")
    check.that("source_revision_mismatch", wanted[0] in packet.reason_codes)
    check.that("request_revision_mismatch", wanted[1] in packet.reason_codes)
    check.that("conflict_blocked", conflicted.status == "guard_blocked")
    check.that("unresolved_conflict", "unresolved_conflict" in conflicted.reason_codes)
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
    proposal = f.observed.proposal
    matching = propose(proposal, fx.AUTHORITY_CHECKPOINT, now=ctx.now)
    other = propose(proposal, fx.OTHER_ACTOR_CHECKPOINT, now=ctx.now)
    role = propose(proposal, fx.OTHER_ROLE_CHECKPOINT, now=ctx.now)
    attempted = review(other, fx.OTHER_ACTOR_ACCEPT, now=ctx.now)
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
