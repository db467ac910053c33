"""The in-memory fixture provider: a real SPI implementation for tests.

:class:`InMemoryProvider` keeps its documents per instance (never in a class-level
store), behind one lock (writes, deletes, searches and snapshots take it; a read
is one atomic dictionary lookup), and records every call it receives, so a test
can assert "this request made zero provider calls". Each scope keeps an inverted
index (term -> documents) built at write time, so a search costs the query's
postings only. Fault switches make it fail the way a real backend does, for
fail-open tests:

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

import functools
import hashlib
import math
import threading
import time
from typing import Any, Final, Self

import attrs

from reward_memory.digests import REF_HEX_LENGTH, canonical_json
from reward_memory.errors import ProviderConfigError, ProviderUnavailable, RecordValidationError
from reward_memory.providers.spi import (
    MAX_SEARCH_LIMIT,
    SPI_VERSION,
    DeleteResult,
    Inventory,
    ProviderScope,
    ReadResult,
    SearchResult,
    WriteResult,
    check_content,
    check_limit,
    check_query,
    check_scope,
    check_timeout,
)
from reward_memory.records._memo import check_token_memo
from reward_memory.testing._memory_faults import (
    _NO_FAULTS,
    OPERATIONS,
    Faults,
    Operation,
    ProviderCall,
    _call,
    _canonical,
    _corrupt,
    _FaultRestorer,
    _parse_option,
    _shown,
)
from reward_memory.testing._memory_index import (
    _NO_HITS,
    _Document,
    _query_terms,
    _Space,
    _terms,
)

__all__ = ["Faults", "InMemoryProvider", "Operation", "ProviderCall"]

_INF: Final = math.inf


def _quick_timeout(timeout: object) -> bool:
    """True for a valid positive finite timeout of an exact int/float type (the common case)."""
    kind = type(timeout)
    if kind is float:
        return 0.0 < timeout < _INF  # type: ignore[operator]  # NaN fails both comparisons
    return kind is int and timeout > 0  # type: ignore[operator]


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
            self._default_timeout = check_timeout(default_timeout)
        except RecordValidationError as exc:
            raise ProviderConfigError(f"option 'default_timeout' {exc.message}") from None
        if self._faults == _NO_FAULTS:
            self._faults = _NO_FAULTS  # identity marks "no fault switched on" (the fast path)
        self._lock = threading.Lock()
        # Per scope: its documents and inverted index (term -> write sequences).
        self._spaces: dict[ProviderScope, _Space] = {}
        # The scope object last looked up and its space (one attribute, read and
        # replaced whole): repeated calls with the same scope object skip hashing it.
        self._hot: tuple[object, _Space | None] = (None, None)
        # The call log, as raw (op, scope, target) entries: appending a tuple is the
        # whole per-call cost; ProviderCall records are built when the log is read.
        self._log_entries: list[tuple[Operation, object, object]] = []
        self._logged: list[ProviderCall] = []  # entries already turned into records
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
        pairs: list[tuple[str, str]] = []
        try:
            if query:  # urllib.parse (and the ipaddress it pulls in) only for a query string
                from urllib.parse import parse_qsl  # noqa: PLC0415

                pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=True)
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
            self._faults = _canonical(attrs.evolve(previous, **changes))
        return _FaultRestorer(self, previous)

    def _replace_faults(self, faults: Faults) -> None:
        with self._lock:
            self._faults = _canonical(faults)

    # -- the call log and snapshots ------------------------------------------------

    @property
    def calls(self) -> tuple[ProviderCall, ...]:
        """Every call received so far, oldest first (a snapshot)."""
        with self._lock:
            entries = self._log_entries
            logged = self._logged
            if len(logged) < len(entries):
                logged.extend(_call(*entry) for entry in entries[len(logged) :])
            return tuple(logged)

    def call_count(self, op: Operation | None = None) -> int:
        """How many calls were received in all, or of one operation."""
        if op is not None and op not in OPERATIONS:
            raise RecordValidationError(
                f"must be one of: {', '.join(sorted(OPERATIONS))}", path="$.op"
            )
        with self._lock:
            entries = tuple(self._log_entries)
        if op is None:
            return len(entries)
        return sum(1 for entry in entries if entry[0] == op)

    def call_counts(self) -> dict[str, int]:
        """Calls per operation (every operation present, zero when never called)."""
        counts = dict.fromkeys(sorted(OPERATIONS), 0)
        with self._lock:
            entries = tuple(self._log_entries)
        for entry in entries:
            counts[entry[0]] += 1
        return counts

    def documents(self, scope: ProviderScope) -> dict[str, str]:
        """The documents of ``scope`` as ``{ref: content}``, exactly as written (a copy)."""
        scope = check_scope(scope)
        with self._lock:
            space = self._spaces.get(scope)
            if space is None:
                return {}
            return {ref: document.content for ref, document in space.documents.items()}

    def scopes(self) -> tuple[ProviderScope, ...]:
        """Every scope that holds at least one document."""
        with self._lock:
            return tuple(scope for scope, space in self._spaces.items() if space.documents)

    def reset_calls(self) -> None:
        """Forget the call log (documents and faults are kept)."""
        with self._lock:
            self._log_entries.clear()
            self._logged.clear()

    def clear(self) -> None:
        """Forget every document and the call log (the fault switches are kept)."""
        with self._lock:
            self._spaces.clear()
            self._hot = (None, None)
            self._log_entries.clear()
            self._logged.clear()

    def handover(self) -> InMemoryProvider:
        """A new provider object over this one's documents; this one is closed (a restart).

        What a process restart is for a real store: the documents (refs, keys,
        contents, write order) and the fault switches carry over to the new
        object; the call log starts empty, and this object refuses every later
        operation, like a closed connection.
        """
        successor = type(self)(default_timeout=self._default_timeout)
        with self._lock:
            successor._faults = self._faults
            successor._sequence = self._sequence
            # Handed over, not copied: this object is closed in the same critical
            # section, and every write or delete re-checks that under the lock, so
            # nothing can change the spaces through it any more.
            successor._spaces, self._spaces = self._spaces, {}
            self._hot = (None, None)
            self._closed = True
        return successor

    def _take_back(self, successor: InMemoryProvider) -> None:
        """The documents of ``successor`` (made by :meth:`handover` of this object) come back
        here, and this object is open again; ``successor`` is closed. The evaluation restarts
        a caller's own provider object: afterwards the caller's object holds its store."""
        with successor._lock:
            spaces, sequence = successor._spaces, successor._sequence
            successor._spaces, successor._hot, successor._closed = {}, (None, None), True
        with self._lock:
            self._spaces, self._sequence, self._closed = spaces, sequence, False
            self._hot = (None, None)

    # -- the SPI ------------------------------------------------------------------------

    def write(
        self, *, scope: ProviderScope, key: str, content: str, timeout: float | None = None
    ) -> WriteResult:
        """Store ``content`` under ``key`` (idempotent); see the SPI for the statuses."""
        self._log_entries.append(("write", scope, key))
        scope = check_scope(scope)
        key = check_token_memo(key, "$.key")
        data = check_content(content)
        self._enter(timeout)
        space = self._space(scope)
        existing = None if space is None else space.by_key.get(key)
        if existing is not None:  # a replay: its ref and digest are known already
            same = existing.content == content
            return WriteResult(
                ref=existing.ref,
                status="unchanged" if same else "conflict",
                content_sha256=existing.digest,
            )
        ref = _memory_ref(scope, key)
        digest = hashlib.sha256(data).hexdigest()
        # Tokenised outside the lock: other threads' calls need not wait for it.
        document = _Document(ref=ref, key=key, content=content, digest=digest, sequence=0)
        terms = _terms(content)
        with self._lock:
            self._refuse_if_closed()  # closed (handed over) since _enter: its spaces are gone
            space = self._spaces.get(scope)
            if space is None:
                space = self._spaces[scope] = _Space()
            existing = space.by_key.get(key)
            if existing is not None:  # another thread wrote the key meanwhile
                same = existing.content == content
                return WriteResult(
                    ref=existing.ref,
                    status="unchanged" if same else "conflict",
                    content_sha256=existing.digest,
                )
            self._sequence += 1
            document.sequence = self._sequence
            space.add(document, terms)
        return WriteResult(ref=ref, status="created", content_sha256=digest)

    def read_key(
        self, *, scope: ProviderScope, key: str, timeout: float | None = None
    ) -> ReadResult:
        """What ``read`` gives for the ref a write of ``key`` answers with (optional capability).

        Logged as a ``read``; the fault switches apply as to ``read``.
        """
        self._log_entries.append(("read", scope, key))
        scope = check_scope(scope)
        key = check_token_memo(key, "$.key")
        faults = self._enter(timeout)
        space = self._space(scope)
        document = None if space is None else space.by_key.get(key)
        if document is None:
            return ReadResult(ref=_memory_ref(scope, key), found=False)
        if faults.corrupt_readback:
            return ReadResult(ref=document.ref, found=True, content=_corrupt(document.content))
        return document.readback

    def read(self, *, scope: ProviderScope, ref: str, timeout: float | None = None) -> ReadResult:
        """Return exactly what was written under ``ref`` in ``scope``, or not found."""
        self._log_entries.append(("read", scope, ref))
        if not isinstance(scope, ProviderScope):
            check_scope(scope)  # type: ignore[unreachable]  # untyped callers
        # Single dict lookups (atomic): a read needs no lock to see a consistent document.
        space = self._space(scope)
        document = None
        if space is not None and type(ref) is str:
            document = space.documents.get(ref)
        if document is None:
            ref = check_token_memo(ref, "$.ref")  # a stored ref is a valid token already
            if space is not None and type(ref) is not str:  # a str subclass: the same ref
                document = space.documents.get(ref)
        faults = self._enter(timeout)
        if document is None:
            return ReadResult(ref=ref, found=False)
        if faults.corrupt_readback:
            return ReadResult(ref=ref, found=True, content=_corrupt(document.content))
        return document.readback

    def search(
        self, *, scope: ProviderScope, query: str, limit: int, timeout: float | None = None
    ) -> SearchResult:
        """Rank the scope's documents by how many query terms they share (ties: oldest first)."""
        self._log_entries.append(("search", scope, query))
        if not isinstance(scope, ProviderScope):
            check_scope(scope)  # type: ignore[unreachable]  # untyped callers
        if type(query) is not str or not query.isascii():
            query = check_query(query)
        if type(limit) is not int or not 1 <= limit <= MAX_SEARCH_LIMIT:
            limit = check_limit(limit)
        faults = self._enter(timeout)
        wanted = _query_terms(query)
        space = self._space(scope)
        if not wanted or space is None:
            return _NO_HITS
        with self._lock:
            missed = space.last_written if faults.search_misses else None
            return space.search(wanted, limit, missed)

    def delete(
        self, *, scope: ProviderScope, ref: str, timeout: float | None = None
    ) -> DeleteResult:
        """Remove ``ref`` from ``scope``; a missing ref gives ``deleted=False``."""
        self._log_entries.append(("delete", scope, ref))
        scope = check_scope(scope)
        ref = check_token_memo(ref, "$.ref")
        self._enter(timeout)
        with self._lock:
            self._refuse_if_closed()
            space = self._spaces.get(scope)
            removed = None if space is None else space.remove(ref)
        return DeleteResult(ref=ref, deleted=removed is not None)

    def inventory(self, *, scope: ProviderScope, timeout: float | None = None) -> Inventory:
        """Report the scope's record count (an empty scope has no corpus and no index)."""
        self._log_entries.append(("inventory", scope, None))
        scope = check_scope(scope)
        self._enter(timeout)
        with self._lock:
            space = self._spaces.get(scope)
            count = 0 if space is None else len(space.documents)
        return Inventory(
            provider_id=self.provider_id,
            available=True,
            corpus_present=count > 0,
            record_count=count,
            index_present=count > 0,
        )

    def close(self) -> None:
        """Mark the provider closed: later operations raise ``ProviderUnavailable``."""
        self._log_entries.append(("close", None, None))
        with self._lock:
            self._closed = True

    # -- internals ------------------------------------------------------------------------

    def _space(self, scope: ProviderScope) -> _Space | None:
        """The space of ``scope``, or ``None`` before its first write."""
        hot = self._hot
        if hot[0] is scope:
            return hot[1]
        with self._lock:  # so that clear() cannot leave a stale hot entry behind
            space = self._spaces.get(scope)
            if space is not None:
                self._hot = (scope, space)
        return space

    def _refuse_if_closed(self) -> None:
        if self._closed:
            raise ProviderUnavailable("the in-memory provider is closed")

    def _enter(self, timeout: object) -> Faults:
        """Apply the fault switches to one call (after its arguments were checked)."""
        faults = self._faults  # one attribute read: switches are replaced whole, never mutated
        if timeout is None:
            limit = self._default_timeout
        elif _quick_timeout(timeout):
            limit = timeout  # type: ignore[assignment]  # checked: a positive finite number
        else:
            limit = check_timeout(timeout)
        if self._closed:
            raise ProviderUnavailable("the in-memory provider is closed")
        if faults is _NO_FAULTS:
            return faults
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


@functools.lru_cache(maxsize=256)
def _ref_seed(namespace: str, scope_ref: str, peer: str | None) -> Any:
    """sha256 fed with the canonical JSON of ``[namespace, scope_ref, peer,`` (the key follows)."""
    return hashlib.sha256(canonical_json([namespace, scope_ref, peer])[:-1] + b",")


def _memory_ref(scope: ProviderScope, key: str) -> str:
    """``make_ref("memory", [namespace, scope_ref, peer, key])``, hashing the scope part once.

    Compact canonical JSON writes a list as ``[`` + its items joined by ``,`` + ``]``,
    so the scope's items are the same leading bytes for every key of the scope.
    """
    hasher = _ref_seed(scope.namespace, scope.scope_ref, scope.actor_peer_id).copy()
    hasher.update(canonical_json(key) + b"]")
    digest: str = hasher.hexdigest()
    return "memory:" + digest[:REF_HEX_LENGTH]
