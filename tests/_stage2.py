"""Builders shared by the Stage-2 tests: proposals, checkpoints, reviews and corpora.

Everything is built from typed records (the fast path); ``overrides`` replace
top-level proposal fields, and the nested helpers take keyword overrides too.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import attrs

from reward_memory.records.candidate import (
    AuthorityCheckpoint,
    CandidateGuardContext,
    CandidateReasoning,
    CandidateSource,
    Proposal,
    ReviewDecision,
)
from reward_memory.records.corpus import CorpusDeclaration, CorpusFreshness, CorpusScope
from reward_memory.records.envelope import RecordScope
from reward_memory.registry import reference_corpus

NOW = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)
GOLDEN_REF = "candidate:0e073f348a2a6c3ffc3c"
ACTOR = "github:user:maintainer"
ROLE = "verified_repository_core_contributor"
PROJECT = "repository:example"
WORKSPACE = "workspace:example"
SURFACE = "issue_fix.patch_planning"
SCOPE_SELECTION = "issue_fix:scope_selection"
REVISION = "revision:abc123"
SUMMARY = "Keep focused fixes within the affected module unless broader evidence is present."

# Class -> reference corpus family with the same class (re-scoped by corpus_for).
_FAMILY = {
    "hard_policy": "authority_policy_sources",
    "soft_preference": "scoped_preferences",
    "procedural_experience": "distilled_experiences",
}


def source(**overrides: Any) -> CandidateSource:
    values: dict[str, Any] = {
        "source_kind": "maintainer_correction",
        "source_ref": "github:example/repository#42:comment:1",
        "actor_ref": ACTOR,
        "actor_role": ROLE,
    }
    values.update(overrides)
    return CandidateSource(**values)


def scope(**overrides: Any) -> RecordScope:
    values: dict[str, Any] = {
        "workspace_ref": WORKSPACE,
        "project_ref": PROJECT,
        "surface_ids": (SURFACE,),
        "revision_ref": REVISION,
    }
    values.update(overrides)
    return RecordScope(**values)


def reasoning(**overrides: Any) -> CandidateReasoning:
    values: dict[str, Any] = {
        "summary": "The maintainer corrected an over-broad patch.",
        "confidence": "high",
        "confidence_basis": "An explicit correction by a verified core contributor.",
    }
    values.update(overrides)
    return CandidateReasoning(**values)


def context(**overrides: Any) -> CandidateGuardContext:
    values: dict[str, Any] = {
        "source_freshness": "current",
        "conflict_state": "clear",
        "current_artifact_verified": True,
    }
    values.update(overrides)
    return CandidateGuardContext(**values)


def proposal(**overrides: Any) -> Proposal:
    """The reference §5.3 fixture as a proposal (golden ref), with overrides."""
    values: dict[str, Any] = {
        "raw_content_captured": False,
        "target_class": "hard_policy",
        "content_summary": SUMMARY,
        "source": source(),
        "scope": scope(),
        "reasoning": reasoning(),
        "guard_context": context(),
        "requested_action_scopes": (SCOPE_SELECTION,),
    }
    values.update(overrides)
    return Proposal(**values)


def advisory(target_class: str = "soft_preference", **overrides: Any) -> Proposal:
    """A passing advisory proposal (no action scopes)."""
    values: dict[str, Any] = {"target_class": target_class, "requested_action_scopes": ()}
    values.update(overrides)
    return proposal(**values)


def checkpoint(**overrides: Any) -> AuthorityCheckpoint:
    """The fixture's verified checkpoint, with overrides."""
    values: dict[str, Any] = {
        "verified": True,
        "source_ref": "repository:authority-map",
        "actor_ref": ACTOR,
        "actor_role": ROLE,
        "project_ref": PROJECT,
        "action_scopes": (SCOPE_SELECTION,),
    }
    values.update(overrides)
    return AuthorityCheckpoint(**values)


def decision(kind: str = "accept", **overrides: Any) -> ReviewDecision:
    values: dict[str, Any] = {
        "decision": kind,
        "reviewer_ref": "github:user:reviewer",
        "review_ref": f"review:test:{kind}",
        "reasoning_summary": "The compact evidence and scope were reviewed.",
    }
    if kind == "edit":
        values["edited_content_summary"] = "Keep focused fixes inside the module under repair."
    values.update(overrides)
    return ReviewDecision(**values)


def corpus_for(
    target_class: str = "hard_policy",
    *,
    project_ref: str = PROJECT,
    surfaces: tuple[str, ...] = (SURFACE,),
    freshness: CorpusFreshness | None = None,
    **scope_overrides: Any,
) -> CorpusDeclaration:
    """A reference corpus of ``target_class``, re-scoped to the test workspace and project."""
    base = reference_corpus(_FAMILY[target_class])
    values: dict[str, Any] = {
        "workspace_ref": WORKSPACE,
        "project_ref": project_ref,
        "surface_ids": surfaces,
    }
    values.update(scope_overrides)
    changes: dict[str, Any] = {"scope": CorpusScope(**values)}
    if freshness is None and base.freshness.mode == "revision_bound":
        freshness = CorpusFreshness(mode="revision_bound", source_revision=REVISION)
    if freshness is not None:
        changes["freshness"] = freshness
    return attrs.evolve(base, **changes)
