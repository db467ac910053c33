"""The stored-spelling fast path of the timestamp grammar equals the full grammar.

A stored record's timestamps are in the one stored spelling (``format_utc``),
so parsing and checking them takes a cheap exact-format path first
(``grammars._stored_moment``) and the full ISO-8601 grammar otherwise. The two
must agree: the fast path accepts exactly the strings that the full grammar
accepts *and* that are already their own stored spelling, with the same instant.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from reward_memory.errors import RecordValidationError
from reward_memory.grammars import (
    _normalized,
    _parse_full,
    _stored_moment,
    format_utc,
    normalize_timestamp,
    parse_timestamp,
)


def _full(value: str) -> datetime | None:
    """The instant by the full grammar when ``value`` is its own stored spelling, else None."""
    try:
        moment = _parse_full(value, "$")
    except RecordValidationError:
        return None
    return moment if format_utc(moment) == value else None


def _same(value: str) -> None:
    fast, full = _stored_moment(value), _full(value)
    assert (fast is None) == (full is None), value
    if fast is not None:
        assert fast == full
        assert fast.utcoffset() == full.utcoffset()
        assert parse_timestamp(value) == full
        assert normalize_timestamp(value) == value


_two = st.integers(min_value=0, max_value=99).map("{:02d}".format)


@st.composite
def _near_stored(draw: st.DrawFn) -> str:
    """Strings shaped like the stored spelling, every field pushed past its range now and then."""
    year = draw(st.integers(min_value=0, max_value=9999))
    fraction = draw(
        st.sampled_from(["", ".000000", ".5", ".100000", ".000001", ".999999", ".1234567"])
        | st.integers(min_value=0, max_value=999_999).map(".{:06d}".format)
    )
    suffix = draw(st.sampled_from(["Z", "Z", "Z", "z", "+00:00", "-00:00", "+01:00", ""]))
    return (
        f"{year:04d}-{draw(_two)}-{draw(_two)}T{draw(_two)}:{draw(_two)}:{draw(_two)}"
        f"{fraction}{suffix}"
    )


@given(_near_stored())
@example("2024-02-29T23:59:59Z")  # leap day
@example("2023-02-29T23:59:59Z")  # not a leap year
@example("1900-02-29T00:00:00Z")  # century, not leap
@example("2000-02-29T00:00:00Z")  # 400-year leap
@example("0000-01-01T00:00:00Z")  # no year 0
@example("0001-01-01T00:00:00Z")
@example("9999-12-31T23:59:59.999999Z")
@example("2026-04-31T00:00:00Z")
@example("2026-01-01T24:00:00Z")
@example("2026-01-01T23:60:00Z")
@example("2026-01-01T23:59:60Z")
@example("2026-01-01T00:00:00.000000Z")  # a zero fraction is not stored
def test_fast_path_equals_the_full_grammar_near_the_stored_spelling(value: str) -> None:
    _same(value)


@given(st.text(alphabet="0123456789-T:.Z+z \n", max_size=32))
def test_fast_path_equals_the_full_grammar_on_any_text(value: str) -> None:
    _same(value)


@given(st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30)))
def test_every_stored_spelling_takes_the_fast_path(moment: datetime) -> None:
    stored = format_utc(moment.replace(tzinfo=UTC))
    assert _stored_moment(stored) == moment.replace(tzinfo=UTC)
    _same(stored)


@pytest.mark.parametrize(
    "value",
    [
        "\uff12\uff10\uff12\uff16-01-01T00:00:00Z",  # full-width digits
        "2026-01-01T00:00:00Z\n",
        " 2026-01-01T00:00:00Z",
    ],
)
def test_fast_path_refuses_what_the_grammar_refuses(value: str) -> None:
    assert _stored_moment(value) is None
    assert _normalized(value) is None
    with pytest.raises(RecordValidationError):
        parse_timestamp(value)
