"""The Stage-4 fixture: neutral identities, the records every case shares, the fixture model.

Project identity is fixture data, not evaluator policy: one workspace, one
project, one revision, the Issue Fix patch-planning surface, and one hard-policy
corpus whose records come from a verified core contributor's correction, as an
authority map vouches for it. OpenViking appears only through the named PR
#3237 route observation (:data:`reward_memory.routing.PR_3237_OBSERVATION`).

Every run binds the fixture corpora in a namespace of its own
(``reward_memory_evaluation.<random run id>``), so an evaluation against a
user's store never touches the user's corpora, and two runs never see each
other's records.

:class:`FixtureModel` is the application callback of the ranking cases: a
deterministic stand-in for the caller's model that moves the focused fix to the
top of the plan. It reports what it used per call (``tokens`` 0: no model was
invoked; ``interruptions`` 0: it asked no maintainer), and the evaluation sums
those reports; it never invents a figure.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Final

import attrs

from reward_memory._frozen import frozen
from reward_memory.adapters.issue_fix import IssueFixEvent, issue_fix_proposal
from reward_memory.authority import AuthorityMap
from reward_memory.digests import short_digest
from reward_memory.grammars import format_utc, parse_timestamp
from reward_memory.records.authority import AuthorityGrant, AuthorityMapFile
from reward_memory.records.candidate import (
    AuthorityCheckpoint,
    CandidateGuardContext,
    CandidateReasoning,
    CandidateSource,
    Proposal,
    ReviewDecision,
)
from reward_memory.records.corpus import (
    CorpusDeclaration,
    CorpusFreshness,
    CorpusLifecycle,
    CorpusMaintenance,
    CorpusPrivacy,
    CorpusRetrieval,
    CorpusScope,
)
from reward_memory.records.recall import (
    FreshnessContext,
    ProviderBinding,
    ReadAuthorityCheckpoint,
    RecallQuery,
    RecallRequest,
)
from reward_memory.records.standing_policy import PolicyScope, StandingPolicy

if TYPE_CHECKING:
    from datetime import datetime

    from reward_memory.guarded_recall import RecallItem

__all__ = ["Fixture", "FixtureModel", "build_fixture"]

OBSERVED_AT: Final = "2026-07-14T10:00:00Z"
WORKSPACE: Final = "workspace:reward-memory-eval"
PROJECT: Final = "repository:fixture-project"
OTHER_PROJECT: Final = "repository:other-fixture-project"
OTHER_WORKSPACE: Final = "workspace:other-reward-memory-eval"
REVISION: Final = "revision:stage4"
STALE_REVISION: Final = "revision:stale"
SURFACE: Final = "issue_fix.patch_planning"
OTHER_SURFACE: Final = "semantic_preference.selection"
CORPUS_ID: Final = "reward_memory_policy_scopes"
LIFECYCLE_CORPUS_ID: Final = "reward_memory_policy_lifecycle"
SIBLING_CORPUS_ID: Final = "reward_memory_sibling_policies"
PROVIDER_BINDING_ID: Final = "evaluation_provider"
NAMESPACE: Final = "reward_memory_evaluation"
OWNER: Final = "provider_scope_owner"
ACTOR: Final = "github:user:maintainer"
OTHER_ACTOR: Final = "github:user:other"
ROLE: Final = "verified_repository_core_contributor"
OTHER_ROLE: Final = "maintainer"
ACTION_SCOPE: Final = "issue_fix:scope_selection"
MAP_REF: Final = "repository:authority-map"
SUMMARY: Final = (
    "Memory-core changes require relevant effect evidence and must not add a "
    "disproportionate patch for one narrow edge case."
)
EDITED_SUMMARY: Final = (
    "Memory-core changes need effect evidence; keep the patch focused on the narrow edge case."
)
QUERY: Final = "What reviewed policy constrains this patch?"
QUERY_SUMMARY: Final = "reviewed Issue Fix scope policy"
ARTIFACT_REF: Final = f"{REVISION}:patch-plan"
REVIEWER: Final = "review:reward-memory-stage4"
BROAD_PATCH: Final = "broad_generic_patch"
FOCUSED_FIX: Final = "focused_fix"


def _corpus(corpus_id: str, project_ref: str, scope_ref: str) -> CorpusDeclaration:
    return CorpusDeclaration(
        corpus_id=corpus_id,
        class_id="hard_policy",
        provider_id=PROVIDER_BINDING_ID,
        owner_ref=OWNER,
        source_of_truth="verified_contributor_corrections",
        read_authority="authority_scoped",
        write_authority="authorized_policy_source",
        scope=CorpusScope(workspace_ref=WORKSPACE, project_ref=project_ref, surface_ids=(SURFACE,)),
        freshness=CorpusFreshness(mode="revision_bound", source_revision=REVISION),
        lifecycle=CorpusLifecycle(state="active"),
        retrieval=CorpusRetrieval(
            index_required=True, readback_required=True, application_receipt_required=True
        ),
        maintenance=CorpusMaintenance(
            writeback_triggers=("verified_contributor_policy_derived",),
            closure_policy="verified_actor_scope_then_canonical_policy_readback",
            retirement_authority=OWNER,
        ),
        privacy=CorpusPrivacy(visibility="private", raw_content_in_registry=False),
        provider_scope_ref_digest=short_digest(scope_ref),
    )


def _binding(corpus_id: str, scope_ref: str, namespace: str) -> ProviderBinding:
    return ProviderBinding(
        corpus_id=corpus_id,
        provider_id=PROVIDER_BINDING_ID,
        namespace=namespace,
        scope_ref=scope_ref,
        timeout_seconds=5,
    )


def read_checkpoint(
    corpus_id: str, *, project_ref: str = PROJECT, surface_id: str = SURFACE, verified: bool = True
) -> ReadAuthorityCheckpoint:
    """The read checkpoint the caller's authority would give for one corpus and surface."""
    return ReadAuthorityCheckpoint(
        verified=verified,
        corpus_id=corpus_id,
        workspace_ref=WORKSPACE,
        project_ref=project_ref,
        surface_id=surface_id,
        read_authority="authority_scoped",
        source_ref=MAP_REF,
    )


def authority_checkpoint(*, actor_ref: str = ACTOR, actor_role: str = ROLE) -> AuthorityCheckpoint:
    """A verified authority checkpoint for ``actor_ref`` in ``actor_role`` on the project."""
    return AuthorityCheckpoint(
        verified=True,
        source_ref=MAP_REF,
        actor_ref=actor_ref,
        actor_role=actor_role,
        project_ref=PROJECT,
        action_scopes=(ACTION_SCOPE,),
    )


@frozen(kw_only=True)
class Fixture:
    """The records of one evaluation run (its bindings name the run's own namespace)."""

    observed_at: str
    event: IssueFixEvent
    corpus: CorpusDeclaration
    binding: ProviderBinding
    lifecycle_corpus: CorpusDeclaration
    lifecycle_binding: ProviderBinding
    sibling_corpus: CorpusDeclaration
    sibling_binding: ProviderBinding
    policy: StandingPolicy
    authority: AuthorityMap
    checkpoint: ReadAuthorityCheckpoint
    observed: Observed


@frozen(kw_only=True)
class Observed:
    """The requests and proposals that carry the observation time."""

    request: RecallRequest
    other_project_request: RecallRequest
    other_surface_request: RecallRequest
    stale_request: RecallRequest
    other_workspace_request: RecallRequest
    conflicted_request: RecallRequest
    proposal: Proposal
    stale_proposal: Proposal


def _observed(observed_at: str) -> Observed:
    request = attrs.evolve(REQUEST, observed_at=observed_at)
    stale_event = attrs.evolve(
        EVENT, guard_context=attrs.evolve(EVENT.guard_context, source_freshness="stale")
    )
    return Observed(
        request=request,
        other_project_request=attrs.evolve(request, project_ref=OTHER_PROJECT),
        other_surface_request=attrs.evolve(request, surface_id=OTHER_SURFACE),
        other_workspace_request=attrs.evolve(request, workspace_ref=OTHER_WORKSPACE),
        conflicted_request=attrs.evolve(request, conflict_state="unresolved"),
        stale_request=attrs.evolve(
            request,
            revision_ref=STALE_REVISION,
            freshness_context=FreshnessContext(
                source_truth_current=True, source_revision=STALE_REVISION
            ),
        ),
        proposal=issue_fix_proposal(EVENT, observed_at=observed_at),
        stale_proposal=issue_fix_proposal(stale_event, observed_at=observed_at),
    )


EVENT: Final = IssueFixEvent(
    raw_content_captured=False,
    issue_ref="fixture:issue:stage4",
    workspace_ref=WORKSPACE,
    repository_ref=PROJECT,
    surface_id=SURFACE,
    revision_ref=REVISION,
    target_class="hard_policy",
    content_summary=SUMMARY,
    source=CandidateSource(
        source_kind="maintainer_correction",
        source_ref="fixture:issue:stage4:comment:1",
        actor_ref=ACTOR,
        actor_role=ROLE,
    ),
    reasoning=CandidateReasoning(
        summary="A verified core contributor corrected a disproportionate edge-case patch.",
        confidence="high",
        confidence_basis="An explicit correction by a verified core contributor.",
    ),
    guard_context=CandidateGuardContext(
        source_freshness="current", conflict_state="clear", current_artifact_verified=True
    ),
    requested_action_scopes=(ACTION_SCOPE,),
)
POLICY: Final = StandingPolicy(
    policy_id="policy:stage4-evaluation",
    owner_ref=OWNER,
    reviewer_ref="review:reward-memory-stage4",
    authority_source_ref=MAP_REF,
    enabled=True,
    auto_activate=True,
    scope=PolicyScope(workspace_ref=WORKSPACE, project_ref=PROJECT, surface_ids=(SURFACE,)),
    allowed_target_classes=("hard_policy",),
    allowed_source_kinds=("maintainer_correction",),
    allowed_actor_roles=(ROLE,),
    allowed_action_scopes=(ACTION_SCOPE,),
    raw_content_captured=False,
)
AUTHORITY: Final = AuthorityMap(
    AuthorityMapFile(
        source_ref=MAP_REF,
        grants=(
            AuthorityGrant(
                actor_ref=ACTOR,
                actor_role=ROLE,
                project_refs=(PROJECT,),
                action_scopes=(ACTION_SCOPE,),
            ),
        ),
    )
)
REQUEST: Final = RecallRequest(
    mode="function_boundary",
    surface_id=SURFACE,
    workspace_ref=WORKSPACE,
    project_ref=PROJECT,
    revision_ref=REVISION,
    queries=(RecallQuery(query=QUERY, query_summary=QUERY_SUMMARY),),
    limit=3,
    observed_at=OBSERVED_AT,
    conflict_state="clear",
    freshness_context=FreshnessContext(source_truth_current=True, source_revision=REVISION),
)
_EARLIEST: Final = parse_timestamp(OBSERVED_AT)


SCOPE_REF: Final = f"{PROJECT}/reward-memory-evaluation/policies"
LIFECYCLE_SCOPE_REF: Final = f"{PROJECT}/reward-memory-evaluation/lifecycle"
# A sibling whose scope ref only extends the main one (.../policies vs .../policies-sibling).
SIBLING_SCOPE_REF: Final = f"{PROJECT}/reward-memory-evaluation/policies-sibling"
CORPUS: Final = _corpus(CORPUS_ID, PROJECT, SCOPE_REF)
LIFECYCLE_CORPUS: Final = _corpus(LIFECYCLE_CORPUS_ID, PROJECT, LIFECYCLE_SCOPE_REF)
SIBLING_CORPUS: Final = _corpus(SIBLING_CORPUS_ID, OTHER_PROJECT, SIBLING_SCOPE_REF)
CHECKPOINT: Final = read_checkpoint(CORPUS_ID)
OTHER_PROJECT_CHECKPOINT: Final = read_checkpoint(CORPUS_ID, project_ref=OTHER_PROJECT)
OTHER_SURFACE_CHECKPOINT: Final = read_checkpoint(CORPUS_ID, surface_id=OTHER_SURFACE)
UNVERIFIED_CHECKPOINT: Final = read_checkpoint(CORPUS_ID, verified=False)
LIFECYCLE_CHECKPOINT: Final = read_checkpoint(LIFECYCLE_CORPUS_ID)
SIBLING_CHECKPOINT: Final = read_checkpoint(SIBLING_CORPUS_ID, project_ref=OTHER_PROJECT)
AUTHORITY_CHECKPOINT: Final = authority_checkpoint()
OTHER_ACTOR_CHECKPOINT: Final = authority_checkpoint(actor_ref=OTHER_ACTOR)
OTHER_ROLE_CHECKPOINT: Final = authority_checkpoint(actor_role=OTHER_ROLE)
_REVIEWED: Final = "The compact evidence and scope were reviewed."
ACCEPT: Final = ReviewDecision(
    decision="accept",
    reviewer_ref=REVIEWER,
    review_ref=f"{REVIEWER}:accept",
    reasoning_summary=_REVIEWED,
)
EDIT: Final = ReviewDecision(
    decision="edit",
    reviewer_ref=REVIEWER,
    review_ref=f"{REVIEWER}:edit",
    reasoning_summary="The reviewer narrowed the policy to the edge case at hand.",
    edited_content_summary=EDITED_SUMMARY,
)
OTHER_ACTOR_ACCEPT: Final = ReviewDecision(
    decision="accept",
    reviewer_ref=REVIEWER,
    review_ref=f"{REVIEWER}:other-actor",
    reasoning_summary="An attempt to accept a candidate another actor vouched for.",
)
_OBSERVED: Final = _observed(OBSERVED_AT)


def build_fixture(now: datetime) -> Fixture:
    """The records of a new run: its own namespace (the other records are constants);
    observed at the fixture time, or at ``now`` when that is earlier (nothing is
    observed in the future).

    The corpora are fixture data and fixed; where their records live is the
    binding's business, and each run binds them in a namespace of its own
    (``reward_memory_evaluation.<run id>``), so two runs on one store, or a run
    and the store's own corpora, never share a document.
    """
    # Not secrets.token_hex: its import costs the CLI ~3 ms. "." and not ":" as the
    # separator: the secret-scan prefilter passes "word:..." on to the full scan,
    # which a new namespace string would pay on every run; and digits, not hex: random
    # letters now and then spell a vendor key's prefix and send the id to the full scan.
    namespace = f"{NAMESPACE}.{int.from_bytes(os.urandom(6), 'big'):015d}"
    observed, parts = OBSERVED_AT, _OBSERVED
    if now < _EARLIEST:
        observed = format_utc(now)
        parts = _observed(observed)
    return Fixture(
        observed_at=observed,
        event=EVENT,
        corpus=CORPUS,
        binding=_binding(CORPUS_ID, SCOPE_REF, namespace),
        lifecycle_corpus=LIFECYCLE_CORPUS,
        lifecycle_binding=_binding(LIFECYCLE_CORPUS_ID, LIFECYCLE_SCOPE_REF, namespace),
        sibling_corpus=SIBLING_CORPUS,
        sibling_binding=_binding(SIBLING_CORPUS_ID, SIBLING_SCOPE_REF, namespace),
        policy=POLICY,
        authority=AUTHORITY,
        checkpoint=CHECKPOINT,
        observed=parts,
    )


class FixtureModel:
    """The ranking cases' application callback (see the module docs).

    With ``verify=False`` it claims an application without having verified the
    current artifact; with ``cite`` it attributes the application to that ref instead
    of the recalled item's (one this recall never returned): the application seam must
    refuse either decision.
    """

    def __init__(self, *, verify: bool = True, cite: str | None = None) -> None:
        self.verify = verify
        self.cite = cite
        self.calls = 0
        self.tokens = 0
        self.interruptions = 0

    def __call__(self, base_output: Any, items: tuple[RecallItem, ...]) -> dict[str, Any]:
        self.calls += 1
        self.tokens += 0  # deterministic: no model invoked, so none used (its report)
        candidates = list(base_output["candidates"])
        reordered = [name for name in candidates if name == FOCUSED_FIX] + [
            name for name in candidates if name != FOCUSED_FIX
        ]
        return {
            "outcome": "applied",
            "output": {"candidates": reordered},
            "memory_refs": [self.cite or items[0].provider_ref],
            "reasoning_summary": (
                "The reviewed policy asks for a focused fix over a broad generic patch."
            ),
            "current_artifact_verified": self.verify,
        }


def base_plan() -> dict[str, Any]:
    """The caller's plan without memory: the broad patch first."""
    return {"candidates": [BROAD_PATCH, FOCUSED_FIX]}
