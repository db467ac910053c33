"""The stage-2 inputs: the proposal and its parts, the authority checkpoint, the review decision.

Part of :mod:`reward_memory.records.candidate`, which re-exports them (see its
docstring for what each means and what the candidate ref covers).
"""

from __future__ import annotations

from typing import ClassVar, Final, Literal

import attrs

from reward_memory._frozen import frozen
from reward_memory.errors import RecordValidationError
from reward_memory.records import _fields as f
from reward_memory.records._candidate_class import (
    CANDIDATE_CLASSES,
    CandidateClass,
    no_raw_content,
)
from reward_memory.records._candidate_vocab import (
    CHECKPOINT_SCHEMA,
    PROPOSAL_SCHEMA,
    REVIEW_DECISIONS,
    Decision,
    is_record,
    text_field,
    token_list,
)
from reward_memory.records.envelope import ConfidenceLevel, RecordScope

__all__ = [
    "UNVERIFIED_CHECKPOINT",
    "AuthorityCheckpoint",
    "CandidateGuardContext",
    "CandidateReasoning",
    "CandidateSource",
    "Proposal",
    "ReviewDecision",
]


@frozen(kw_only=True)
class CandidateSource:
    """Where the evidence came from: kind, compact reference, actor and the actor's role."""

    source_kind: str = f.token()
    source_ref: str = text_field(240)
    actor_ref: str = f.token()
    actor_role: str = f.token()


#: The basis a proposal or event written as the original's (reference 5.1, 5.4: reasoning
#: is ``{summary, confidence}``) is given: the record still names one, and says so.
UNSTATED_BASIS: Final = "Not stated apart from the reasoning summary (an original v0 event)."


@frozen(kw_only=True)
class CandidateReasoning:
    """The model's compact reasoning, and its confidence *with the basis* for it.

    Confidence describes evidence quality only: no guard and no activation
    reads it, so it can never raise authority. An input without a basis (the
    original's shape) gets :data:`UNSTATED_BASIS`, so every record names one.
    """

    summary: str = text_field(500)
    confidence: ConfidenceLevel = f.enum("low", "medium", "high")
    confidence_basis: str = text_field(240, default=UNSTATED_BASIS)


@frozen(kw_only=True)
class CandidateGuardContext:
    """The caller's current observations the guard needs: freshness, conflicts, artifact proof."""

    source_freshness: Literal["current", "stale", "unknown"] = f.enum("current", "stale", "unknown")
    conflict_state: Literal["clear", "unresolved"] = f.enum("clear", "unresolved")
    current_artifact_verified: bool = f.strict_bool()


@frozen(kw_only=True)
class Proposal:
    """``reward_memory_candidate_proposal_v0``: a model-proposed compact candidate."""

    # expires_at and observed_at are left out of the wire form when absent.
    __rm_omit_none__: ClassVar[bool] = True

    schema_version: Literal["reward_memory_candidate_proposal_v0"] = f.const(PROPOSAL_SCHEMA)
    raw_content_captured: Literal[False] = no_raw_content()
    target_class: CandidateClass = f.enum(*CANDIDATE_CLASSES)
    content_summary: str = text_field(500)
    source: CandidateSource = attrs.field(validator=is_record(CandidateSource))
    scope: RecordScope = attrs.field(validator=is_record(RecordScope))
    reasoning: CandidateReasoning = attrs.field(validator=is_record(CandidateReasoning))
    guard_context: CandidateGuardContext = attrs.field(validator=is_record(CandidateGuardContext))
    requested_action_scopes: tuple[str, ...] = token_list(max_items=12)
    expires_at: str | None = f.optional_timestamp()
    # When the source evidence was first observed; the active record's
    # source.observed_at (the activation time when absent). Part of candidate_ref when set.
    observed_at: str | None = f.optional_timestamp()


@frozen(kw_only=True)
class AuthorityCheckpoint:
    """``reward_memory_authority_checkpoint_v0``: authority verified by the caller's own source.

    For ``hard_policy`` the guard requires it to be verified, to name its
    ``source_ref``, and to bind the same actor, role and project as the
    proposal, with the requested action scopes a subset of ``action_scopes``.
    """

    schema_version: Literal["reward_memory_authority_checkpoint_v0"] = f.const(CHECKPOINT_SCHEMA)
    verified: bool = f.strict_bool()
    source_ref: str | None = f.optional_token()
    actor_ref: str | None = f.optional_token()
    actor_role: str | None = f.optional_token()
    project_ref: str | None = f.optional_token()
    action_scopes: tuple[str, ...] = token_list(max_items=12)


UNVERIFIED_CHECKPOINT: Final = AuthorityCheckpoint(verified=False)


@frozen(kw_only=True)
class ReviewDecision:
    """One review of a candidate (or of a previous review's record).

    ``edited_content_summary`` is required for ``edit`` and refused otherwise.
    """

    decision: Decision = f.enum(*REVIEW_DECISIONS)
    reviewer_ref: str = f.token()
    review_ref: str = f.token()
    reasoning_summary: str = text_field(500)
    edited_content_summary: str | None = text_field(500, optional=True)

    def __attrs_post_init__(self) -> None:
        if self.decision == "edit" and self.edited_content_summary is None:
            raise RecordValidationError(
                "an edit names the edited content summary",
                path="$.edited_content_summary",
                code="missing_field",
            )
        if self.decision != "edit" and self.edited_content_summary is not None:
            raise RecordValidationError(
                "edited_content_summary applies only to an edit",
                path="$.edited_content_summary",
                code="invalid_value",
            )
