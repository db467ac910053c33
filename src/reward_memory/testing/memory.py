"""The in-memory fixture provider: a real SPI implementation for tests.

:class:`InMemoryProvider` keeps its documents per instance (never in a class-level
store), behind one lock, and records every call it receives, so a test can
assert "this request made zero provider calls". Fault switches make it fail the
way a real backend does, for fail-open tests:

======================  =====================================================
``unavailable``         every operation raises ``ProviderUnavailable``
``times_out``           every operation raises ``ProviderUnavailable`` with
                        ``reason_code="provider_timeout"``
``slow_seconds``        every operation first waits this long; when that is
                        longer than the call's timeout it waits the timeout,
                        then raises ``ProviderUnavailable`` (``provider_timeout``)
``corrupt_readback``    ``read`` returns content that differs from what was
                        written (``documents()`` still shows the truth)
``search_misses``       ``search`` never returns the document written last in
                        the scope (an index that has not caught up)
======================  =====================================================

Switches are constructor options (also in the URL: ``memory://?unavailable=true``)
and can be changed for a block, restoring the previous state afterwards::

    provider = InMemoryProvider()
    with provider.set_faults(unavailable=True):
        ...  # every call raises ProviderUnavailable
    # back to normal

This module never imports pytest.
"""

from __future__ import annotations

import heapq
import math
import re
import threading
import time
from typing import TYPE_CHECKING, Any, Final, Literal, Self, get_args
from urllib.parse import parse_qsl

import attrs

from reward_memory.digests import make_ref, sha256_hex
from reward_memory.errors import ProviderConfigError, ProviderUnavailable, RecordValidationError
from reward_memory.grammars import check_token
from reward_memory.providers.spi import (
    MAX_CONTENT_BYTES,
    SPI_VERSION,
    DeleteResult,
    Inventory,
    ProviderScope,
    ReadResult,
    SearchHit,
    SearchResult,
    WriteResult,
    check_limit,
)
from reward_memory.records import _fields as f

if TYPE_CHECKING:
    from types import TracebackType

__all__ = ["Faults", "InMemoryProvider", "Operation", "ProviderCall"]

Operation = Literal["write", "read", "search", "delete", "inventory", "close"]
OPERATIONS: Final = frozenset(get_args(Operation))
SUMMARY_LENGTH: Final = 160
_TERMS: Final = re.compile(r"\w+")
_TRUE: Final = frozenset({"1", "true", "yes", "on"})
_FALSE: Final = frozenset({"0", "false", "no", "off"})


def _seconds(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value < 0
    ):
        raise RecordValidationError(
            "must be a finite, non-negative number of seconds",
            path=f"$.{attribute.name}",
            code="invalid_value",
        )


@attrs.frozen(kw_only=True)
class Faults:
    """The fault switches of one :class:`InMemoryProvider` (see the module docs)."""

    unavailable: bool = f.strict_bool(default=False)
    times_out: bool = f.strict_bool(default=False)
    slow_seconds: float = attrs.field(default=0.0, validator=_seconds)
    corrupt_readback: bool = f.strict_bool(default=False)
    search_misses: bool = f.strict_bool(default=False)


@attrs.frozen(kw_only=True)
class ProviderCall:
    """One call the provider received: the operation, the scope, and its key/ref/query.

    ``scope`` is ``None`` for ``close`` and for a call whose scope was not a
    :class:`ProviderScope`. ``target`` is the key (write), the ref (read,
    delete), the query (search), or ``None``.
    """

    op: Operation
    scope: ProviderScope | None
    target: str | None = None


@attrs.frozen(kw_only=True)
class _Document:
    key: str
    content: str
    sequence: int
    # Derived at write time so search costs only the query's postings.
    terms: frozenset[str]
    summary: str


class _FaultRestorer:
    """Returned by :meth:`InMemoryProvider.set_faults`; restores the old switches on exit."""

    def __init__(self, provider: InMemoryProvider, previous: Faults) -> None:
        self._provider = provider
        self._previous = previous

    def __enter__(self) -> Faults:
        return self._provider.faults

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._provider._replace_faults(self._previous)


def _check_scope(scope: object) -> ProviderScope:
    if not isinstance(scope, ProviderScope):
        raise RecordValidationError("must be a ProviderScope", path="$.scope", code="wrong_type")
    return scope


def _check_content(content: object) -> str:
    if not isinstance(content, str):
        raise RecordValidationError("must be a string", path="$.content", code="wrong_type")
    try:
        size = len(content.encode("utf-8"))
    except UnicodeEncodeError:
        raise RecordValidationError(
            "must be encodable as UTF-8 (no lone surrogates)",
            path="$.content",
            code="invalid_value",
        ) from None
    if size > MAX_CONTENT_BYTES:
        raise RecordValidationError(
            f"is {size} bytes, over the limit of {MAX_CONTENT_BYTES}; it is rejected, "
            "not truncated",
            path="$.content",
            code="text_too_long",
        )
    return content


def _check_query(query: object) -> str:
    if not isinstance(query, str):
        raise RecordValidationError("must be a string", path="$.query", code="wrong_type")
    return query


def _check_timeout(timeout: object) -> float | None:
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


def _terms(text: str) -> set[str]:
    return set(_TERMS.findall(text.casefold()))


def _summary(content: str) -> str:
    return " ".join(content.split())[:SUMMARY_LENGTH]


def _corrupt(content: str) -> str:
    # Always different from the original, whatever it was (the empty string included).
    return "\ufffdcorrupted\ufffd" + content[::-1]


class InMemoryProvider:
    """An in-memory provider (id ``memory``) with a call log and fault switches.

    Args:
        unavailable: every operation raises ``ProviderUnavailable``.
        times_out: every operation raises ``ProviderUnavailable`` (``provider_timeout``).
        slow_seconds: every operation waits this long first (see the module docs).
        corrupt_readback: ``read`` returns altered content.
        search_misses: ``search`` leaves out the document written last in the scope.
        default_timeout: the timeout for calls that pass ``timeout=None``
            (``None``: no limit).

    .. versionadded:: 0.1.0
    """

    provider_id: str = "memory"
    spi_version: int = SPI_VERSION

    def __init__(
        self,
        *,
        unavailable: bool = False,
        times_out: bool = False,
        slow_seconds: float = 0.0,
        corrupt_readback: bool = False,
        search_misses: bool = False,
        default_timeout: float | None = None,
    ) -> None:
        try:
            self._faults = Faults(
                unavailable=unavailable,
                times_out=times_out,
                slow_seconds=slow_seconds,
                corrupt_readback=corrupt_readback,
                search_misses=search_misses,
            )
        except RecordValidationError as exc:
            raise ProviderConfigError(f"option {exc.path[2:]!r} {exc.message}") from None
        try:
            self._default_timeout = _check_timeout(default_timeout)
        except RecordValidationError as exc:
            raise ProviderConfigError(f"option 'default_timeout' {exc.message}") from None
        self._lock = threading.Lock()
        self._documents: dict[ProviderScope, dict[str, _Document]] = {}
        # Per-scope inverted index: term -> refs of the documents holding it.
        self._postings: dict[ProviderScope, dict[str, set[str]]] = {}
        self._last_written: dict[ProviderScope, str] = {}
        self._calls: list[ProviderCall] = []
        self._sequence = 0
        self._closed = False

    # -- construction from a URL ----------------------------------------------------

    @classmethod
    def from_url(cls, url: str) -> Self:
        """Build from ``memory://`` with options in the query (``memory://?slow_seconds=0.5``).

        Raises:
            ProviderConfigError: another scheme, a location, a fragment, or a bad option.
        """
        prefix = f"{cls.provider_id}://"
        if not isinstance(url, str) or not url.startswith(prefix):
            raise ProviderConfigError(f"a {cls.provider_id} provider URL starts with {prefix}")
        rest = url[len(prefix) :]
        location, _, query = rest.partition("?")
        if location or "#" in query:
            raise ProviderConfigError(f"{prefix} takes no location or fragment, only query options")
        try:
            pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query))
        except ValueError:
            raise ProviderConfigError("the URL's query string is malformed") from None
        options: dict[str, Any] = {}
        for name, raw in pairs:
            if name in options:
                raise ProviderConfigError(f"option {_shown(name)} is given twice")
            options[name] = _parse_option(name, raw)
        return cls(**options)

    # -- fault switches ---------------------------------------------------------------

    @property
    def faults(self) -> Faults:
        """The current fault switches."""
        with self._lock:
            return self._faults

    def set_faults(
        self,
        *,
        unavailable: bool | None = None,
        times_out: bool | None = None,
        slow_seconds: float | None = None,
        corrupt_readback: bool | None = None,
        search_misses: bool | None = None,
    ) -> _FaultRestorer:
        """Change some fault switches now (``None`` leaves one as it is).

        The return value is a context manager: leaving the ``with`` block restores
        the switches as they were before this call, even on error.
        """
        changes: dict[str, Any] = {
            name: value
            for name, value in (
                ("unavailable", unavailable),
                ("times_out", times_out),
                ("slow_seconds", slow_seconds),
                ("corrupt_readback", corrupt_readback),
                ("search_misses", search_misses),
            )
            if value is not None
        }
        with self._lock:
            previous = self._faults
            self._faults = attrs.evolve(previous, **changes)
        return _FaultRestorer(self, previous)

    def _replace_faults(self, faults: Faults) -> None:
        with self._lock:
            self._faults = faults

    # -- the call log and snapshots ------------------------------------------------

    @property
    def calls(self) -> tuple[ProviderCall, ...]:
        """Every call received so far, oldest first (a snapshot)."""
        with self._lock:
            return tuple(self._calls)

    def call_count(self, op: Operation | None = None) -> int:
        """How many calls were received in all, or of one operation."""
        if op is not None and op not in OPERATIONS:
            raise RecordValidationError(
                f"must be one of: {', '.join(sorted(OPERATIONS))}", path="$.op"
            )
        with self._lock:
            return sum(1 for call in self._calls if op is None or call.op == op)

    def call_counts(self) -> dict[str, int]:
        """Calls per operation (every operation present, zero when never called)."""
        counts = dict.fromkeys(sorted(OPERATIONS), 0)
        for call in self.calls:
            counts[call.op] += 1
        return counts

    def documents(self, scope: ProviderScope) -> dict[str, str]:
        """The documents of ``scope`` as ``{ref: content}``, exactly as written (a copy)."""
        scope = _check_scope(scope)
        with self._lock:
            stored = self._documents.get(scope, {})
            return {ref: document.content for ref, document in stored.items()}

    def scopes(self) -> tuple[ProviderScope, ...]:
        """Every scope that holds at least one document."""
        with self._lock:
            return tuple(scope for scope, stored in self._documents.items() if stored)

    def reset_calls(self) -> None:
        """Forget the call log (documents and faults are kept)."""
        with self._lock:
            self._calls.clear()

    def clear(self) -> None:
        """Forget every document and the call log (the fault switches are kept)."""
        with self._lock:
            self._documents.clear()
            self._postings.clear()
            self._last_written.clear()
            self._calls.clear()

    # -- the SPI ------------------------------------------------------------------------

    def write(
        self, *, scope: ProviderScope, key: str, content: str, timeout: float | None = None
    ) -> WriteResult:
        """Store ``content`` under ``key`` (idempotent); see the SPI for the statuses."""
        self._log("write", scope, key)
        scope = _check_scope(scope)
        key = check_token(key, "$.key")
        content = _check_content(content)
        self._enter(timeout)
        ref = make_ref("memory", [scope.namespace, scope.scope_ref, scope.actor_peer_id, key])
        digest = sha256_hex(content)
        with self._lock:
            stored = self._documents.setdefault(scope, {})
            existing = stored.get(ref)
            if existing is not None:
                same = existing.content == content
                return WriteResult(
                    ref=ref,
                    status="unchanged" if same else "conflict",
                    content_sha256=sha256_hex(existing.content),
                )
            self._sequence += 1
            terms = frozenset(_terms(content))
            stored[ref] = _Document(
                key=key,
                content=content,
                sequence=self._sequence,
                terms=terms,
                summary=_summary(content),
            )
            postings = self._postings.setdefault(scope, {})
            for term in terms:
                postings.setdefault(term, set()).add(ref)
            self._last_written[scope] = ref
        return WriteResult(ref=ref, status="created", content_sha256=digest)

    def read(self, *, scope: ProviderScope, ref: str, timeout: float | None = None) -> ReadResult:
        """Return exactly what was written under ``ref`` in ``scope``, or not found."""
        self._log("read", scope, ref)
        scope = _check_scope(scope)
        ref = check_token(ref, "$.ref")
        faults = self._enter(timeout)
        with self._lock:
            document = self._documents.get(scope, {}).get(ref)
        if document is None:
            return ReadResult(ref=ref, found=False)
        content = _corrupt(document.content) if faults.corrupt_readback else document.content
        return ReadResult(ref=ref, found=True, content=content)

    def search(
        self, *, scope: ProviderScope, query: str, limit: int, timeout: float | None = None
    ) -> SearchResult:
        """Rank the scope's documents by how many query terms they share (ties: oldest first)."""
        self._log("search", scope, query if isinstance(query, str) else None)
        scope = _check_scope(scope)
        query = _check_query(query)
        limit = check_limit(limit)
        faults = self._enter(timeout)
        wanted = _terms(query)
        if not wanted:
            return SearchResult()
        with self._lock:
            stored = self._documents.get(scope, {})
            postings = self._postings.get(scope, {})
            missed = self._last_written.get(scope) if faults.search_misses else None
            overlap: dict[str, int] = {}
            for term in wanted:
                for ref in postings.get(term, ()):
                    overlap[ref] = overlap.get(ref, 0) + 1
            ranked = heapq.nsmallest(
                limit,
                (
                    (-count, stored[ref].sequence, ref)
                    for ref, count in overlap.items()
                    if ref != missed
                ),
            )
            hits = tuple(
                SearchHit(ref=ref, summary=stored[ref].summary, score=float(-negative))
                for negative, _, ref in ranked
            )
        return SearchResult(hits=hits)

    def delete(
        self, *, scope: ProviderScope, ref: str, timeout: float | None = None
    ) -> DeleteResult:
        """Remove ``ref`` from ``scope``; a missing ref gives ``deleted=False``."""
        self._log("delete", scope, ref)
        scope = _check_scope(scope)
        ref = check_token(ref, "$.ref")
        self._enter(timeout)
        with self._lock:
            stored = self._documents.get(scope, {})
            removed = stored.pop(ref, None)
            if removed is not None:
                postings = self._postings.get(scope, {})
                for term in removed.terms:
                    holders = postings.get(term)
                    if holders is not None:
                        holders.discard(ref)
                        if not holders:
                            del postings[term]
            if removed is not None and self._last_written.get(scope) == ref:
                del self._last_written[scope]
        return DeleteResult(ref=ref, deleted=removed is not None)

    def inventory(self, *, scope: ProviderScope, timeout: float | None = None) -> Inventory:
        """Report the scope's record count (an empty scope has no corpus and no index)."""
        self._log("inventory", scope)
        scope = _check_scope(scope)
        self._enter(timeout)
        with self._lock:
            count = len(self._documents.get(scope, {}))
        return Inventory(
            provider_id=self.provider_id,
            available=True,
            corpus_present=count > 0,
            record_count=count,
            index_present=count > 0,
        )

    def close(self) -> None:
        """Mark the provider closed: later operations raise ``ProviderUnavailable``."""
        self._log("close", None)
        with self._lock:
            self._closed = True

    # -- internals ------------------------------------------------------------------------

    def _log(self, op: Operation, scope: object, target: str | None = None) -> None:
        call = ProviderCall(
            op=op,
            scope=scope if isinstance(scope, ProviderScope) else None,
            target=target if isinstance(target, str) else None,
        )
        with self._lock:
            self._calls.append(call)

    def _enter(self, timeout: object) -> Faults:
        """Apply the fault switches to one call (after its arguments were checked)."""
        limit = _check_timeout(timeout)
        if limit is None:
            limit = self._default_timeout
        with self._lock:
            faults = self._faults
            closed = self._closed
        if closed:
            raise ProviderUnavailable("the in-memory provider is closed")
        if faults.unavailable:
            raise ProviderUnavailable("the in-memory provider is switched to unavailable")
        if faults.times_out:
            raise ProviderUnavailable(
                "the in-memory provider is switched to time out", reason_code="provider_timeout"
            )
        if faults.slow_seconds:
            if limit is not None and faults.slow_seconds > limit:
                time.sleep(limit)
                raise ProviderUnavailable(
                    f"the in-memory provider did not answer within {limit:g} s",
                    reason_code="provider_timeout",
                )
            time.sleep(faults.slow_seconds)
        return faults


def _shown(name: str) -> str:
    return repr(name) if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,63}", name) else "(unnamed)"


_BOOL_OPTIONS: Final = frozenset({"unavailable", "times_out", "corrupt_readback", "search_misses"})
_SECONDS_OPTIONS: Final = frozenset({"slow_seconds", "default_timeout"})


def _parse_option(name: str, raw: str) -> Any:
    if name in _BOOL_OPTIONS:
        word = raw.strip().lower()
        if word in _TRUE:
            return True
        if word in _FALSE:
            return False
        raise ProviderConfigError(f"option {name!r} must be true or false")
    if name in _SECONDS_OPTIONS:
        try:
            value = float(raw)
        except ValueError:
            raise ProviderConfigError(f"option {name!r} must be a number of seconds") from None
        if not math.isfinite(value) or value < 0:
            raise ProviderConfigError(f"option {name!r} must be a non-negative number of seconds")
        return value
    accepted = ", ".join(sorted(_BOOL_OPTIONS | _SECONDS_OPTIONS))
    raise ProviderConfigError(
        f"unknown option {_shown(name)} for provider 'memory'; it accepts: {accepted}"
    )
