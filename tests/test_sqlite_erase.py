"""Purge means gone, on SQLite: no byte of deleted content stays in any file of the store.

Issue 9 item 5: "After a purge, no byte of the purged content is readable through
any provider operation, and on SQLite none remains in the database file, its WAL
or its full-text index." Every test scans the raw bytes of every file next to the
store (``.db``, ``-wal``, ``-shm``, ``-journal``) for a canary written into the
content and the summary of one record, and first proves the scan finds it.
"""

from __future__ import annotations

import contextlib
import sqlite3
import uuid
from typing import TYPE_CHECKING

import pytest

from reward_memory.errors import ProviderUnavailable
from reward_memory.providers.spi import ProviderScope
from reward_memory.providers.sqlite import SQLiteProvider, _erase
from reward_memory.testing._conformance_governance import canary_record

if TYPE_CHECKING:
    from pathlib import Path

SCOPE = ProviderScope(namespace="rm-erase", scope_ref="project/main")


def _canary() -> str:
    return "qzcanary" + uuid.uuid4().hex[:12]


def _occurrences(directory: Path, canary: str) -> dict[str, int]:
    """How often the canary (any case) appears in each file of the store's directory."""
    needle = canary.lower().encode()
    found = {}
    for path in sorted(directory.iterdir()):
        if path.is_file():
            found[path.name] = path.read_bytes().lower().count(needle)
    return found


def _filler(provider: SQLiteProvider, count: int, tag: str) -> None:
    for index in range(count):
        provider.write(
            scope=SCOPE, key=f"{tag}-{index}", content=f"note {index} on retry backoff budget"
        )


def _write_canary(provider: SQLiteProvider, canary: str, how: str) -> str:
    content = canary_record(canary)
    if how == "large":  # over a page: the content lives in overflow pages
        content = content + (" padding " + canary) * 2000
    if how == "bulk":  # write_many indexes at once
        (written,) = provider.write_many(scope=SCOPE, items=[("doc-canary", content)])
        return written.ref
    ref = provider.write(scope=SCOPE, key="doc-canary", content=content).ref
    if how == "searched":  # found (and its summary built) before the delete
        assert provider.search(scope=SCOPE, query=canary, limit=3).hits
    return ref


@pytest.mark.parametrize("how", ["single", "searched", "bulk", "large"])
def test_a_deleted_canary_leaves_zero_bytes_in_every_store_file(tmp_path: Path, how: str) -> None:
    canary = _canary()
    provider = SQLiteProvider(path=tmp_path / "memory.db")
    _filler(provider, 30, "before")
    ref = _write_canary(provider, canary, how)
    _filler(provider, 30, "after")
    provider.search(scope=SCOPE, query="retry budget", limit=5)
    assert sum(_occurrences(tmp_path, canary).values()) > 0, "the scan cannot see the canary"

    assert provider.delete(scope=SCOPE, ref=ref).deleted is True

    found = _occurrences(tmp_path, canary)
    assert "memory.db" in found
    assert set(found.values()) == {0}, found
    assert provider.read(scope=SCOPE, ref=ref).found is False
    assert provider.search(scope=SCOPE, query=canary, limit=5).hits == ()
    # The store still works and the other documents are intact and searchable.
    assert len(provider.search(scope=SCOPE, query="retry budget", limit=100).hits) == 60
    provider.close()
    assert set(_occurrences(tmp_path, canary).values()) <= {0}
    with SQLiteProvider(path=tmp_path / "memory.db") as reopened:
        assert reopened.inventory(scope=SCOPE).record_count == 60
        assert reopened.search(scope=SCOPE, query=canary, limit=5).hits == ()


def test_a_reader_pinning_the_wal_makes_the_delete_retryable(tmp_path: Path) -> None:
    """A checkpoint cannot pass another connection's open read: the delete says so, and a
    retry, once the reader is gone, finishes the erase (``deleted=False``: already gone)."""
    canary = _canary()
    path = tmp_path / "memory.db"
    provider = SQLiteProvider(path=path, busy_timeout_ms=20)
    ref = _write_canary(provider, canary, "searched")
    reader = sqlite3.connect(path, isolation_level=None)
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM documents").fetchone()  # holds a WAL snapshot
    try:
        with pytest.raises(ProviderUnavailable) as caught:
            provider.delete(scope=SCOPE, ref=ref, timeout=0.3)
        assert caught.value.reason_code == "provider_timeout"
        # The delete itself committed: nothing is readable or searchable any more.
        assert provider.read(scope=SCOPE, ref=ref).found is False
        assert provider.search(scope=SCOPE, query=canary, limit=5).hits == ()
    finally:
        reader.close()
    assert provider.delete(scope=SCOPE, ref=ref).deleted is False
    assert set(_occurrences(tmp_path, canary).values()) == {0}
    provider.close()


def test_an_interrupted_index_merge_is_finished_by_the_next_delete(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The flag set in the delete's transaction outlives a failed merge (fault injected)."""
    canary = _canary()
    provider = SQLiteProvider(path=tmp_path / "memory.db")
    ref = _write_canary(provider, canary, "searched")

    def broken(conn: sqlite3.Connection) -> None:
        raise sqlite3.OperationalError("disk I/O error")

    with monkeypatch.context() as patch:
        patch.setattr(_erase, "merge_index", broken)
        with pytest.raises(ProviderUnavailable):
            provider.delete(scope=SCOPE, ref=ref)
    assert provider.read(scope=SCOPE, ref=ref).found is False
    provider.close()
    # The flag outlived the failed merge (raw bytes cannot tell: FTS5 prefix-compresses
    # its terms, so a still-indexed canary need not appear contiguously in the file).
    with contextlib.closing(sqlite3.connect(tmp_path / "memory.db")) as raw, raw:
        assert _erase.index_erase_pending(raw)
    with SQLiteProvider(path=tmp_path / "memory.db") as again:
        # Any delete finishes it, even of a ref that does not exist.
        assert again.delete(scope=SCOPE, ref="sqlite:" + "0" * 32).deleted is False
    assert set(_occurrences(tmp_path, canary).values()) <= {0}
    with contextlib.closing(sqlite3.connect(tmp_path / "memory.db")) as raw, raw:
        assert not _erase.index_erase_pending(raw)


def test_deleting_in_a_store_that_does_not_exist_creates_nothing(tmp_path: Path) -> None:
    provider = SQLiteProvider(path=tmp_path / "absent" / "memory.db")
    assert provider.delete(scope=SCOPE, ref="sqlite:" + "0" * 32).deleted is False
    assert not (tmp_path / "absent").exists()
    provider.close()


@pytest.mark.slow
def test_a_thousand_erasing_deletes_leave_a_readable_index(tmp_path: Path) -> None:
    """An ``optimize`` on SQLite before 3.51 leaves an empty level in the FTS5 structure;
    at 2,000 levels the index is unreadable for good (``SQLITE_CORRUPT_VTAB``). 3.40 got
    there after about a thousand deletes of this shape: the periodic rebuild prevents it.
    Contract: DESIGN §7 (sqlite "safe under several processes"; an activated receipt
    survives); issue 9 item 5 (purge means gone, on every delete)."""
    provider = SQLiteProvider(path=tmp_path / "m.db")
    try:
        keep = provider.write(scope=SCOPE, key="doc-keep", content=canary_record("keepme")).ref
        live: list[str] = []
        for i in range(1100):
            for j in range(4):
                body = f"alpha beta {i} {j} " + " ".join(f"w{i}x{j}x{k}" for k in range(60))
                live.append(provider.write(scope=SCOPE, key=f"doc-{i}-{j}", content=body).ref)
            provider.delete(scope=SCOPE, ref=live.pop(0))
        hits = provider.search(scope=SCOPE, query="keepme", limit=3).hits
        assert [hit.ref for hit in hits] == [keep]
        assert len(provider.search(scope=SCOPE, query="alpha beta", limit=8).hits) == 8
        assert provider.search(scope=SCOPE, query="w0x0x1", limit=8).hits == ()  # deleted
    finally:
        provider.close()
    with contextlib.closing(sqlite3.connect(tmp_path / "m.db")) as check, check:
        check.execute("INSERT INTO documents_fts (documents_fts) VALUES ('integrity-check')")
