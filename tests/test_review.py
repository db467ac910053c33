"""review(): the reference §5.2 decision table, preconditions, and no laundering."""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from _stage2 import GOLDEN_REF, NOW, checkpoint, decision, proposal
from reward_memory import schemas, wire
from reward_memory.candidates import propose, review
from reward_memory.errors import RecordValidationError
from reward_memory.records.candidate import (
    PERSIST_NEXT_STEP,
    Candidate,
    CandidateLifecycle,
    CandidatePacket,
    ReviewDecision,
    to_plain,
)
from reward_memory.records.review import CandidateReview, CandidateReviewSummary

EXPIRES = "2030-01-01T00:00:00Z"
# The fixture with an expiry: the expiry is part of the ref, so it is not the golden one.
READY_REF = propose(proposal(expires_at=EXPIRES), checkpoint(), now=NOW).candidate.candidate_ref


@pytest.fixture
def ready() -> CandidatePacket:
    packet = propose(proposal(expires_at=EXPIRES), checkpoint(), now=NOW)
    assert packet.status == "review_ready"
    return packet


@pytest.fixture
def blocked() -> CandidatePacket:
    packet = propose(proposal(expires_at=EXPIRES), checkpoint(verified=False), now=NOW)
    assert packet.guard.reason_codes == ("authority_checkpoint_unverified",)
    return packet


def _valid(result: CandidateReview) -> CandidateReview:
    plain = to_plain(result)
    assert plain == wire.dump(result)
    assert schemas.validate(plain) == "reward_memory_candidate_review_v0"
    assert wire.load(plain, CandidateReview) == result
    for flag in (
        "grants_new_action_authority",
        "provider_write_performed",
        "external_writes_performed",
        "raw_content_captured",
    ):
        assert plain[flag] is False
    return result


# -- the table, guard passed -----------------------------------------------------------------


def test_accept(ready: CandidatePacket) -> None:
    result = _valid(review(ready, decision("accept")))
    assert (result.status, result.requested_decision, result.effective_decision) == (
        "active",
        "accept",
        "accept",
    )
    assert result.guard_passed is True
    assert result.reason_codes == ()
    assert result.record.lifecycle.state == "active"
    assert result.record.lifecycle.expires_at == EXPIRES
    assert result.record.lifecycle.supersedes_refs == ()
    assert result.record.candidate_ref == READY_REF != GOLDEN_REF
    assert result.persistence_next_step == PERSIST_NEXT_STEP
    assert result.review.review_ref == "review:test:accept"
    assert to_plain(result.record.lifecycle) == {
        "state": "active",
        "supersedes_refs": [],
        "expires_at": EXPIRES,
    }


def test_edit(ready: CandidatePacket) -> None:
    result = _valid(review(ready, decision("edit")))
    assert (result.status, result.effective_decision) == ("review_ready", "edit")
    record = result.record
    assert record.content_summary == "Keep focused fixes inside the module under repair."
    assert record.candidate_ref != READY_REF
    assert record.lifecycle.state == "candidate"
    assert record.lifecycle.supersedes_refs == (READY_REF,)
    assert record.lifecycle.expires_at == EXPIRES
    assert result.persistence_next_step == "none"
    # Reasoning, source, scope and guard context travel unchanged.
    assert record.reasoning == ready.candidate.reasoning
    assert record.scope == ready.candidate.scope


def test_an_edited_candidate_accepted_later_keeps_its_lineage(ready: CandidatePacket) -> None:
    edited = review(ready, decision("edit"))
    accepted = _valid(review(edited, decision("accept")))
    assert accepted.status == "active"
    assert accepted.guard_passed is True
    assert accepted.record.lifecycle.supersedes_refs == (READY_REF,)
    assert accepted.record.candidate_ref == edited.record.candidate_ref


@pytest.mark.parametrize(
    ("kind", "status", "reason"),
    [
        ("reject", "rejected", "rejected_in_review"),
        ("no_write", "no_write", "no_write_rationale"),
    ],
)
def test_closing_decisions(ready: CandidatePacket, kind: str, status: str, reason: str) -> None:
    result = _valid(review(ready, decision(kind)))
    assert (result.status, result.effective_decision) == (status, kind)
    assert result.record.lifecycle.state == "retired"
    assert result.record.lifecycle.retired_reason == reason
    # Kept (the original dropped it): the expiry is part of the ref the closed record names.
    assert result.record.lifecycle.expires_at == EXPIRES
    assert result.persistence_next_step == "none"
    assert result.record.candidate_ref == READY_REF


def test_retire_an_accepted_record(ready: CandidatePacket) -> None:
    result = _valid(review(review(ready, decision("accept")), decision("retire")))
    assert (result.status, result.effective_decision) == ("retired", "retire")
    assert result.record.lifecycle.retired_reason == "reviewed_retirement"
    # Retire names the very ref that was accepted, expiry included.
    assert result.record.lifecycle.expires_at == EXPIRES
    assert result.record.candidate_ref == READY_REF
    assert result.persistence_next_step == PERSIST_NEXT_STEP


# -- the table, guard blocked ----------------------------------------------------------------


@pytest.mark.parametrize("kind", ["accept", "edit"])
def test_accept_or_edit_of_a_blocked_candidate_is_no_write(
    blocked: CandidatePacket, kind: str
) -> None:
    result = _valid(review(blocked, decision(kind)))
    assert (result.status, result.requested_decision, result.effective_decision) == (
        "guard_blocked",
        kind,
        "no_write",
    )
    assert result.guard_passed is False
    assert result.reason_codes == ("authority_checkpoint_unverified",)
    # Nothing gained: the record is unchanged (content, ref, state and expiry).
    assert result.record == blocked.candidate
    assert result.record.candidate_ref == READY_REF
    assert to_plain(result.record.lifecycle) == {
        "state": "candidate",
        "supersedes_refs": [],
        "expires_at": EXPIRES,
    }
    assert result.persistence_next_step == "none"


def test_a_blocked_candidate_cannot_be_laundered_by_reviewing_again(
    blocked: CandidatePacket,
) -> None:
    result = review(blocked, decision("accept"))
    for kind in ("accept", "edit", "accept"):
        result = _valid(review(result, decision(kind)))
        assert (result.status, result.effective_decision) == ("guard_blocked", "no_write")
        assert result.guard_passed is False


@pytest.mark.parametrize(("kind", "status"), [("reject", "rejected"), ("no_write", "no_write")])
def test_closing_a_blocked_candidate(blocked: CandidatePacket, kind: str, status: str) -> None:
    result = _valid(review(blocked, decision(kind)))
    assert (result.status, result.effective_decision, result.guard_passed) == (status, kind, False)
    assert result.record.lifecycle.state == "retired"


def test_closing_a_blocked_review(blocked: CandidatePacket) -> None:
    result = _valid(review(review(blocked, decision("accept")), decision("reject")))
    assert result.status == "rejected"
    assert result.reason_codes == ("authority_checkpoint_unverified",)


# -- preconditions ---------------------------------------------------------------------------


def test_retire_requires_an_active_record(ready: CandidatePacket) -> None:
    with pytest.raises(RecordValidationError, match="retire requires an active reviewed record"):
        review(ready, decision("retire"))
    with pytest.raises(RecordValidationError, match="retire requires"):
        review(review(ready, decision("edit")), decision("retire"))


@pytest.mark.parametrize("kind", ["accept", "edit", "reject", "no_write"])
def test_other_decisions_require_a_candidate(ready: CandidatePacket, kind: str) -> None:
    active = review(ready, decision("accept"))
    with pytest.raises(RecordValidationError, match="require a candidate") as info:
        review(active, decision(kind))
    assert (info.value.code, info.value.path) == ("invalid_state", "$.record.lifecycle.state")


@pytest.mark.parametrize("closing", ["reject", "no_write"])
@pytest.mark.parametrize("kind", ["accept", "edit", "reject", "retire", "no_write"])
def test_a_closed_record_takes_no_decision(ready: CandidatePacket, closing: str, kind: str) -> None:
    closed = review(ready, decision(closing))
    with pytest.raises(RecordValidationError):
        review(closed, decision(kind))


def test_edit_needs_its_summary_and_only_edit_has_one() -> None:
    with pytest.raises(RecordValidationError) as info:
        ReviewDecision(
            decision="edit", reviewer_ref="u:r", review_ref="r:1", reasoning_summary="why"
        )
    assert info.value.path == "$.edited_content_summary"
    with pytest.raises(RecordValidationError):
        decision("accept", edited_content_summary="Not for an accept.")


def test_review_decisions_are_checked(ready: CandidatePacket) -> None:
    with pytest.raises(RecordValidationError) as info:
        decision("approve")
    assert info.value.path == "$.decision"
    with pytest.raises(RecordValidationError) as info:
        decision(reasoning_summary="x" * 501)
    assert info.value.code == "text_too_long"
    with pytest.raises(RecordValidationError):
        decision(reviewer_ref="user:/home/bob/x")


def test_targets_must_be_candidate_or_review_packets(ready: CandidatePacket) -> None:
    with pytest.raises(RecordValidationError):
        review(ready.candidate, decision())  # type: ignore[arg-type]
    with pytest.raises(RecordValidationError):
        review(to_plain(checkpoint()), decision())


# -- dict inputs ------------------------------------------------------------------------------


def test_dict_targets_and_decisions(ready: CandidatePacket) -> None:
    plain_decision: dict[str, Any] = to_plain(decision("accept"))
    plain_decision = {k: v for k, v in plain_decision.items() if v is not None}
    accepted = review(to_plain(ready), plain_decision, checkpoint=checkpoint())
    assert accepted == review(ready, decision("accept"))
    retired = review(to_plain(accepted), {**to_plain(decision("retire"))})
    assert retired.status == "retired"


def test_a_packet_given_as_data_vouches_for_nothing(
    blocked: CandidatePacket, ready: CandidatePacket
) -> None:
    """A mapping target's embedded checkpoint and recorded codes are claims: without the
    caller's checkpoint a hard policy is guarded under the unverified one, so neither a
    home-made ``verified`` checkpoint nor a review packet edited to say it passed
    reviews to ``active``."""
    forged = to_plain(blocked)
    forged["authority_checkpoint"] = to_plain(checkpoint())
    forged["guard"] = to_plain(ready)["guard"]
    forged["status"] = "review_ready"
    out = review(forged, decision("accept"), now=NOW)
    assert (out.status, out.guard_passed) == ("guard_blocked", False)
    assert "authority_checkpoint_unverified" in out.reason_codes
    assert out.persistence_next_step == "none"

    laundered = to_plain(review(blocked, decision("accept"), now=NOW))
    laundered.update(
        reason_codes=[],
        guard_passed=True,
        status="review_ready",
        requested_decision="edit",
        effective_decision="edit",
    )
    out = review(laundered, decision("accept"), now=NOW)
    assert (out.status, out.guard_passed) == ("guard_blocked", False)
    assert "authority_checkpoint_unverified" in out.reason_codes
    # The caller's own checkpoint is what counts.
    assert review(forged, decision("accept"), checkpoint=checkpoint(), now=NOW).status == "active"


@pytest.mark.parametrize(
    ("bad", "path"),
    [
        ({"comment_body": "raw"}, "$.comment_body"),
        ({"decision": 1}, "$.decision"),
        ({"verified": True}, "$.verified"),
    ],
)
def test_dict_decisions_are_strict(ready: CandidatePacket, bad: dict[str, Any], path: str) -> None:
    plain = {**to_plain(decision("accept")), **bad}
    with pytest.raises(RecordValidationError) as info:
        review(ready, plain)
    assert info.value.path == path
    with pytest.raises(RecordValidationError) as info:
        review(ready, {"decision": "accept"})
    assert info.value.code == "missing_field"


def test_forged_review_packets_do_not_load(blocked: CandidatePacket) -> None:
    plain = to_plain(review(blocked, decision("accept")))
    # Claiming the guard passed while its reasons are still listed.
    forged = {**plain, "guard_passed": True}
    with pytest.raises(RecordValidationError):
        review(forged, decision("accept"))
    # Claiming status active for a no_write outcome.
    forged = {**plain, "status": "active"}
    with pytest.raises(RecordValidationError):
        wire.load(forged)
    # Claiming acceptance without changing the record.
    forged = {**plain, "status": "active", "effective_decision": "accept"}
    with pytest.raises(RecordValidationError):
        wire.load(forged)
    # A consistent forgery needs a passed guard *and* no reasons: then the
    # activation re-runs the guard against the caller's checkpoint (test_activation).


def test_review_invariants_hold_for_hand_built_packets(ready: CandidatePacket) -> None:
    accepted = review(ready, decision("accept"))
    with pytest.raises(RecordValidationError):
        attrs.evolve(accepted, persistence_next_step="none")
    with pytest.raises(RecordValidationError):
        attrs.evolve(accepted, requested_decision="edit")
    with pytest.raises(RecordValidationError):
        attrs.evolve(accepted, record=ready.candidate)
    with pytest.raises(RecordValidationError):
        attrs.evolve(accepted, guard_passed=False, reason_codes=("candidate_expired",))


# -- Candidate.with_lifecycle: a review moves one candidate (same ref) -------------------------


@pytest.mark.parametrize(
    ("state", "reason"),
    [("active", None), ("retired", "rejected_in_review"), ("retired", "no_write_rationale")],
)
def test_with_lifecycle_is_the_candidate_the_constructor_builds(
    state: str, reason: str | None
) -> None:
    """A review keeps the candidate_ref (state and retired_reason are not hashed)."""
    record = propose(proposal(expires_at="2026-09-01T00:00:00Z"), checkpoint(), now=NOW).candidate
    lifecycle = CandidateLifecycle(
        state=state,  # type: ignore[arg-type]
        expires_at=record.lifecycle.expires_at,
        retired_reason=reason,  # type: ignore[arg-type]
    )
    moved = record.with_lifecycle(lifecycle)
    rebuilt = attrs.evolve(record, lifecycle=lifecycle)  # the validating constructor
    assert moved == rebuilt
    assert moved.candidate_ref == record.candidate_ref
    assert moved.lifecycle is lifecycle
    assert record.lifecycle.state == "candidate"  # the original is untouched


def test_with_lifecycle_of_another_expiry_is_another_candidate() -> None:
    record = propose(proposal(), checkpoint(), now=NOW).candidate
    lifecycle = CandidateLifecycle(state="active", expires_at="2026-09-01T00:00:00Z")
    moved = record.with_lifecycle(lifecycle)
    assert moved.candidate_ref != record.candidate_ref
    assert moved == attrs.evolve(record, lifecycle=lifecycle, candidate_ref="")


def test_with_lifecycle_refuses_anything_but_a_lifecycle() -> None:
    record = propose(proposal(), checkpoint(), now=NOW).candidate
    with pytest.raises(RecordValidationError) as caught:
        record.with_lifecycle({"state": "active"})  # type: ignore[arg-type]
    assert caught.value.path == "$.lifecycle"
    assert caught.value.code == "wrong_type"


@pytest.mark.parametrize(
    "changes",
    [
        {},
        {"expires_at": "2026-09-01T00:00:00Z"},
        {"observed_at": "2026-02-01T10:00:00+01:00", "requested_action_scopes": ()},
    ],
)
def test_of_proposal_is_the_candidate_the_constructor_builds(changes: dict[str, Any]) -> None:
    typed = proposal(**changes)
    made = Candidate.of_proposal(typed)
    built = Candidate(
        target_class=typed.target_class,
        content_summary=typed.content_summary,
        source=typed.source,
        scope=typed.scope,
        reasoning=typed.reasoning,
        guard_context=typed.guard_context,
        requested_action_scopes=typed.requested_action_scopes,
        lifecycle=CandidateLifecycle(state="candidate", expires_at=typed.expires_at),
        observed_at=typed.observed_at,
    )
    assert made == built
    assert made.candidate_ref == built.candidate_ref
    assert wire.load(wire.dump(CandidatePacket(**_packet_fields(made)))).candidate == made


def _packet_fields(candidate: Candidate) -> dict[str, Any]:
    return {
        "status": "review_ready",
        "candidate": candidate,
        "authority_checkpoint": checkpoint(),
        "guard": propose(proposal(), checkpoint(), now=NOW).guard,
    }


def test_of_proposal_takes_only_a_proposal() -> None:
    with pytest.raises(RecordValidationError) as caught:
        Candidate.of_proposal({"target_class": "hard_policy"})  # type: ignore[arg-type]
    assert caught.value.code == "wrong_type"


def test_the_review_summary_of_a_decision_is_the_constructors() -> None:
    chosen = decision("reject")
    made = CandidateReviewSummary.of_decision(chosen)
    assert made == CandidateReviewSummary(
        reviewer_ref=chosen.reviewer_ref,
        review_ref=chosen.review_ref,
        reasoning_summary=chosen.reasoning_summary,
    )
    with pytest.raises(RecordValidationError) as caught:
        CandidateReviewSummary.of_decision({"reviewer_ref": "x"})  # type: ignore[arg-type]
    assert caught.value.code == "wrong_type"


@pytest.mark.parametrize(
    "flag",
    [
        "grants_new_action_authority",
        "provider_write_performed",
        "external_writes_performed",
        "raw_content_captured",
    ],
)
@pytest.mark.parametrize("value", [True, 0, None])
def test_a_review_packet_keeps_its_boundary_flags_false(flag: str, value: Any) -> None:
    """A review is a decision record: it grants nothing and writes nothing (reference §5.2)."""
    packet = review(propose(proposal(), checkpoint(), now=NOW), decision("accept"), now=NOW)
    with pytest.raises(RecordValidationError) as caught:
        attrs.evolve(packet, **{flag: value})
    assert (caught.value.path, caught.value.code) == (f"$.{flag}", "invalid_value")
    assert caught.value.message == "must be false"
