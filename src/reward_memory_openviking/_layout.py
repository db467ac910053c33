"""Where a scope's records live on the server, and what their refs are (pure functions).

A :class:`~reward_memory.providers.spi.ProviderScope` maps to one *records
directory*:

- a ``scope_ref`` that is a ``viking://`` URI names the corpus scope itself; it must
  lie in a ``resources`` namespace, where the server reads content back byte for
  byte (``viking://resources/...``, ``viking://user/<u>/resources/...`` or
  ``viking://user/<u>/peers/<p>/resources/...``; ``memories/`` rewrites content);
- any other ``scope_ref`` is one escaped segment under the provider's ``root``
  (default ``viking://resources/reward-memory``), marked ``s-``.

Below that comes one leaf segment ``rm-<namespace>[-<peer>]``. Segments are
escaped injectively (only ``[a-z0-9.]`` stand for themselves; every other
character is ``_xx`` per UTF-8 byte; a long value becomes ``_h`` + 40 hex of its
sha256), so the ``-`` separators are unambiguous and two scopes that differ in any
part never share a directory, however their strings relate (``.../a`` and
``.../ab``, ``a_b`` and ``aXb``, upper and lower case).

Each record is ``<records dir>/<32 hex>/r.json``, the hex being a keyed digest of
(namespace, scope_ref, peer, key); the ref is ``openviking:<32 hex>``. The record's
own directory is its *claim*: ``fs/mkdir`` fails on an existing directory, which
makes create-if-absent atomic on a server whose ``create`` write mode is an
upsert. A ref says nothing about where it lives, a ref from another scope names a
file that scope never wrote, and a search hit counts only when its URI is exactly
such a file of the records directory (nested scopes are dropped client-side).
"""

from __future__ import annotations

import hashlib
import re
from typing import TYPE_CHECKING, Final

from reward_memory.errors import RecordValidationError

if TYPE_CHECKING:
    from reward_memory.providers.spi import ProviderScope

REF_PREFIX: Final = "openviking:"
DEFAULT_ROOT: Final = "viking://resources/reward-memory"
_REF: Final = re.compile(r"openviking:([0-9a-f]{32})")
_FILE: Final = re.compile(r"([0-9a-f]{32})/r\.json")
_DOMAIN: Final = b"reward-memory/openviking/ref/v1\n"
_PLAIN: Final = frozenset("abcdefghijklmnopqrstuvwxyz0123456789.")
_SEGMENT: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
_MAX_ESCAPED: Final = 96
_LEAF: Final = "rm-"
_PLAIN_MARK: Final = "s-"
_PEER_SCOPE: Final = re.compile(r"viking://user/([^/]+)/peers/([^/]+)/resources(?:/.*)?")


def escape(value: str) -> str:
    """One path segment for ``value``: injective, ``[a-z0-9._]`` only, bounded length."""
    out: list[str] = []
    for ch in value:
        if ch in _PLAIN:
            out.append(ch)
        else:
            out.extend(f"_{byte:02x}" for byte in ch.encode("utf-8"))
    escaped = "".join(out)
    if len(escaped) > _MAX_ESCAPED:
        # "_h" is never produced above ("_" is always followed by two hex digits).
        return "_h" + hashlib.sha256(value.encode("utf-8")).hexdigest()[:40]
    return escaped


def check_resources_uri(uri: str, path: str) -> str:
    """A ``viking://`` URI in a resources namespace, with plain segments; else an error."""

    def bad(problem: str) -> RecordValidationError:
        return RecordValidationError(problem, path=path, code="invalid_value")

    if not uri.startswith("viking://"):
        raise bad("must be a viking:// URI")
    segments = uri[len("viking://") :].rstrip("/").split("/")
    if not all(_SEGMENT.fullmatch(s) and s not in (".", "..") for s in segments):
        raise bad(
            "must be a viking:// URI whose segments use only letters, digits, '.', '_' "
            "and '-' (no '~', no empty or relative segments)"
        )
    head = segments[0]
    if head == "resources":
        return "viking://" + "/".join(segments)
    if head == "user" and len(segments) >= 3 and segments[2] == "resources":
        return "viking://" + "/".join(segments)
    if (
        head == "user"
        and len(segments) >= 5
        and segments[2] == "peers"
        and segments[4] == "resources"
    ):
        return "viking://" + "/".join(segments)
    raise bad(
        "must lie in a resources namespace (viking://resources/..., "
        "viking://user/<user>/resources/... or viking://user/<user>/peers/<peer>/resources/...), "
        "where the server reads content back exactly"
    )


def check_no_reserved_segment(uri: str, path: str) -> None:
    """Refuse a URI that passes through a records directory (a segment ``rm-...``)."""
    if any(segment.startswith(_LEAF) for segment in uri[len("viking://") :].split("/")):
        raise RecordValidationError(
            f"must not hold a segment starting with {_LEAF!r}: that names a scope's "
            "records directory, and a scope inside another's would share its records",
            path=path,
            code="invalid_value",
        )


def _own_directory(ref: str, root: str) -> str:
    """The base of a ``viking://`` scope_ref, refused where another scope lives.

    One directory per scope, and no scope inside another's: a trailing ``/`` would
    name the same directory as the ref without it; a segment ``rm-...`` would lie
    inside a records directory (or a record's own); ``<root>/s-...`` is where the
    plain scope_refs live.
    """
    path = "$.scope.scope_ref"
    if ref.endswith("/"):
        raise RecordValidationError(
            "must not end with '/' (it would name the same directory as the ref without it)",
            path=path,
            code="invalid_value",
        )
    base = check_resources_uri(ref, path)
    check_no_reserved_segment(base, path)
    if base.startswith(f"{root}/{_PLAIN_MARK}"):
        raise RecordValidationError(
            f"must not lie under the provider's root followed by {_PLAIN_MARK!r}: that is "
            "where plain scope_refs are kept, so it would share another scope's records",
            path=path,
            code="invalid_value",
        )
    return base


class Layout:
    """The records directory of one scope, and the URI of each of its records."""

    __slots__ = ("_material", "directory", "peer_header")

    def __init__(self, scope: ProviderScope, root: str) -> None:
        ref = scope.scope_ref
        if ref.startswith("viking:"):
            base = _own_directory(ref, root)
        else:
            base = f"{root}/{_PLAIN_MARK}{escape(ref)}"
        leaf = _LEAF + escape(scope.namespace)
        if scope.actor_peer_id is not None:
            leaf += "-" + escape(scope.actor_peer_id)
        self.directory: str = f"{base}/{leaf}"
        peer = _PEER_SCOPE.fullmatch(self.directory)
        if peer is not None and scope.actor_peer_id != peer.group(2):
            # The server isolates a peer's subtree only for callers that name the peer.
            raise RecordValidationError(
                "a scope under /peers/<peer>/ must carry exactly that actor_peer_id",
                path="$.scope.actor_peer_id",
                code="peer_mismatch",
            )
        self.peer_header: str | None = None if peer is None else peer.group(2)
        self._material = "\n".join(
            (scope.namespace, scope.scope_ref, scope.actor_peer_id or "")
        ).encode("utf-8")

    def ref_hex(self, key: str) -> str:
        # Tokens never hold a newline and are never empty: the join is unambiguous.
        digest = hashlib.sha256(_DOMAIN + self._material + b"\n" + key.encode("utf-8"))
        return digest.hexdigest()[:32]

    def claim(self, ref_hex: str) -> str:
        """The record's own directory (created exclusively by the first writer)."""
        return f"{self.directory}/{ref_hex}"

    def uri(self, ref_hex: str) -> str:
        return f"{self.directory}/{ref_hex}/r.json"

    def ref_of_uri(self, uri: object) -> str | None:
        """The ref of a record URI directly in this directory; ``None`` for anything else."""
        if not isinstance(uri, str) or not uri.startswith(self.directory):
            return None
        rest = uri[len(self.directory) :]
        if not rest.startswith("/"):
            return None  # a sibling such as .../rm-ab next to .../rm-a
        match = _FILE.fullmatch(rest[1:])
        return None if match is None else REF_PREFIX + match.group(1)


def parse_ref(ref: str) -> str | None:
    """The 32 hex of one of this provider's refs; ``None`` for any other string."""
    match = _REF.fullmatch(ref)
    return None if match is None else match.group(1)
