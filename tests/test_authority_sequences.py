"""No *sequence* of operations widens authority (a hypothesis state machine).

Candidates are proposed under random checkpoints, then reviewed (accept, edit,
reject, retire, no_write — in any order, on any earlier packet, including
re-reviews and reviews of blocked candidates) and activated against checkpoints
that may differ from the one they were proposed under. Whatever the sequence:

- an active record of an advisory class never carries action authority;
- a hard-policy record's action scopes are a subset of the scopes of *both*
  the checkpoint it was proposed under and the one it was activated under, and
  both checkpoints are verified and bind the source actor, role and project;
- a candidate that was ever guard-blocked never becomes active, however often
  it is re-reviewed or edited.
"""

from __future__ import annotations

from typing import Any

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, invariant, rule

import _stage2 as s2
from reward_memory.activation import activate
from reward_memory.candidates import propose, review
from reward_memory.errors import RecordValidationError
from reward_memory.records.active import ActiveRecord
from reward_memory.records.candidate import CandidatePacket
from reward_memory.records.review import CandidateReview

SCOPES = ("issue_fix:scope_selection", "issue_fix:validation", "repo:write", "publish:release")
ROLES = (s2.ROLE, "verified_project_owner_or_operator", "drive_by_commenter")
ACTORS = (s2.ACTOR, "github:user:someone-else")
PROJECTS = (s2.PROJECT, "repository:other")

scope_sets = st.frozensets(st.sampled_from(SCOPES), max_size=3).map(lambda s: tuple(sorted(s)))
# Half of the checkpoints bind the fixture's actor, role and project (so that
# activations really happen), half are arbitrary.
matching_checkpoints = st.builds(lambda scopes: s2.checkpoint(action_scopes=scopes), scope_sets)
arbitrary_checkpoints = st.builds(
    lambda verified, actor, role, project, scopes: s2.checkpoint(
        verified=verified,
        actor_ref=actor,
        actor_role=role,
        project_ref=project,
        action_scopes=scopes,
    ),
    st.booleans(),
    st.sampled_from(ACTORS),
    st.sampled_from(ROLES),
    st.sampled_from(PROJECTS),
    scope_sets,
)
checkpoints = st.one_of(matching_checkpoints, arbitrary_checkpoints)


class AuthorityNeverWidens(RuleBasedStateMachine):
    packets = Bundle("packets")

    def __init__(self) -> None:
        super().__init__()
        # candidate_ref lineage root -> (checkpoint at propose, ever blocked?)
        self.origin: dict[int, tuple[Any, bool]] = {}
        self.records: list[tuple[ActiveRecord, Any, Any]] = []

    @rule(
        target=packets,
        target_class=st.sampled_from(("hard_policy", "soft_preference", "procedural_experience")),
        requested=st.one_of(st.just(()), scope_sets),
        checkpoint=checkpoints,
        role=st.one_of(st.just(s2.ROLE), st.sampled_from(ROLES)),
        within=st.booleans(),
    )
    def propose_candidate(
        self,
        target_class: str,
        requested: tuple[str, ...],
        checkpoint: Any,
        role: str,
        within: bool,
    ) -> Any:
        if within:  # ask for no more than the checkpoint grants (so activations happen)
            granted = set(checkpoint.action_scopes)
            requested = tuple(sorted(set(requested) & granted)) or checkpoint.action_scopes
        packet = propose(
            s2.proposal(
                target_class=target_class,
                requested_action_scopes=requested,
                source=s2.source(actor_role=role),
            ),
            checkpoint,
            now=s2.NOW,
        )
        blocked = packet.status == "guard_blocked"
        self.origin[id(packet)] = (checkpoint, blocked)
        return packet

    @rule(target=packets, granted=scope_sets.filter(bool), asked=scope_sets)
    def propose_verified_hard_policy(self, granted: tuple[str, ...], asked: tuple[str, ...]) -> Any:
        """A correction by the verified contributor: most such lineages can activate."""
        checkpoint = s2.checkpoint(action_scopes=granted)
        requested = tuple(sorted(set(asked) & set(granted))) or granted
        packet = propose(s2.proposal(requested_action_scopes=requested), checkpoint, now=s2.NOW)
        assert packet.status == "review_ready"
        self.origin[id(packet)] = (checkpoint, False)
        return packet

    @rule(
        target=packets,
        packet=packets,
        kind=st.sampled_from(("accept", "edit", "reject", "retire", "no_write")),
    )
    def review_packet(self, packet: Any, kind: str) -> Any:
        root = self.origin[id(packet)]
        try:
            result = review(packet, s2.decision(kind))
        except RecordValidationError:
            return packet  # a precondition (e.g. retire of a candidate): nothing changes
        if root[1]:
            assert result.status != "active", "a blocked candidate became active"
        self.origin[id(result)] = root
        return result

    @rule(packet=packets, reuse=st.booleans(), other=st.one_of(st.none(), checkpoints))
    def activate_packet(self, packet: Any, reuse: bool, other: Any) -> None:
        proposed_under, blocked = self.origin[id(packet)]
        checkpoint = proposed_under if reuse else other
        if not isinstance(packet, CandidateReview):
            return
        corpus = s2.corpus_for(packet.record.target_class)
        try:
            record = activate(packet, corpus, checkpoint=checkpoint, now=s2.NOW)
        except RecordValidationError:
            return
        assert not blocked, "a guard-blocked lineage was activated"
        self.records.append((record, proposed_under, checkpoint))

    @invariant()
    def no_record_exceeds_its_checkpoints(self) -> None:
        for record, proposed_under, activated_under in self.records:
            scopes = set(record.authority.action_scopes)
            if record.class_id != "hard_policy":
                assert record.authority.level == "advisory"
                assert not scopes
                continue
            assert record.authority.level in ("constraint", "veto")
            for checkpoint in (proposed_under, activated_under):
                assert checkpoint is not None
                assert checkpoint.verified
                assert scopes <= set(checkpoint.action_scopes)
                assert checkpoint.actor_ref == record.source.actor_ref
                assert checkpoint.actor_role == record.source.actor_role
                assert checkpoint.project_ref == record.scope.project_ref

    def teardown(self) -> None:
        for record, _, _ in self.records:
            assert isinstance(record, ActiveRecord)


AuthorityNeverWidens.TestCase.settings = settings(
    max_examples=300, stateful_step_count=40, deadline=None
)
TestAuthorityNeverWidens = AuthorityNeverWidens.TestCase


def test_the_machine_reaches_activation_and_refuses_a_narrower_checkpoint() -> None:
    """The machine's paths are not vacuous: a verified lineage activates with its
    checkpoint, and the same accepted review under a narrower checkpoint does not."""
    machine = AuthorityNeverWidens()
    packet = machine.propose_verified_hard_policy(
        granted=("issue_fix:scope_selection", "repo:write"), asked=("repo:write",)
    )
    accepted = machine.review_packet(packet=packet, kind="accept")
    assert isinstance(accepted, CandidateReview)
    assert accepted.status == "active"
    machine.activate_packet(
        packet=accepted, reuse=False, other=s2.checkpoint(action_scopes=("issue_fix:validation",))
    )
    assert machine.records == []
    machine.activate_packet(packet=accepted, reuse=True, other=None)
    ((record, _, _),) = machine.records
    assert record.authority.action_scopes == ("repo:write",)
    machine.no_record_exceeds_its_checkpoints()
    blocked = machine.propose_candidate(
        target_class="soft_preference",
        requested=("repo:write",),
        checkpoint=s2.checkpoint(),
        role=s2.ROLE,
        within=False,
    )
    assert isinstance(blocked, CandidatePacket)
    assert blocked.status == "guard_blocked"
    assert machine.review_packet(packet=blocked, kind="accept").status == "guard_blocked"
