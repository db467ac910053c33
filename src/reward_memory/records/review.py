"""Stage-2 review records: the review summary, the review packet and the review request.

- :class:`CandidateReview` (``reward_memory_candidate_review_v0``) -- one review
  decision record (nothing persisted); the reference §5.2 decision table holds
  as record invariants, so a review loaded from JSON obeys it too.
- :class:`CandidateReviewRequest` (``reward_memory_candidate_review_request_v0``)
  -- what ``candidate-review --input`` reads: a proposal, a checkpoint and the
  reviews to apply in order.

The candidate a review carries, and the decision vocabulary, live in
:mod:`reward_memory.records.candidate`.
"""

from __future__ import annotations

from typing import Any, ClassVar, Final, Literal

import attrs

from reward_memory._frozen import frozen
from reward_memory.errors import RecordValidationError
from reward_memory.records import _fields as f
from reward_memory.records import _memo as m
from reward_memory.records.candidate import (
    PERSIST_NEXT_STEP,
    REVIEW_DECISIONS,
    REVIEW_REQUEST_SCHEMA,
    REVIEW_SCHEMA,
    REVIEW_STATUSES,
    AuthorityCheckpoint,
    Candidate,
    Decision,
    Proposal,
    ReviewDecision,
    ReviewStatus,
    is_record,
    review_reason_codes,
    text_field,
)

__all__ = ["CandidateReview", "CandidateReviewRequest", "CandidateReviewSummary"]


@frozen(kw_only=True)
class CandidateReviewSummary:
    """Who reviewed, under which review reference, and why (compact).

    The active record's ``review`` block is built from it on activation.
    """

    reviewer_ref: str = f.token()
    review_ref: str = f.token()
    reasoning_summary: str = text_field(500)

    @classmethod
    def of_decision(cls, decision: ReviewDecision) -> CandidateReviewSummary:
        """A decision's summary: its three fields, already checked by the same helpers."""
        if type(decision) is not ReviewDecision:
            raise RecordValidationError("must be a ReviewDecision", code="wrong_type")
        made: CandidateReviewSummary = _make_summary(
            reviewer_ref=decision.reviewer_ref,
            review_ref=decision.review_ref,
            reasoning_summary=decision.reasoning_summary,
        )
        return made


_make_summary: Final = m.trusted(CandidateReviewSummary)


# effective decision -> (allowed statuses, record lifecycle state, retired_reason)
_EFFECTS: Final[dict[str, tuple[frozenset[str], str, str | None]]] = {
    "accept": (frozenset({"active"}), "active", None),
    "edit": (frozenset({"review_ready"}), "candidate", None),
    "reject": (frozenset({"rejected"}), "retired", "rejected_in_review"),
    "retire": (frozenset({"retired"}), "retired", "reviewed_retirement"),
    "no_write": (frozenset({"no_write", "guard_blocked"}), "retired", "no_write_rationale"),
}


def _check_review(review: CandidateReview) -> None:
    """The reference §5.2 decision table, as record invariants."""
    if review.guard_passed == bool(review.reason_codes):
        raise RecordValidationError(
            "guard_passed holds exactly when there are no guard reason codes",
            path="$.guard_passed",
            code="inconsistent_guard",
        )
    effective, status = review.effective_decision, review.status
    statuses, state, reason = _EFFECTS[effective]
    if status not in statuses:
        raise RecordValidationError(
            f"a {effective} decision has status {' or '.join(sorted(statuses))}",
            path="$.status",
            code="inconsistent_review",
        )
    if status == "guard_blocked":
        # accept/edit of a blocked candidate: nothing is gained, the record stays a candidate.
        if review.guard_passed or review.requested_decision not in ("accept", "edit"):
            raise RecordValidationError(
                "guard_blocked is the outcome of accepting or editing a blocked candidate",
                path="$.status",
                code="inconsistent_review",
            )
        state, reason = "candidate", None
    elif review.requested_decision != effective:
        raise RecordValidationError(
            "the effective decision differs from the requested one only when the guard blocked it",
            path="$.effective_decision",
            code="inconsistent_review",
        )
    if effective in ("accept", "edit") and not review.guard_passed:
        raise RecordValidationError(
            "only a guard-passed candidate can be accepted or edited",
            path="$.guard_passed",
            code="inconsistent_review",
        )
    lifecycle = review.record.lifecycle
    if lifecycle.state != state or lifecycle.retired_reason != reason:
        raise RecordValidationError(
            f"a {status} review leaves the record {state}",
            path="$.record.lifecycle",
            code="inconsistent_lifecycle",
        )
    expected_step = PERSIST_NEXT_STEP if effective in ("accept", "retire") else "none"
    if review.persistence_next_step != expected_step:
        raise RecordValidationError(
            f"must be {expected_step!r} for a {effective} decision",
            path="$.persistence_next_step",
            code="inconsistent_review",
        )


_REVIEW_FLAGS: Final = (
    ("grants_new_action_authority", False),
    ("provider_write_performed", False),
    ("external_writes_performed", False),
    ("raw_content_captured", False),
)


@frozen(kw_only=True)
class CandidateReview:
    """``reward_memory_candidate_review_v0``: one review decision record (nothing persisted).

    ``reason_codes`` (ours; the original carried only ``guard_passed``) are the
    candidate guard's reasons, carried from review to review.
    """

    ok: Literal[True] = f.const(True)
    schema_version: Literal["reward_memory_candidate_review_v0"] = f.const(REVIEW_SCHEMA)
    status: ReviewStatus = f.enum(*REVIEW_STATUSES)
    requested_decision: Decision = f.enum(*REVIEW_DECISIONS)
    effective_decision: Decision = f.enum(*REVIEW_DECISIONS)
    guard_passed: bool = f.strict_bool()
    reason_codes: tuple[str, ...] = attrs.field(converter=review_reason_codes)
    review: CandidateReviewSummary = attrs.field(validator=is_record(CandidateReviewSummary))
    record: Candidate = attrs.field(validator=is_record(Candidate))
    persistence_next_step: Literal[
        "caller_uses_declared_corpus_write_authority_then_readback", "none"
    ] = f.enum(PERSIST_NEXT_STEP, "none")
    # The constant boundary flags, checked together after the fields (the same
    # error, ``must be false`` at the flag's path, one pass instead of four validators).
    grants_new_action_authority: Literal[False] = m.flag(False)
    provider_write_performed: Literal[False] = m.flag(False)
    external_writes_performed: Literal[False] = m.flag(False)
    raw_content_captured: Literal[False] = m.flag(False)

    def __attrs_post_init__(self) -> None:
        m.check_flags(self, _REVIEW_FLAGS)
        _check_review(self)


def _reviews(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


def _review_list(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if not isinstance(value, tuple) or not 1 <= len(value) <= 8:
        raise RecordValidationError(
            "must be a list of 1 to 8 reviews", path=f"$.{attribute.name}", code="invalid_value"
        )
    for index, item in enumerate(value):
        if not isinstance(item, ReviewDecision):
            raise RecordValidationError(
                "must be a ReviewDecision", path=f"$.{attribute.name}[{index}]", code="wrong_type"
            )


@frozen(kw_only=True)
class CandidateReviewRequest:
    """``reward_memory_candidate_review_request_v0``: what ``candidate-review --input`` reads.

    The proposal is guarded against the checkpoint (an unverified checkpoint
    when absent) at ``now`` (the current time when absent), then each review
    is applied to the previous result in order: ``[accept, retire]`` retires.
    """

    __rm_omit_none__: ClassVar[bool] = True

    schema_version: Literal["reward_memory_candidate_review_request_v0"] = f.const(
        REVIEW_REQUEST_SCHEMA
    )
    proposal: Proposal = attrs.field(validator=is_record(Proposal))
    authority_checkpoint: AuthorityCheckpoint | None = attrs.field(
        default=None,
        validator=attrs.validators.optional(is_record(AuthorityCheckpoint)),
    )
    reviews: tuple[ReviewDecision, ...] = attrs.field(converter=_reviews, validator=_review_list)
    now: str | None = f.optional_timestamp()
