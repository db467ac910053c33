"""The SQLite provider against the provider conformance kit, on real files."""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

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
