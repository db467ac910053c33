"""The provider SPI: what a storage/retrieval backend must do for reward-memory.

A provider stores opaque UTF-8 documents under a :class:`ProviderScope` and
gives them back exactly. The core owns every semantic decision; a provider
only writes, reads, searches, deletes and reports inventory, and must never
return anything outside the scope it was asked about.

Contract, per operation (all keyword-only; ``timeout`` is in seconds, ``None``
meaning the provider's own default):

=============  ==============================================================
``write``      Idempotent put of ``content`` under ``key``. Same key and same
               content: the same ref, status ``unchanged``, no new document.
               Same key, different content: status ``conflict``, nothing
               changed. Returns only after the write is durable.
``read``       The exact string written under ``ref`` in this scope, or
               ``found=False`` (a ref from another scope is "not found").
``search``     At most ``limit`` ranked hits inside the scope, each a ref and
               a short summary. Never a hit from another scope.
``delete``     Removes the document and every copy of its content the provider
               keeps (index entries, summaries, caches, logs): once it returns,
               no byte of it is readable or searchable, nor left in the store's
               files. Deleting a missing one is not an error (``deleted=False``)
               and finishes an erase an earlier call could not complete, so a
               purge is safe to retry until it returns.
``inventory``  Availability, corpus presence, record count, index presence.
=============  ==============================================================

Optional capabilities (looked up with ``getattr``; the core has an SPI-only way
without them):

- ``read_key(*, scope, key, timeout=None) -> ReadResult``: the document written
  under ``key``, without a search. Ingest uses it to see an operator's closed
  marker before it writes; without it, ingest finds controls by search.

Transport failures and timeouts raise :class:`ProviderUnavailable`; the core
turns that into fail-open statuses. Bad arguments (an invalid key, a negative
limit) raise :class:`~reward_memory.errors.RecordValidationError`.

Provider classes (what the ``reward_memory.providers`` entry point names, as
``package.module:Class``; checked by discovery when the class loads):

- class attributes ``provider_id: str`` (equal to the entry-point name, which is
  also the URL scheme: lower-case letters, digits, ``+ . -``) and
  ``spi_version: int`` (:data:`SPI_VERSION`);
- ``__init__(self, *, <option>=..., ...)``: keyword options only. An unknown
  option or a bad value raises :class:`~reward_memory.errors.ProviderConfigError`
  naming the option (``get_provider`` checks names against the signature first);
- ``@classmethod from_url(cls, url: str) -> Self``: ``<provider_id>://<location>?<options>``,
  the query string carrying the same options as ``__init__``. A malformed URL
  raises ``ProviderConfigError`` without repeating the URL, and creates nothing
  (no file, no directory, no connection) before it is known to be valid;
- the operations in the table above, and ``close()``.

Compatibility: a new *optional* capability is added as a method the core
looks up with ``getattr`` and a default; anything that breaks existing
providers bumps :data:`SPI_VERSION`.
"""

from __future__ import annotations

import math
from typing import Final, Literal, Protocol, runtime_checkable

from reward_memory._frozen import frozen
from reward_memory.errors import ProviderUnavailable, RecordValidationError
from reward_memory.records import _fields as f

__all__ = [
    "SPI_VERSION",
    "DeleteResult",
    "Inventory",
    "Provider",
    "ProviderScope",
    "ProviderUnavailable",
    "ReadResult",
    "SearchHit",
    "SearchResult",
    "WriteResult",
    "WriteStatus",
    "check_content",
    "check_limit",
    "check_query",
    "check_scope",
    "check_timeout",
]

SPI_VERSION: Final = 1

# Bounds every provider shares, so the conformance kit can test them.
MAX_SEARCH_LIMIT: Final = 100
MAX_CONTENT_BYTES: Final = 4 * 1024 * 1024

WriteStatus = Literal["created", "unchanged", "conflict"]


@frozen(kw_only=True)
class ProviderScope:
    """Where documents live: a namespace, a scope reference, and an optional actor peer.

    Two scopes that differ in any of the three parts share nothing. A peer is
    never inferred from ``scope_ref``: it is only what the caller passes.
    """

    namespace: str = f.token()
    scope_ref: str = f.token()
    actor_peer_id: str | None = f.optional_token()


@frozen(kw_only=True)
class WriteResult:
    """The outcome of :meth:`Provider.write`."""

    ref: str
    status: WriteStatus
    content_sha256: str


@frozen(kw_only=True)
class ReadResult:
    """The outcome of :meth:`Provider.read`: the exact content, or not found."""

    ref: str
    found: bool
    content: str | None = None


@frozen(kw_only=True)
class SearchHit:
    """One ranked search hit: a ref to read back, and a short summary."""

    ref: str
    summary: str
    score: float | None = None


@frozen(kw_only=True)
class SearchResult:
    """The outcome of :meth:`Provider.search`, best first."""

    hits: tuple[SearchHit, ...] = ()


@frozen(kw_only=True)
class DeleteResult:
    """The outcome of :meth:`Provider.delete`."""

    ref: str
    deleted: bool


@frozen(kw_only=True)
class Inventory:
    """What a provider can say about one scope without reading its content."""

    provider_id: str
    available: bool
    corpus_present: bool
    record_count: int
    index_present: bool


def well_formed_inventory(answer: object) -> bool:
    """Whether a provider's ``inventory`` answer is an :class:`Inventory` of the right types
    (the class has no validators: a third-party provider can build one of anything, and
    the core treats any other answer as a failed provider, never as a crash)."""
    return (
        isinstance(answer, Inventory)
        and type(answer.available) is bool
        and type(answer.corpus_present) is bool
        and type(answer.record_count) is int
        and answer.record_count >= 0
        and type(answer.index_present) is bool
    )


@runtime_checkable
class Provider(Protocol):
    """The provider SPI (version :data:`SPI_VERSION`)."""

    provider_id: str
    spi_version: int

    def write(
        self, *, scope: ProviderScope, key: str, content: str, timeout: float | None = None
    ) -> WriteResult:
        """Store ``content`` under ``key`` (idempotent); return its ref."""
        ...

    def read(self, *, scope: ProviderScope, ref: str, timeout: float | None = None) -> ReadResult:
        """Return exactly what was written under ``ref`` in ``scope``."""
        ...

    def search(
        self, *, scope: ProviderScope, query: str, limit: int, timeout: float | None = None
    ) -> SearchResult:
        """Return at most ``limit`` hits from inside ``scope``."""
        ...

    def delete(
        self, *, scope: ProviderScope, ref: str, timeout: float | None = None
    ) -> DeleteResult:
        """Remove ``ref`` from ``scope``; a missing ref is not an error."""
        ...

    def inventory(self, *, scope: ProviderScope, timeout: float | None = None) -> Inventory:
        """Report availability, presence and counts for ``scope``."""
        ...

    def close(self) -> None:
        """Release connections and files; the provider is unusable afterwards."""
        ...


def check_limit(limit: object) -> int:
    """Validate a search limit (1..MAX_SEARCH_LIMIT) for provider implementations."""
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_SEARCH_LIMIT:
        raise RecordValidationError(
            f"limit must be an integer between 1 and {MAX_SEARCH_LIMIT}",
            path="$.limit",
            code="invalid_value",
        )
    return limit


# -- argument checks every provider shares (the conformance kit tests them) ----------------


def check_scope(scope: object) -> ProviderScope:
    """Require a :class:`ProviderScope` (untyped callers may pass anything)."""
    if not isinstance(scope, ProviderScope):
        raise RecordValidationError("must be a ProviderScope", path="$.scope", code="wrong_type")
    return scope


def check_content(content: object) -> bytes:
    """Require document content: a string of at most MAX_CONTENT_BYTES in UTF-8.

    Returns the UTF-8 bytes (what a provider stores or hashes). Over-long content
    is rejected, never truncated; a lone surrogate cannot be stored exactly.
    """
    if not isinstance(content, str):
        raise RecordValidationError("must be a string", path="$.content", code="wrong_type")
    try:
        data = content.encode("utf-8")
    except UnicodeEncodeError:
        raise RecordValidationError(
            "must be encodable as UTF-8 (no lone surrogates)",
            path="$.content",
            code="invalid_value",
        ) from None
    if len(data) > MAX_CONTENT_BYTES:
        raise RecordValidationError(
            f"is {len(data)} bytes, over the limit of {MAX_CONTENT_BYTES}; "
            "it is rejected, not truncated",
            path="$.content",
            code="text_too_long",
        )
    return data


def check_query(query: object) -> str:
    """Require a search query string (a provider tokenises it; it is never syntax)."""
    if not isinstance(query, str):
        raise RecordValidationError("must be a string", path="$.query", code="wrong_type")
    if not query.isascii():
        try:  # a lone surrogate is no text a provider can send or index
            query.encode("utf-8")
        except UnicodeEncodeError:
            raise RecordValidationError(
                "must be text (it holds a lone surrogate)", path="$.query", code="unsafe_character"
            ) from None
    return query


def check_timeout(timeout: object) -> float | None:
    """Require ``None`` or a positive, finite number of seconds."""
    if timeout is None:
        return None
    if (
        isinstance(timeout, bool)
        or not isinstance(timeout, int | float)
        or not math.isfinite(timeout)
        or timeout <= 0
    ):
        raise RecordValidationError(
            "must be a positive number of seconds, or None",
            path="$.timeout",
            code="invalid_value",
        )
    return float(timeout)
