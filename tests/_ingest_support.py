"""Builders shared by the ingest tests: events, corpora, policies, bindings, authority maps.

Two routes: the Issue Fix hard-policy route (needs a verified checkpoint from the
authority source) and a scoped-feedback soft-preference route (advisory: no
authority asked or given). Everything is built from typed records; ``changes``
replace fields.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import attrs

from reward_memory.adapters.issue_fix import IssueFixEvent, verified_contributor_event
from reward_memory.authority import AuthorityMap
from reward_memory.digests import short_digest
from reward_memory.ingestion import ingest
from reward_memory.records.authority import AuthorityGrant, AuthorityMapFile
from reward_memory.records.corpus import (
    CorpusDeclaration,
    CorpusFreshness,
    CorpusLifecycle,
    CorpusMaintenance,
    CorpusPrivacy,
    CorpusRetrieval,
    CorpusScope,
)
from reward_memory.records.ingest import IngestReceipt
from reward_memory.records.recall import ProviderBinding
from reward_memory.records.standing_policy import PolicyScope, StandingPolicy

NOW = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
OBSERVED = "2026-11-01T12:00:00Z"
WORKSPACE = "workspace:example"
PROJECT = "repository:example"
SURFACE = "issue_fix.patch_planning"
ACTOR = "github:user:maintainer"
ROLE = "verified_repository_core_contributor"
SCOPE = "issue_fix:scope_selection"
MAP_REF = "repository:authority-map"
HARD_SCOPE_REF = "repository:example/reward-memory/issue-fix-policies"
SOFT_SURFACE = "reviewer_artifact.summary"
SOFT_SCOPE_REF = "repository:example/reward-memory/review-preferences"


def hard_event(**changes: Any) -> IssueFixEvent:
    return attrs.evolve(verified_contributor_event(), **changes)


def hard_event_data(**changes: Any) -> dict[str, Any]:
    from reward_memory import wire

    data: dict[str, Any] = wire.dump(verified_contributor_event())
    data.update(changes)
    return data


def soft_event_data(
    summary: str = "Lead the review summary with the risk.", **changes: Any
) -> dict[str, Any]:
    data: dict[str, Any] = {
        "schema_version": "scoped_feedback_reward_memory_event_v0",
        "raw_content_captured": False,
        "feedback_ref": "feedback:review:7",
        "workspace_ref": WORKSPACE,
        "project_ref": PROJECT,
        "surface_id": SOFT_SURFACE,
        "target_class": "soft_preference",
        "content_summary": summary,
        "source": {
            "source_kind": "maintainer_feedback",
            "source_ref": "review:7:note:1",
            "actor_ref": ACTOR,
            "actor_role": "maintainer",
        },
        "reasoning": {
            "summary": "The maintainer asked for risk-first summaries.",
            "confidence": "medium",
            "confidence_basis": "One explicit request on a review.",
        },
        "guard_context": {
            "source_freshness": "current",
            "conflict_state": "clear",
            "current_artifact_verified": True,
        },
        "requested_action_scopes": [],
    }
    data.update(changes)
    return data


def _corpus(
    corpus_id: str, klass: str, surface: str, scope_ref: str, **changes: Any
) -> CorpusDeclaration:
    corpus = CorpusDeclaration(
        corpus_id=corpus_id,
        class_id=klass,
        provider_id="memory",
        owner_ref="repository:example:maintainers",
        source_of_truth="verified_contributor_corrections",
        read_authority="authority_scoped",
        write_authority="authorized_policy_source",
        scope=CorpusScope(workspace_ref=WORKSPACE, project_ref=PROJECT, surface_ids=(surface,)),
        freshness=CorpusFreshness(mode="source_truth_bound"),
        lifecycle=CorpusLifecycle(state="active"),
        retrieval=CorpusRetrieval(
            index_required=True, readback_required=True, application_receipt_required=True
        ),
        maintenance=CorpusMaintenance(
            writeback_triggers=("verified_contributor_policy_derived",),
            closure_policy="verified_actor_scope_then_canonical_policy_readback",
            retirement_authority="repository:example:maintainers",
        ),
        privacy=CorpusPrivacy(visibility="private", raw_content_in_registry=False),
        provider_scope_ref_digest=short_digest(scope_ref),
    )
    return attrs.evolve(corpus, **changes)


def hard_corpus(**changes: Any) -> CorpusDeclaration:
    return _corpus("issue_fix_policies", "hard_policy", SURFACE, HARD_SCOPE_REF, **changes)


def soft_corpus(**changes: Any) -> CorpusDeclaration:
    return _corpus("review_preferences", "soft_preference", SOFT_SURFACE, SOFT_SCOPE_REF, **changes)


def hard_policy(**changes: Any) -> StandingPolicy:
    policy = StandingPolicy(
        policy_id="policy:issue-fix-scope",
        owner_ref="repository:example:maintainers",
        reviewer_ref="reviewer:issue-fix-maintainers",
        authority_source_ref=MAP_REF,
        enabled=True,
        auto_activate=True,
        scope=PolicyScope(workspace_ref=WORKSPACE, project_ref=PROJECT, surface_ids=(SURFACE,)),
        allowed_target_classes=("hard_policy",),
        allowed_source_kinds=("maintainer_correction",),
        allowed_actor_roles=(ROLE,),
        allowed_action_scopes=(SCOPE,),
        raw_content_captured=False,
    )
    return attrs.evolve(policy, **changes)


def soft_policy(**changes: Any) -> StandingPolicy:
    policy = hard_policy(
        policy_id="policy:review-summary",
        scope=PolicyScope(
            workspace_ref=WORKSPACE, project_ref=PROJECT, surface_ids=(SOFT_SURFACE,)
        ),
        allowed_target_classes=("soft_preference",),
        allowed_source_kinds=("maintainer_feedback",),
        allowed_actor_roles=("maintainer",),
        allowed_action_scopes=(),
    )
    return attrs.evolve(policy, **changes)


def hard_binding(**changes: Any) -> ProviderBinding:
    base = ProviderBinding(
        corpus_id="issue_fix_policies",
        provider_id="memory",
        namespace="reward_memory",
        scope_ref=HARD_SCOPE_REF,
        timeout_seconds=5,
    )
    return attrs.evolve(base, **changes)


def soft_binding(**changes: Any) -> ProviderBinding:
    return hard_binding(corpus_id="review_preferences", scope_ref=SOFT_SCOPE_REF, **changes)


def grant(**changes: Any) -> AuthorityGrant:
    base = AuthorityGrant(
        actor_ref=ACTOR, actor_role=ROLE, project_refs=(PROJECT,), action_scopes=(SCOPE,)
    )
    return attrs.evolve(base, **changes)


def authority(*grants: AuthorityGrant, source_ref: str = MAP_REF) -> AuthorityMap:
    return AuthorityMap(AuthorityMapFile(source_ref=source_ref, grants=grants or (grant(),)))


def ingest_hard(event: Any = None, *, provider: Any = None, **changes: Any) -> IngestReceipt:
    """The hard-policy route, every argument overridable."""
    arguments: dict[str, Any] = {
        "adapter": "issue_fix",
        "corpus": hard_corpus(),
        "standing_policy": hard_policy(),
        "binding": hard_binding(),
        "provider": provider,
        "authority": authority(),
        "observed_at": OBSERVED,
        "execute": provider is not None,
        "now": NOW,
    }
    arguments.update(changes)
    return ingest(verified_contributor_event() if event is None else event, **arguments)


def ingest_soft(event: Any = None, *, provider: Any = None, **changes: Any) -> IngestReceipt:
    """The soft-preference route (no authority needed)."""
    arguments: dict[str, Any] = {
        "adapter": "scoped_feedback",
        "corpus": soft_corpus(),
        "standing_policy": soft_policy(),
        "binding": soft_binding(),
        "provider": provider,
        "authority": None,
        "observed_at": OBSERVED,
        "execute": provider is not None,
        "now": NOW,
    }
    arguments.update(changes)
    return ingest(soft_event_data() if event is None else event, **arguments)
