"""The Issue Fix adapter: a compact issue event mapped onto the shared candidate contract.

Field mapping only (reference §5.3, §5.4): ``issue_ref`` stays in the adapter
packet, ``repository_ref`` becomes ``scope.project_ref``, ``surface_id``
becomes ``scope.surface_ids = [surface_id]``, ``revision_ref`` becomes
``scope.revision_ref``; everything else passes through to
:func:`reward_memory.candidates.propose`, which owns every guard and lifecycle
decision. The authority checkpoint is the caller's, from its own authority
source: the adapter never derives one from the event (differs from the
original, whose ingest path built it from the event's own claims).

``issue_fix_reward_memory_event_v0`` is a strict field set: any other field
(``comment_body``, ``raw_comment``, ``source.raw``, ...) is rejected and named.
It has the original's fields plus an optional ``reasoning.confidence_basis``
(absent, as in the original, the record names a fixed "not stated" basis).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final, Literal

import attrs

from reward_memory._frozen import frozen
from reward_memory.adapters._proposal import event_proposal
from reward_memory.candidates import propose
from reward_memory.records import _fields as f
from reward_memory.records._plain import as_record
from reward_memory.records.candidate import (
    CANDIDATE_CLASSES,
    AuthorityCheckpoint,
    CandidateClass,
    CandidateGuardContext,
    CandidatePacket,
    CandidateReasoning,
    CandidateSource,
    Proposal,
    is_record,
    no_raw_content,
)

if TYPE_CHECKING:
    from collections.abc import Mapping
    from datetime import datetime

__all__ = [
    "ADAPTER_ID",
    "ISSUE_FIX_ADAPTER_SCHEMA",
    "ISSUE_FIX_EVENT_SCHEMA",
    "IssueFixCandidateAdapter",
    "IssueFixEvent",
    "build_issue_fix_candidate",
    "issue_fix_event",
    "issue_fix_proposal",
    "verified_contributor_candidate",
    "verified_contributor_checkpoint",
    "verified_contributor_event",
]

ADAPTER_ID: Final = "issue_fix_maintainer_feedback"
ISSUE_FIX_EVENT_SCHEMA: Final = "issue_fix_reward_memory_event_v0"
ISSUE_FIX_ADAPTER_SCHEMA: Final = "issue_fix_reward_memory_candidate_adapter_v0"


@frozen(kw_only=True)
class IssueFixEvent:
    """``issue_fix_reward_memory_event_v0``: a compact, already-distilled Issue Fix event."""

    schema_version: Literal["issue_fix_reward_memory_event_v0"] = f.const(ISSUE_FIX_EVENT_SCHEMA)
    raw_content_captured: Literal[False] = no_raw_content()
    issue_ref: str = f.text(160)
    workspace_ref: str = f.token()
    repository_ref: str = f.token()
    surface_id: str = f.surface_id()
    revision_ref: str | None = f.optional_token()
    target_class: CandidateClass = f.enum(*CANDIDATE_CLASSES)
    content_summary: str = f.text(500)
    source: CandidateSource = attrs.field(validator=is_record(CandidateSource))
    reasoning: CandidateReasoning = attrs.field(validator=is_record(CandidateReasoning))
    guard_context: CandidateGuardContext = attrs.field(validator=is_record(CandidateGuardContext))
    requested_action_scopes: tuple[str, ...] = f.token_list(max_items=12)


@frozen(kw_only=True)
class IssueFixCandidateAdapter:
    """``issue_fix_reward_memory_candidate_adapter_v0``: the shared candidate, plus the issue."""

    ok: Literal[True] = f.const(True)
    schema_version: Literal["issue_fix_reward_memory_candidate_adapter_v0"] = f.const(
        ISSUE_FIX_ADAPTER_SCHEMA
    )
    issue_ref: str = f.text(160)
    surface_id: str = f.surface_id()
    shared_candidate: CandidatePacket = attrs.field(validator=is_record(CandidatePacket))
    adapter_role: Literal["field_mapping_only_shared_core_owns_semantics_and_lifecycle"] = f.const(
        "field_mapping_only_shared_core_owns_semantics_and_lifecycle"
    )
    fresh_execution_context_source: Literal["existing_loopx_control_plane"] = f.const(
        "existing_loopx_control_plane"
    )
    provider_write_performed: Literal[False] = f.const(False)
    external_writes_performed: Literal[False] = f.const(False)
    raw_content_captured: Literal[False] = f.const(False)


def issue_fix_event(event: IssueFixEvent | Mapping[str, Any]) -> IssueFixEvent:
    """A typed event; a mapping is validated against its strict schema first (fields named)."""
    return as_record(event, IssueFixEvent, what="an Issue Fix event")


def issue_fix_proposal(
    event: IssueFixEvent | Mapping[str, Any], *, observed_at: str | None = None
) -> Proposal:
    """Map an Issue Fix event onto the shared proposal (no semantics, no authority).

    ``observed_at`` is when the caller first observed the event: kept on the
    candidate, used as the active record's source time, and -- like every set
    candidate field -- part of ``candidate_ref``. :func:`~reward_memory.ingestion.ingest`
    leaves it off the candidate (its ``observed_at`` is the record's first-observation
    time instead), so an ingested event has the original's ``candidate_ref``; the
    same event proposed here with ``observed_at`` has another.
    """
    typed = issue_fix_event(event)
    scope = {
        "workspace_ref": typed.workspace_ref,
        "project_ref": typed.repository_ref,
        "surface_ids": (typed.surface_id,),
        "revision_ref": typed.revision_ref,
        "user_ref": None,
        "peer_ref": None,
        "session_ref": None,
    }
    return event_proposal(
        typed, scope, derivable=type(typed) is IssueFixEvent, observed_at=observed_at
    )


def build_issue_fix_candidate(
    event: IssueFixEvent | Mapping[str, Any],
    checkpoint: AuthorityCheckpoint | Mapping[str, Any] | None = None,
    *,
    now: datetime | None = None,
    observed_at: str | None = None,
) -> IssueFixCandidateAdapter:
    """Propose the event's candidate through the shared core; wrap it in the adapter packet.

    ``checkpoint`` is the caller's verified authority (``None``: unverified).
    """
    typed = issue_fix_event(event)
    shared = propose(issue_fix_proposal(typed, observed_at=observed_at), checkpoint, now=now)
    return IssueFixCandidateAdapter(
        issue_ref=typed.issue_ref, surface_id=typed.surface_id, shared_candidate=shared
    )


# -- the verified-contributor fixture (reference §5.3) ------------------------------------


def verified_contributor_event() -> IssueFixEvent:
    """The fixture event: a verified core contributor's correction of an over-broad fix."""
    return IssueFixEvent(
        raw_content_captured=False,
        issue_ref="github:example/repository#42",
        workspace_ref="workspace:example",
        repository_ref="repository:example",
        surface_id="issue_fix.patch_planning",
        revision_ref="revision:abc123",
        target_class="hard_policy",
        content_summary=(
            "Keep focused fixes within the affected module unless broader evidence is present."
        ),
        source=CandidateSource(
            source_kind="maintainer_correction",
            source_ref="github:example/repository#42:comment:1",
            actor_ref="github:user:maintainer",
            actor_role="verified_repository_core_contributor",
        ),
        reasoning=CandidateReasoning(
            summary=(
                "The maintainer corrected an over-broad patch; the compact policy keeps fixes "
                "inside the affected module."
            ),
            confidence="high",
            confidence_basis=(
                "An explicit correction by a verified core contributor on the issue itself."
            ),
        ),
        guard_context=CandidateGuardContext(
            source_freshness="current", conflict_state="clear", current_artifact_verified=True
        ),
        requested_action_scopes=("issue_fix:scope_selection",),
    )


def verified_contributor_checkpoint() -> AuthorityCheckpoint:
    """The fixture's checkpoint, as the caller's authority map would verify it."""
    return AuthorityCheckpoint(
        verified=True,
        source_ref="repository:authority-map",
        actor_ref="github:user:maintainer",
        actor_role="verified_repository_core_contributor",
        project_ref="repository:example",
        action_scopes=("issue_fix:scope_selection",),
    )


def verified_contributor_candidate(*, now: datetime | None = None) -> IssueFixCandidateAdapter:
    """The fixture through the adapter: ``review_ready``, ``candidate:0e073f348a2a6c3ffc3c``."""
    return build_issue_fix_candidate(
        verified_contributor_event(), verified_contributor_checkpoint(), now=now
    )
