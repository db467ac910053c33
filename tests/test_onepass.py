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
from reward_memory._frozen import frozen
from reward_memory.candidates import propose, review
from reward_memory.errors import RecordValidationError
from reward_memory.records import _fields as f
from reward_memory.records import _onepass, _plain
from reward_memory.records._onepass import all_safe
from reward_memory.records._plain import _builder, _walk, from_plain, to_plain
from reward_memory.records.active import (
    STORED_RECORD_TYPES,
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
    # Records of one corpus repeat most blocks (scope, authority, expiry, ...)
    # value for value. Whatever the builder keeps or does not keep between calls,
    # a repeat must give exactly what building would, refuse what building
    # refuses, and keep every string of the block in the secret/path scan.
    first = to_plain(active_record(21))
    assert from_plain(ActiveRecord, copy.deepcopy(first)) == active_record(21)
    again = to_plain(active_record(22))
    assert from_plain(ActiveRecord, again) == active_record(22)
    assert from_plain(ActiveRecord, again).scope == active_record(21).scope
    # Mutating the caller's data afterwards does not change a later read.
    again["scope"]["surface_ids"].append("zzz.other")
    assert from_plain(ActiveRecord, to_plain(active_record(23))) == active_record(23)
    # A block holding a credential is refused every time it is read, not only the first.
    for _ in range(3):
        tampered = to_plain(active_record(26))
        tampered["scope"]["project_ref"] = "password:hunter22"
        with pytest.raises(RecordValidationError) as caught:
            from_plain(ActiveRecord, tampered)
        assert caught.value.path == "$.scope.project_ref"
    # Values equal to an earlier block's JSON but not JSON's own types get what the
    # reference walk gives them, never the earlier block.
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
def test_an_empty_or_null_block_is_never_an_earlier_one(block: str) -> None:
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
def test_a_number_equal_to_an_earlier_boolean_is_refused(
    block: str, key: str, number: object
) -> None:
    # 0 == False and 1.0 == True: an equal block read just before must not answer for them.
    record = active_record(29)
    assert from_plain(ActiveRecord, to_plain(record)) == record
    data = to_plain(record)
    data[block][key] = number
    with pytest.raises(RecordValidationError) as caught:
        from_plain(ActiveRecord, data)
    assert caught.value.path == f"$.{block}.{key}"


# -- orjson reads the bytes; the stdlib decides everything orjson does not settle -----------


def _stdlib_outcome(content: Any) -> Any:
    """What ``load_stored`` gave before orjson: ``json.loads`` and the reference walk."""
    try:
        data = json.loads(content)
    except (ValueError, TypeError, RecursionError):
        return ("error", "$", "invalid_json", "a stored record is one JSON document")
    if type(data) is not dict:
        return ("error", "$", "wrong_type", "a stored record is a JSON object")
    version = data.get("schema_version")
    cls = STORED_RECORD_TYPES.get(version) if type(version) is str else None
    if cls is None:
        message = "schema_version names no stored record this library reads"
        return ("error", "$.schema_version", "schema_version_unsupported", message)
    try:
        record = _walk(cls, data, "$")
    except RecordValidationError as exc:
        return ("error", exc.path, exc.code, exc.message)
    except Exception:  # noqa: BLE001 - load_stored names a wrong shape so
        return ("error", "$", "wrong_type", "a stored record field has the wrong shape")
    return ("record", type(record), record)


def _loaded_outcome(content: Any) -> Any:
    try:
        record = load_stored(content)
    except RecordValidationError as exc:
        return ("error", exc.path, exc.code, exc.message)
    return ("record", type(record), record)


_BIG = 2**70
# Spellings of one JSON text that orjson reads otherwise than json.loads, or not at all.
_SPELLINGS = [
    "as is",
    "bytes",
    "bytearray",
    "utf-16",
    "utf-8 bom",
    "str bom",
    "padded",
    "trailing data",
    "duplicate key",
    "big int",
    "negative big int",
    "huge float",
    "nan",
    "lone surrogate",
    "surrogate pair",
    "non-ascii",
    "infinity",
    "long int",
    "reversed surrogates",
    "raw surrogate bytes",
    "form feed",
]


def _spelled(text: str, spelling: str, field: str) -> Any:
    if spelling == "bytes":
        return text.encode("utf-8")
    if spelling == "bytearray":
        return bytearray(text.encode("utf-8"))
    if spelling == "utf-16":
        return text.encode("utf-16")
    if spelling == "utf-8 bom":
        return b"\xef\xbb\xbf" + text.encode("utf-8")
    if spelling == "str bom":
        return "\ufeff" + text
    if spelling == "padded":
        return f" \n\t{text}\r\n "
    if spelling == "trailing data":
        return text + " {}"
    if spelling == "raw surrogate bytes":  # json.loads decodes bytes with surrogatepass
        head = '{"' + field + '_": "'
        return head.encode() + b'\xed\xa0\x80", ' + text[1:].encode()
    if spelling == "form feed":  # not JSON whitespace
        return text + "\x0c"
    if spelling == "duplicate key":  # the last value wins, at the first key's place
        return '{"' + field + '": "first", ' + text[1:]
    replaced = {
        "big int": str(_BIG),
        "negative big int": str(-_BIG),
        "huge float": "1e400",
        "nan": "NaN",
        "lone surrogate": '"\\ud800"',
        "surrogate pair": '"\\ud83d\\ude00 ok"',
        "non-ascii": '"caf\u00e9 summary"',
        "infinity": "-Infinity",
        "long int": "1" + "0" * 400,
        "reversed surrogates": '"\\ude00\\ud83d"',
    }.get(spelling)
    if replaced is None:
        return text
    return text.replace(f'"{field}": ', f'"{field}": {replaced}, "{field}_": ', 1)


_STORED_SAMPLES = [sample for sample in SAMPLES if sample[0] in (ActiveRecord, LegacyActiveRecord)]


@settings(max_examples=600, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(_STORED_SAMPLES),
    st.sampled_from(_SPELLINGS),
    st.data(),
)
def test_load_stored_gives_the_stdlib_record_or_error_for_every_spelling(
    sample: tuple[type[Any], dict[str, Any]], spelling: str, data: st.DataObject
) -> None:
    _, plain = sample
    field = data.draw(st.sampled_from(sorted(plain)))
    text = json.dumps(
        plain, sort_keys=data.draw(st.booleans()), ensure_ascii=data.draw(st.booleans())
    )
    content = _spelled(text, spelling, field)
    assert _loaded_outcome(content) == _stdlib_outcome(content)


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(_mutated(), st.sampled_from(["as is", "bytes", "big int", "duplicate key", "padded"]))
def test_load_stored_agrees_with_the_stdlib_walk_on_mutated_records(
    case: tuple[type[Any], Any], spelling: str
) -> None:
    cls, data = case
    if cls not in (ActiveRecord, LegacyActiveRecord) or type(data) is not dict or not data:
        return
    content = _spelled(json.dumps(data), spelling, sorted(data)[0])
    assert _loaded_outcome(content) == _stdlib_outcome(content)


def test_a_big_integer_goes_the_stdlib_way_not_orjsons_float() -> None:
    # orjson reads 2**70 as a float; the stdlib as an int. The error names the int's field
    # exactly as the stdlib path does.
    data = to_plain(active_record(31))
    data["review"]["reasoning_summary"] = _BIG
    with pytest.raises(RecordValidationError) as caught:
        load_stored(json.dumps(data))
    assert (caught.value.path, caught.value.code) == _stdlib_outcome(json.dumps(data))[1:3]
    assert caught.value.path == "$.review.reasoning_summary"


@pytest.mark.parametrize(
    ("where", "value"),
    [
        (("candidate_ref",), "candidate:1\ncandidate:2"),  # two tokens' worth in one
        (("candidate_ref",), "candidate:1\n"),
        (("review", "review_ref"), "\nreview:1"),
        (("scope", "workspace_ref"), "x" * 201),
        (("scope", "workspace_ref"), "-leading"),
        (("scope", "workspace_ref"), "caf\u00e9"),
        (("supersession", "supersedes_refs"), ["a:1", "b:1\nc:1"]),
        (("authority", "checkpoint_ref"), "checkpoint 1"),
    ],
)
def test_the_joined_token_check_refuses_what_each_token_check_refuses(
    where: tuple[str, ...], value: Any
) -> None:
    # Tokens are checked at once, joined by newlines: a newline inside one, an
    # over-long, odd-first-character or non-grammar token fails as on its own.
    data = to_plain(active_record(32))
    parent = data
    for step in where[:-1]:
        parent = parent[step]
    parent[where[-1]] = value
    assert _outcome(lambda: from_plain(ActiveRecord, copy.deepcopy(data))) == _outcome(
        lambda: _walk(ActiveRecord, copy.deepcopy(data), "$")
    )
    assert _outcome(lambda: from_plain(ActiveRecord, copy.deepcopy(data)))[0] == "error"


@pytest.mark.parametrize("block", [None, "scope", "revocation", "expiry"])
def test_an_unknown_key_beside_an_absent_field_is_still_unknown(block: str | None) -> None:
    # Unknown keys are found by count (keys present = fields less the absent ones):
    # dropping an optional field and adding an unknown key keeps the count, and
    # must still be refused, naming the unknown key.
    data = to_plain(active_record(33))
    target = data if block is None else data[block]
    optional = {
        None: "record_ref",
        "scope": "peer_ref",
        "revocation": "reason",
        "expiry": "retired_reason",
    }[block]
    del target[optional]
    target["unknown"] = None
    with pytest.raises(RecordValidationError) as caught:
        from_plain(ActiveRecord, data)
    assert caught.value.code == "unknown_field"
    assert caught.value.path == ("$.unknown" if block is None else f"$.{block}.unknown")


def test_a_class_gets_its_builder_from_its_second_record_on() -> None:
    """The first record of a class goes the reference walk (no source compiled for a
    one-shot read); the second makes the builder, and every record is the same either way."""

    @frozen(kw_only=True)
    class Note:
        note_ref: str = f.token()
        summary: str = f.text(80)

    data = {"note_ref": "note:1", "summary": "One short note."}
    first = from_plain(Note, dict(data))
    assert Note not in _plain._BUILDERS
    second = from_plain(Note, dict(data))
    assert Note in _plain._BUILDERS
    assert first == second == Note(note_ref="note:1", summary="One short note.")
    with pytest.raises(RecordValidationError) as caught:
        from_plain(Note, {**data, "note_ref": "not a token"})
    assert caught.value.path == "$.note_ref"


@pytest.mark.parametrize(
    ("summary", "code"),
    [
        ("Keep it short: ghp_\u200ba1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8", "unsafe_text"),
    ],
)
def test_load_stored_reads_invisible_characters_as_the_constructor_does(
    summary: str, code: str
) -> None:
    data = to_plain(active_record(13))
    data["content_summary"] = summary
    with pytest.raises(RecordValidationError) as caught:
        load_stored(json.dumps(data))
    assert (caught.value.path, caught.value.code) == ("$.content_summary", code)


def test_load_stored_reads_a_reversed_shape_after_an_override_as_the_constructor_does() -> None:
    reversed_key = "ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"[::-1]
    data = to_plain(active_record(14))
    data["content_summary"] = f"Keep it short \u202e{reversed_key}\u202c"
    with pytest.raises(RecordValidationError) as caught:
        load_stored(json.dumps(data))
    assert (caught.value.path, caught.value.code) == ("$.content_summary", "unsafe_text")
