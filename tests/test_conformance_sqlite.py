"""The SQLite provider against the provider conformance kit, on real files."""

from __future__ import annotations

import sqlite3
import threading
from typing import TYPE_CHECKING, Any

from reward_memory.providers.spi import ProviderScope
from reward_memory.providers.sqlite import SQLiteProvider
from reward_memory.testing.conformance import ProviderConformance

if TYPE_CHECKING:
    from pathlib import Path

    from reward_memory.providers.spi import Provider


def _lock_out(path: Path) -> sqlite3.Connection:
    """Hold ``path`` exclusively from another connection (a real SQLite lock).

    ``locking_mode=EXCLUSIVE`` plus a write transaction keeps every other
    connection, readers included, out of the file until the holder closes.
    """
    with SQLiteProvider(path=path) as setup:  # a real store, with a document in it
        setup.write(scope=ProviderScope(namespace="setup", scope_ref="main"), key="k", content="x")
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("PRAGMA locking_mode = EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    return holder


class _LockedOutProvider(SQLiteProvider):
    """A provider whose file another connection holds exclusively."""

    def __init__(self, path: Path) -> None:
        self._holder = _lock_out(path)
        super().__init__(path=path)

    def close(self) -> None:
        super().close()
        self._holder.close()


class _BusyProvider(SQLiteProvider):
    """A provider whose lock another thread's bulk write holds (until it is closed).

    Fault injection: the bulk write waits inside the lock, so any other call of this
    provider can only finish by giving up at its timeout.
    """

    def __init__(self, path: Path) -> None:
        super().__init__(path=path)
        self._inside, self._release = threading.Event(), threading.Event()
        items = [(f"bulk-{i}", f"bulk {i}") for i in range(100)]
        scope = ProviderScope(namespace="bulk", scope_ref="main")
        self._bulk = threading.Thread(
            target=lambda: self.write_many(scope=scope, items=items, timeout=60)
        )
        self._bulk.start()
        self._inside.wait(10)

    def _write(self, *args: Any) -> Any:
        if not self._release.is_set():
            self._inside.set()
            self._release.wait(30)
        return super()._write(*args)

    def close(self) -> None:
        self._release.set()
        self._bulk.join(30)
        super().close()


class TestSQLiteConformance(ProviderConformance):
    def make_provider(self, tmp_path: Path) -> Provider:
        return SQLiteProvider(path=tmp_path / "memory.db")

    def make_unavailable_provider(self, tmp_path: Path) -> Provider | None:
        # A file that is not a database: every call must fail with ProviderUnavailable.
        broken = tmp_path / "memory.db"
        broken.write_bytes(b"this is not an SQLite database file " * 200)
        return SQLiteProvider(path=broken)

    def make_timeout_provider(self, tmp_path: Path) -> Provider | None:
        return _LockedOutProvider(tmp_path / "memory.db")


class TestSQLiteBusyConformance(TestSQLiteConformance):
    """Timeouts also bound the wait for the provider's own lock (another thread's call)."""

    def make_timeout_provider(self, tmp_path: Path) -> Provider | None:
        return _BusyProvider(tmp_path / "memory.db")


class TestSQLiteThroughDiscoveryConformance(ProviderConformance):
    """The same provider, built the way applications build it (entry point + URL)."""

    def make_provider(self, tmp_path: Path) -> Provider:
        from reward_memory.providers.discovery import get_provider

        return get_provider("sqlite://" + (tmp_path / "nested" / "memory.db").as_posix())

    def make_unavailable_provider(self, tmp_path: Path) -> Provider | None:
        from reward_memory.providers.discovery import get_provider

        broken = tmp_path / "memory.db"
        broken.write_bytes(b"\x00\xff not a database " * 300)
        return get_provider("sqlite://" + broken.as_posix() + "?timeout=2")

    def make_timeout_provider(self, tmp_path: Path) -> Provider | None:
        from reward_memory.providers.discovery import get_provider

        self._holder = _lock_out(tmp_path / "memory.db")
        return get_provider("sqlite://" + (tmp_path / "memory.db").as_posix())

    def teardown_method(self) -> None:
        holder = getattr(self, "_holder", None)
        if holder is not None:
            holder.close()
