"""Review re-derives its target's guard: a verdict is never read from data (DESIGN.md §4).

Seeds, Stage 2: "An unverified, mismatched, or wider request remains inspectable as
guard_blocked; an attempted accept or edit becomes no_write instead of gaining
authority." The target of a review is a packet (built by a caller, loaded from
JSON), so its recorded ``guard`` / ``guard_passed`` buys nothing: review derives
the verdict again, and a recorded verdict that disagrees adds
``recorded_guard_verdict_mismatch``.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import attrs
from hypothesis import given, settings
from hypothesis import strategies as st

from _stage2 import NOW, checkpoint, context, decision, proposal
from reward_memory import wire
from reward_memory.candidates import propose, review
from reward_memory.records.candidate import RECORDED_MISMATCH, CandidateGuard, CandidatePacket
from reward_memory.records.review import CandidateReview


def _flipped(packet: CandidatePacket) -> CandidatePacket:
    """The packet as JSON with its guard claiming a pass, loaded back."""
    data = wire.dump(packet)
    data["status"] = "review_ready"
    data["guard"] = {**data["guard"], "passed": True, "reason_codes": []}
    loaded: CandidatePacket = wire.load(data, CandidatePacket)
    return loaded


def test_a_blocked_candidate_with_its_guard_flipped_is_not_accepted() -> None:
    blocked = propose(proposal(guard_context=context(conflict_state="unresolved")), checkpoint())
    assert blocked.status == "guard_blocked"
    reviewed = review(_flipped(blocked), decision("accept"), checkpoint=checkpoint(), now=NOW)
    assert (reviewed.status, reviewed.effective_decision) == ("guard_blocked", "no_write")
    assert reviewed.guard_passed is False
    assert reviewed.reason_codes == ("unresolved_higher_authority_conflict", RECORDED_MISMATCH)
    # Without the caller's checkpoint a loaded packet's own one vouches for nothing.
    alone = review(_flipped(blocked), decision("accept"), now=NOW)
    assert alone.status == "guard_blocked"
    assert "authority_checkpoint_unverified" in alone.reason_codes


def test_a_loaded_packet_with_a_forged_checkpoint_does_not_review_to_active() -> None:
    """wire.load of another party's packet is data, like the mapping itself."""
    blocked = propose(proposal(), None, now=NOW)
    data = wire.dump(blocked)
    data["authority_checkpoint"] = wire.dump(checkpoint())
    data["status"] = "review_ready"
    data["guard"] = wire.dump(propose(proposal(), checkpoint(), now=NOW))["guard"]
    loaded = wire.load(data, CandidatePacket)
    assert review(loaded, decision("accept"), now=NOW).status == "guard_blocked"
    assert review(loaded, decision("accept"), checkpoint=checkpoint(), now=NOW).status == "active"


def test_a_candidate_packet_carrying_a_forged_checkpoint_is_judged_under_the_callers() -> None:
    """The checkpoint inside a packet is data too: the caller's own one decides."""
    wide = propose(proposal(), checkpoint(), now=NOW)
    assert wide.status == "review_ready"
    narrower = checkpoint(action_scopes=())
    reviewed = review(wide, decision("accept"), checkpoint=narrower, now=NOW)
    assert reviewed.effective_decision == "no_write"
    assert "requested_action_scope_exceeds_verified_authority" in reviewed.reason_codes


def test_a_review_packet_claiming_a_pass_is_re_derived() -> None:
    """A review of a review cannot launder a blocked candidate (no checkpoint travels with it)."""
    blocked = propose(advisory_with_conflict(), None, now=NOW)
    edited = review(blocked, decision("edit", edited_content_summary="Shorter wording."), now=NOW)
    assert edited.status == "guard_blocked"
    forged = CandidateReview(
        status="review_ready",
        requested_decision="edit",
        effective_decision="edit",
        guard_passed=True,
        reason_codes=(),
        review=edited.review,
        record=edited.record,
        persistence_next_step="none",
    )
    reviewed = review(forged, decision("accept"), now=NOW)
    assert reviewed.effective_decision == "no_write"
    assert reviewed.reason_codes == ("unresolved_higher_authority_conflict", RECORDED_MISMATCH)


def advisory_with_conflict() -> Any:
    return proposal(
        target_class="soft_preference",
        requested_action_scopes=(),
        guard_context=context(conflict_state="unresolved"),
    )


def test_an_expired_candidate_cannot_be_accepted_later() -> None:
    """DESIGN.md §6: expired material never activates, whenever it is reviewed."""
    packet = propose(proposal(expires_at="2026-03-02T00:00:00Z"), checkpoint(), now=NOW)
    assert packet.status == "review_ready"
    later = review(packet, decision("accept"), now=NOW + timedelta(days=2))
    assert later.effective_decision == "no_write"
    assert later.reason_codes == ("candidate_expired",)  # time passing is no mismatch
    # ... and a candidate recorded as expired stays expired at an earlier clock.
    expired = propose(
        proposal(expires_at="2026-03-02T00:00:00Z"), checkpoint(), now=NOW.replace(month=4)
    )
    earlier = review(expired, decision("accept"), now=NOW)
    assert earlier.reason_codes == ("candidate_expired",)


def test_an_honest_chain_of_reviews_is_unchanged() -> None:
    packet = propose(proposal(), checkpoint(), now=NOW)
    edited = review(packet, decision("edit", edited_content_summary="Keep fixes local."), now=NOW)
    assert edited.status == "review_ready"
    accepted = review(edited, decision("accept"), checkpoint=checkpoint(), now=NOW)
    assert (accepted.status, accepted.reason_codes) == ("active", ())


@settings(max_examples=200, deadline=None)
@given(
    freshness=st.sampled_from(["current", "stale", "unknown"]),
    conflict=st.sampled_from(["clear", "unresolved"]),
    verified=st.booleans(),
    scopes=st.sampled_from([(), ("issue_fix:scope_selection",), ("issue_fix:merge",)]),
    claim=st.sampled_from(["honest", "passed", "blocked"]),
)
def test_no_forged_verdict_activates_what_the_guard_blocks(
    freshness: str, conflict: str, verified: bool, scopes: tuple[str, ...], claim: str
) -> None:
    item = proposal(guard_context=context(source_freshness=freshness, conflict_state=conflict))
    gate = checkpoint(verified=verified, action_scopes=scopes)
    packet = propose(item, gate, now=NOW)
    honest = packet.guard.reason_codes
    if claim == "passed":
        packet = _flipped(packet)
    elif claim == "blocked":
        packet = attrs.evolve(
            packet,
            status="guard_blocked",
            guard=CandidateGuard(passed=False, reason_codes=("source_freshness_not_current",)),
        )
    reviewed = review(packet, decision("accept"), checkpoint=gate, now=NOW)
    if honest or packet.guard.reason_codes != honest:
        assert reviewed.status == "guard_blocked"
        assert set(honest) <= set(reviewed.reason_codes)
    else:
        assert reviewed.status == "active"
