"""The shared value grammars: T, S, C, D and timestamps, and their JSON-Schema twins."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reward_memory.errors import RecordValidationError, UnsafeTextError
from reward_memory.grammars import (
    CORPUS_ID,
    DIGEST,
    SURFACE_ID,
    TIMESTAMP,
    TOKEN,
    check_corpus_id,
    check_digest,
    check_surface_id,
    check_timestamp,
    check_token,
    parse_timestamp,
    utc_now,
)

if TYPE_CHECKING:
    from collections.abc import Callable

COMMON_SCHEMA = Path(__file__).resolve().parents[1] / "schemas" / "common.schema.json"
HEX64 = "0123456789abcdef" * 4


def _invalid(check: Callable[[Any, str], str], value: Any, code: str = "invalid_format") -> None:
    with pytest.raises(RecordValidationError) as caught:
        check(value, "$.scope.field")
    assert caught.value.path == "$.scope.field"
    assert caught.value.code == code
    if isinstance(value, str) and value:
        assert value not in caught.value.message


# Token (T) -------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        "a",
        "7",
        "candidate:0e073f348a2a6c3ffc3c",
        "github:example/repository#42:comment:1",
        "viking://resources/reward-memory/openviking-issue-fix/x.json",
        "issue_fix.patch_planning",
        "A-b_c.d:e/f#g",
        "x" * 200,
    ],
)
def test_token_accepts(value: str) -> None:
    assert check_token(value) is value


@pytest.mark.parametrize(
    "value",
    [
        "",
        "x" * 201,
        "-leading-dash",
        ".leading-dot",
        "_leading",
        ":x",
        " padded",
        "padded ",
        "trailing\n",
        "has space",
        "semi;colon",
        "quote'",
        "at@sign",
        "caf\u00e9",
        "\u0661",  # Arabic-Indic digit one: not an ASCII digit
        "a+b",
        "a?b=c",
    ],
)
def test_token_rejects(value: str) -> None:
    _invalid(check_token, value)


@pytest.mark.parametrize("value", [None, 42, b"bytes", ["a"], True])
def test_token_rejects_non_strings(value: object) -> None:
    _invalid(check_token, value, code="wrong_type")


def test_token_is_scanned_for_local_paths() -> None:
    # A valid T in the original (which did not scan identifiers); rejected here.
    assert TOKEN.fullmatch("x:/home/u/y")
    with pytest.raises(UnsafeTextError) as caught:
        check_token("x:/home/u/y", "$.scope_ref")
    assert caught.value.code == "unsafe_text"
    assert caught.value.path == "$.scope_ref"
    assert "/home" not in str(caught.value)


# Surface id (S) --------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    ["issue_fix.patch_planning", "a.b", "reviewer_notification.before_send", "m-1.s_2.t-3_"],
)
def test_surface_id_accepts(value: str) -> None:
    assert check_surface_id(value) is value


@pytest.mark.parametrize(
    "value",
    [
        "issue_fix",
        "",
        "A.b",
        "a.B",
        "a..b",
        ".a.b",
        "a.b.",
        "a.1b",
        "1a.b",
        "a.b c",
        "a.b\n",
        "_a.b",
    ],
)
def test_surface_id_rejects(value: str) -> None:
    _invalid(check_surface_id, value)


# Corpus id (C) ---------------------------------------------------------------


@pytest.mark.parametrize(
    "value", ["a", "openviking-issue-fix", "reward_memory_policy_scopes", "a" * 64]
)
def test_corpus_id_accepts(value: str) -> None:
    assert check_corpus_id(value) is value


@pytest.mark.parametrize("value", ["", "a" * 65, "A", "1a", "-a", "a.b", "a b", "a/b", "a\n"])
def test_corpus_id_rejects(value: str) -> None:
    _invalid(check_corpus_id, value)


# Digest (D) ------------------------------------------------------------------


@pytest.mark.parametrize("value", ["0f998976780e6786", "sha256:" + HEX64])
def test_digest_accepts(value: str) -> None:
    assert check_digest(value) is value


@pytest.mark.parametrize(
    "value",
    [
        "0f998976780e678",
        "0f998976780e67861",
        "0F998976780E6786",
        "0f998976780e678g",
        "sha256:" + HEX64[:-1],
        "sha256:" + HEX64 + "0",
        "SHA256:" + HEX64,
        "sha256:" + HEX64.upper(),
        "sha1:" + HEX64[:40],
        HEX64,
        "sha256:0f998976780e6786",
    ],
)
def test_digest_rejects(value: str) -> None:
    _invalid(check_digest, value)


# Timestamps ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2026-11-01T12:00:00Z", datetime(2026, 11, 1, 12, tzinfo=UTC)),
        ("2026-11-01T12:00:00+00:00", datetime(2026, 11, 1, 12, tzinfo=UTC)),
        ("2026-11-01T12:00Z", datetime(2026, 11, 1, 12, tzinfo=UTC)),
        ("2026-11-01T17:30:00+05:30", datetime(2026, 11, 1, 12, tzinfo=UTC)),
        ("2026-11-01T07:00:00-05:00", datetime(2026, 11, 1, 12, tzinfo=UTC)),
        ("2026-11-01T12:00:00.5Z", datetime(2026, 11, 1, 12, 0, 0, 500000, tzinfo=UTC)),
        ("2026-11-01T12:00:00.123456Z", datetime(2026, 11, 1, 12, 0, 0, 123456, tzinfo=UTC)),
        ("2024-02-29T00:00:00Z", datetime(2024, 2, 29, tzinfo=UTC)),
    ],
)
def test_timestamp_accepts_and_parses(value: str, expected: datetime) -> None:
    assert check_timestamp(value) == value  # the given spelling is kept (it is hashed)
    parsed = parse_timestamp(value)
    assert parsed.tzinfo is not None
    assert parsed == expected


def test_z_and_zero_offset_are_equal_instants_but_distinct_values() -> None:
    zulu, offset = "2026-11-01T12:00:00Z", "2026-11-01T12:00:00+00:00"
    assert parse_timestamp(zulu) == parse_timestamp(offset)
    assert check_timestamp(zulu) != check_timestamp(offset)


@pytest.mark.parametrize(
    "value",
    [
        "2026-11-01T12:00:00",  # no offset: naive
        "2026-11-01",
        "2026-11-01 12:00:00Z",
        "2026-11-01t12:00:00Z",
        "2026-11-01T12:00:00z",
        "2026-11-01T12:00:00+0000",
        "2026-11-01T12:00:00+00",
        "2026-11-01T12:00:00.1234567Z",
        "2026-11-01T12Z",
        "2026-W44-1T12:00:00Z",
        " 2026-11-01T12:00:00Z",
        "2026-11-01T12:00:00Z\n",
        "\u0662026-11-01T12:00:00Z",
        "2026-02-30T00:00:00Z",  # not a calendar date
        "2025-02-29T00:00:00Z",
        "2026-11-01T24:00:00Z",
        "2026-11-01T12:60:00Z",
        "2026-11-01T12:00:60Z",
        "2026-11-01T12:00:00+24:00",
        "0001-01-01T00:00:00+05:00",  # not representable in UTC
        "9999-12-31T23:59:59-05:00",
    ],
)
def test_timestamp_rejects(value: str) -> None:
    _invalid(check_timestamp, value)
    with pytest.raises(RecordValidationError):
        parse_timestamp(value)


@pytest.mark.parametrize("value", [None, 1_700_000_000, datetime(2026, 1, 1, tzinfo=UTC)])
def test_timestamp_rejects_non_strings(value: object) -> None:
    _invalid(check_timestamp, value)


@given(st.datetimes(timezones=st.timezones(), allow_imaginary=False))
def test_timestamp_round_trips_isoformat(moment: datetime) -> None:
    offset = moment.utcoffset()
    if offset is None or offset % timedelta(minutes=1):
        return  # the grammar carries hh:mm offsets only
    text = moment.isoformat()
    try:
        moment.astimezone(UTC)
    except OverflowError:
        _invalid(check_timestamp, text)
        return
    assert check_timestamp(text) == text
    parsed = parse_timestamp(text)
    assert parsed.isoformat() == text
    assert parsed.utcoffset() == offset


def test_utc_now_is_aware_utc() -> None:
    now = utc_now()
    assert now.tzinfo is UTC
    assert abs(now - datetime.now(UTC)) < timedelta(seconds=5)


# The grammars equal the JSON-Schema patterns ----------------------------------

GRAMMARS = {
    "token": TOKEN,
    "surface_id": SURFACE_ID,
    "corpus_id": CORPUS_ID,
    "digest": DIGEST,
    "timestamp": TIMESTAMP,
}


def _schema_pattern(name: str) -> re.Pattern[str]:
    pattern = json.loads(COMMON_SCHEMA.read_text("utf-8"))["$defs"][name]["pattern"]
    assert isinstance(pattern, str)
    assert pattern.startswith("^")
    # Python's `$` also matches before a final newline (ECMA-262's does not); the
    # look-ahead keeps "a\n" out in both dialects.
    assert pattern.endswith("$(?!\\n)")
    # Compiled exactly as jsonschema applies it (re.search), so the test sees
    # what `schema validate` sees.
    return re.compile(pattern)


SCHEMA_PATTERNS = {name: _schema_pattern(name) for name in GRAMMARS}


def _agree(name: str, value: str) -> None:
    in_schema = SCHEMA_PATTERNS[name].search(value) is not None
    in_grammar = GRAMMARS[name].fullmatch(value) is not None
    assert in_schema == in_grammar, (name, value)


_ALPHABETS = {
    "token": "aZ09._:/#-~@ \n\u00e9",
    "surface_id": "az09_-.A \n",
    "corpus_id": "az09_-.A \n",
    "digest": "0af9g:sha256A\n",
    "timestamp": "0129T:-+.Zz \n",
}


@pytest.mark.parametrize("name", sorted(GRAMMARS))
@given(data=st.data())
def test_grammar_matches_schema_pattern(name: str, data: st.DataObject) -> None:
    strategy = st.one_of(
        st.from_regex(GRAMMARS[name], fullmatch=True),
        st.from_regex(SCHEMA_PATTERNS[name]),
        st.text(alphabet=_ALPHABETS[name], max_size=40),
    )
    value = data.draw(strategy)
    _agree(name, value)
    # Near misses: one character dropped, changed or appended.
    if value:
        index = data.draw(st.integers(min_value=0, max_value=len(value) - 1))
        char = data.draw(st.sampled_from(_ALPHABETS[name]))
        _agree(name, value[:index] + value[index + 1 :])
        _agree(name, value[:index] + char + value[index + 1 :])
        _agree(name, value + char)


@pytest.mark.parametrize("name", sorted(GRAMMARS))
def test_grammar_and_schema_agree_on_edges(name: str) -> None:
    for value in [
        "",
        "a",
        "a.b",
        "a" * 64,
        "a" * 65,
        "x" * 200,
        "x" * 201,
        "0f998976780e6786",
        "sha256:" + HEX64,
        "2026-11-01T12:00:00Z",
        "2026-11-01T12:00:00.123456+05:30",
        "2026-11-01T12:00:00.1234567+05:30",
        "a\n",
        "a.b\n",
        "0f998976780e6786\n",
        "2026-11-01T12:00:00Z\n",
        "\na",
    ]:
        _agree(name, value)
