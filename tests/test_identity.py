"""Identity for what comes next (issue item 12): one stored spelling per instant,
a candidate_ref and an activation_ref that cover what a record says and how long it
lives, and a stable per-record identity (record_ref) that revoke and purge can name.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _stage2 import (
    ACTOR,
    GOLDEN_REF,
    NOW,
    PROJECT,
    REVISION,
    ROLE,
    SCOPE_SELECTION,
    SUMMARY,
    SURFACE,
    WORKSPACE,
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
from reward_memory.activation import activate, activation_ref_of
from reward_memory.candidates import propose, review
from reward_memory.digests import canonical_json, legacy_json, make_ref, sha256_hex
from reward_memory.errors import RecordValidationError
from reward_memory.grammars import TIMESTAMP, normalize_timestamp, parse_timestamp
from reward_memory.records._plain import from_plain, to_plain
from reward_memory.records.active import ActiveRecord, record_ref_of
from reward_memory.records.candidate import CandidatePacket, Proposal, candidate_hashed_object
from reward_memory.records.envelope import Revocation, Supersession
from reward_memory.records.review import CandidateReview

STORED = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{6})?Z")
LATER = "2030-01-01T00:00:00Z"


def _spell(moment: datetime, offset_minutes: int) -> str:
    """``moment`` written with another UTC offset (``+00:00`` when the offset is zero)."""
    return moment.astimezone(timezone(timedelta(minutes=offset_minutes))).isoformat()


# Instants whose every offset spelling exists (no year-1 / year-9999 overflow).
_INSTANTS = st.datetimes(
    min_value=datetime(2, 1, 1), max_value=datetime(9998, 12, 31), timezones=st.just(UTC)
)
_FUTURE = st.datetimes(
    min_value=datetime(2027, 1, 1), max_value=datetime(9998, 12, 31), timezones=st.just(UTC)
)
_OFFSETS = st.integers(min_value=-(23 * 60 + 59), max_value=23 * 60 + 59)


# -- one stored spelling per instant ----------------------------------------------------------


@pytest.mark.parametrize(
    "spelling",
    [
        "2026-01-01T00:00:00+00:00",
        "2026-01-01T00:00:00Z",
        "2026-01-01T01:00:00+01:00",
        "2026-01-01T00:00:00.000Z",
        "2026-01-01T00:00Z",
        "2025-12-31T19:00:00-05:00",
        "2026-01-01T00:00:00.000000-00:00",
    ],
)
def test_every_spelling_of_one_instant_is_one_stored_string(spelling: str) -> None:
    """Item 12: every timestamp is normalised before it is stored or hashed."""
    assert normalize_timestamp(spelling) == "2026-01-01T00:00:00Z"


@pytest.mark.parametrize(
    ("spelling", "stored"),
    [
        ("2026-01-01T01:00:00.5+01:00", "2026-01-01T00:00:00.500000Z"),
        ("2026-01-01T00:00:00.123456Z", "2026-01-01T00:00:00.123456Z"),
        ("2026-01-01T00:00:00.000001Z", "2026-01-01T00:00:00.000001Z"),
        ("2026-01-01T00:00:00.0Z", "2026-01-01T00:00:00Z"),
    ],
)
def test_fractional_seconds_are_kept_only_when_non_zero(spelling: str, stored: str) -> None:
    assert normalize_timestamp(spelling) == stored


@settings(max_examples=300)
@given(moment=_INSTANTS, first=_OFFSETS, second=_OFFSETS)
def test_normalising_keeps_the_instant_and_forgets_the_spelling(
    moment: datetime, first: int, second: int
) -> None:
    """Two spellings of one instant give the same bytes; the instant itself is kept."""
    stored = normalize_timestamp(_spell(moment, first))
    assert stored == normalize_timestamp(_spell(moment, second))
    assert STORED.fullmatch(stored)
    assert parse_timestamp(stored) == moment
    assert normalize_timestamp(stored) == stored  # idempotent


@pytest.mark.parametrize(
    "value",
    [
        "2026-01-01T00:00:00",  # naive
        "2026-02-30T00:00:00Z",
        "2026-01-01T24:00:00Z",
        "2026-01-01T00:00:00+05:60",  # Python would read this as +06:00
        "0001-01-01T00:00:00+01:00",  # no UTC form
        1_767_225_600,
        None,
    ],
)
def test_naive_or_invalid_timestamps_are_typed_errors_naming_the_field(value: Any) -> None:
    with pytest.raises(RecordValidationError) as info:
        normalize_timestamp(value, "$.when")
    assert (info.value.path, info.value.code) == ("$.when", "invalid_format")
    if value is not None:
        with pytest.raises(RecordValidationError) as info:
            proposal(expires_at=value)
        assert info.value.path == "$.expires_at"


_TIMESTAMPISH = st.one_of(
    st.from_regex(TIMESTAMP, fullmatch=True),
    st.builds(
        "{:04d}-{:02d}-{:02d}T{:02d}:{:02d}:{:02d}{}".format,
        st.integers(0, 9999),
        st.integers(0, 13),
        st.integers(0, 32),
        st.integers(0, 25),
        st.integers(0, 61),
        st.integers(0, 61),
        st.sampled_from(["Z", "+00:00", "-05:30", "+23:59", "+24:00", "+05:60", "", "z"]),
    ),
)


@settings(max_examples=500)
@given(value=_TIMESTAMPISH)
def test_the_schema_accepts_the_timestamps_records_accept_and_nothing_else(value: str) -> None:
    """DESIGN §5: schemas and records agree. The one thing a pattern cannot say is that
    an instant on the first day of year 1 or the last of year 9999 has no UTC form."""
    plain = to_plain(proposal())
    plain["expires_at"] = value
    try:
        schemas.validate(plain)
        in_schema = True
    except RecordValidationError:
        in_schema = False
    try:
        Proposal(**{**attrs.asdict(proposal(), recurse=False), "expires_at": value})
        in_record = True
    except RecordValidationError:
        in_record = False
    if in_record:
        assert in_schema, value
    elif in_schema:
        assert value.startswith(("0001-01-01T", "9999-12-31T")), value


@settings(max_examples=150)
@given(moment=_INSTANTS, first=_OFFSETS, second=_OFFSETS)
def test_two_spellings_of_one_instant_give_the_same_candidate_ref_and_stored_bytes(
    moment: datetime, first: int, second: int
) -> None:
    """Item 12, verbatim: the same candidate, the same ref and the same bytes."""
    a, b = _spell(moment, first), _spell(moment, second)
    packets = [
        propose(proposal(expires_at=when, observed_at=when), checkpoint(), now=NOW)
        for when in (a, b)
    ]
    assert packets[0] == packets[1]
    assert packets[0].candidate.candidate_ref == packets[1].candidate.candidate_ref
    assert canonical_json(to_plain(packets[0])) == canonical_json(to_plain(packets[1]))
    assert json.dumps(wire.dump(packets[0])) == json.dumps(wire.dump(packets[1]))
    # And through the JSON path (schema first) as well.
    plain = to_plain(proposal(expires_at=a, observed_at=b))
    assert propose(plain, checkpoint(), now=NOW) == packets[0]


@settings(max_examples=60)
@given(expires=_FUTURE, observed=_INSTANTS, first=_OFFSETS, second=_OFFSETS)
def test_two_spellings_of_one_instant_give_the_same_active_record_bytes(
    expires: datetime, observed: datetime, first: int, second: int
) -> None:
    """Same inputs, same record, byte for byte -- whatever offsets the times are written in."""
    records = []
    for offset in (first, second):
        item = proposal(expires_at=_spell(expires, offset), observed_at=_spell(observed, offset))
        accepted = review(propose(item, checkpoint(), now=NOW), decision("accept"))
        moment = NOW.astimezone(timezone(timedelta(minutes=offset)))
        records.append(activate(accepted, corpus_for(), checkpoint=checkpoint(), now=moment))
    assert records[0] == records[1]
    assert canonical_json(to_plain(records[0])) == canonical_json(to_plain(records[1]))
    assert records[0].activation_ref == records[1].activation_ref


# -- candidate_ref: everything a record says or how long it lives ----------------------------

_OTHER_SURFACE = "issue_fix.review"
_FIELDS: dict[str, list[Any]] = {
    "target_class": ["hard_policy", "soft_preference", "procedural_experience"],
    # The second compacts to the first: one content, one ref.
    "content_summary": ["Keep fixes small.", "  Keep fixes\n small. ", "Prefer tests first."],
    "source_kind": ["maintainer_correction", "explicit_feedback"],
    "source_ref": ["github:example/repository#42:comment:1", "github:example/repository#7"],
    "actor_ref": [ACTOR, "github:user:other"],
    "actor_role": [ROLE, "reviewer"],
    "workspace_ref": [WORKSPACE, "workspace:other"],
    "project_ref": [PROJECT, "repository:other"],
    "surface_ids": [(SURFACE,), (SURFACE, _OTHER_SURFACE), (_OTHER_SURFACE, SURFACE)],
    "revision_ref": [REVISION, None],
    "user_ref": [None, "user:alice"],
    "peer_ref": [None, "peer:bob"],
    "session_ref": [None, "session:1"],
    "source_freshness": ["current", "stale"],
    "conflict_state": ["clear", "unresolved"],
    "current_artifact_verified": [True, False],
    "requested_action_scopes": [
        (),
        (SCOPE_SELECTION,),
        (SCOPE_SELECTION, "x:y"),
        ("x:y", SCOPE_SELECTION),
    ],
    "expires_at": [None, LATER, "2030-01-01T01:00:00+01:00", "2031-01-01T00:00:00Z"],
    "observed_at": [
        None,
        "2026-01-01T00:00:00Z",
        "2025-12-31T19:00:00-05:00",
        "2026-02-01T00:00:00Z",
    ],
    # Not part of what the record claims: the model's assessment (reference §9.4).
    "reasoning": [reasoning(), reasoning(summary="Other words.", confidence="low")],
}
_CHOICE = st.fixed_dictionaries({name: st.sampled_from(values) for name, values in _FIELDS.items()})
_SCOPE_KEYS = (
    "workspace_ref",
    "project_ref",
    "surface_ids",
    "revision_ref",
    "user_ref",
    "peer_ref",
    "session_ref",
)
_SOURCE_KEYS = ("source_kind", "source_ref", "actor_ref", "actor_role")
_CONTEXT_KEYS = ("source_freshness", "conflict_state", "current_artifact_verified")


def _build(choice: dict[str, Any]) -> Proposal:
    return proposal(
        target_class=choice["target_class"],
        content_summary=choice["content_summary"],
        source=source(**{key: choice[key] for key in _SOURCE_KEYS}),
        scope=scope(**{key: choice[key] for key in _SCOPE_KEYS}),
        guard_context=context(**{key: choice[key] for key in _CONTEXT_KEYS}),
        requested_action_scopes=choice["requested_action_scopes"],
        expires_at=choice["expires_at"],
        observed_at=choice["observed_at"],
        reasoning=choice["reasoning"],
    )


def _says(choice: dict[str, Any]) -> tuple[Any, ...]:
    """What the record says and how long it lives, by meaning (spelling normalised)."""
    return (
        choice["target_class"],
        " ".join(choice["content_summary"].split()),
        *(choice[key] for key in _SOURCE_KEYS),
        *(
            tuple(sorted(choice[key])) if key == "surface_ids" else choice[key]
            for key in _SCOPE_KEYS
        ),
        *(choice[key] for key in _CONTEXT_KEYS),
        tuple(sorted(choice["requested_action_scopes"])),
        *(
            None if choice[key] is None else parse_timestamp(choice[key])
            for key in ("expires_at", "observed_at")
        ),
    )


@settings(max_examples=600)
@given(first=_CHOICE, data=st.data())
def test_candidates_share_a_ref_exactly_when_they_say_the_same_for_as_long(
    first: dict[str, Any], data: st.DataObject
) -> None:
    """Item 12: two candidates that differ in anything a record says or how long it
    lives have different refs -- and two that differ in nothing of it share one.

    The second candidate redraws one to three fields of the first, so both
    directions are exercised: a redraw may differ, or be the same meaning in
    another spelling (compacted text, reordered lists, another UTC offset).
    """
    redrawn = data.draw(st.sets(st.sampled_from(sorted(_FIELDS)), min_size=1, max_size=3))
    second = {
        **first,
        **{name: data.draw(st.sampled_from(_FIELDS[name]), label=name) for name in redrawn},
    }
    refs = [propose(_build(choice), now=NOW).candidate.candidate_ref for choice in (first, second)]
    assert (refs[0] == refs[1]) == (_says(first) == _says(second))


@pytest.mark.parametrize("field", sorted(set(_FIELDS) - {"reasoning"}))
def test_each_field_alone_changes_the_ref(field: str) -> None:
    """The same property, one field at a time (the fixture's other fields held)."""
    base = {name: values[0] for name, values in _FIELDS.items()}
    changed = {**base, field: _FIELDS[field][-1]}
    assert _says(base) != _says(changed)
    refs = {propose(_build(choice), now=NOW).candidate.candidate_ref for choice in (base, changed)}
    assert len(refs) == 2


def test_the_fixture_keeps_the_original_ref_and_hashes_exactly_the_original_object() -> None:
    """Reference §1.5/§5.3: where the original's inputs are the whole story, the same ref."""
    candidate = propose(proposal(), checkpoint(), now=NOW).candidate
    assert candidate.candidate_ref == GOLDEN_REF
    assert set(candidate_hashed_object(candidate)) == {
        "target_class",
        "content_summary",
        "source",
        "scope",
        "guard_context",
        "requested_action_scopes",
    }


_EXTRAS = st.fixed_dictionaries(
    {
        "expires_at": st.none() | _FUTURE.map(lambda moment: _spell(moment, 90)),
        "observed_at": st.none() | _INSTANTS.map(lambda moment: _spell(moment, -300)),
        "edit": st.booleans(),
        "summary": st.text(
            alphabet=st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp", "Zs")),
            min_size=1,
            max_size=40,
        ),
    }
)


@settings(max_examples=200)
@given(extras=_EXTRAS)
def test_the_written_out_ref_is_legacy_j1_of_the_hashed_object(extras: dict[str, Any]) -> None:
    """The hand-written J1 text equals json.dumps(sort_keys=True) with the new keys too."""
    from reward_memory.text import find_unsafe

    if find_unsafe(extras["summary"]):
        return
    item = proposal(
        content_summary=extras["summary"],
        expires_at=extras["expires_at"],
        observed_at=extras["observed_at"],
    )
    packet = propose(item, checkpoint(), now=NOW)
    candidate = review(packet, decision("edit")).record if extras["edit"] else packet.candidate
    hashed = candidate_hashed_object(candidate)
    assert candidate.candidate_ref == "candidate:" + sha256_hex(legacy_json(hashed, "J1"))[:20]
    assert ("expires_at" in hashed) is (extras["expires_at"] is not None)
    assert ("observed_at" in hashed) is (extras["observed_at"] is not None)
    assert ("supersedes_refs" in hashed) is extras["edit"]


def test_an_edit_to_the_same_words_is_a_new_candidate_superseding_the_old() -> None:
    """Lineage is identity: an edit never supersedes itself, even without new words."""
    packet = propose(proposal(), checkpoint(), now=NOW)
    edited = review(packet, decision("edit", edited_content_summary=SUMMARY)).record
    assert edited.content_summary == packet.candidate.content_summary
    assert edited.candidate_ref != GOLDEN_REF
    assert edited.lifecycle.supersedes_refs == (GOLDEN_REF,)
    # Two edits to the same words, of different originals, are different candidates.
    other = propose(proposal(content_summary="Another policy."), checkpoint(), now=NOW)
    edited_other = review(other, decision("edit", edited_content_summary=SUMMARY)).record
    assert edited_other.candidate_ref != edited.candidate_ref


def test_renewal_is_a_new_candidate_not_a_changed_one() -> None:
    """Renewing an expiry is a new candidate with a new ref, never an in-place edit."""
    accepted = review(
        propose(proposal(expires_at=LATER), checkpoint(), now=NOW), decision("accept")
    )
    renewed = propose(proposal(expires_at="2031-01-01T00:00:00Z"), checkpoint(), now=NOW)
    assert renewed.candidate.candidate_ref != accepted.record.candidate_ref
    # The stored lifecycle cannot be edited in place: the ref no longer matches.
    plain = to_plain(accepted)
    plain["record"]["lifecycle"]["expires_at"] = "2031-01-01T00:00:00Z"
    with pytest.raises(RecordValidationError) as info:
        wire.load(plain, CandidateReview)
    assert info.value.code == "digest_mismatch"


@pytest.mark.parametrize("kind", ["reject", "no_write"])
def test_closing_keeps_the_expiry_and_so_the_ref(kind: str) -> None:
    packet = propose(proposal(expires_at=LATER), checkpoint(), now=NOW)
    closed = review(packet, decision(kind))
    assert closed.record.candidate_ref == packet.candidate.candidate_ref
    assert closed.record.lifecycle.expires_at == LATER
    retired = review(review(packet, decision("accept")), decision("retire"))
    assert retired.record.candidate_ref == packet.candidate.candidate_ref
    # Dropping the expiry from a stored packet is refused, not silently re-identified.
    plain = to_plain(closed)
    del plain["record"]["lifecycle"]["expires_at"]
    with pytest.raises(RecordValidationError) as info:
        wire.load(plain, CandidateReview)
    assert info.value.code == "digest_mismatch"


def test_a_candidate_packet_with_a_respelled_expiry_loads_as_the_same_packet() -> None:
    packet = propose(proposal(expires_at=LATER), checkpoint(), now=NOW)
    plain = to_plain(packet)
    plain["candidate"]["lifecycle"]["expires_at"] = "2030-01-01T05:30:00+05:30"
    assert wire.load(plain, CandidatePacket) == packet


# -- activation_ref and record_ref -------------------------------------------------------------


def _values(plain: Any) -> Any:
    """The generic form activation_ref hashes: each object as its values, in field order."""
    if isinstance(plain, dict):
        return [_values(value) for value in plain.values()]
    if isinstance(plain, list):
        return [_values(value) for value in plain]
    return plain


def _generic_activation_ref(record: ActiveRecord) -> str:
    plain = to_plain(record)
    del plain["activation_ref"]
    return make_ref("activation", _values(plain))


def _activate(
    item: Proposal | None = None,
    *,
    corpus: Any = None,
    now: datetime = NOW,
    **review_overrides: Any,
) -> ActiveRecord:
    item = item or proposal()
    accepted = review(propose(item, checkpoint(), now=NOW), decision("accept", **review_overrides))
    return activate(
        accepted,
        corpus if corpus is not None else corpus_for(item.target_class),
        checkpoint=checkpoint(),
        now=now,
    )


_ACTIVATIONS = st.fixed_dictionaries(
    {
        "target_class": st.sampled_from(["hard_policy", "soft_preference"]),
        "expires_at": st.none() | _FUTURE.map(lambda moment: _spell(moment, 60)),
        "observed_at": st.none() | _INSTANTS.map(lambda moment: moment.isoformat()),
        "confidence": st.sampled_from(["low", "medium", "high"]),
        "visibility": st.sampled_from(["private", "workspace", "public_safe"]),
        "reviewer_ref": st.sampled_from(["github:user:reviewer", "github:user:other"]),
        "later": st.integers(min_value=0, max_value=10**6),
        "revoked": st.booleans(),
    }
)


@settings(max_examples=120)
@given(choice=_ACTIVATIONS)
def test_activation_ref_hashes_every_other_field_of_the_record(choice: dict[str, Any]) -> None:
    """activation_ref changes with anything the record says or how long it lives: it is
    the digest of the whole wire form but itself (the generic walk proves no field is
    left out, so a field added to the record is hashed or this fails)."""
    item = proposal(
        target_class=choice["target_class"],
        requested_action_scopes=(SCOPE_SELECTION,)
        if choice["target_class"] == "hard_policy"
        else (),
        expires_at=choice["expires_at"],
        observed_at=choice["observed_at"],
        reasoning=reasoning(confidence=choice["confidence"]),
    )
    corpus = corpus_for(choice["target_class"])
    corpus = attrs.evolve(
        corpus, privacy=attrs.evolve(corpus.privacy, visibility=choice["visibility"])
    )
    record = _activate(
        item,
        corpus=corpus,
        now=NOW + timedelta(seconds=choice["later"]),
        reviewer_ref=choice["reviewer_ref"],
    )
    assert record.activation_ref == activation_ref_of(record) == _generic_activation_ref(record)
    if choice["revoked"]:
        # A later lifecycle change (as a revoke will make) is a different record body.
        revoked = attrs.evolve(
            record,
            lifecycle_state="revoked",
            revocation=Revocation(
                revoked_by_ref="operator:x", revoked_at="2026-04-01T00:00:00+02:00", reason="Wrong."
            ),
        )
        assert activation_ref_of(revoked) == _generic_activation_ref(revoked)
        assert activation_ref_of(revoked) != record.activation_ref
        assert revoked.record_ref == record.record_ref


_SAME_MEMORY: dict[str, Any] = {
    "a later activation": {"now": NOW + timedelta(days=1)},
    "another reviewer": {"reviewer_ref": "github:user:other"},
    "another review ref": {"review_ref": "review:test:again"},
    "another review reason": {"reasoning_summary": "Reviewed again, later."},
    "another confidence": {"item": proposal(reasoning=reasoning(confidence="low"))},
    "another confidence basis": {"item": proposal(reasoning=reasoning(confidence_basis="Other."))},
    "another visibility": {"visibility": "workspace"},
    "another authority source": {"gate": checkpoint(source_ref="repository:other-map")},
}
_OTHER_MEMORY: dict[str, Any] = {
    "another expiry": {"item": proposal(expires_at=LATER)},
    "another observation time": {"item": proposal(observed_at="2026-01-01T00:00:00Z")},
    "other content": {"item": proposal(content_summary="Another compact summary.")},
    "another surface set": {
        "item": proposal(scope=scope(surface_ids=(SURFACE, _OTHER_SURFACE))),
        "corpus": corpus_for(surfaces=(SURFACE, _OTHER_SURFACE)),
    },
    "another corpus": {"corpus_id": "authority-policy-copy"},
}


def _variant(change: dict[str, Any]) -> ActiveRecord:
    item = change.get("item", proposal())
    gate = change.get("gate", checkpoint())
    corpus = change.get("corpus", corpus_for())
    if "visibility" in change:
        corpus = attrs.evolve(
            corpus, privacy=attrs.evolve(corpus.privacy, visibility=change["visibility"])
        )
    if "corpus_id" in change:
        corpus = attrs.evolve(corpus, corpus_id=change["corpus_id"])
    overrides = {
        key: change[key]
        for key in ("reviewer_ref", "review_ref", "reasoning_summary")
        if key in change
    }
    accepted = review(propose(item, gate, now=NOW), decision("accept", **overrides))
    return activate(accepted, corpus, checkpoint=gate, now=change.get("now", NOW))


@pytest.mark.parametrize("what", sorted(_SAME_MEMORY))
def test_the_same_candidate_in_the_same_corpus_is_the_same_record(what: str) -> None:
    """Item 12: re-activating or re-writing the same candidate keeps its identity (the
    record_ref revoke and purge name); the activation_ref still tells the bytes apart."""
    base, variant = _variant({}), _variant(_SAME_MEMORY[what])
    assert variant.record_ref == base.record_ref
    assert variant.activation_ref != base.activation_ref
    assert to_plain(variant) != to_plain(base)


@pytest.mark.parametrize("what", sorted(_OTHER_MEMORY))
def test_a_different_candidate_or_corpus_is_a_different_record(what: str) -> None:
    base, variant = _variant({}), _variant(_OTHER_MEMORY[what])
    assert variant.record_ref != base.record_ref
    assert variant.activation_ref != base.activation_ref


def test_record_ref_is_derived_from_the_corpus_and_the_candidate() -> None:
    record = _activate()
    assert record.record_ref == make_ref(
        "record", {"corpus_id": record.corpus_id, "candidate_ref": GOLDEN_REF}
    )
    assert record.record_ref == record_ref_of(record.corpus_id, record.candidate_ref)
    assert re.fullmatch(r"record:[0-9a-f]{20}", record.record_ref)
    assert list(to_plain(record))[:3] == ["schema_version", "record_ref", "activation_ref"]


def test_a_v1_record_without_record_ref_reads_as_the_same_record() -> None:
    """No version bump: record_ref is optional on input and derived, so an earlier v1
    record reads unchanged (both through the schema and on recall's converter-free path)."""
    record = _activate()
    plain = to_plain(record)
    del plain["record_ref"]
    assert schemas.validate(plain) == "reward_memory_active_record_v1"
    assert wire.load(plain, ActiveRecord) == record
    assert from_plain(ActiveRecord, plain) == record


@pytest.mark.parametrize(
    ("value", "code"),
    [
        ("record:00000000000000000000", "digest_mismatch"),
        ("record:" + "0" * 19, "digest_mismatch"),
        (7, "wrong_type"),
        (None, "wrong_type"),
    ],
)
def test_a_record_cannot_claim_another_identity(value: Any, code: str) -> None:
    plain = to_plain(_activate())
    plain["record_ref"] = value
    with pytest.raises(RecordValidationError) as info:
        from_plain(ActiveRecord, plain)
    assert (info.value.path, info.value.code) == ("$.record_ref", code)
    with pytest.raises(RecordValidationError):
        wire.load(plain, ActiveRecord)


def test_the_identity_survives_later_lifecycle_changes() -> None:
    record = _activate()
    superseded = attrs.evolve(
        record,
        lifecycle_state="superseded",
        supersession=Supersession(superseded_by_ref="candidate:11111111111111111111"),
    )
    assert superseded.record_ref == record.record_ref
    assert activation_ref_of(superseded) != record.activation_ref


@settings(max_examples=300)
@given(
    corpus_id=st.from_regex(r"[a-z][a-z0-9_-]{0,20}", fullmatch=True),
    candidate_ref=st.one_of(
        st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._:/#-]{0,40}", fullmatch=True),
        st.text(min_size=1, max_size=12),
    ),
)
def test_record_ref_fast_path_is_the_canonical_digest(corpus_id: str, candidate_ref: str) -> None:
    """record_ref_of skips the encoder for plain tokens: it must be make_ref's answer exactly."""
    expected = make_ref("record", {"corpus_id": corpus_id, "candidate_ref": candidate_ref})
    assert record_ref_of.__wrapped__(corpus_id, candidate_ref) == expected
