"""Canonical JSON and sha256-based references.

One canonical encoding serves every new digest: keys sorted, compact
separators, UTF-8 with non-ASCII kept, NaN and infinities refused. References
are ``<prefix>:<first N hex of sha256>``; prefixes and lengths are pinned by
``tests/test_digests.py``, because a changed ref is a changed identity.

``legacy_json`` reproduces the original implementation's other encodings,
only where a v0 identifier must match byte for byte (see CHANGELOG).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Final, Literal

__all__ = [
    "REF_HEX_LENGTH",
    "canonical_json",
    "digest_hex",
    "legacy_json",
    "make_ref",
    "sha256_hex",
    "short_digest",
]

REF_HEX_LENGTH: Final = 20
SHORT_DIGEST_LENGTH: Final = 16

_CANONICAL: Final = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
)


def canonical_json(value: Any) -> bytes:
    """The canonical UTF-8 JSON bytes of ``value``."""
    return _CANONICAL.encode(value).encode("utf-8")


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
