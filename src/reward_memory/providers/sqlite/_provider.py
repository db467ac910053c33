"""The :class:`SQLiteProvider` class: the SPI operations over the store (see the package docs)."""

from __future__ import annotations

import hashlib
import os
import re
import sqlite3
from typing import TYPE_CHECKING, Final, NamedTuple, Self

from reward_memory.errors import ProviderConfigError, RecordValidationError
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
    check_scope,
    check_timeout,
)
from reward_memory.providers.sqlite import _erase, _search
from reward_memory.providers.sqlite._connection import _Store, is_busy, is_readonly
from reward_memory.providers.sqlite._erase import ERASE_FLAG, MARK_ERASE
from reward_memory.providers.sqlite._options import (
    DEFAULT_BUSY_TIMEOUT_MS,
    DEFAULT_TIMEOUT,
    OPTIONS,
    Synchronous,
    _checked_busy,
    _checked_path,
    _checked_synchronous,
    _checked_timeout,
    _shown,
    default_path,
    url_options,
)
from reward_memory.providers.sqlite._schema import (
    COUNT,
    DELETE_TERMS,
    INSERT_DOCUMENT,
    INSERT_TERMS,
    PENDING,
    SELECT_CONTENT,
    SELECT_DIGEST,
    SELECT_FOR_DELETE,
    SELECT_SCOPE,
)
from reward_memory.providers.sqlite._terms import index_text, query_terms, terms

if TYPE_CHECKING:
    from collections.abc import Iterable
    from types import TracebackType

#: Documents indexed per statement batch when a search catches up on ``pending``.
INDEX_CHUNK: Final = 2000
#: How long a search waits for the write lock to index pending documents first.
CATCH_UP_WAIT_MS: Final = 2
REF_PREFIX: Final = _search.REF_PREFIX
_REF: Final = re.compile(r"sqlite:([0-9a-f]{32})")
_REF_DOMAIN: Final = b"reward-memory/sqlite/ref/v1\n"


class _Item(NamedTuple):
    """One validated document on its way into :meth:`SQLiteProvider._write`."""

    key: str
    ref: bytes
    content: str
    digest: bytes


def _prepare(skey: tuple[str, str, str], key: str, content: str) -> _Item:
    checked = check_token(key, "$.key")
    digest = hashlib.sha256(check_content(content)).digest()
    return _Item(key=checked, ref=_ref_digest(skey, checked), content=content, digest=digest)


def _scope_key(scope: ProviderScope) -> tuple[str, str, str]:
    return (scope.namespace, scope.scope_ref, scope.actor_peer_id or "")


def _ref_digest(scope: tuple[str, str, str], key: str) -> bytes:
    # Tokens never hold a newline and are never empty, so the join is unambiguous
    # and the empty peer can only mean "no peer".
    material = _REF_DOMAIN + "\n".join((*scope, key)).encode("utf-8")
    return hashlib.sha256(material).digest()[:16]


def _parse_ref(ref: object) -> bytes | None:
    """The digest of one of this provider's refs; ``None`` for anything else."""
    match = _REF.fullmatch(ref) if isinstance(ref, str) else None
    return None if match is None else bytes.fromhex(match.group(1))


class SQLiteProvider(_Store):
    """The embedded SQLite provider (id ``sqlite``); see the module docs for the design.

    Args:
        path: the database file (default: :func:`default_path`). Relative paths are
            resolved against the working directory at construction.
        timeout: seconds a call may take when it passes ``timeout=None`` (default 10).
        busy_timeout_ms: how long SQLite waits for another process's lock before
            this provider retries (default 5000; never longer than the call's timeout).
        synchronous: ``"normal"`` (default), ``"full"`` or ``"extra"`` (see Durability).

    Raises:
        ProviderConfigError: an unknown option, or an option value it cannot use.

    .. versionadded:: 0.1.0
    """

    provider_id: str = "sqlite"
    spi_version: int = SPI_VERSION

    def __init__(
        self,
        *,
        path: str | os.PathLike[str] | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS,
        synchronous: Synchronous = "normal",
        **unknown: object,
    ) -> None:
        for name in unknown:
            raise ProviderConfigError(
                f"unknown option {_shown(name)} for provider 'sqlite'; "
                f"it accepts: {', '.join(OPTIONS)}"
            )
        super().__init__(
            timeout=_checked_timeout(timeout, "timeout"),
            busy_ms=_checked_busy(busy_timeout_ms),
            synchronous=_checked_synchronous(synchronous),
            path=default_path() if path is None else _checked_path(path),
        )

    @classmethod
    def from_url(cls, url: str) -> Self:
        """Build from ``sqlite://`` (default location) or ``sqlite:///abs/path.db?opt=v``.

        Raises:
            ProviderConfigError: another scheme, a host, a relative or directory path,
                a fragment, a malformed query, or an unknown or invalid option. Nothing
                is created on disk in any case.
        """
        return cls(**url_options(url))

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return f"<SQLiteProvider {state}>"  # the path is deliberately not shown

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    # -- the SPI ------------------------------------------------------------------------

    def write(
        self, *, scope: ProviderScope, key: str, content: str, timeout: float | None = None
    ) -> WriteResult:
        """Store ``content`` under ``key`` (idempotent); durable before it returns."""
        scope = check_scope(scope)
        skey = _scope_key(scope)
        (result,) = self._write_prepared(
            skey, [_prepare(skey, key, content)], check_timeout(timeout)
        )
        return result

    def write_many(
        self,
        *,
        scope: ProviderScope,
        items: Iterable[tuple[str, str]],
        timeout: float | None = None,
    ) -> tuple[WriteResult, ...]:
        """Write several documents of one scope in a single transaction (bulk loads).

        Each item is ``(key, content)`` with :meth:`write`'s semantics; a key that
        repeats within the batch is ``unchanged`` or ``conflict`` like a later call.
        Everything is validated before anything is written; all or nothing commits.
        """
        scope = check_scope(scope)
        limit = check_timeout(timeout)
        skey = _scope_key(scope)
        try:
            iterator = iter(items)
        except TypeError:
            raise RecordValidationError(
                "must be an iterable of (key, content) pairs", path="$.items", code="wrong_type"
            ) from None
        prepared: list[_Item] = []
        for index, item in enumerate(iterator):
            if not isinstance(item, tuple) or len(item) != 2:
                raise RecordValidationError(
                    "must be a (key, content) pair", path=f"$.items[{index}]", code="wrong_type"
                )
            try:
                prepared.append(_prepare(skey, *item))
            except RecordValidationError as exc:
                raise exc.under(f"items[{index}]") from None
        if not prepared:  # nothing to write, but a closed provider still says so
            self.check_open()
            return ()
        return self._write_prepared(skey, prepared, limit)

    def _write_prepared(
        self, skey: tuple[str, str, str], items: list[_Item], limit: float | None
    ) -> tuple[WriteResult, ...]:
        statuses = self._call(limit, create=True, op=lambda c: self._write(c, skey, items))
        return tuple(
            WriteResult(ref=REF_PREFIX + item.ref.hex(), status=status, content_sha256=digest.hex())
            for item, (status, digest) in zip(items, statuses, strict=True)
        )

    def read_key(
        self, *, scope: ProviderScope, key: str, timeout: float | None = None
    ) -> ReadResult:
        """What :meth:`read` gives for the ref a write of ``key`` answers with (one lookup)."""
        scope = check_scope(scope)
        skey = _scope_key(scope)
        digest = _ref_digest(skey, check_token(key, "$.key"))
        return self._read(skey, REF_PREFIX + digest.hex(), digest, check_timeout(timeout))

    def read(self, *, scope: ProviderScope, ref: str, timeout: float | None = None) -> ReadResult:
        """The exact content stored under ``ref`` in ``scope``, or ``found=False``."""
        scope = check_scope(scope)
        digest = _parse_ref(ref)
        if digest is None:
            ref = check_token(ref, "$.ref")
        return self._read(_scope_key(scope), ref, digest, check_timeout(timeout))

    def _read(
        self, skey: tuple[str, str, str], ref: str, digest: bytes | None, limit: float | None
    ) -> ReadResult:
        def op(conn: sqlite3.Connection) -> str | None:
            scope_id = self._scope_id(conn, skey)
            if scope_id is None or digest is None:
                return None
            rows = conn.execute(SELECT_CONTENT, (scope_id, digest)).fetchall()
            return str(rows[0][0]) if rows else None

        content = self._call(limit, create=False, op=op, empty=lambda: None)
        if content is None:
            return ReadResult(ref=ref, found=False)
        return ReadResult(ref=ref, found=True, content=content)

    def search(
        self, *, scope: ProviderScope, query: str, limit: int, timeout: float | None = None
    ) -> SearchResult:
        """At most ``limit`` hits from ``scope``, best first (see the module docs)."""
        scope = check_scope(scope)
        query = check_query(query)
        limit = check_limit(limit)
        call_limit = check_timeout(timeout)
        skey = _scope_key(scope)
        wanted = query_terms(query)

        def op(conn: sqlite3.Connection) -> tuple[SearchHit, ...]:
            scope_id = self._scope_id(conn, skey)
            if scope_id is None or not wanted:
                return ()
            self._catch_up(conn)
            return _search.search(conn, scope_id, wanted, limit)

        hits = self._call(call_limit, create=False, op=op, empty=lambda: ())
        return SearchResult(hits=hits)

    def delete(
        self, *, scope: ProviderScope, ref: str, timeout: float | None = None
    ) -> DeleteResult:
        """Remove ``ref`` from ``scope``; a missing ref gives ``deleted=False``."""
        scope = check_scope(scope)
        digest = _parse_ref(ref)
        if digest is None:
            ref = check_token(ref, "$.ref")
        limit = check_timeout(timeout)
        skey = _scope_key(scope)

        deleted = False

        def op(conn: sqlite3.Connection) -> bool:
            nonlocal deleted
            # Kept across _call's retries: when the erase after the delete's commit meets
            # a busy lock, the retry finds nothing left to delete but must still say so.
            scope_id = self._scope_id(conn, skey)
            deleted = deleted or (
                scope_id is not None
                and digest is not None
                and bool(conn.execute(SELECT_DIGEST, (scope_id, digest)).fetchall())
                and self._delete(conn, scope_id, digest)
            )
            self._erase(conn)  # also when nothing was found: a retry finishes an earlier erase
            return deleted

        found = self._call(limit, create=False, op=op, empty=lambda: False)
        return DeleteResult(ref=ref, deleted=found)

    def inventory(self, *, scope: ProviderScope, timeout: float | None = None) -> Inventory:
        """Availability, corpus presence, record count and index presence for ``scope``."""
        scope = check_scope(scope)
        limit = check_timeout(timeout)
        skey = _scope_key(scope)

        def op(conn: sqlite3.Connection) -> Inventory:
            rows = conn.execute(
                "SELECT record_count FROM scopes WHERE namespace = ? AND scope_ref = ? "
                "AND peer = ?",
                skey,
            ).fetchall()
            index = conn.execute(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?",
                ("documents_fts",),
            ).fetchall()
            return Inventory(
                provider_id=self.provider_id,
                available=True,
                corpus_present=bool(rows),
                record_count=int(rows[0][0]) if rows else 0,
                index_present=bool(index[0][0]),
            )

        def empty() -> Inventory:
            return Inventory(
                provider_id=self.provider_id,
                available=True,
                corpus_present=False,
                record_count=0,
                index_present=False,
            )

        return self._call(limit, create=False, op=op, empty=empty)

    def close(self) -> None:
        """Close the connection; every later call raises ``ProviderUnavailable``."""
        with self._lock:
            self._closed = True
            conn, self._conn = self._conn, None
            if conn is not None:
                if self._pid == os.getpid():
                    conn.close()
                else:  # inherited through fork: the parent's to close, never finalise it here
                    self._orphans.append(conn)

    # -- maintenance ----------------------------------------------------------------------

    def optimize(self, *, timeout: float | None = None) -> None:
        """Merge the full-text index into one segment and refresh planner statistics.

        Optional housekeeping (after a bulk load, or from an operator job): search
        is correct without it, and somewhat faster after it.
        """
        limit = check_timeout(timeout)

        def op(conn: sqlite3.Connection) -> None:
            self._catch_up(conn)
            conn.execute("INSERT INTO documents_fts (documents_fts) VALUES ('optimize')")
            conn.execute("PRAGMA optimize")
            # RESTART, not TRUNCATE: the next write trims the WAL to journal_size_limit
            # and then reuses its blocks; a truncated WAL grows again, and every fsync
            # of a growing file also commits the new file size (about twice as slow).
            conn.execute("PRAGMA wal_checkpoint(RESTART)").fetchall()

        self._call(limit, create=False, op=op, empty=lambda: None)

    # -- operations (run under the lock, inside _call) ------------------------------------

    def _write(
        self,
        conn: sqlite3.Connection,
        skey: tuple[str, str, str],
        items: list[_Item],
    ) -> list[tuple[WriteStatus, bytes]]:
        scope_id = self._scope_ids.get(skey)
        conn.execute("BEGIN IMMEDIATE")
        try:
            if scope_id is None:
                scope_id = self._create_scope(conn, skey)
            results: list[tuple[WriteStatus, bytes]] = []
            created = newest = 0
            for key, ref, content, digest in items:
                cursor = conn.execute(INSERT_DOCUMENT, (scope_id, ref, digest, key, content))
                if cursor.rowcount != 1:  # the key is taken: same content or a conflict
                    rows = conn.execute(SELECT_DIGEST, (scope_id, ref)).fetchall()
                    stored = bytes(rows[0][0])
                    results.append(("unchanged" if stored == digest else "conflict", stored))
                    continue
                newest = int(cursor.lastrowid or 0)
                # Indexed in the same transaction: a search sees every acknowledged write
                # and never has to write itself (see "Indexing").
                conn.execute(INSERT_TERMS, (newest, index_text(scope_id, terms(content))))
                results.append(("created", digest))
                created += 1
            if created:
                conn.execute(COUNT, (created, newest, scope_id))
            self._commit(conn)
        except BaseException:
            self._rollback(conn)
            raise
        return results

    def _index_pending(self, conn: sqlite3.Connection) -> None:
        """Index every pending document (inside the caller's write transaction)."""
        while True:
            rows = conn.execute(PENDING, (INDEX_CHUNK,)).fetchall()
            for doc_id, scope_id, content in rows:
                conn.execute(INSERT_TERMS, (doc_id, index_text(scope_id, terms(content))))
            if not rows:
                return
            conn.execute("DELETE FROM pending WHERE id <= ?", (rows[-1][0],))

    def _catch_up(self, conn: sqlite3.Connection) -> None:
        """Index what is pending before a search, if the write lock is free.

        The index is derived data, so this transaction skips the fsync: if power
        fails before a later write syncs the WAL, it is lost together with the
        ``pending`` rows it cleared, and simply done again. A search never queues
        behind writers: when another connection holds the write lock for longer
        than :data:`CATCH_UP_WAIT_MS`, or the store is read-only, the search answers
        from the index as it stands.
        """
        if not conn.execute("SELECT EXISTS (SELECT 1 FROM pending)").fetchone()[0]:
            return
        conn.execute(f"PRAGMA busy_timeout = {CATCH_UP_WAIT_MS}")
        durable = self._synchronous != "normal"
        if durable:
            conn.execute("PRAGMA synchronous = NORMAL")
        try:
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as exc:
                if is_busy(exc) or is_readonly(exc):
                    return
                raise
            try:
                self._index_pending(conn)
                self._commit(conn)
            except sqlite3.OperationalError as exc:
                self._rollback(conn)
                if not is_readonly(exc):
                    raise
            except BaseException:
                self._rollback(conn)
                raise
        finally:
            try:
                if durable:
                    conn.execute(f"PRAGMA synchronous = {self._synchronous.upper()}")
                conn.execute(f"PRAGMA busy_timeout = {self._busy_set}")
            except sqlite3.Error:
                self._discard()  # never keep a connection that might not fsync its writes
                raise

    def _delete(self, conn: sqlite3.Connection, scope_id: int, digest: bytes) -> bool:
        conn.execute("BEGIN IMMEDIATE")
        try:
            rows = conn.execute(SELECT_FOR_DELETE, (scope_id, digest)).fetchall()
            if not rows:
                self._rollback(conn)
                return False
            doc_id, content = rows[0]
            conn.execute("DELETE FROM documents WHERE id = ?", (doc_id,))
            if conn.execute("DELETE FROM pending WHERE id = ?", (doc_id,)).rowcount != 1:
                # Indexed already: a contentless delete names exactly the terms it indexed,
                # and the terms stay in the old segments until they are merged (_erase).
                conn.execute(DELETE_TERMS, (doc_id, index_text(scope_id, terms(content))))
                conn.execute(MARK_ERASE, (ERASE_FLAG,))
            conn.execute(COUNT, (-1, 0, scope_id))
            self._commit(conn)
        except BaseException:
            self._rollback(conn)
            raise
        return True

    def _erase(self, conn: sqlite3.Connection) -> None:
        """Leave no copy of deleted content in the index or the WAL (see ``_erase``)."""
        if _erase.index_erase_pending(conn):
            conn.execute("BEGIN IMMEDIATE")
            try:
                _erase.merge_index(conn)
                self._commit(conn)
            except BaseException:
                self._rollback(conn)
                raise
        _erase.truncate_log(conn, self._deadline)

    # -- scopes --------------------------------------------------------------------------

    def _scope_id(self, conn: sqlite3.Connection, skey: tuple[str, str, str]) -> int | None:
        scope_id = self._scope_ids.get(skey)
        if scope_id is None:
            rows = conn.execute(SELECT_SCOPE, skey).fetchall()
            if rows:
                scope_id = int(rows[0][0])
                self._scope_ids[skey] = scope_id  # scopes are never deleted: safe to cache
        return scope_id

    def _create_scope(self, conn: sqlite3.Connection, skey: tuple[str, str, str]) -> int:
        rows = conn.execute(SELECT_SCOPE, skey).fetchall()
        if rows:
            scope_id = int(rows[0][0])
        else:
            cursor = conn.execute(
                "INSERT INTO scopes (namespace, scope_ref, peer) VALUES (?, ?, ?)", skey
            )
            scope_id = int(cursor.lastrowid or 0)
        # Cached only once committed; a rollback forgets it with the transaction.
        self._pending_scope = (skey, scope_id)
        return scope_id
