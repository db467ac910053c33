"""Stage-2 records: the proposal, the authority checkpoint and the candidate.

Inputs (validated in full when built, by Python callers or by :func:`wire.load`):

- :class:`Proposal` (``reward_memory_candidate_proposal_v0``) -- a model-proposed
  compact candidate: target class, content summary, source, scope, reasoning
  (confidence *with its basis*), guard context, requested action scopes,
  optional expiry. ``raw_content_captured`` is required and must be false.
- :class:`AuthorityCheckpoint` (``reward_memory_authority_checkpoint_v0``) -- the
  caller's independently verified authority for an actor, role, project and
  action scopes. It comes from the caller's own authority source, never from
  the proposal's claims (differs from the original, whose ingest path built it
  from the event itself).
- :class:`ReviewDecision` -- one review: accept / edit / reject / retire / no_write.

Packets:

- :class:`CandidatePacket` (``reward_memory_candidate_v0``) -- the guarded candidate.

The vocabulary and field helpers live in ``records/_candidate_vocab.py``, the
inputs in ``records/_candidate_inputs.py``; this module re-exports both.
The review packet and the review request are in :mod:`reward_memory.records.review`
(a review re-derives its target's guard: a recorded verdict is never trusted).

A :class:`Candidate` always carries the ``candidate_ref`` of its own content: it
is computed when the record is built without one and checked when one is
given, so a packet whose content was altered after the fact fails to load.

What the ref covers (issue item 12): everything the candidate hands on to the
active record that says what it claims or how long it lives -- class, content,
source, scope, guard context and requested authority (the original's J1
object, reference §1.5), and, each only when set, the expiry, the observation
time and the refs it supersedes (ours: the original ignored them, so two
candidates differing only in expiry shared a ref). A candidate that has none of
the three keeps the original's ref byte for byte (the reference fixture is
still ``candidate:0e073f348a2a6c3ffc3c``). Timestamps are hashed in their
normalised spelling, so two spellings of one instant are one candidate.
Renewing or shortening an expiry is therefore a new candidate with a new ref.

Not hashed: the lifecycle *state* and ``retired_reason`` (a review moves the
same candidate through candidate, active, retired: retire must name the ref
that was accepted), the constant privacy flag, and the model's reasoning --
its summary, confidence and basis are its assessment of the evidence, never
the claim and never authority (confidence cannot raise it). The active record
copies the confidence, and its ``activation_ref`` covers it. Because the
expiry is part of the identity, a closed (rejected, retired, no-write) record
keeps its ``expires_at`` (differs from the original, which dropped it).
"""

from __future__ import annotations

from typing import Any, ClassVar, Final, Literal

import attrs

from reward_memory._frozen import frozen
from reward_memory.errors import RecordValidationError
from reward_memory.records import _fields as f
from reward_memory.records import _memo as m

# Re-exported: these live apart so a standing policy can be read without
# building every candidate class (see records/_candidate_class.py).
from reward_memory.records._candidate_class import (
    CANDIDATE_CLASSES,
    CandidateClass,
    no_raw_content,
)
from reward_memory.records._candidate_inputs import (
    UNVERIFIED_CHECKPOINT,
    AuthorityCheckpoint,
    CandidateGuardContext,
    CandidateReasoning,
    CandidateSource,
    Proposal,
    ReviewDecision,
)
from reward_memory.records._candidate_ref import candidate_hashed_object, candidate_ref_of
from reward_memory.records._candidate_vocab import (
    AVAILABLE_REVIEW_DECISIONS,
    CANDIDATE_SCHEMA,
    CHECKPOINT_SCHEMA,
    GUARD_RULE,
    HARD_POLICY_ACTOR_ROLES,
    PERSIST_NEXT_STEP,
    PROPOSAL_SCHEMA,
    REASON_CODES,
    RECORDED_MISMATCH,
    RETIRED_REASONS,
    REVIEW_DECISIONS,
    REVIEW_REASON_CODES,
    REVIEW_REQUEST_SCHEMA,
    REVIEW_SCHEMA,
    REVIEW_STATUSES,
    Decision,
    RetiredReason,
    ReviewStatus,
    guard_reason_codes,
    is_record,
    review_reason_codes,
    text_field,
    token_list,
)
from reward_memory.records._plain import to_plain
from reward_memory.records.envelope import RecordScope

__all__ = [
    "AVAILABLE_REVIEW_DECISIONS",
    "CANDIDATE_CLASSES",
    "CANDIDATE_SCHEMA",
    "CHECKPOINT_SCHEMA",
    "GUARD_RULE",
    "HARD_POLICY_ACTOR_ROLES",
    "PERSIST_NEXT_STEP",
    "PROPOSAL_SCHEMA",
    "REASON_CODES",
    "RECORDED_MISMATCH",
    "REVIEW_DECISIONS",
    "REVIEW_REASON_CODES",
    "REVIEW_REQUEST_SCHEMA",
    "REVIEW_SCHEMA",
    "REVIEW_STATUSES",
    "UNVERIFIED_CHECKPOINT",
    "AuthorityCheckpoint",
    "Candidate",
    "CandidateClass",
    "CandidateGuard",
    "CandidateGuardContext",
    "CandidateLifecycle",
    "CandidatePacket",
    "CandidatePrivacy",
    "CandidateReasoning",
    "CandidateSource",
    "Decision",
    "Proposal",
    "RetiredReason",
    "ReviewDecision",
    "ReviewStatus",
    "candidate_hashed_object",
    "candidate_ref_of",
    "is_record",
    "no_raw_content",
    "review_reason_codes",
    "text_field",
    "to_plain",
]


# -- the candidate --------------------------------------------------------------------------


@frozen(kw_only=True)
class CandidateLifecycle:
    """Where the candidate stands: candidate, active (accepted) or retired (closed).

    ``expires_at`` is kept in every state: it is part of the candidate's ref.
    """

    __rm_omit_none__: ClassVar[bool] = True

    state: Literal["candidate", "active", "retired"] = f.enum("candidate", "active", "retired")
    supersedes_refs: tuple[str, ...] = token_list(max_items=50)
    expires_at: str | None = f.optional_timestamp()
    retired_reason: RetiredReason | None = attrs.field(default=None)

    def __attrs_post_init__(self) -> None:
        if self.retired_reason is not None and self.retired_reason not in RETIRED_REASONS:
            raise RecordValidationError(
                f"must be one of: {', '.join(RETIRED_REASONS)}",
                path="$.retired_reason",
                code="invalid_value",
            )
        if (self.state == "retired") != (self.retired_reason is not None):
            raise RecordValidationError(
                "a retired record keeps its retired_reason, and only a retired record has one",
                path="$.retired_reason",
                code="inconsistent_lifecycle",
            )


@frozen(kw_only=True)
class CandidatePrivacy:
    """The stated invariant: no raw content was captured."""

    raw_content_captured: Literal[False] = f.const(False)


_NO_RAW: Final = CandidatePrivacy()


@frozen(kw_only=True)
class Candidate:
    """The normalised candidate record (the ``candidate`` of ``reward_memory_candidate_v0``).

    Reviews copy it with a new lifecycle; an edit replaces the content summary
    and so gets a new ``candidate_ref``.
    """

    __rm_omit_none__: ClassVar[bool] = True

    schema_version: Literal["reward_memory_candidate_v0"] = f.const(CANDIDATE_SCHEMA)
    target_class: CandidateClass = f.enum(*CANDIDATE_CLASSES)
    content_summary: str = text_field(500)
    source: CandidateSource = attrs.field(validator=is_record(CandidateSource))
    scope: RecordScope = attrs.field(validator=is_record(RecordScope))
    reasoning: CandidateReasoning = attrs.field(validator=is_record(CandidateReasoning))
    guard_context: CandidateGuardContext = attrs.field(validator=is_record(CandidateGuardContext))
    requested_action_scopes: tuple[str, ...] = token_list(max_items=12)
    lifecycle: CandidateLifecycle = attrs.field(validator=is_record(CandidateLifecycle))
    privacy: CandidatePrivacy = attrs.field(default=_NO_RAW, validator=is_record(CandidatePrivacy))
    # Computed from the content when left empty; checked against it when given.
    candidate_ref: str = f.tagged("derived", None, default="")
    observed_at: str | None = f.optional_timestamp()

    def __attrs_post_init__(self) -> None:
        ref = candidate_ref_of(
            target_class=self.target_class,
            content_summary=self.content_summary,
            source=self.source,
            scope=self.scope,
            guard_context=self.guard_context,
            requested_action_scopes=self.requested_action_scopes,
            expires_at=self.lifecycle.expires_at,
            observed_at=self.observed_at,
            supersedes_refs=self.lifecycle.supersedes_refs,
        )
        if not self.candidate_ref:
            object.__setattr__(self, "candidate_ref", ref)
        elif self.candidate_ref != ref:
            raise RecordValidationError(
                "does not match the candidate's content (it is derived from it)",
                path="$.candidate_ref",
                code="digest_mismatch",
            )

    @property
    def expires_at(self) -> str | None:
        """The candidate's expiry (from its lifecycle)."""
        return self.lifecycle.expires_at

    @classmethod
    def of_proposal(cls, proposal: Proposal) -> Candidate:
        """The fresh candidate a proposal becomes (``propose``): its content, ``candidate`` state.

        Every field is the proposal's, already checked by the same helpers
        (class, summary, source, scope, reasoning, guard context, scopes,
        observation time); the lifecycle carries its expiry, and the ref is
        computed as the constructor computes it.
        """
        if type(proposal) is not Proposal:
            raise RecordValidationError("must be a Proposal", code="wrong_type")
        expires = proposal.expires_at
        lifecycle = (
            _FRESH if expires is None else CandidateLifecycle(state="candidate", expires_at=expires)
        )
        made: Candidate = _make_candidate(
            schema_version=CANDIDATE_SCHEMA,
            target_class=proposal.target_class,
            content_summary=proposal.content_summary,
            source=proposal.source,
            scope=proposal.scope,
            reasoning=proposal.reasoning,
            guard_context=proposal.guard_context,
            requested_action_scopes=proposal.requested_action_scopes,
            lifecycle=lifecycle,
            privacy=_NO_RAW,
            candidate_ref="",
            observed_at=proposal.observed_at,
        )
        made.__attrs_post_init__()  # computes the ref, as the constructor does
        return made

    def with_lifecycle(self, lifecycle: CandidateLifecycle) -> Candidate:
        """This candidate moved to ``lifecycle`` (a review's accept, reject, retire, no_write).

        The same candidate: everything it says is this record's (already
        checked), and the ref does not hash the state or ``retired_reason``,
        so only the lifecycle is checked -- a record and one that keeps this
        one's expiry and supersedes refs. Any other lifecycle changes the
        identity and goes through the constructor (a new ``candidate_ref``).
        """
        if type(lifecycle) is not CandidateLifecycle:
            raise RecordValidationError(
                "must be a CandidateLifecycle", path="$.lifecycle", code="wrong_type"
            )
        current = self.lifecycle
        if (
            lifecycle.expires_at != current.expires_at
            or lifecycle.supersedes_refs != current.supersedes_refs
        ):
            return attrs.evolve(self, lifecycle=lifecycle, candidate_ref="")
        moved: Candidate = _make_candidate(
            schema_version=self.schema_version,
            target_class=self.target_class,
            content_summary=self.content_summary,
            source=self.source,
            scope=self.scope,
            reasoning=self.reasoning,
            guard_context=self.guard_context,
            requested_action_scopes=self.requested_action_scopes,
            lifecycle=lifecycle,
            privacy=self.privacy,
            candidate_ref=self.candidate_ref,
            observed_at=self.observed_at,
        )
        return moved


# Candidates the library derives from records it holds (a proposal's fields, a
# reviewed candidate's), set without re-running the field validators.
_make_candidate: Final = m.trusted(Candidate)
_FRESH: Final = CandidateLifecycle(state="candidate")


@frozen(kw_only=True)
class CandidateGuard:
    """The guard's verdict: passed, and every reason code in the fixed order."""

    passed: bool = f.strict_bool()
    reason_codes: tuple[str, ...] = attrs.field(converter=guard_reason_codes)
    rule: Literal[
        "model_proposes_meaning_deterministic_guards_verify_scope_privacy_and_no_authority_expansion"
    ] = f.const(GUARD_RULE)
    semantic_reasoning_preserved: Literal[True] = f.const(True)

    def __attrs_post_init__(self) -> None:
        if self.passed == bool(self.reason_codes):
            raise RecordValidationError(
                "a guard passes exactly when it has no reason codes",
                path="$.passed",
                code="inconsistent_guard",
            )


def _decisions(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


@frozen(kw_only=True)
class CandidatePacket:
    """``reward_memory_candidate_v0``: the guarded candidate (returned even when blocked)."""

    ok: Literal[True] = f.const(True)
    schema_version: Literal["reward_memory_candidate_v0"] = f.const(CANDIDATE_SCHEMA)
    status: Literal["review_ready", "guard_blocked"] = f.enum("review_ready", "guard_blocked")
    candidate: Candidate = attrs.field(validator=is_record(Candidate))
    authority_checkpoint: AuthorityCheckpoint = attrs.field(
        validator=is_record(AuthorityCheckpoint)
    )
    guard: CandidateGuard = attrs.field(validator=is_record(CandidateGuard))
    available_review_decisions: tuple[str, ...] = attrs.field(
        default=AVAILABLE_REVIEW_DECISIONS, converter=_decisions
    )
    candidate_persisted: Literal[False] = f.const(False)
    provider_write_performed: Literal[False] = f.const(False)
    external_writes_performed: Literal[False] = f.const(False)
    raw_content_captured: Literal[False] = f.const(False)

    def __attrs_post_init__(self) -> None:
        if self.available_review_decisions != AVAILABLE_REVIEW_DECISIONS:
            raise RecordValidationError(
                f"must be {list(AVAILABLE_REVIEW_DECISIONS)}",
                path="$.available_review_decisions",
                code="invalid_value",
            )
        if (self.status == "review_ready") != self.guard.passed:
            raise RecordValidationError(
                "status is review_ready exactly when the guard passed",
                path="$.status",
                code="inconsistent_guard",
            )
        if (
            self.candidate.lifecycle.state != "candidate"
            or self.candidate.lifecycle.supersedes_refs
        ):
            raise RecordValidationError(
                "a fresh candidate is in state candidate and supersedes nothing",
                path="$.candidate.lifecycle",
                code="inconsistent_lifecycle",
            )
