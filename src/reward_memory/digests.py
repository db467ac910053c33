"""Canonical JSON and sha256-based references.

One canonical encoding serves every new digest: keys sorted, compact
separators, UTF-8 with non-ASCII kept, NaN and infinities refused. References
are ``<prefix>:<first N hex of sha256>``; prefixes and lengths are pinned by
``tests/test_digests.py``, because a changed ref is a changed identity.

``legacy_json`` reproduces the original implementation's other encodings,
only where a v0 identifier must match byte for byte (see CHANGELOG).
"""

from __future__ import annotations

import functools
import hashlib
import json
import sys
from typing import TYPE_CHECKING, Any, Final, Literal

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = [
    "REF_HEX_LENGTH",
    "canonical_json",
    "digest_hex",
    "legacy_json",
    "make_ref",
    "sha256_hex",
    "short_digest",
    "sorted_dumps",
]

REF_HEX_LENGTH: Final = 20
SHORT_DIGEST_LENGTH: Final = 16

# check_circular is off: _check_keys walks every value first, so a cycle never
# reaches the encoder (it raises RecursionError there), and the encoder's own
# cycle bookkeeping was half its cost.
_CANONICAL: Final = json.JSONEncoder(
    sort_keys=True,
    separators=(",", ":"),
    ensure_ascii=False,
    allow_nan=False,
    check_circular=False,
)


def sorted_dumps() -> Callable[[Any], bytes] | None:
    """orjson's writer with keys sorted, or ``None`` while the stdlib path is used.

    orjson's import costs more than a one-shot CLI verb, hashing a few values,
    saves by it: it is imported once the process has written
    ``_STDLIB_FIRST`` canonical values (at once when something else imported
    it), and never where it is not installed. Either way the bytes are the same.
    """
    if _DUMPS:
        return _DUMPS[0]
    if "orjson" not in sys.modules:
        _WARMUP[0] += 1
        if _WARMUP[0] <= _STDLIB_FIRST:
            return None
    # Imported by the statement even when sys.modules has it: another thread may still
    # be initialising it there, and only the import waits for that (a peek would see a
    # module without ``dumps``).
    try:
        import orjson  # noqa: PLC0415
    except ImportError:  # pragma: no cover - a declared dependency; else the stdlib path
        _DUMPS.append(None)
        return None
    _DUMPS.append(functools.partial(orjson.dumps, option=orjson.OPT_SORT_KEYS))
    return _DUMPS[0]


_DUMPS: list[Callable[[Any], bytes] | None] = []
_WARMUP: Final = [0]
_STDLIB_FIRST: Final = 16
_SCALARS: Final = frozenset({str, int, bool, type(None)})


def canonical_json(value: Any) -> bytes:
    """The canonical UTF-8 JSON bytes of ``value``.

    Objects must have string keys (``{1: x}`` and ``{"1": x}`` would otherwise
    share bytes, and so an identity); tuples encode as arrays. Raises
    ``TypeError`` for a non-string key or a value JSON cannot hold, and
    ``ValueError`` for NaN, an infinity, or a string with a lone surrogate.

    Written by ``orjson`` (a tenth of the cost) when the value holds only what
    it writes byte for byte as the standard encoder does -- exact ``str``,
    ``int``, ``bool``, ``None``, ``list``, ``tuple`` and str-keyed ``dict``
    (keys sorted by code point, as UTF-8 bytes sort); the standard encoder
    writes everything else (floats, subclasses, datetimes, enums), and
    anything ``orjson`` refuses (an integer beyond 64 bits, a lone surrogate,
    deep nesting), with its own result or error. ``tests/test_digests.py``
    holds the two equal.
    """
    try:
        dumps = _DUMPS[0] if _DUMPS else sorted_dumps()
        if dumps is not None and _plain(value):
            return dumps(value)
    except (TypeError, RecursionError):
        pass  # the standard path below gives the bytes or the error
    return _stdlib_json(value)


def _plain(value: Any) -> bool:
    """Whether ``value`` holds only what orjson and the standard encoder write alike."""
    kind = type(value)
    if kind is dict:
        for key, item in value.items():
            if type(key) is not str:
                return False
            if type(item) not in _SCALARS and not _plain(item):
                return False
        return True
    if kind is list or kind is tuple:
        for item in value:
            inner = type(item)
            if inner in _SCALARS:
                continue
            if inner is list or inner is tuple:
                # One level inlined (a call less per nested array): a record's
                # values are mostly blocks of scalars.
                for leaf in item:
                    if type(leaf) not in _SCALARS and not _plain(leaf):
                        return False
            elif not _plain(item):
                return False
        return True
    return kind in _SCALARS


def _stdlib_json(value: Any) -> bytes:
    _check_keys(value)
    text = _CANONICAL.encode(value)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(
            "canonical JSON must be valid UTF-8: a string holds a lone surrogate"
        ) from None


_NESTED: Final = (dict, list, tuple)


def _check_keys(value: Any) -> None:
    # Recurse only into containers: most leaves are scalars, and a call per
    # leaf was half the cost of digesting an active record.
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(
                    f"canonical JSON object keys must be strings, not {type(key).__name__}"
                )
            if isinstance(item, _NESTED):
                _check_keys(item)
    elif isinstance(value, _NESTED):
        for item in value:
            if isinstance(item, _NESTED):
                _check_keys(item)


def sha256_hex(data: bytes | str) -> str:
    """Lower-case hex sha256 of bytes, or of a string's UTF-8 bytes."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    return hashlib.sha256(data).hexdigest()


def digest_hex(value: Any) -> str:
    """Full 64-hex sha256 of the canonical JSON of ``value``."""
    return hashlib.sha256(canonical_json(value)).hexdigest()


def short_digest(data: bytes | str) -> str:
    """First 16 hex of sha256: the grammar-D digest used for memory refs and scopes."""
    return sha256_hex(data)[:SHORT_DIGEST_LENGTH]


def make_ref(prefix: str, value: Any, *, length: int = REF_HEX_LENGTH) -> str:
    """``prefix:`` + the first ``length`` hex of the canonical digest of ``value``."""
    if not prefix or not 1 <= length <= 64:
        raise ValueError("make_ref needs a non-empty prefix and a length between 1 and 64")
    return f"{prefix}:{digest_hex(value)[:length]}"


LegacyStyle = Literal["J1", "J2", "J3", "J4"]


def legacy_json(value: Any, style: LegacyStyle) -> str:
    """The original implementation's encodings (reference §1.5), for v0 identifiers only.

    J1: sorted keys, default separators, non-ASCII kept. J2: sorted, compact, kept.
    J3: sorted, default separators, ASCII-escaped. J4: sorted, compact, escaped.
    """
    compact = style in ("J2", "J4")
    escaped = style in ("J3", "J4")
    return json.dumps(
        value,
        sort_keys=True,
        separators=(",", ":") if compact else (", ", ": "),
        ensure_ascii=escaped,
        allow_nan=False,
    )
