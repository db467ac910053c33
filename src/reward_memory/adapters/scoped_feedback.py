"""The generic scoped-feedback adapter: any module-qualified surface onto the shared candidate.

Field mapping only (reference §5.4): ``scope = {workspace_ref, project_ref,
user_ref, peer_ref, session_ref, surface_ids: [surface_id], revision_ref}``;
everything else passes through to :func:`reward_memory.candidates.propose`,
which owns every guard and lifecycle decision. The module (or its model)
distils the event first: a source reference, the verified actor and role, the
exact scope, a compact summary, reasoning and current-artifact evidence --
never a raw feedback body. The authority checkpoint is the caller's, never
derived from the event (differs from the original).

``scoped_feedback_reward_memory_event_v0`` is a strict field set: any other
field (``comment_body``, ``raw_comment``, ``source.raw``, ...) is rejected and
named. It has the original's fields plus an optional ``reasoning.confidence_basis``.
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
    "SCOPED_FEEDBACK_ADAPTER_SCHEMA",
    "SCOPED_FEEDBACK_EVENT_SCHEMA",
    "ScopedFeedbackCandidateAdapter",
    "ScopedFeedbackEvent",
    "build_scoped_feedback_candidate",
    "scoped_feedback_event",
    "scoped_feedback_proposal",
]

ADAPTER_ID: Final = "scoped_feedback"
SCOPED_FEEDBACK_EVENT_SCHEMA: Final = "scoped_feedback_reward_memory_event_v0"
SCOPED_FEEDBACK_ADAPTER_SCHEMA: Final = "scoped_feedback_reward_memory_candidate_adapter_v0"


@frozen(kw_only=True)
class ScopedFeedbackEvent:
    """``scoped_feedback_reward_memory_event_v0``: compact feedback about one module surface."""

    schema_version: Literal["scoped_feedback_reward_memory_event_v0"] = f.const(
        SCOPED_FEEDBACK_EVENT_SCHEMA
    )
    raw_content_captured: Literal[False] = no_raw_content()
    feedback_ref: str = f.text(160)
    workspace_ref: str = f.token()
    project_ref: str = f.token()
    user_ref: str | None = f.optional_token()
    peer_ref: str | None = f.optional_token()
    session_ref: str | None = f.optional_token()
    surface_id: str = f.surface_id()
    revision_ref: str | None = f.optional_token()
    target_class: CandidateClass = f.enum(*CANDIDATE_CLASSES)
    content_summary: str = f.text(500)
    source: CandidateSource = attrs.field(validator=is_record(CandidateSource))
    reasoning: CandidateReasoning = attrs.field(validator=is_record(CandidateReasoning))
    guard_context: CandidateGuardContext = attrs.field(validator=is_record(CandidateGuardContext))
    requested_action_scopes: tuple[str, ...] = f.token_list(max_items=12)


@frozen(kw_only=True)
class ScopedFeedbackCandidateAdapter:
    """``scoped_feedback_reward_memory_candidate_adapter_v0``: shared candidate and feedback ref."""

    ok: Literal[True] = f.const(True)
    schema_version: Literal["scoped_feedback_reward_memory_candidate_adapter_v0"] = f.const(
        SCOPED_FEEDBACK_ADAPTER_SCHEMA
    )
    feedback_ref: str = f.text(160)
    surface_id: str = f.surface_id()
    shared_candidate: CandidatePacket = attrs.field(validator=is_record(CandidatePacket))
    adapter_role: Literal["strict_field_mapping_only_shared_core_owns_lifecycle"] = f.const(
        "strict_field_mapping_only_shared_core_owns_lifecycle"
    )
    provider_write_performed: Literal[False] = f.const(False)
    external_writes_performed: Literal[False] = f.const(False)
    raw_content_captured: Literal[False] = f.const(False)


def scoped_feedback_event(event: ScopedFeedbackEvent | Mapping[str, Any]) -> ScopedFeedbackEvent:
    """A typed event; a mapping is validated against its strict schema first (fields named)."""
    return as_record(event, ScopedFeedbackEvent, what="a scoped feedback event")


def scoped_feedback_proposal(
    event: ScopedFeedbackEvent | Mapping[str, Any], *, observed_at: str | None = None
) -> Proposal:
    """Map a scoped feedback event onto the shared proposal (no semantics, no authority)."""
    typed = scoped_feedback_event(event)
    scope = {
        "workspace_ref": typed.workspace_ref,
        "project_ref": typed.project_ref,
        "surface_ids": (typed.surface_id,),
        "revision_ref": typed.revision_ref,
        "user_ref": typed.user_ref,
        "peer_ref": typed.peer_ref,
        "session_ref": typed.session_ref,
    }
    return event_proposal(
        typed, scope, derivable=type(typed) is ScopedFeedbackEvent, observed_at=observed_at
    )


def build_scoped_feedback_candidate(
    event: ScopedFeedbackEvent | Mapping[str, Any],
    checkpoint: AuthorityCheckpoint | Mapping[str, Any] | None = None,
    *,
    now: datetime | None = None,
    observed_at: str | None = None,
) -> ScopedFeedbackCandidateAdapter:
    """Propose the event's candidate through the shared core; wrap it in the adapter packet."""
    typed = scoped_feedback_event(event)
    shared = propose(scoped_feedback_proposal(typed, observed_at=observed_at), checkpoint, now=now)
    return ScopedFeedbackCandidateAdapter(
        feedback_ref=typed.feedback_ref, surface_id=typed.surface_id, shared_candidate=shared
    )
