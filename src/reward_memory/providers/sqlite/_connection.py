"""The provider's one connection: opening it, retries under a deadline, transactions.

Within a process one connection is shared behind a lock (see the package docs,
"Concurrency"); after ``fork`` the child opens its own. Every call runs inside
:meth:`_Store._call`, which bounds lock waits and statement time by the call's
deadline and turns SQLite errors into :class:`ProviderUnavailable`.
"""

from __future__ import annotations

import contextlib
import math
import os
import sqlite3
import stat
import threading
import time
import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Final, TypeVar

from reward_memory.errors import ProviderUnavailable, RewardMemoryError
from reward_memory.providers.sqlite._schema import configure

if TYPE_CHECKING:
    from collections.abc import Callable

# SQLite primary result codes (``sqlite3.Error.sqlite_errorcode & 0xff``).
_SQLITE_BUSY: Final = 5
_SQLITE_LOCKED: Final = 6
_SQLITE_READONLY: Final = 8
_SQLITE_INTERRUPT: Final = 9

_T = TypeVar("_T")


def is_busy(exc: sqlite3.Error) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int):
        return code & 0xFF in (_SQLITE_BUSY, _SQLITE_LOCKED)
    message = str(exc)
    return "locked" in message or "busy" in message


def is_readonly(exc: sqlite3.Error) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    return isinstance(code, int) and code & 0xFF == _SQLITE_READONLY


def is_interrupt(exc: sqlite3.Error) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    return (code & 0xFF == _SQLITE_INTERRUPT) if isinstance(code, int) else "interrupt" in str(exc)


class _Store:
    """Connection state and the call/transaction machinery :class:`SQLiteProvider` uses."""

    def __init__(self, *, path: str, timeout: float, busy_ms: int, synchronous: str) -> None:
        self._timeout = timeout
        self._busy_ms = busy_ms
        self._synchronous = synchronous
        self._path = path
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        self._pid = 0
        self._orphans: list[sqlite3.Connection] = []  # inherited across fork: never used again
        self._busy_set = -1
        self._deadline = math.inf
        self._scope_ids: dict[tuple[str, str, str], int] = {}
        self._pending_scope: tuple[tuple[str, str, str], int] | None = None
        self._closed = False
        _STORES.add(self)

    def _commit(self, conn: sqlite3.Connection) -> None:
        # A commit is never interrupted by the deadline: it is bounded by one fsync,
        # and a timeout reported for a write that did commit would be a lie.
        deadline, self._deadline = self._deadline, math.inf
        try:
            conn.execute("COMMIT")
        finally:
            self._deadline = deadline
        if self._pending_scope is not None:
            skey, scope_id = self._pending_scope
            self._scope_ids[skey] = scope_id
            self._pending_scope = None

    def _rollback(self, conn: sqlite3.Connection) -> None:
        self._pending_scope = None
        if conn.in_transaction:
            # If ROLLBACK fails, SQLite has already rolled the transaction back.
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")

    def _call(
        self,
        limit: float | None,
        *,
        create: bool,
        op: Callable[[sqlite3.Connection], _T],
        empty: Callable[[], _T] | None = None,
    ) -> _T:
        """Run ``op`` on the connection with retries on lock contention until the deadline."""
        seconds = self._timeout if limit is None else limit
        deadline = time.monotonic() + seconds
        delay = 0.001
        # Another thread's call (a bulk write) may hold the lock for long: wait for it
        # only as long as this call may take.
        if not self._lock.acquire(timeout=min(seconds, threading.TIMEOUT_MAX)):
            raise ProviderUnavailable(
                f"the sqlite store did not answer within {seconds:g} s",
                reason_code="provider_timeout",
            )
        try:
            self.check_open()
            while True:
                try:
                    conn = self._connection(create=create, seconds=seconds)
                    if conn is None:
                        if empty is None:  # pragma: no cover - write paths always create
                            raise ProviderUnavailable("the sqlite store does not exist")
                        return empty()
                    self._arm(conn, deadline)
                    try:
                        return op(conn)
                    finally:
                        self._deadline = math.inf
                except sqlite3.Error as exc:
                    if self._conn is not None:
                        self._rollback(self._conn)
                    remaining = deadline - time.monotonic()
                    if is_interrupt(exc) or (is_busy(exc) and remaining <= 0):
                        raise ProviderUnavailable(
                            f"the sqlite store did not answer within {seconds:g} s",
                            reason_code="provider_timeout",
                        ) from exc
                    if not is_busy(exc):
                        self._discard()
                        raise ProviderUnavailable(
                            "the sqlite store cannot be used "
                            f"({getattr(exc, 'sqlite_errorname', type(exc).__name__)})",
                        ) from exc
                    time.sleep(min(delay, max(remaining, 0.0)))
                    delay = min(delay * 2, 0.05)
                except ValueError as exc:
                    if isinstance(exc, RewardMemoryError):
                        raise
                    # A damaged file: schema text or an error message that is not UTF-8
                    # (UnicodeDecodeError), or a row this code cannot decode.
                    if self._conn is not None:
                        self._rollback(self._conn)
                    self._discard()
                    raise ProviderUnavailable(
                        f"the sqlite store cannot be used ({type(exc).__name__})"
                    ) from None
                except OSError as exc:  # creating or inspecting the store's directory
                    # Not chained: an OSError names the caller's path, and a logged
                    # traceback would print it.
                    raise ProviderUnavailable(
                        f"the sqlite store's location cannot be used ({type(exc).__name__})"
                    ) from None
        finally:
            self._lock.release()

    def check_open(self) -> None:
        """Raise ``ProviderUnavailable`` (``provider_closed``) once :meth:`close` ran."""
        if self._closed:
            raise ProviderUnavailable(
                "the sqlite provider is closed", reason_code="provider_closed"
            )

    def _after_fork_in_child(self) -> None:
        # The lock may have been held by a thread of the parent that does not exist here:
        # it would never be released. The parent's connection is never used again.
        self._lock = threading.RLock()
        if self._conn is not None:
            self._orphans.append(self._conn)
            self._conn = None
        self._pending_scope = None
        self._deadline = math.inf

    def _arm(self, conn: sqlite3.Connection, deadline: float) -> None:
        """Bound SQLite's lock waits and statement time by the call's deadline."""
        # The lock wait never exceeds busy_ms: cap the seconds left first (a huge finite
        # timeout, 1e306 s, is infinite in milliseconds and has no ceiling).
        left = min(deadline - time.monotonic(), self._busy_ms / 1000)
        wanted = max(1, math.ceil(left * 1000))
        if wanted != self._busy_set:
            conn.execute(f"PRAGMA busy_timeout = {int(wanted)}")
            self._busy_set = wanted
        self._deadline = deadline

    def _progress(self) -> int:
        # Called by SQLite every few thousand VM steps: non-zero interrupts the statement.
        return 1 if time.monotonic() > self._deadline else 0

    def _discard(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(sqlite3.Error):
                conn.close()

    def _prepare_file(self, *, create: bool) -> bool:
        """Is there a regular file to open (created, private, when ``create``)?

        Anything else (a device, a FIFO, a socket, also through a symlink) is refused
        before SQLite opens it: SQLite would read and write it, and put its journal
        beside it (``/dev/null-journal``). ``ProviderUnavailable`` when it never could be.
        """
        path = Path(self._path)
        if create:
            _make_private_dirs(path.parent)
            # Created here, not by SQLite, so that it is private from the start (SQLite
            # gives its WAL and shared-memory files the database file's mode). An
            # existing store keeps its mode; so does a concurrent creator's.
            # Only when absent: opening an existing store for writing would be a write of
            # this process's own (an audit hook counts it, as the evaluation does).
            if not os.path.lexists(path):
                with contextlib.suppress(FileExistsError):
                    os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        try:
            mode = path.stat().st_mode  # follows symlinks: the file SQLite would open
        except (FileNotFoundError, NotADirectoryError):
            if create:  # a dangling symlink, or a file where a directory should be
                raise
            parent = path.parent
            while not parent.exists() and parent.parent != parent:
                parent = parent.parent
            if not parent.is_dir():
                raise ProviderUnavailable(
                    "the sqlite store's location is not a directory"
                ) from None
            return False
        if not stat.S_ISREG(mode):
            raise ProviderUnavailable("the sqlite store's location is not a regular file")
        return True

    def _connection(self, *, create: bool, seconds: float) -> sqlite3.Connection | None:
        pid = os.getpid()
        if self._conn is not None:
            if self._pid == pid:
                return self._conn
            # Inherited through fork: SQLite forbids using it, and closing it here could
            # disturb the parent's locks. Keep it referenced so it is never finalised.
            self._orphans.append(self._conn)
            self._conn = None
        if not self._prepare_file(create=create):
            return None
        uri = Path(self._path).as_uri() + ("?mode=rwc" if create else "?mode=rw")
        conn = sqlite3.connect(
            uri,
            uri=True,
            timeout=min(seconds, self._busy_ms / 1000),
            isolation_level=None,
            check_same_thread=False,
            cached_statements=64,
        )
        try:
            is_store = self._configure(conn, create=create)
        except BaseException:
            conn.close()
            raise
        if not is_store:  # an empty file: a read answers "empty" and leaves it empty
            conn.close()
            return None
        self._conn, self._pid, self._busy_set = conn, pid, -1
        return conn

    def _configure(self, conn: sqlite3.Connection, *, create: bool) -> bool:
        conn.set_progress_handler(self._progress, 2000)
        return configure(conn, self._synchronous, create=create)


def _make_private_dirs(directory: Path) -> None:
    """Create ``directory`` and its missing parents with mode 0o700 (existing ones stay).

    ``Path.mkdir(parents=True, mode=...)`` gives the parents the umask's default mode,
    which would make a new store's directories readable by every local user.
    """
    missing: list[Path] = []
    while not directory.exists() and directory.parent != directory:
        missing.append(directory)
        directory = directory.parent
    for path in reversed(missing):
        with contextlib.suppress(FileExistsError):
            path.mkdir(mode=0o700)


_STORES: Final[weakref.WeakSet[_Store]] = weakref.WeakSet()


def _reset_after_fork() -> None:
    for store in list(_STORES):
        store._after_fork_in_child()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_after_fork)
