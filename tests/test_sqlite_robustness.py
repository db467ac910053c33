"""The SQLite provider under adverse conditions: crowded scopes, busy locks, fork,
damaged files, device paths, bad arguments, file modes (real files throughout)."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from reward_memory.cli import main
from reward_memory.errors import ProviderUnavailable, RecordValidationError
from reward_memory.providers.spi import ProviderScope
from reward_memory.providers.sqlite import SQLiteProvider

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

A = ProviderScope(namespace="ns", scope_ref="tenant-a")
B = ProviderScope(namespace="ns", scope_ref="tenant-b")
#: Where SQLite puts the journal of a store opened at /dev/null (never ours to keep).
NULL_JOURNAL = Path("/dev/null-journal")


@pytest.fixture
def provider(tmp_path: Path) -> Iterator[SQLiteProvider]:
    with SQLiteProvider(path=tmp_path / "memory.db") as built:
        yield built


def _contents(provider: SQLiteProvider, scope: ProviderScope, query: str) -> list[str]:
    hits = provider.search(scope=scope, query=query, limit=10).hits
    return [str(provider.read(scope=scope, ref=hit.ref).content) for hit in hits]


# -- 1. the unranked fill of a common term ----------------------------------------------


def test_another_scopes_writes_do_not_empty_a_common_terms_search(
    provider: SQLiteProvider,
) -> None:
    provider.write_many(scope=A, items=[(f"a{i}", f"alpha note {i}") for i in range(1000)])
    assert len(_contents(provider, A, "alpha")) == 10
    provider.write_many(scope=B, items=[(f"b{i}", f"beta other {i}") for i in range(3000)])
    provider.write(scope=A, key="late", content="unrelated late note")
    # "alpha" is in more than RANK_BUDGET documents (unranked), all far below the window.
    assert _contents(provider, A, "alpha") == [f"alpha note {i}" for i in range(999, 989, -1)]


def test_a_common_term_is_found_below_the_scopes_own_newer_documents(
    provider: SQLiteProvider,
) -> None:
    provider.write_many(scope=A, items=[(f"g{i}", f"gamma note {i}") for i in range(1000)])
    provider.write_many(scope=A, items=[(f"o{i}", f"other note {i}") for i in range(3000)])
    assert _contents(provider, A, "gamma") == [f"gamma note {i}" for i in range(999, 989, -1)]
    # Two common terms: the documents holding both come first.
    provider.write(scope=A, key="both", content="gamma other together")
    assert _contents(provider, A, "gamma other")[0] == "gamma other together"


# -- 2. the provider's own lock, and fork -----------------------------------------------


class _HeldWrite:
    """Fault injection: another thread's bulk write holds the provider's lock until released."""

    def __init__(self, provider: SQLiteProvider) -> None:
        self.inside = threading.Event()
        self.release = threading.Event()
        real = provider._write

        def held(*args: Any) -> Any:
            self.inside.set()
            self.release.wait(30)
            return real(*args)

        provider._write = held  # type: ignore[method-assign,assignment]
        items = [(f"bulk-{i}", f"bulk {i}") for i in range(50)]
        self.thread = threading.Thread(
            target=lambda: provider.write_many(scope=A, items=items, timeout=60)
        )
        self.thread.start()
        assert self.inside.wait(10)

    def finish(self) -> None:
        self.release.set()
        self.thread.join(30)


@pytest.mark.parametrize("operation", ["read", "search", "inventory", "delete", "write"])
def test_a_call_waits_for_the_lock_only_as_long_as_its_timeout(
    provider: SQLiteProvider, operation: str
) -> None:
    ref = provider.write(scope=A, key="k", content="hello").ref
    calls: dict[str, Callable[[], object]] = {
        "read": lambda: provider.read(scope=A, ref=ref, timeout=0.05),
        "search": lambda: provider.search(scope=A, query="hello", limit=1, timeout=0.05),
        "inventory": lambda: provider.inventory(scope=A, timeout=0.05),
        "delete": lambda: provider.delete(scope=A, ref=ref, timeout=0.05),
        "write": lambda: provider.write(scope=A, key="k2", content="x", timeout=0.05),
    }
    held = _HeldWrite(provider)
    try:
        started = time.monotonic()
        with pytest.raises(ProviderUnavailable) as caught:
            calls[operation]()
        assert time.monotonic() - started < 1.0
        assert caught.value.reason_code == "provider_timeout"
    finally:
        held.finish()
    assert provider.read(scope=A, ref=ref).content == "hello"
    assert provider.inventory(scope=A).record_count == 51


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")
def test_a_child_forked_while_another_thread_holds_the_lock_is_not_blocked(
    provider: SQLiteProvider,
) -> None:
    ref = provider.write(scope=A, key="k", content="hello").ref
    held = _HeldWrite(provider)
    try:
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child reports through its exit status
            code = 1
            try:
                code = 0 if provider.read(scope=A, ref=ref, timeout=2.0).found else 1
            finally:
                os._exit(code)
        deadline = time.monotonic() + 10
        while (done := os.waitpid(pid, os.WNOHANG))[0] == 0 and time.monotonic() < deadline:
            time.sleep(0.02)
        if done[0] == 0:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            pytest.fail("the child blocked on the lock of a thread it does not have")
        assert os.waitstatus_to_exitcode(done[1]) == 0
    finally:
        held.finish()
    assert provider.inventory(scope=A).record_count == 51


# -- 3. a damaged file ------------------------------------------------------------------


def _flip_schema_byte(path: Path) -> None:
    with SQLiteProvider(path=path) as setup:
        setup.write(scope=A, key="k", content="x")
    data = bytearray(path.read_bytes())
    data[data.index(b"CREATE TABLE documents") + 7] = 0xE1  # the schema text is not UTF-8
    path.write_bytes(bytes(data))


def test_a_schema_that_is_not_utf8_makes_the_store_unavailable(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    _flip_schema_byte(path)
    with SQLiteProvider(path=path) as provider:
        for call in (
            lambda: provider.inventory(scope=A),
            lambda: provider.read(scope=A, ref="k"),
            lambda: provider.search(scope=A, query="x", limit=1),
            lambda: provider.delete(scope=A, ref="k"),
            lambda: provider.write(scope=A, key="k", content="x"),
        ):
            with pytest.raises(ProviderUnavailable, match="cannot be used") as caught:
                call()
            assert caught.value.reason_code == "provider_unavailable"
            assert str(tmp_path) not in str(caught.value)


def test_providers_check_reports_a_damaged_store_unavailable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "memory.db"
    _flip_schema_byte(path)
    assert main(["providers", "--format", "json", "--check", "sqlite://" + path.as_posix()]) == 0
    check = json.loads(capsys.readouterr().out)["check"]
    assert check["status"] == "provider_unavailable"


# -- 4. delete's outcome across a retry -------------------------------------------------


def test_delete_reports_deleted_when_its_erase_is_retried(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    provider = SQLiteProvider(path=path, busy_timeout_ms=50, timeout=5)
    ref = provider.write(scope=A, key="k", content="to be purged").ref
    real = provider._delete
    others: list[threading.Timer] = []

    def then_another_writer(conn: sqlite3.Connection, scope_id: int, digest: bytes) -> bool:
        # Fault injection: another connection takes the write lock right after the
        # delete commits, so the erase meets SQLITE_BUSY and the call is retried.
        done = real(conn, scope_id, digest)
        other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        other.execute("BEGIN IMMEDIATE")

        def release() -> None:
            other.execute("COMMIT")
            other.close()

        others.append(threading.Timer(0.3, release))
        others[-1].start()
        return done

    provider._delete = then_another_writer  # type: ignore[method-assign]
    try:
        assert provider.delete(scope=A, ref=ref).deleted is True
        assert provider.read(scope=A, ref=ref).found is False
    finally:
        for timer in others:
            timer.join(5)
        provider.close()


# -- 5. what the path names ----------------------------------------------------------


@pytest.fixture
def dev_null_link(tmp_path: Path) -> Iterator[Path]:
    existed = NULL_JOURNAL.exists()
    link = tmp_path / "memory.db"
    link.symlink_to("/dev/null")
    try:
        yield link
    finally:
        if not existed and NULL_JOURNAL.exists():
            NULL_JOURNAL.unlink()  # what the old code left behind


def test_a_device_path_is_refused_before_it_is_opened(dev_null_link: Path) -> None:
    provider = SQLiteProvider(path=dev_null_link)
    for call in (
        lambda: provider.inventory(scope=A),
        lambda: provider.read(scope=A, ref="k"),
        lambda: provider.search(scope=A, query="x", limit=1),
        lambda: provider.delete(scope=A, ref="k"),
        lambda: provider.write(scope=A, key="k", content="x"),
    ):
        existed = NULL_JOURNAL.exists()
        with pytest.raises(ProviderUnavailable, match="not a regular file") as caught:
            call()
        assert str(dev_null_link.parent) not in str(caught.value)
        assert existed or not NULL_JOURNAL.exists()
    provider.close()
    assert dev_null_link.is_symlink()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs os.mkfifo")
def test_a_fifo_path_is_refused(tmp_path: Path) -> None:
    fifo = tmp_path / "memory.db"
    os.mkfifo(fifo)
    with SQLiteProvider(path=fifo) as provider:
        with pytest.raises(ProviderUnavailable, match="not a regular file"):
            provider.write(scope=A, key="k", content="x")
        with pytest.raises(ProviderUnavailable, match="not a regular file"):
            provider.inventory(scope=A)


def test_reads_leave_an_empty_file_empty(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    path.touch()
    with SQLiteProvider(path=path) as provider:
        inventory = provider.inventory(scope=A)
        assert (inventory.corpus_present, inventory.index_present) == (False, False)
        assert provider.read(scope=A, ref="k").found is False
        assert provider.search(scope=A, query="x", limit=1).hits == ()
        assert provider.delete(scope=A, ref="k").deleted is False
        assert path.stat().st_size == 0
        assert sorted(p.name for p in tmp_path.iterdir()) == ["memory.db"]
        ref = provider.write(scope=A, key="k", content="x").ref  # a write makes it a store
        assert provider.read(scope=A, ref=ref).content == "x"


# -- 6. write_many's arguments ----------------------------------------------------------


def test_write_many_items_must_be_iterable(provider: SQLiteProvider) -> None:
    with pytest.raises(RecordValidationError) as caught:
        provider.write_many(scope=A, items=None)  # type: ignore[arg-type]
    assert caught.value.path == "$.items"


def test_an_empty_write_many_on_a_closed_provider_is_closed(tmp_path: Path) -> None:
    provider = SQLiteProvider(path=tmp_path / "memory.db")
    provider.close()
    with pytest.raises(ProviderUnavailable) as caught:
        provider.write_many(scope=A, items=[])
    assert caught.value.reason_code == "provider_closed"


# -- 7. file modes ------------------------------------------------------------------


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.skipif(os.name != "posix", reason="POSIX file modes")
def test_a_new_store_is_private(tmp_path: Path) -> None:
    old_umask = os.umask(0o022)
    try:
        path = tmp_path / "a" / "b" / "memory.db"
        with SQLiteProvider(path=path) as provider:
            provider.write(scope=A, key="k", content="x")
            for name in ("memory.db", "memory.db-wal", "memory.db-shm"):
                assert _mode(path.parent / name) == 0o600, name
        assert _mode(tmp_path / "a") == 0o700
        assert _mode(tmp_path / "a" / "b") == 0o700
    finally:
        os.umask(old_umask)


@pytest.mark.skipif(os.name != "posix", reason="POSIX file modes")
def test_an_existing_store_keeps_its_mode(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    with SQLiteProvider(path=path) as provider:
        provider.write(scope=A, key="k", content="x")
    path.chmod(0o640)
    dir_mode = _mode(tmp_path)
    with SQLiteProvider(path=path) as provider:
        provider.write(scope=A, key="k2", content="y")
    assert _mode(path) == 0o640
    assert _mode(tmp_path) == dir_mode
