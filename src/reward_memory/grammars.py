"""The shared value grammars: tokens, surface ids, corpus ids, digests, timestamps.

Each ``check_*`` function returns the value unchanged or raises
:class:`~reward_memory.errors.RecordValidationError` naming the field path.
Unlike the original, identifiers are also scanned for credentials and local
paths: an identifier reaches providers and public packets just like text does.
An identifier holding a control character or a lone surrogate is refused with
the code ``unsafe_character`` (the grammars are printable ASCII anyway).

The regular expressions are published in the JSON Schemas too (``$defs``);
``tests/test_grammars.py`` pins both to the same language.
"""

from __future__ import annotations

import functools
import re
from datetime import UTC, datetime
from typing import Any, Final

from reward_memory.errors import RecordValidationError
from reward_memory.text import require_safe, require_safe_characters

__all__ = [
    "CORPUS_ID",
    "DIGEST",
    "SURFACE_ID",
    "TIMESTAMP",
    "TOKEN",
    "check_corpus_id",
    "check_digest",
    "check_surface_id",
    "check_timestamp",
    "check_token",
    "format_utc",
    "normalize_timestamp",
    "parse_timestamp",
    "utc_now",
]

TOKEN: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/#-]{0,199}")
SURFACE_ID: Final = re.compile(r"[a-z][a-z0-9_-]*(?:\.[a-z][a-z0-9_-]*)+")
CORPUS_ID: Final = re.compile(r"[a-z][a-z0-9_-]{0,63}")
DIGEST: Final = re.compile(r"[0-9a-f]{16}|sha256:[0-9a-f]{64}")
# ISO-8601 with a mandatory offset, calendar-exact (no Feb 30, no hour 24, no
# offset minute 60), so the schema's copy of it refuses what the records refuse;
# parsed by datetime.fromisoformat after the check. Only the UTC overflow at the
# two ends of year 1 and year 9999 is left to the parser.
_YEAR: Final = r"(?:[0-9]{3}[1-9]|[0-9]{2}[1-9]0|[0-9][1-9]00|[1-9]000)"
_LEAP_YEAR: Final = (
    r"(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:0[48]|[2468][048]|[13579][26])00)"
)
_DAYS: Final = (
    r"(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])"
    r"|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)|02-(?:0[1-9]|1[0-9]|2[0-8]))"
)
TIMESTAMP: Final = re.compile(
    rf"(?:{_YEAR}-{_DAYS}|{_LEAP_YEAR}-02-29)"
    r"T(?:[01][0-9]|2[0-3]):[0-5][0-9](?::[0-5][0-9](?:\.[0-9]{1,6})?)?"
    r"(?:Z|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])"
)


def _check(pattern: re.Pattern[str], value: Any, path: str, what: str) -> str:
    if not isinstance(value, str):
        raise RecordValidationError(f"must be {what} (a string)", path=path, code="wrong_type")
    if pattern.fullmatch(value) is None:
        # The grammars are ASCII without controls; say so when that is the cause
        # (found only on this failure path, so a good value pays nothing for it).
        require_safe_characters(value, path=path, label="identifier")
        raise RecordValidationError(f"must be {what}", path=path, code="invalid_format")
    return require_safe(value, path=path, label="identifier")


def check_token(value: Any, path: str = "$") -> str:
    """A compact public-safe token: ``^[A-Za-z0-9][A-Za-z0-9._:/#-]{0,199}$``."""
    return _check(TOKEN, value, path, "a compact public-safe token")


def check_surface_id(value: Any, path: str = "$") -> str:
    """A module-qualified surface id: two or more dot-separated lower-case segments."""
    return _check(SURFACE_ID, value, path, "a module-qualified surface id such as module.surface")


def check_corpus_id(value: Any, path: str = "$") -> str:
    """A corpus id: ``^[a-z][a-z0-9_-]{0,63}$``."""
    return _check(CORPUS_ID, value, path, "a corpus id (lower-case, digits, _ or -)")


def check_digest(value: Any, path: str = "$") -> str:
    """A memory-ref digest: 16 lower-case hex, or ``sha256:`` and 64 lower-case hex."""
    return _check(DIGEST, value, path, "a 16-hex or sha256: digest")


# The one stored spelling (``format_utc``): seconds, ``Z``, six fraction digits
# only when non-zero. Checked first: almost every timestamp read is stored.
_STORED: Final = re.compile(
    r"[0-9]{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01])"
    r"T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\.(?![0]{6})[0-9]{6})?Z"
)
_UTC_SUFFIX: Final = "+00:00"


def _stored_moment(value: str) -> datetime | None:
    """The instant of a timestamp in its stored spelling; None for any other spelling.

    The cheap path of :func:`parse_timestamp` and :func:`normalize_timestamp`
    (``tests/test_grammars.py`` holds it to the full grammar): the pattern fixes
    the layout and the field ranges, ``fromisoformat`` the calendar (no Feb 30,
    no year 0); a UTC time in years 1-9999 always converts.
    """
    if _STORED.fullmatch(value) is None:
        return None
    try:
        return datetime.fromisoformat(value[:-1] + _UTC_SUFFIX)
    except ValueError:
        return None


def parse_timestamp(value: str, path: str = "$") -> datetime:
    """Parse an ISO-8601 timestamp that carries an offset into an aware datetime.

    The offset is mandatory (``Z`` or ``+hh:mm``); the date and time must exist
    on the calendar and be representable in UTC (so ``now=`` comparisons and
    conversions never overflow).
    """
    if type(value) is str:
        moment = _stored_moment(value)
        if moment is not None:
            return moment
    return _parse_full(value, path)


def _parse_full(value: str, path: str) -> datetime:
    """:func:`parse_timestamp` by the full grammar (any offset, any precision)."""
    if not isinstance(value, str) or TIMESTAMP.fullmatch(value) is None:
        raise RecordValidationError(
            "must be an ISO-8601 timestamp with a UTC offset", path=path, code="invalid_format"
        )
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        parsed.astimezone(UTC)
    except (ValueError, OverflowError):
        raise RecordValidationError(
            "must be a real calendar date and time", path=path, code="invalid_format"
        ) from None
    return parsed


def check_timestamp(value: Any, path: str = "$") -> str:
    """Validate a timestamp; return the given string (records store :func:`normalize_timestamp`)."""
    parse_timestamp(value, path)
    return str(value)


def format_utc(moment: datetime) -> str:
    """An aware datetime in the one stored spelling: UTC, ``Z``, microseconds only when set."""
    utc = moment.astimezone(UTC)
    spec = "microseconds" if utc.microsecond else "seconds"
    return utc.replace(tzinfo=None).isoformat(timespec=spec) + "Z"


@functools.lru_cache(maxsize=4096)
def _normalized(value: str) -> str | None:
    # Pure in the value: a good spelling's stored form is computed once.
    if _stored_moment(value) is not None:
        return value  # already the stored spelling (the usual case: a stored record)
    try:
        return format_utc(parse_timestamp(value))
    except RecordValidationError:
        return None


def normalize_timestamp(value: Any, path: str = "$") -> str:
    """The stored spelling of a timestamp: ``YYYY-MM-DDTHH:MM:SSZ`` (``.ffffff`` when non-zero).

    Every spelling of one instant gives the same string (``+00:00``, ``Z``,
    ``+01:00`` an hour later, ``.000``, no seconds), so records, their refs and
    their stored bytes depend on the instant only. Naive, malformed or
    impossible values raise like :func:`parse_timestamp`.
    """
    if type(value) is str:
        stored = _normalized(value)
        if stored is not None:
            return stored
    return format_utc(parse_timestamp(value, path))  # raises for a bad value, naming the path


def utc_now() -> datetime:
    """The default clock: an aware UTC ``datetime`` (every ``now=`` parameter defaults to it)."""
    return datetime.now(UTC)


def resolve_now(now: object) -> datetime:
    """A ``now=`` argument: ``None`` is the current UTC time; anything but an aware
    ``datetime`` is refused (``$.now``, ``wrong_type``)."""
    if now is None:
        return utc_now()
    if not isinstance(now, datetime) or now.utcoffset() is None:
        raise RecordValidationError(
            "now must be an aware datetime (UTC)", path="$.now", code="wrong_type"
        )
    return now
