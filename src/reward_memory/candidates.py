"""Stage 2: propose a candidate, review it. Stateless: nothing here persists or writes.

::

    proposal + checkpoint ──propose()──▶ reward_memory_candidate_v0  (review_ready | guard_blocked)
        ──review(accept | edit | reject | no_write)──▶ reward_memory_candidate_review_v0
        ──review(retire)  (of an accepted, active record)──▶ ... retired

The model proposes the policy *meaning*; deterministic guards
(:mod:`reward_memory.guards.candidate`) check freshness, conflicts,
current-artifact proof and authority. Authority comes only from the
:class:`~reward_memory.records.candidate.AuthorityCheckpoint` the caller passes
from its own authority source. A blocked candidate is still returned for
inspection; accepting or editing it yields ``no_write`` and gains nothing.
A review never reads its target's recorded verdict: it re-derives the guard
(a packet is data), and a disagreeing record adds ``recorded_guard_verdict_mismatch``.

Identity: a review moves one candidate -- one ``candidate_ref`` -- through
candidate, active and retired; only an edit makes a new candidate, and it
supersedes the old ref. The ref covers what the record will say and how long
it lives, expiry included, so every decision but ``edit`` keeps the lifecycle's
expiry and supersedes refs (see :mod:`reward_memory.records.candidate`).

Typed records take the fast path (no JSON Schema, no cattrs). Plain mappings
(JSON input) are validated against their schema first, then structured.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, TypeVar

from reward_memory.errors import RecordValidationError
from reward_memory.grammars import utc_now
from reward_memory.guards.candidate import candidate_reasons, check_now, proposal_reasons
from reward_memory.records import _memo as m
from reward_memory.records._plain import as_record, load_plain
from reward_memory.records.candidate import (
    CANDIDATE_SCHEMA,
    PERSIST_NEXT_STEP,
    RECORDED_MISMATCH,
    REVIEW_REASON_CODES,
    REVIEW_SCHEMA,
    UNVERIFIED_CHECKPOINT,
    AuthorityCheckpoint,
    Candidate,
    CandidateGuard,
    CandidateLifecycle,
    CandidatePacket,
    Decision,
    Proposal,
    RetiredReason,
    ReviewDecision,
    ReviewStatus,
)
from reward_memory.records.review import CandidateReview, CandidateReviewSummary

if TYPE_CHECKING:
    from datetime import datetime

__all__ = ["as_checkpoint", "as_proposal", "propose", "review"]

T = TypeVar("T")

# The lifecycle of an accepted candidate that neither expires nor supersedes (the common one).
_ACCEPTED: Final = CandidateLifecycle(state="active")
# reject / retire / no_write: the status they give and the reason the record is closed with.
_CLOSING: Final[dict[str, tuple[ReviewStatus, RetiredReason]]] = {
    "reject": ("rejected", "rejected_in_review"),
    "retire": ("retired", "reviewed_retirement"),
    "no_write": ("no_write", "no_write_rationale"),
}
_DECISION_KEYS: Final = (
    "decision",
    "reviewer_ref",
    "review_ref",
    "reasoning_summary",
    "edited_content_summary",
)


# propose and review assemble their packets from parts they just checked or
# derived: an exact-type candidate (of_proposal, with_lifecycle, or the
# constructor for an edit), a typed checkpoint and decision, a guard of the
# derived reasons, and a status, decision and lifecycle taken from the one
# decision table the packets' invariants state. Those invariants hold by
# construction, so the packets are set without re-running the validators;
# ``tests/test_candidates.py`` rebuilds every row through the validating
# constructors.
_make_packet: Final = m.trusted(CandidatePacket)
_make_review: Final = m.trusted(CandidateReview)


@functools.lru_cache(maxsize=256)
def _guard(reasons: tuple[str, ...]) -> CandidateGuard:
    # Guards are immutable values of their reason codes: build each one once.
    return CandidateGuard(passed=not reasons, reason_codes=reasons)


# -- the JSON path ------------------------------------------------------------------------
#
# Plain data is validated against its bundled schema first (strict types, unknown
# fields named), then built into records directly. The records' own validators
# still run; nothing is coerced. This is wire.load without the cattrs converter,
# whose first use generates code for every class (~50 ms, too slow for a CLI verb
# that must answer in 0.15 s).


def as_proposal(proposal: Proposal | Mapping[str, Any]) -> Proposal:
    """A typed proposal; a mapping is validated (schema first) and structured."""
    return as_record(proposal, Proposal, what="a proposal")


def as_checkpoint(
    checkpoint: AuthorityCheckpoint | Mapping[str, Any] | None,
) -> AuthorityCheckpoint:
    """A typed checkpoint; ``None`` is an unverified checkpoint (it grants nothing)."""
    if checkpoint is None:
        return UNVERIFIED_CHECKPOINT
    return as_record(checkpoint, AuthorityCheckpoint, what="a checkpoint", path="checkpoint")


def propose(
    proposal: Proposal | Mapping[str, Any],
    checkpoint: AuthorityCheckpoint | Mapping[str, Any] | None = None,
    *,
    now: datetime | None = None,
) -> CandidatePacket:
    """Guard a model-proposed candidate; return it as ``reward_memory_candidate_v0``.

    Args:
        proposal: the compact candidate (``raw_content_captured`` must be false).
        checkpoint: the caller's independently verified authority; ``None`` is
            unverified. It is never derived from the proposal.
        now: the clock for ``expires_at`` (an aware datetime; default: UTC now).

    Returns the packet with status ``review_ready`` or ``guard_blocked`` (still
    inspectable), the guard's reason codes in their fixed order, and the
    ``candidate_ref`` of everything the record will say and how long it lives
    (the original's, byte for byte, when there is no expiry or observation
    time; see :mod:`reward_memory.records.candidate`). Timestamps are stored
    normalised, so any spelling of the same instants gives the same packet.

    Raises:
        RecordValidationError: structurally invalid input (field path named).
    """
    typed = as_proposal(proposal)
    authority = as_checkpoint(checkpoint)
    moment = utc_now() if now is None else check_now(now)
    reasons = proposal_reasons(typed, authority, now=moment)
    candidate = Candidate.of_proposal(typed)
    return _minted(
        _make_packet(
            status="guard_blocked" if reasons else "review_ready",
            candidate=candidate,
            authority_checkpoint=authority,
            guard=_guard(reasons),
        )
    )


# The packets propose() and review() made in this process, by identity (a weak
# reference each: a dead packet's id may be reused, and then its reference is dead).
# Only these vouch for their embedded checkpoint and recorded codes: a packet loaded
# from data (a mapping, or wire.load of one) is a claim. Bounded: emptied when full.
_MINTED: Final[dict[int, weakref.ref[Any]]] = {}
_MINTED_SIZE: Final = 4096


def _minted(packet: T) -> T:
    if len(_MINTED) >= _MINTED_SIZE:
        _MINTED.clear()
    _MINTED[id(packet)] = weakref.ref(packet)
    return packet


def _was_minted(packet: object) -> bool:
    held = _MINTED.get(id(packet))
    return held is not None and held() is packet


def _as_decision(decision: ReviewDecision | Mapping[str, Any]) -> ReviewDecision:
    if isinstance(decision, ReviewDecision):
        return decision
    if isinstance(decision, Mapping):
        # Not a packet (no schema_version): the record's own validators are the
        # strict type gate; an unknown or missing key is refused by name.
        for key in decision:
            if key not in _DECISION_KEYS:
                raise RecordValidationError(
                    "unknown field",
                    path=f"$.{key}" if isinstance(key, str) else "$",
                    code="unknown_field",
                )
        for key in _DECISION_KEYS[:4]:
            if key not in decision:
                raise RecordValidationError(
                    "required field is missing", path=f"$.{key}", code="missing_field"
                )
        return ReviewDecision(**{key: decision[key] for key in decision})
    raise RecordValidationError("a review is a ReviewDecision or an object", code="wrong_type")


def _as_target(target: Any) -> CandidatePacket | CandidateReview:
    if isinstance(target, CandidatePacket | CandidateReview):
        return target
    if isinstance(target, Mapping):
        version = target.get("schema_version")
        if version == CANDIDATE_SCHEMA:
            return load_plain(dict(target), CandidatePacket)
        if version == REVIEW_SCHEMA:
            return load_plain(dict(target), CandidateReview)
    raise RecordValidationError(
        "a review target is a reward_memory_candidate_v0 or "
        "reward_memory_candidate_review_v0 packet",
        path="$.schema_version",
        code="wrong_type",
    )


# Reasons that only a checkpoint can settle (a review packet carries none).
_CHECKPOINT_REASONS: Final = frozenset(
    {
        "authority_checkpoint_unverified",
        "authority_actor_mismatch",
        "authority_actor_role_mismatch",
        "authority_project_mismatch",
        "requested_action_scope_exceeds_verified_authority",
    }
)
_TIME_REASONS: Final = frozenset({"candidate_expired"})
_MISMATCH: Final = RECORDED_MISMATCH


def _ordered(codes: set[str]) -> tuple[str, ...]:
    if not codes:
        return ()
    return tuple(code for code in REVIEW_REASON_CODES if code in codes)


def _review_verdict(
    packet: CandidatePacket | CandidateReview,
    checkpoint: AuthorityCheckpoint | None,
    now: datetime,
    *,
    from_record: bool,
) -> tuple[str, ...]:
    """The target's candidate guard, re-derived from its content (never read from it).

    A candidate packet is re-guarded under the caller's checkpoint, or the one
    it carries; a review packet carries no checkpoint, so without the caller's
    its checkpoint-bound reasons carry over (they can only block) and
    everything else is re-derived; a recorded expiry carries over too. A
    recorded verdict that differs from the derived one other than by the
    passage of time adds
    ``recorded_guard_verdict_mismatch``. Authority is still granted only by
    :func:`~reward_memory.activation.activate`, under the caller's checkpoint.

    A target that arrived as data (a mapping, a record loaded from one, another
    party's packet: anything propose/review did not make in this process) has
    neither: its embedded checkpoint and its recorded codes are claims, so
    without the caller's checkpoint it is guarded under the unverified one (a
    packet edited to say ``guard_passed``, or carrying a home-made ``verified``
    checkpoint, reviewed to ``active``).
    """
    if not from_record:
        if isinstance(packet, CandidatePacket):
            record, recorded = packet.candidate, packet.guard.reason_codes
        else:
            record, recorded = packet.record, packet.reason_codes
        derived = set(candidate_reasons(record, checkpoint or UNVERIFIED_CHECKPOINT, now=now))
    elif isinstance(packet, CandidatePacket):
        record, recorded = packet.candidate, packet.guard.reason_codes
        derived = set(candidate_reasons(record, checkpoint or packet.authority_checkpoint, now=now))
    else:
        record, recorded = packet.record, packet.reason_codes
        if checkpoint is not None:
            derived = set(candidate_reasons(record, checkpoint, now=now))
        else:
            free = candidate_reasons(record, UNVERIFIED_CHECKPOINT, now=now)
            derived = {code for code in free if code not in _CHECKPOINT_REASONS}
            derived |= {code for code in recorded if code in _CHECKPOINT_REASONS}
    if (derived - _TIME_REASONS) != (set(recorded) - _TIME_REASONS - {_MISMATCH}) or (
        _MISMATCH in recorded
    ):
        derived.add(_MISMATCH)
    # Expiry only ever comes: a candidate recorded as expired stays expired.
    derived |= set(recorded) & _TIME_REASONS
    return _ordered(derived)


def review(
    target: CandidatePacket | CandidateReview | Mapping[str, Any],
    decision: ReviewDecision | Mapping[str, Any],
    *,
    checkpoint: AuthorityCheckpoint | Mapping[str, Any] | None = None,
    now: datetime | None = None,
) -> CandidateReview:
    """Apply one review decision (reference §5.2); a decision record, not persistence.

    ``target`` is a candidate packet, or a previous review packet. Its guard
    is never read from it: it is re-derived at ``now`` (aware; default UTC now)
    under ``checkpoint`` (the caller's, optional) -- see :func:`_review_verdict`
    -- so a blocked candidate stays blocked however often it is reviewed, an
    expired one cannot be accepted, and a hand-edited ``guard_passed`` buys
    nothing.

    ============  ============  ==================  =============  ==============================
    requested     guard passed  effective decision  status         record lifecycle
    ============  ============  ==================  =============  ==============================
    accept/edit   no            no_write            guard_blocked  unchanged candidate
    accept        yes           accept              active         active
    edit          yes           edit                review_ready   candidate superseding the old
                                                                   ref, new content and new ref
    reject        any           reject              rejected       retired: rejected_in_review
    retire        any           retire              retired        retired: reviewed_retirement
    no_write      any           no_write            no_write       retired: no_write_rationale
    ============  ============  ==================  =============  ==============================

    The supersedes refs and the expiry are kept in every row (an edit
    supersedes the old ref): both are part of ``candidate_ref``, so every row
    but ``edit`` names the ref it was given. Differs from the original, which
    dropped the expiry on reject, retire, no_write and a blocked accept/edit.

    Raises:
        RecordValidationError: ``retire`` of anything but an active record, any
            other decision on anything but a candidate, or invalid input.
    """
    packet = _as_target(target)
    from_record = _was_minted(target)  # made by propose/review here, not loaded from data
    chosen = _as_decision(decision)
    authority = as_checkpoint(checkpoint) if checkpoint is not None else None
    moment = utc_now() if now is None else check_now(now)
    record = packet.candidate if isinstance(packet, CandidatePacket) else packet.record
    reasons = _review_verdict(packet, authority, moment, from_record=from_record)
    passed = not reasons
    requested = chosen.decision
    lifecycle = record.lifecycle
    if requested == "retire":
        if lifecycle.state != "active":
            raise RecordValidationError(
                "retire requires an active reviewed record",
                path="$.record.lifecycle.state",
                code="invalid_state",
            )
    elif lifecycle.state != "candidate":
        raise RecordValidationError(
            "accept, edit, reject, and no_write require a candidate",
            path="$.record.lifecycle.state",
            code="invalid_state",
        )
    supersedes, expires = lifecycle.supersedes_refs, lifecycle.expires_at
    effective: Decision
    status: ReviewStatus
    if requested in ("accept", "edit") and not passed:
        effective, status = "no_write", "guard_blocked"
        new_lifecycle = lifecycle  # nothing gained: the record is unchanged
    elif requested == "accept":
        effective, status = "accept", "active"
        new_lifecycle = (
            _ACCEPTED
            if not supersedes and expires is None
            else CandidateLifecycle(state="active", supersedes_refs=supersedes, expires_at=expires)
        )
    elif requested == "edit":
        effective, status = "edit", "review_ready"
        new_lifecycle = CandidateLifecycle(
            state="candidate",
            supersedes_refs=(record.candidate_ref,),
            expires_at=expires,
        )
    else:
        effective = requested
        status, reason = _CLOSING[requested]
        # The expiry stays: it is part of the ref the closed record still names.
        new_lifecycle = CandidateLifecycle(
            state="retired", supersedes_refs=supersedes, expires_at=expires, retired_reason=reason
        )
    if effective == "edit":
        assert chosen.edited_content_summary is not None
        new_record = Candidate(
            target_class=record.target_class,
            content_summary=chosen.edited_content_summary,
            source=record.source,
            scope=record.scope,
            reasoning=record.reasoning,
            guard_context=record.guard_context,
            requested_action_scopes=record.requested_action_scopes,
            lifecycle=new_lifecycle,
            observed_at=record.observed_at,
        )
    else:
        new_record = record.with_lifecycle(new_lifecycle)
    return _minted(
        _make_review(
            status=status,
            requested_decision=requested,
            effective_decision=effective,
            guard_passed=passed,
            reason_codes=reasons,
            review=CandidateReviewSummary.of_decision(chosen),
            record=new_record,
            persistence_next_step=PERSIST_NEXT_STEP
            if effective in ("accept", "retire")
            else "none",
        )
    )
