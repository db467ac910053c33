"""The one-pass builders (records._onepass) build what the validating constructors build.

Issue 11 item 2: a stored record is parsed in one strict pass, and bad input
keeps the same typed errors with field paths. ``from_plain`` tries the
generated builder and falls back to the reference walk (the validating
constructors); these tests hold the two to the same record or the same error
on generated mutations, and the joined secret/path prefilter to the per-string one.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _recall_support import active_record
from _stage2 import NOW, checkpoint, decision, proposal
from reward_memory import text
from reward_memory.candidates import propose, review
from reward_memory.errors import RecordValidationError
from reward_memory.records import _onepass
from reward_memory.records._onepass import all_safe
from reward_memory.records._plain import _builder, _walk, from_plain, to_plain
from reward_memory.records.active import (
    ActiveRecord,
    LegacyActiveRecord,
    ReviewSummary,
    load_stored,
)
from reward_memory.records.candidate import CandidatePacket, Proposal
from reward_memory.records.envelope import (
    Expiry,
    Privacy,
    RecordAuthority,
    RecordScope,
    RecordSource,
)
from reward_memory.records.review import CandidateReview
from test_legacy_records import original
from test_secret_corpus import BENIGN, CREDENTIALS

_PACKET = propose(proposal(expires_at="2026-09-01T00:00:00Z"), checkpoint(), now=NOW)
SAMPLES: list[tuple[type[Any], dict[str, Any]]] = [
    (ActiveRecord, to_plain(active_record(1))),
    (
        ActiveRecord,
        to_plain(active_record(2, class_id="hard_policy", expires_at="2027-01-01T00:00:00Z")),
    ),
    (ActiveRecord, to_plain(active_record(3, revoked=True, supersedes=("candidate:a", "x:b")))),
    (LegacyActiveRecord, original()),
    (Proposal, to_plain(proposal(observed_at="2026-02-01T10:00:00Z"))),
    (CandidatePacket, to_plain(_PACKET)),
    (CandidateReview, to_plain(review(_PACKET, decision("accept"), now=NOW))),
]


def _outcome(build: Any) -> Any:
    try:
        return ("record", build())
    except RecordValidationError as exc:
        return ("error", type(exc), exc.path, exc.code, exc.message)
    except Exception as exc:  # noqa: BLE001 - both sides must fail alike
        return ("raised", type(exc))


@pytest.mark.parametrize(("cls", "data"), SAMPLES, ids=lambda value: getattr(value, "__name__", ""))
def test_stored_records_take_the_one_pass_path(cls: type[Any], data: dict[str, Any]) -> None:
    strings: list[str] = []
    built = _builder(cls)(copy.deepcopy(data), strings)  # no fallback: it did not raise
    assert strings
    assert all_safe(strings)
    assert built == _walk(cls, copy.deepcopy(data), "$")
    assert from_plain(cls, to_plain(built)) == built  # its stored form reads back as itself


def test_the_stored_active_record_is_one_pass_from_top_to_bottom() -> None:
    # Every block of the v1 record is checked by the generated code, not by its
    # constructor; the authority's own scope rule (a validator the record adds
    # to a helper's field) is called as attrs calls it.
    blocks = (ActiveRecord, RecordSource, RecordScope, RecordAuthority, Privacy, ReviewSummary)
    for cls in (*blocks, Expiry):
        src = _onepass._Source(cls, Exception)
        assert _onepass._one_pass(cls, _builder, src), cls.__name__
    source = _onepass._Source(RecordAuthority, Exception)
    _onepass._one_pass(RecordAuthority, _builder, source)
    assert any(
        "_scopes_need_force" not in line and "self.action_scopes" in line for line in source.lines
    )


def test_an_added_validator_still_refuses_in_one_pass() -> None:
    data = to_plain(active_record(8))
    data["authority"]["action_scopes"] = ["merge"]  # advisory authority cannot carry scopes
    with pytest.raises(RecordValidationError) as caught:
        from_plain(ActiveRecord, data)
    assert caught.value.path == "$.authority.action_scopes"
    assert caught.value.code == "authority_widened"


_ODD = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-3, max_value=3),
    st.sampled_from(
        [
            "",
            "  padded  text ",
            "two  spaces",
            "tab\there",
            "line\nbreak",
            "ctl\x1f",
            "\ud800",
            "password=hunter2",
            "see /home/alice/notes",
            "ghp_" + "a1" * 12,
            "token:ok",
            "Bad Token",
            "record:0123",
            "activation:abc",
            "2026-02-01T00:00:00+00:00",
            "2026-02-01T01:00:00+01:00",
            "2026-02-01T00:00:00Z",
            "2026-02-30T00:00:00Z",
            "advisory",
            "hard_policy",
            "active",
            "x" * 241,
        ]
    ),
    st.lists(st.sampled_from(["b:1", "a:1", "a:1", "c.d", "x y"]), max_size=3),
    st.just({}),
)


def _paths(node: Any, trail: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [trail]
    if isinstance(node, dict):
        for key, value in node.items():
            found.extend(_paths(value, (*trail, key)))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found.extend(_paths(value, (*trail, index)))
    return found


@st.composite
def _mutated(draw: st.DrawFn) -> tuple[type[Any], Any]:
    cls, sample = draw(st.sampled_from(SAMPLES))
    data = copy.deepcopy(sample)
    for _ in range(draw(st.integers(min_value=1, max_value=2))):
        trail = draw(st.sampled_from(_paths(data)[1:]))
        parent = data
        for step in trail[:-1]:
            parent = parent[step]
        action = draw(st.sampled_from(["replace", "replace", "delete", "add"]))
        if action == "replace":
            parent[trail[-1]] = draw(_ODD)
        elif action == "delete":
            del parent[trail[-1]]
        elif isinstance(parent, dict):
            parent[draw(st.sampled_from(["extra", "level", "reason"]))] = draw(_ODD)
        else:
            parent.append(draw(_ODD))
    return cls, data


@settings(max_examples=800, suppress_health_check=[HealthCheck.too_slow])
@given(_mutated())
def test_one_pass_and_constructors_agree_on_mutated_records(case: tuple[type[Any], Any]) -> None:
    cls, data = case
    fast = _outcome(lambda: from_plain(cls, copy.deepcopy(data)))
    reference = _outcome(lambda: _walk(cls, copy.deepcopy(data), "$"))
    assert fast == reference


def test_a_record_not_in_stored_form_is_normalised_as_before() -> None:
    data = to_plain(active_record(7))
    data["content_summary"] = "  Reviewer   summary  "
    data["activated_at"] = "2026-02-01T01:00:00+01:00"
    data["scope"]["surface_ids"] = ["z.surface", "a.surface"]
    built = from_plain(ActiveRecord, json.loads(json.dumps(data)))
    assert built.content_summary == "Reviewer summary"
    assert built.activated_at == "2026-02-01T00:00:00Z"
    assert built.scope.surface_ids == ("a.surface", "z.surface")


def test_the_joined_prefilter_stops_wherever_one_string_would() -> None:
    """A string the prefilter stops at still stops it with neighbours around it."""
    trigger = text._trigger()
    for _, value in CREDENTIALS:
        if trigger.search(value) is None:
            continue
        for joined in (f"plain\n{value}", f"{value}\nplain", f"a:b\n{value}\nc.d", value):
            assert trigger.search(joined) is not None, value


def test_all_safe_gives_each_string_its_own_verdict() -> None:
    benign = [value for value in BENIGN if text.find_unsafe(value) is None][:40]
    assert all_safe(benign)
    for _, value in CREDENTIALS:
        assert not all_safe([*benign[:3], value, "tail"]), value
    assert not all_safe(["fine", "ctl\x01"])
    # A benign string the prefilter looks at (then the full scan clears it).
    assert text._trigger().search("the key: value") is not None
    assert all_safe(["the key: value", "next"]) is (text.find_unsafe("the key: value") is None)


# -- load_stored: one stored record from provider bytes ----------------------------------------


def test_load_stored_reads_v1_and_legacy_records_from_bytes() -> None:
    record = active_record(11)
    content = json.dumps(to_plain(record), sort_keys=True)
    assert load_stored(content.encode("utf-8")) == record
    assert load_stored(content) == record
    legacy = load_stored(json.dumps(original()))
    assert isinstance(legacy, LegacyActiveRecord)


@pytest.mark.parametrize(
    ("content", "path", "code"),
    [
        (b"{not json", "$", "invalid_json"),
        (b"\xff\xfe", "$", "invalid_json"),
        ("[" * 5000 + "]" * 5000, "$", "invalid_json"),
        (b"[1, 2]", "$", "wrong_type"),
        (b'{"schema_version": "reward_memory_candidate_v0"}', "$.schema_version", None),
        (b'{"schema_version": 1}', "$.schema_version", "schema_version_unsupported"),
    ],
)
def test_load_stored_refuses_what_is_not_a_stored_record(
    content: Any, path: str, code: str | None
) -> None:
    with pytest.raises(RecordValidationError) as caught:
        load_stored(content)
    assert caught.value.path == path
    assert caught.value.code == (code or "schema_version_unsupported")


def test_load_stored_names_the_field_of_a_tampered_record() -> None:
    data = to_plain(active_record(12))
    data["scope"]["workspace_ref"] = "password:hunter22"
    with pytest.raises(RecordValidationError) as caught:
        load_stored(json.dumps(data))
    assert caught.value.path == "$.scope.workspace_ref"
    assert caught.value.code == "unsafe_text"
    data = to_plain(active_record(12))
    data["record_ref"] = "record:00000000000000000000"
    with pytest.raises(RecordValidationError) as caught:
        load_stored(json.dumps(data))
    assert (caught.value.path, caught.value.code) == ("$.record_ref", "digest_mismatch")


def test_all_safe_remembers_only_safe_strings_and_stays_bounded() -> None:
    # The verdict memo lets a record read for the first time scan only its new
    # strings; it must never let an unsafe string through, whatever came before.
    _onepass._SAFE.clear()
    benign = ["workspace:main", "project:alpha", "Keep review comments short."]
    assert all_safe(benign)
    assert set(benign) <= _onepass._SAFE.keys()
    unsafe = "password=hunter2hunter2"
    assert not all_safe([*benign, unsafe])
    assert not all_safe([*benign, unsafe])  # refused again: it was never remembered
    assert unsafe not in _onepass._SAFE
    assert not all_safe([*benign, "ctl\x01"])
    for index in range(_onepass._SAFE_SIZE + 10):
        assert all_safe([f"ref:{index}"])
    assert len(_onepass._SAFE) <= _onepass._SAFE_SIZE


class _Str(str):
    """A str subclass: equal to its text, but not JSON's str (the builder refuses it)."""

    __slots__ = ()


class _EqualsAll:
    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = None  # type: ignore[assignment]


def test_a_repeated_block_is_the_block_its_json_gives_and_still_scanned() -> None:
    # The one-pass builder keeps the block it last built at each place (scope,
    # authority, expiry, ...): records of one corpus repeat them. A repeat must
    # give exactly what building would, refuse what building refuses, and keep
    # every string of the block in the secret/path scan.
    first = to_plain(active_record(21))
    assert from_plain(ActiveRecord, copy.deepcopy(first)) == active_record(21)
    again = to_plain(active_record(22))
    assert from_plain(ActiveRecord, again) == active_record(22)
    assert from_plain(ActiveRecord, again).scope == active_record(21).scope
    # Mutating the caller's data afterwards does not change what is remembered.
    again["scope"]["surface_ids"].append("zzz.other")
    assert from_plain(ActiveRecord, to_plain(active_record(23))) == active_record(23)
    # A block holding a credential is refused every time it is read, not only the first.
    for _ in range(3):
        tampered = to_plain(active_record(26))
        tampered["scope"]["project_ref"] = "password:hunter22"
        with pytest.raises(RecordValidationError) as caught:
            from_plain(ActiveRecord, tampered)
        assert caught.value.path == "$.scope.project_ref"
    # Values equal to the remembered JSON but not JSON's own types get what the
    # reference walk gives them, never the remembered block.
    odd_scopes: list[Any] = [
        {**first["scope"], "workspace_ref": _Str(first["scope"]["workspace_ref"])},
        {**first["scope"], "workspace_ref": _EqualsAll()},
        {**first["scope"], "surface_ids": [_Str(s) for s in first["scope"]["surface_ids"]]},
    ]
    for odd in odd_scopes:
        data = to_plain(active_record(24))
        data["scope"] = odd
        built = _built_or_error(lambda: from_plain(ActiveRecord, data))  # noqa: B023 - called here
        assert built == _built_or_error(
            lambda: _walk(ActiveRecord, copy.deepcopy(data), "$")  # noqa: B023 - called here
        )


def _built_or_error(build: Any) -> Any:
    """What building gives: the record with its field types, or the error's path and code."""
    try:
        record = build()
    except RecordValidationError as error:
        return ("error", error.path, error.code)
    return ("record", record, type(record.scope.workspace_ref), record.scope.surface_ids)


@pytest.mark.parametrize("block", ["expiry", "revocation", "supersession", "scope"])
def test_an_empty_or_null_block_is_never_a_remembered_one(block: str) -> None:
    for value in ({}, None, []):  # the two ways give the same record or the same failure
        data = to_plain(active_record(27))
        data[block] = value
        assert _outcome(lambda: from_plain(ActiveRecord, data)) == _outcome(  # noqa: B023
            lambda: _walk(ActiveRecord, copy.deepcopy(data), "$")  # noqa: B023
        )


@pytest.mark.parametrize("block", ["expiry", "revocation", "supersession", "scope", "source"])
def test_load_stored_refuses_a_null_or_odd_block_with_a_typed_error(block: str) -> None:
    for value in (None, [], 1):
        data = to_plain(active_record(28))
        data[block] = value
        with pytest.raises(RecordValidationError):
            load_stored(json.dumps(data))


@pytest.mark.parametrize(
    ("block", "key", "number"),
    [
        ("privacy", "raw_content_captured", 0),
        ("privacy", "raw_content_captured", 0.0),
        ("activation_lineage", "guard_passed", 1),
        ("activation_lineage", "guard_passed", 1.0),
    ],
)
def test_a_number_equal_to_a_remembered_boolean_is_refused(
    block: str, key: str, number: object
) -> None:
    # 0 == False and 1.0 == True: the remembered block must not answer for them.
    record = active_record(29)
    assert from_plain(ActiveRecord, to_plain(record)) == record  # the block is now remembered
    data = to_plain(record)
    data[block][key] = number
    with pytest.raises(RecordValidationError) as caught:
        from_plain(ActiveRecord, data)
    assert caught.value.path == f"$.{block}.{key}"
