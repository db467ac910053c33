"""A tiny third-party reward-memory provider (a test fixture, not shipped).

It depends only on reward-memory's public SPI, is registered under the
``reward_memory.providers`` entry-point group as ``thirdparty``, and keeps its
documents in a dict. ``thirdparty://<location>?label=<token>`` accepts any
location (it is only remembered), so tests can check that a location given in a
URL never reaches a public packet.
"""

from __future__ import annotations

import threading
from typing import Self
from urllib.parse import parse_qsl

from reward_memory.digests import make_ref, sha256_hex
from reward_memory.errors import ProviderConfigError, ProviderUnavailable, RecordValidationError
from reward_memory.grammars import check_token
from reward_memory.providers.spi import (
    SPI_VERSION,
    DeleteResult,
    Inventory,
    ProviderScope,
    ReadResult,
    SearchHit,
    SearchResult,
    WriteResult,
    WriteStatus,
    check_content,
    check_limit,
    check_query,
    check_timeout,
)

__all__ = ["ThirdPartyProvider"]


class ThirdPartyProvider:
    """A dict-backed provider: exact readback, scope isolation, substring search."""

    provider_id: str = "thirdparty"
    spi_version: int = SPI_VERSION

    def __init__(self, *, label: str = "default", location: str = "") -> None:
        try:
            self.label = check_token(label, "$.label")
        except RecordValidationError:
            raise ProviderConfigError("option 'label' must be a token") from None
        self.location = location
        self._lock = threading.Lock()
        self._docs: dict[tuple[ProviderScope, str], tuple[str, str]] = {}
        self._closed = False

    @classmethod
    def from_url(cls, url: str) -> Self:
        prefix = "thirdparty://"
        if not isinstance(url, str) or not url.startswith(prefix):
            raise ProviderConfigError("a thirdparty URL starts with thirdparty://")
        location, _, query = url[len(prefix) :].partition("?")
        options = dict(parse_qsl(query, keep_blank_values=True))
        unknown = sorted(set(options) - {"label"})
        if unknown:
            raise ProviderConfigError(f"unknown option {unknown[0]!r}; it accepts: label")
        return cls(location=location, **options)

    def _open(self, scope: object, timeout: object) -> ProviderScope:
        if not isinstance(scope, ProviderScope):
            raise RecordValidationError("must be a ProviderScope", path="$.scope")
        check_timeout(timeout)
        if self._closed:
            raise ProviderUnavailable("closed")
        return scope

    def write(
        self, *, scope: ProviderScope, key: str, content: str, timeout: float | None = None
    ) -> WriteResult:
        scope = self._open(scope, timeout)
        key = check_token(key, "$.key")
        check_content(content)  # a string, UTF-8 encodable, at most MAX_CONTENT_BYTES
        ref = make_ref("thirdparty", [scope.namespace, scope.scope_ref, scope.actor_peer_id, key])
        with self._lock:
            existing = self._docs.get((scope, ref))
            if existing is None:
                self._docs[(scope, ref)] = (key, content)
                return WriteResult(ref=ref, status="created", content_sha256=sha256_hex(content))
        status: WriteStatus = "unchanged" if existing[1] == content else "conflict"
        return WriteResult(ref=ref, status=status, content_sha256=sha256_hex(existing[1]))

    def read(self, *, scope: ProviderScope, ref: str, timeout: float | None = None) -> ReadResult:
        scope = self._open(scope, timeout)
        with self._lock:
            found = self._docs.get((scope, ref))
        if found is None:
            return ReadResult(ref=ref, found=False)
        return ReadResult(ref=ref, found=True, content=found[1])

    def search(
        self, *, scope: ProviderScope, query: str, limit: int, timeout: float | None = None
    ) -> SearchResult:
        scope = self._open(scope, timeout)
        limit = check_limit(limit)
        query = check_query(query)  # the SPI's helper: a string, and text (no lone surrogate)
        words = query.casefold().split()
        with self._lock:
            docs = [(ref, body) for (owner, ref), (_, body) in self._docs.items() if owner == scope]
        hits = [
            SearchHit(ref=ref, summary=body[:80])
            for ref, body in docs
            if words and all(word in body.casefold() for word in words)
        ]
        return SearchResult(hits=tuple(hits[:limit]))

    def delete(
        self, *, scope: ProviderScope, ref: str, timeout: float | None = None
    ) -> DeleteResult:
        scope = self._open(scope, timeout)
        with self._lock:
            removed = self._docs.pop((scope, ref), None)
        return DeleteResult(ref=ref, deleted=removed is not None)

    def inventory(self, *, scope: ProviderScope, timeout: float | None = None) -> Inventory:
        scope = self._open(scope, timeout)
        with self._lock:
            count = sum(1 for owner, _ in self._docs if owner == scope)
        return Inventory(
            provider_id=self.provider_id,
            available=True,
            corpus_present=count > 0,
            record_count=count,
            index_present=True,
        )

    def close(self) -> None:
        self._closed = True
