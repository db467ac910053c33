"""activate(): preconditions, authority, determinism, and the no-widening properties."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _stage2 import (
    GOLDEN_REF,
    NOW,
    PROJECT,
    REVISION,
    SCOPE_SELECTION,
    SURFACE,
    advisory,
    checkpoint,
    context,
    corpus_for,
    decision,
    proposal,
    reasoning,
    scope,
    source,
)
from reward_memory import schemas, wire
from reward_memory.activation import RETENTION_BY_CLASS, activate, format_timestamp
from reward_memory.candidates import propose, review
from reward_memory.errors import RecordValidationError
from reward_memory.records.active import ActiveRecord
from reward_memory.records.candidate import AuthorityCheckpoint, Proposal, to_plain
from reward_memory.records.corpus import CorpusFreshness, CorpusLifecycle
from reward_memory.records.envelope import ADVISORY_CLASSES, RecordScope
from reward_memory.records.review import CandidateReview, CandidateReviewSummary


def _accepted(item: Proposal | None = None, gate: AuthorityCheckpoint | None = None) -> Any:
    packet = propose(item or proposal(), gate if gate is not None else checkpoint(), now=NOW)
    return review(packet, decision("accept"), now=NOW)


def _valid(record: ActiveRecord) -> ActiveRecord:
    plain = to_plain(record)
    assert plain == wire.dump(record)
    assert schemas.validate(plain) == "reward_memory_active_record_v1"
    assert wire.load(plain, ActiveRecord) == record
    return record


# -- the fixture ------------------------------------------------------------------------------


def test_a_verified_hard_policy_activates_as_a_constraint() -> None:
    record = _valid(activate(_accepted(), corpus_for(), checkpoint=checkpoint(), now=NOW))
    assert record.class_id == "hard_policy"
    assert record.candidate_ref == GOLDEN_REF
    assert record.authority.level == "constraint"
    assert record.authority.action_scopes == (SCOPE_SELECTION,)
    assert record.authority.checkpoint_ref == "repository:authority-map"
    assert record.confidence.level == "high"
    assert record.confidence.basis == "An explicit correction by a verified core contributor."
    assert record.lifecycle_state == "active"
    assert record.activated_at == "2026-03-01T12:00:00Z"
    assert record.source.observed_at == record.activated_at
    assert record.privacy.visibility == "private"
    assert record.privacy.retention_class == "durable_until_revoked"
    assert record.privacy.raw_content_captured is False
    assert record.review.review_ref == "review:test:accept"
    assert record.activation_lineage.review_ref == "review:test:accept"
    assert record.corpus_id == "authority_policy_sources"
    assert record.activation_ref.startswith("activation:")
    assert len(record.activation_ref) == len("activation:") + 20


def test_the_scope_is_the_candidate_scope_and_lineage_and_expiry_carry() -> None:
    item = proposal(expires_at="2030-01-01T00:00:00Z", observed_at="2026-02-01T00:00:00+00:00")
    edited = review(propose(item, checkpoint(), now=NOW), decision("edit"))
    accepted = review(edited, decision("accept"))
    record = _valid(activate(accepted, corpus_for(), checkpoint=checkpoint(), now=NOW))
    assert record.scope == item.scope
    assert record.supersession.supersedes_refs == (
        propose(item, checkpoint(), now=NOW).candidate.candidate_ref,
    )
    assert record.expiry.expires_at == "2030-01-01T00:00:00Z"
    assert record.source.observed_at == "2026-02-01T00:00:00Z"  # stored normalised
    assert record.content_summary == edited.record.content_summary


@pytest.mark.parametrize("target_class", ["soft_preference", "procedural_experience"])
def test_advisory_classes_activate_as_advisory_without_a_checkpoint(target_class: str) -> None:
    accepted = _accepted(advisory(target_class), AuthorityCheckpoint(verified=False))
    record = _valid(activate(accepted, corpus_for(target_class), checkpoint=None, now=NOW))
    assert record.authority.level == "advisory"
    assert record.authority.action_scopes == ()
    assert record.authority.checkpoint_ref is None
    assert record.privacy.retention_class == RETENTION_BY_CLASS[target_class]
    # A verified checkpoint changes nothing for an advisory class.
    again = activate(accepted, corpus_for(target_class), checkpoint=checkpoint(), now=NOW)
    assert again == record


def test_visibility_comes_from_the_corpus() -> None:
    corpus = corpus_for()
    corpus = attrs.evolve(corpus, privacy=attrs.evolve(corpus.privacy, visibility="workspace"))
    record = activate(_accepted(), corpus, checkpoint=checkpoint(), now=NOW)
    assert record.privacy.visibility == "workspace"


def test_activation_is_deterministic() -> None:
    first = activate(_accepted(), corpus_for(), checkpoint=checkpoint(), now=NOW)
    second = activate(_accepted(), corpus_for(), checkpoint=checkpoint(), now=NOW)
    assert first == second
    assert to_plain(first) == to_plain(second)
    later = activate(_accepted(), corpus_for(), checkpoint=checkpoint(), now=NOW + timedelta(1))
    assert later.activation_ref != first.activation_ref
    other_review = review(
        propose(proposal(), checkpoint(), now=NOW), decision("accept", review_ref="review:other")
    )
    assert activate(
        other_review, corpus_for(), checkpoint=checkpoint(), now=NOW
    ).activation_ref != (first.activation_ref)


def test_golden_identities_of_the_fixture_activation() -> None:
    """A changed ref is a changed identity: pinned for the fixture at NOW (item 12)."""
    record = activate(_accepted(), corpus_for(), checkpoint=checkpoint(), now=NOW)
    assert record.record_ref == "record:b64c233d55738c7bf335"
    assert record.activation_ref == "activation:bf27b48aef1b4f97fae0"


def test_a_dict_review_packet_activates_the_same() -> None:
    accepted = _accepted()
    record = activate(to_plain(accepted), corpus_for(), checkpoint=to_plain(checkpoint()), now=NOW)
    assert record == activate(accepted, corpus_for(), checkpoint=checkpoint(), now=NOW)


def test_timestamps_are_utc_z() -> None:
    moment = datetime.fromisoformat("2026-03-01T13:00:00.250000+01:00")
    assert format_timestamp(moment) == "2026-03-01T12:00:00.250000Z"
    assert format_timestamp(NOW) == "2026-03-01T12:00:00Z"
    with pytest.raises(RecordValidationError):
        format_timestamp(datetime(2026, 1, 1))


# -- preconditions ----------------------------------------------------------------------------


def _code(review_packet: Any, corpus: Any = None, gate: Any = "default", **kw: Any) -> str:
    with pytest.raises(RecordValidationError) as info:
        activate(
            review_packet,
            corpus if corpus is not None else corpus_for(),
            checkpoint=checkpoint() if gate == "default" else gate,
            now=kw.get("now", NOW),
        )
    return info.value.code


@pytest.mark.parametrize("kind", ["edit", "reject", "no_write"])
def test_only_accepted_reviews_activate(kind: str) -> None:
    packet = review(propose(proposal(), checkpoint(), now=NOW), decision(kind))
    assert _code(packet) == "review_not_accepted"


def test_a_retired_record_does_not_activate() -> None:
    retired = review(_accepted(), decision("retire"))
    assert _code(retired) == "review_not_accepted"


def test_a_guard_blocked_review_does_not_activate() -> None:
    blocked = _accepted(gate=checkpoint(verified=False))
    assert blocked.status == "guard_blocked"
    assert _code(blocked) == "review_not_accepted"


def test_the_class_must_be_the_corpus_class() -> None:
    assert _code(_accepted(), corpus_for("soft_preference")) == "corpus_class_mismatch"


def test_the_corpus_must_be_active() -> None:
    corpus = attrs.evolve(
        corpus_for(),
        lifecycle=CorpusLifecycle(state="retired", retirement_reason="replaced"),
    )
    assert _code(_accepted(), corpus) == "corpus_not_active"


@pytest.mark.parametrize(
    "corpus",
    [
        lambda: corpus_for(workspace_ref="workspace:other"),
        lambda: corpus_for(project_ref="repository:other"),
        lambda: corpus_for(surfaces=("issue_fix.routing",)),
        lambda: corpus_for(user_ref="user:alice"),
        lambda: corpus_for(peer_ref="peer:agent"),
        lambda: corpus_for(session_ref="session:1"),
    ],
)
def test_the_scope_must_fit_the_corpus(corpus: Any) -> None:
    assert _code(_accepted(), corpus()) == "corpus_scope_mismatch"


def test_identity_fields_must_match_both_ways() -> None:
    item = advisory(scope=scope(user_ref="user:alice", peer_ref="peer:agent"))
    accepted = _accepted(item)
    assert _code(accepted, corpus_for("soft_preference"), None) == "corpus_scope_mismatch"
    corpus = corpus_for("soft_preference", user_ref="user:alice", peer_ref="peer:agent")
    assert activate(accepted, corpus, checkpoint=None, now=NOW).scope.user_ref == "user:alice"


def test_a_record_on_fewer_surfaces_fits() -> None:
    corpus = corpus_for(surfaces=(SURFACE, "issue_fix.routing"))
    assert activate(_accepted(), corpus, checkpoint=checkpoint(), now=NOW).corpus_id


def test_revision_bound_corpora_need_the_same_revision() -> None:
    bound = CorpusFreshness(mode="revision_bound", source_revision=REVISION)
    assert activate(_accepted(), corpus_for(freshness=bound), checkpoint=checkpoint(), now=NOW)
    other = CorpusFreshness(mode="revision_bound", source_revision="revision:def456")
    assert _code(_accepted(), corpus_for(freshness=other)) == "corpus_revision_mismatch"
    unrevisioned = _accepted(proposal(scope=scope(revision_ref=None)))
    assert _code(unrevisioned, corpus_for(freshness=bound)) == "corpus_revision_mismatch"


def test_an_expired_record_does_not_activate() -> None:
    accepted = _accepted(proposal(expires_at="2026-03-02T00:00:00Z"))
    assert activate(accepted, corpus_for(), checkpoint=checkpoint(), now=NOW)
    later = NOW + timedelta(days=2)
    assert _code(accepted, now=later) == "guard_blocked"


@pytest.mark.parametrize(
    "gate",
    [
        None,
        AuthorityCheckpoint(verified=False),
        "unverified",
        "other actor",
        "other project",
        "narrower",
    ],
)
def test_hard_policy_needs_the_checkpoint_again_at_activation(gate: Any) -> None:
    gates = {
        "unverified": checkpoint(verified=False),
        "other actor": checkpoint(actor_ref="github:user:other"),
        "other project": checkpoint(project_ref="repository:other"),
        "narrower": checkpoint(action_scopes=("issue_fix:validation",)),
    }
    assert _code(_accepted(), gate=gates.get(gate, gate)) == "guard_blocked"


def test_a_forged_accepted_review_gains_nothing() -> None:
    # A review packet built by hand claims the guard passed for a candidate whose
    # requested scope the caller's checkpoint does not hold: activation re-runs the
    # guard against the checkpoint passed to it, and refuses.
    wide = proposal(requested_action_scopes=(SCOPE_SELECTION, "repository:publish"))
    candidate = propose(wide, checkpoint(), now=NOW).candidate
    forged = CandidateReview(
        status="active",
        requested_decision="accept",
        effective_decision="accept",
        guard_passed=True,
        reason_codes=(),
        review=CandidateReviewSummary(reviewer_ref="u:x", review_ref="r:x", reasoning_summary="x"),
        record=attrs.evolve(candidate, lifecycle=attrs.evolve(candidate.lifecycle, state="active")),
        persistence_next_step="caller_uses_declared_corpus_write_authority_then_readback",
    )
    assert _code(forged) == "guard_blocked"
    assert _code(to_plain(forged)) == "guard_blocked"


def test_wrong_inputs_are_refused() -> None:
    with pytest.raises(RecordValidationError) as info:
        activate(_accepted(), to_plain(corpus_for()), checkpoint=checkpoint())
    assert info.value.path == "corpus"
    with pytest.raises(RecordValidationError):
        activate("review", corpus_for(), checkpoint=None)  # type: ignore[arg-type]
    with pytest.raises(RecordValidationError):
        activate(_accepted(), corpus_for(), checkpoint=checkpoint(), now=datetime(2026, 1, 1))


def test_confidence_never_changes_the_authority() -> None:
    authorities = {
        activate(
            _accepted(proposal(reasoning=reasoning(confidence=level))),
            corpus_for(),
            checkpoint=checkpoint(),
            now=NOW,
        ).authority
        for level in ("low", "medium", "high")
    }
    assert len(authorities) == 1


# -- properties over 10 000 generated (candidate, checkpoint) pairs ---------------------------

_ACTORS = ("github:user:maintainer", "github:user:other")
_ROLES = ("verified_repository_core_contributor", "verified_project_owner_or_operator", "reviewer")
_PROJECTS = (PROJECT, "repository:other")
_SCOPES = ("issue_fix:scope_selection", "issue_fix:validation", "repository:publish", "x:y")
_CLASSES = ("hard_policy", "soft_preference", "procedural_experience")
_LEVELS = ("low", "medium", "high")
# Corpora per (class, project), built once: each candidate activates into the corpus
# its class and project fit, so activation refuses only for guard reasons.
_CORPORA = {(c, p): corpus_for(c, project_ref=p) for c in _CLASSES for p in _PROJECTS}
_SOURCES = {(a, r): source(actor_ref=a, actor_role=r) for a in _ACTORS for r in _ROLES}
_RECORD_SCOPES = {p: scope(project_ref=p) for p in _PROJECTS}
_REASONING = {level: reasoning(confidence=level) for level in _LEVELS}


_SCOPE_SUBSETS = tuple(
    tuple(scope for bit, scope in enumerate(_SCOPES) if mask >> bit & 1) for mask in range(16)
)
# Each fault breaks one thing the guard checks; a case applies none, one, or a
# random set of them to an otherwise passing (candidate, checkpoint) pair, so
# that about a third of the cases pass and activate.
_FAULTS = (
    "stale",
    "unknown_freshness",
    "conflict",
    "artifact_unverified",
    "scopes_flipped",  # an advisory class asks for scopes; a hard policy asks for none
    "role_cannot_derive",
    "checkpoint_unverified",
    "checkpoint_without_source",
    "checkpoint_other_actor",
    "checkpoint_other_role",
    "checkpoint_other_project",
    "checkpoint_narrower",
    "expires_now",
    "expired",
    "no_checkpoint",
)
# One choice per dimension (mixed radix): the passing base case, then the faults.
_DIMENSIONS: tuple[tuple[Any, ...], ...] = (
    _CLASSES,
    _PROJECTS,
    _ACTORS,
    _ROLES[:2],  # roles that may derive hard policy
    _SCOPE_SUBSETS[1:],  # a non-empty requested set (hard policy)
    _SCOPE_SUBSETS,  # extra checkpoint scopes
    (None, "2026-03-02T00:00:00Z"),  # an expiry still in the future
    _LEVELS,
    _LEVELS,
    ("none", "none", "one", "many"),
    _FAULTS,  # the one fault
    tuple(range(2 ** len(_FAULTS))),  # the many faults
)
_CASES = 1
for _choices in _DIMENSIONS:
    _CASES *= len(_choices)


def _decode(number: int) -> tuple[dict[str, Any], AuthorityCheckpoint, str, str]:
    """Case ``number`` in mixed radix, one digit per dimension.

    One integer draw per example keeps Hypothesis's own overhead to a fifth of
    what a draw per dimension costs, which is what lets this run 10 000 examples
    in a few seconds; it still shrinks (towards case 0: a passing hard policy).
    """
    picks = []
    for choices in _DIMENSIONS:
        number, digit = divmod(number, len(choices))
        picks.append(choices[digit])
    (
        target_class,
        project,
        actor,
        role,
        requested,
        extra,
        expires_at,
        level,
        other_level,
        mode,
        one_fault,
        fault_mask,
    ) = picks
    faults = (
        set()
        if mode == "none"
        else {one_fault}
        if mode == "one"
        else {fault for bit, fault in enumerate(_FAULTS) if fault_mask >> bit & 1}
    )
    hard = target_class == "hard_policy"
    if hard == ("scopes_flipped" in faults):
        requested = ()
    if "role_cannot_derive" in faults:
        role = "reviewer"
    freshness = (
        "stale" if "stale" in faults else "unknown" if "unknown_freshness" in faults else "current"
    )
    conflict = "unresolved" if "conflict" in faults else "clear"
    if "expires_now" in faults:
        expires_at = "2026-03-01T12:00:00Z"
    if "expired" in faults:
        expires_at = "2026-03-01T11:00:00+00:00"
    fields = {
        "target_class": target_class,
        "source": _SOURCES[actor, role],
        "scope": _RECORD_SCOPES[project],
        "guard_context": _CONTEXTS[freshness, conflict, "artifact_unverified" not in faults],
        "requested_action_scopes": requested,
        "expires_at": expires_at,
    }
    held = tuple(sorted({*requested, *extra}))
    if "checkpoint_narrower" in faults and requested:
        held = tuple(sorted(set(held) - {requested[0]}))
    gate = AuthorityCheckpoint(
        verified="checkpoint_unverified" not in faults,
        source_ref=None if "checkpoint_without_source" in faults else "repository:authority-map",
        actor_ref=_ACTORS[actor == _ACTORS[0]] if "checkpoint_other_actor" in faults else actor,
        actor_role=(
            "verified_project_owner_or_operator"
            if "checkpoint_other_role" in faults and role != "verified_project_owner_or_operator"
            else "reviewer"
            if "checkpoint_other_role" in faults
            else role
        ),
        project_ref=(
            _PROJECTS[project == _PROJECTS[0]] if "checkpoint_other_project" in faults else project
        ),
        action_scopes=held,
    )
    if "no_checkpoint" in faults:
        gate = AuthorityCheckpoint(verified=False)
    return fields, gate, level, other_level


_CONTEXTS = {
    (f, c, v): context(source_freshness=f, conflict_state=c, current_artifact_verified=v)
    for f in ("current", "stale", "unknown")
    for c in ("clear", "unresolved")
    for v in (True, False)
}


def _outcome(fields: dict[str, Any], gate: AuthorityCheckpoint, level: str, *, forge: bool) -> Any:
    item = proposal(reasoning=_REASONING[level], **fields)
    packet = propose(item, gate, now=NOW)
    corpus = _CORPORA[item.target_class, item.scope.project_ref]
    if packet.status == "guard_blocked":
        reviewed = review(packet, decision("accept"), now=NOW)
        assert (reviewed.status, reviewed.effective_decision) == ("guard_blocked", "no_write")
        if forge:
            # Forge an accepted review anyway: activation re-runs the guard against
            # the caller's checkpoint and must refuse, so no packet launders authority.
            with pytest.raises(RecordValidationError) as info:
                activate(_forged(packet), corpus, checkpoint=gate, now=NOW)
            assert info.value.code == "guard_blocked"
        return packet.guard.reason_codes, None
    record = activate(review(packet, decision("accept"), now=NOW), corpus, checkpoint=gate, now=NOW)
    return packet.guard.reason_codes, record.authority


def _forged(packet: Any) -> CandidateReview:
    candidate = packet.candidate
    return CandidateReview(
        status="active",
        requested_decision="accept",
        effective_decision="accept",
        guard_passed=True,
        reason_codes=(),
        review=CandidateReviewSummary(reviewer_ref="u:x", review_ref="r:x", reasoning_summary="x"),
        record=attrs.evolve(candidate, lifecycle=attrs.evolve(candidate.lifecycle, state="active")),
        persistence_next_step="caller_uses_declared_corpus_write_authority_then_readback",
    )


@settings(max_examples=10_000)
@given(case=st.integers(min_value=0, max_value=_CASES - 1))
def test_no_activation_widens_authority(case: int) -> None:
    fields, gate, level, other_level = _decode(case)
    reasons, authority = _outcome(fields, gate, level, forge=True)
    if authority is not None:
        # Never more action scope than the caller's checkpoint holds.
        assert set(authority.action_scopes) <= set(gate.action_scopes)
        if fields["target_class"] in ADVISORY_CLASSES:
            assert authority.level == "advisory"
            assert authority.action_scopes == ()
            assert authority.checkpoint_ref is None
        else:
            assert authority.level == "constraint"
            assert gate.verified
            assert authority.checkpoint_ref == gate.source_ref
            assert authority.action_scopes == fields["requested_action_scopes"]
    # Confidence never changes the guard or the authority.
    assert _outcome(fields, gate, other_level, forge=False) == (reasons, authority)


def test_advisory_classes_never_hold_action_authority_by_construction() -> None:
    assert {"soft_preference", "procedural_experience"} <= ADVISORY_CLASSES
    for target_class in ("working_context", "run_bound_reward"):
        with pytest.raises(RecordValidationError):
            proposal(target_class=target_class)
    # And the envelope refuses advisory authority with scopes outright.
    record = activate(
        _accepted(advisory()), corpus_for("soft_preference"), checkpoint=None, now=NOW
    )
    with pytest.raises(RecordValidationError):
        attrs.evolve(record, authority=attrs.evolve(record.authority, level="constraint"))
    assert isinstance(record.scope, RecordScope)


# -- the derived build is the validating build ------------------------------------------------
#
# activate() sets the record of an exact-type, already-validated review without
# re-running the validators (_active_build.derived_record). It must build exactly
# the record the validating constructors build (_active_build.validated_record):
# every field, every nested record's type, the activation_ref, the bytes.

_TEXT = st.text(
    alphabet=st.characters(min_codepoint=32, max_codepoint=0x2FFF, blacklist_categories=("Cs",)),
    min_size=1,
    max_size=60,
).filter(lambda text: text.strip() != "")
_STAMPS = st.sampled_from(
    [None, "2030-01-01T00:00:00Z", "2031-06-01T08:30:00+02:00", "2029-12-31T23:59:59.5Z"]
)


def _safe(make: Any, *args: Any, **fields: Any) -> Any:
    try:
        return make(*args, **fields)
    except RecordValidationError:  # text the scan refuses: not an activation input
        return None


@settings(max_examples=400, deadline=None)
@given(
    target_class=st.sampled_from(_CLASSES),
    summary=_TEXT,
    basis=_TEXT,
    reviewer_summary=_TEXT,
    source_ref=_TEXT,
    expires_at=_STAMPS,
    observed_at=st.sampled_from([None, "2026-02-01T00:00:00+00:00", "2026-02-28T23:00:00Z"]),
    edit=st.booleans(),
    visibility=st.sampled_from(["private", "workspace", "public_safe"]),
    scopes=st.sampled_from(_SCOPE_SUBSETS[1:] if len(_SCOPE_SUBSETS) > 1 else _SCOPE_SUBSETS),
    level=st.sampled_from(_LEVELS),
)
def test_the_derived_record_is_the_validated_record(
    target_class: str,
    summary: str,
    basis: str,
    reviewer_summary: str,
    source_ref: str,
    expires_at: str | None,
    observed_at: str | None,
    edit: bool,
    visibility: str,
    scopes: tuple[str, ...],
    level: str,
) -> None:
    from reward_memory import _active_build
    from reward_memory.digests import _CANONICAL
    from reward_memory.ingestion import canonical_text

    hard = target_class == "hard_policy"
    item = _safe(
        proposal,
        target_class=target_class,
        content_summary=summary,
        source=_safe(source, source_ref=source_ref) or source(),
        reasoning=_safe(reasoning, confidence=level, confidence_basis=basis) or reasoning(),
        requested_action_scopes=scopes if hard else (),
        expires_at=expires_at,
        observed_at=observed_at,
    )
    accept = _safe(decision, "accept", reasoning_summary=reviewer_summary)
    if item is None or accept is None:
        return
    gate = checkpoint(action_scopes=scopes)
    packet = propose(item, gate, now=NOW)
    if edit:
        packet = review(packet, decision("edit"), checkpoint=gate, now=NOW)
    accepted = review(packet, accept, checkpoint=gate, now=NOW)
    if accepted.status != "active":
        return
    corpus = corpus_for(target_class)
    corpus = attrs.evolve(corpus, privacy=attrs.evolve(corpus.privacy, visibility=visibility))
    derived = activate(accepted, corpus, checkpoint=gate, now=NOW)
    validated = _active_build.validated_record(accepted, corpus, gate, format_timestamp(NOW))
    assert derived == validated
    assert _active_build.derivable(accepted, corpus, gate)
    for name in attrs.fields_dict(ActiveRecord):
        assert type(getattr(derived, name)) is type(getattr(validated, name)), name
    assert canonical_text(derived) == canonical_text(validated)
    # The hooked orjson writer (an active record is all strings): the standard encoder's text.
    assert canonical_text(derived) == _CANONICAL.encode(to_plain(derived))
    assert wire.load(wire.dump(derived), ActiveRecord) == derived


def test_a_subclassed_part_takes_the_validating_build() -> None:
    """Only exact-type records are derived; anything else is built by the constructors."""
    from reward_memory import _active_build

    class Wider(AuthorityCheckpoint):
        pass

    accepted = _accepted()
    gate = Wider(**attrs.asdict(checkpoint(), recurse=False))
    assert not _active_build.derivable(accepted, corpus_for(), gate)
    assert _active_build.derivable(accepted, corpus_for(), checkpoint())
    record = activate(accepted, corpus_for(), checkpoint=gate, now=NOW)
    assert record == activate(accepted, corpus_for(), checkpoint=checkpoint(), now=NOW)
