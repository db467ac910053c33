"""The embedded SQLite provider on real files and real processes.

The conformance kit (``test_conformance_sqlite.py``) covers the SPI contract;
these tests cover what is specific to SQLite: configuration and URLs, the file
format, durability under ``kill -9``, several processes writing at once, lock
timeouts, full-text search inside a scope, and the term derivation the index
depends on.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import os
import random
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from reward_memory.errors import ProviderConfigError, ProviderUnavailable, RecordValidationError
from reward_memory.providers.spi import MAX_CONTENT_BYTES, ProviderScope
from reward_memory.providers.sqlite import (
    ENV_PATH,
    SCHEMA_VERSION,
    SQLiteProvider,
    _provider,
    _schema,
    _search,
    _terms,
    default_path,
)

if TYPE_CHECKING:
    from collections.abc import Iterator

SCOPE = ProviderScope(namespace="rm-test", scope_ref="project:main")
MARKER = "zz-private-location-marker"


@pytest.fixture
def isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory and default locations that all live under ``tmp_path``."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(ENV_PATH, raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return tmp_path


@pytest.fixture
def provider(tmp_path: Path) -> Iterator[SQLiteProvider]:
    built = SQLiteProvider(path=tmp_path / "memory.db")
    try:
        yield built
    finally:
        built.close()


@contextlib.contextmanager
def _raw(path: Path) -> Iterator[sqlite3.Connection]:
    """A raw connection to the store, closed on exit (``with sqlite3.connect()`` only
    commits: Python 3.13 warns about the connection left open)."""
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        yield conn
    finally:
        conn.close()


def _assert_public(exc: BaseException, tmp_path: Path) -> None:
    text = str(exc)
    assert str(tmp_path) not in text
    assert MARKER not in text


# -- configuration and URLs --------------------------------------------------------------


def test_default_location_prefers_env_then_xdg_then_home(tmp_path: Path) -> None:
    explicit = tmp_path / "explicit.db"
    assert default_path({ENV_PATH: str(explicit), "XDG_DATA_HOME": "/x"}) == str(explicit)
    assert default_path({"XDG_DATA_HOME": str(tmp_path / "xdg")}) == str(
        tmp_path / "xdg" / "reward-memory" / "memory.db"
    )
    home_default = default_path({"XDG_DATA_HOME": "relative/is/ignored"})
    assert home_default.endswith(str(Path(".local", "share", "reward-memory", "memory.db")))


def test_path_option_beats_the_environment(isolated_env: Path) -> None:
    os.environ[ENV_PATH] = str(isolated_env / "from-env.db")
    chosen = isolated_env / "chosen.db"
    with SQLiteProvider(path=chosen) as provider:
        provider.write(scope=SCOPE, key="doc-1", content="x")
    assert chosen.is_file()
    assert not (isolated_env / "from-env.db").exists()
    with SQLiteProvider() as provider:
        provider.write(scope=SCOPE, key="doc-1", content="x")
    assert (isolated_env / "from-env.db").is_file()


def test_xdg_default_is_created_on_first_write_only(isolated_env: Path) -> None:
    target = isolated_env / "xdg" / "reward-memory" / "memory.db"
    provider = SQLiteProvider.from_url("sqlite://")
    inventory = provider.inventory(scope=SCOPE)
    assert inventory.available is True
    assert (inventory.corpus_present, inventory.record_count) == (False, 0)
    assert provider.search(scope=SCOPE, query="anything", limit=3).hits == ()
    assert provider.read(scope=SCOPE, ref="sqlite:" + "0" * 32).found is False
    assert provider.delete(scope=SCOPE, ref="sqlite:" + "0" * 32).deleted is False
    assert sorted(p.name for p in isolated_env.iterdir()) == []
    provider.write(scope=SCOPE, key="doc-1", content="first")
    assert target.is_file()
    provider.close()


def test_url_forms(tmp_path: Path) -> None:
    target = tmp_path / "my store" / "memory.db"
    url = "sqlite://" + target.as_posix().replace(" ", "%20") + "?timeout=2.5&busy_timeout_ms=40"
    with SQLiteProvider.from_url(url) as provider:
        assert provider._timeout == 2.5
        assert provider._busy_ms == 40
        assert provider._path == str(target)
        provider.write(scope=SCOPE, key="doc-1", content="x")
    assert target.is_file()
    with SQLiteProvider.from_url("SQLITE://" + target.as_posix() + "?synchronous=EXTRA") as extra:
        extra.write(scope=SCOPE, key="doc-2", content="y")
        assert extra._conn is not None
        assert extra._conn.execute("PRAGMA synchronous").fetchone()[0] == 3


def test_relative_path_option_resolves_against_the_working_directory(
    isolated_env: Path,
) -> None:
    with SQLiteProvider(path="rel/memory.db") as provider:
        provider.write(scope=SCOPE, key="doc-1", content="x")
    assert (isolated_env / "rel" / "memory.db").is_file()


BAD_URLS = [
    "sqlite:",
    "sqlite:/{dir}/{marker}.db",
    "sqlite:{marker}.db",
    "sqlite://{marker}/x.db",
    "sqlite://localhost/{dir}/{marker}.db",
    "http:///{dir}/{marker}.db",
    "memory:///{dir}/{marker}.db",
    "sqlite:///{dir}/{marker}.db#fragment",
    "sqlite:///{dir}/{marker}/",
    "sqlite:///{dir}/{marker}.db?timeout=abc",
    "sqlite:///{dir}/{marker}.db?timeout=-1",
    "sqlite:///{dir}/{marker}.db?timeout=0",
    "sqlite:///{dir}/{marker}.db?timeout=nan",
    "sqlite:///{dir}/{marker}.db?timeout=inf",
    "sqlite:///{dir}/{marker}.db?busy_timeout_ms=1.5",
    "sqlite:///{dir}/{marker}.db?busy_timeout_ms=-3",
    "sqlite:///{dir}/{marker}.db?synchronous=off",
    "sqlite:///{dir}/{marker}.db?no_such_option=1",
    "sqlite:///{dir}/{marker}.db?{marker}=1",
    "sqlite:///{dir}/{marker}.db?timeout=1&timeout=2",
    "sqlite:///{dir}/{marker}.db?path=/elsewhere.db",
    "sqlite:///{dir}/{marker}.db?timeout",
    "sqlite:///{dir}/{marker}.db?&&",
    "sqlite:///{dir}/{marker}%00.db",
    "sqlite:///{dir}/{marker}%FF.db",
]


@pytest.mark.parametrize("template", BAD_URLS)
def test_bad_url_is_a_config_error_and_creates_nothing(isolated_env: Path, template: str) -> None:
    url = template.format(dir=(isolated_env / "nested").as_posix().lstrip("/"), marker=MARKER)
    with pytest.raises(ProviderConfigError) as caught:
        SQLiteProvider.from_url(url)
    assert isinstance(caught.value, ValueError)
    _assert_public(caught.value, isolated_env)
    assert list(isolated_env.iterdir()) == []


def test_url_must_be_a_string() -> None:
    with pytest.raises(ProviderConfigError):
        SQLiteProvider.from_url(42)  # type: ignore[arg-type]


def test_unknown_option_is_named(isolated_env: Path) -> None:
    with pytest.raises(ProviderConfigError, match="'colour'") as caught:
        SQLiteProvider(path=isolated_env / "m.db", colour="red")
    assert "busy_timeout_ms" in str(caught.value)  # the accepted options are listed
    with pytest.raises(ProviderConfigError) as caught:
        SQLiteProvider(**{f"{MARKER} with spaces": 1})  # type: ignore[arg-type]
    _assert_public(caught.value, isolated_env)
    assert list(isolated_env.iterdir()) == []


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("timeout", True),
        ("timeout", "5"),
        ("timeout", 0),
        ("timeout", float("inf")),
        ("timeout", 10_000),
        ("busy_timeout_ms", -1),
        ("busy_timeout_ms", 1.0),
        ("busy_timeout_ms", False),
        ("synchronous", "off"),
        ("synchronous", 2),
        ("path", 123),
        ("path", ""),
        ("path", ":memory:"),
        ("path", "file:memory.db?mode=memory"),
        ("path", "with\x00nul.db"),
    ],
)
def test_bad_option_value_is_a_config_error(isolated_env: Path, option: str, value: object) -> None:
    with pytest.raises(ProviderConfigError, match=option):
        SQLiteProvider(**{option: value})  # type: ignore[arg-type]
    assert list(isolated_env.iterdir()) == []


def test_directory_path_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ProviderConfigError, match="directory") as caught:
        SQLiteProvider(path=tmp_path)
    _assert_public(caught.value, tmp_path)


def test_discovery_builds_it_from_a_url(tmp_path: Path) -> None:
    from reward_memory.providers.discovery import get_provider

    provider = get_provider("sqlite://" + (tmp_path / "d" / "memory.db").as_posix())
    try:
        assert isinstance(provider, SQLiteProvider)
        ref = provider.write(scope=SCOPE, key="doc-1", content="exact \r\n").ref
        assert provider.read(scope=SCOPE, ref=ref).content == "exact \r\n"
    finally:
        provider.close()


def test_repr_hides_the_path(tmp_path: Path) -> None:
    provider = SQLiteProvider(path=tmp_path / f"{MARKER}.db")
    assert MARKER not in repr(provider)
    provider.close()
    assert "closed" in repr(provider)


# -- the file --------------------------------------------------------------------------


def test_file_format(provider: SQLiteProvider, tmp_path: Path) -> None:
    provider.write(scope=SCOPE, key="doc-1", content="hello")
    with _raw(tmp_path / "memory.db") as raw:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert raw.execute("PRAGMA application_id").fetchone()[0] == _schema.APPLICATION_ID
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        meta = dict(raw.execute("SELECT name, value FROM meta").fetchall())
        assert meta["tokenizer"] == _terms.TOKENIZER
        row = raw.execute("SELECT key, content, length(ref), hex(sha256) FROM documents").fetchone()
        assert row[:3] == ("doc-1", "hello", 16)
    assert provider._conn is not None
    # NORMAL by default: in WAL mode a commit survives a crash of the writing process.
    assert provider._conn.execute("PRAGMA synchronous").fetchone()[0] == 1


def test_refs_are_opaque_stable_and_path_free(tmp_path: Path) -> None:
    with SQLiteProvider(path=tmp_path / MARKER / "a.db") as one:
        first = one.write(scope=SCOPE, key="doc-1", content="x").ref
    with SQLiteProvider(path=tmp_path / "b.db") as two:
        second = two.write(scope=SCOPE, key="doc-1", content="y").ref
        other = two.write(scope=SCOPE, key="doc-2", content="y").ref
        peer = ProviderScope(
            namespace=SCOPE.namespace, scope_ref=SCOPE.scope_ref, actor_peer_id="p"
        )
        peered = two.write(scope=peer, key="doc-1", content="y").ref
    assert first == second  # the same (scope, key) is the same ref, whatever the file
    assert len({first, other, peered}) == 3
    assert re.fullmatch(r"sqlite:[0-9a-f]{32}", first)
    assert MARKER not in first


def test_exact_readback_edge_cases(provider: SQLiteProvider) -> None:
    for index, content in enumerate(["a\x00b", "\x00", "\r\n\r\n", "  ", "é" * 1000, "\ufeffbom"]):
        written = provider.write(scope=SCOPE, key=f"doc-{index}", content=content)
        assert provider.read(scope=SCOPE, ref=written.ref).content == content


def test_lone_surrogate_content_is_rejected(provider: SQLiteProvider) -> None:
    with pytest.raises(RecordValidationError) as caught:
        provider.write(scope=SCOPE, key="doc-1", content="bad \ud800 text")
    assert caught.value.path == "$.content"
    assert provider.inventory(scope=SCOPE).record_count == 0


def test_oversized_content_message_has_no_content(provider: SQLiteProvider) -> None:
    with pytest.raises(RecordValidationError) as caught:
        provider.write(scope=SCOPE, key="doc-1", content=MARKER * (MAX_CONTENT_BYTES // 10))
    assert MARKER not in str(caught.value)


def test_bad_timeout_is_rejected(provider: SQLiteProvider) -> None:
    for bad in (0, -1, float("nan"), True, "1"):
        with pytest.raises(RecordValidationError, match="timeout"):
            provider.read(scope=SCOPE, ref="doc-1", timeout=bad)  # type: ignore[arg-type]


def test_scope_must_be_a_provider_scope(provider: SQLiteProvider) -> None:
    with pytest.raises(RecordValidationError):
        provider.write(scope="rm-test", key="doc-1", content="x")  # type: ignore[arg-type]


def test_inventory_keeps_an_emptied_corpus_present(provider: SQLiteProvider) -> None:
    refs = [provider.write(scope=SCOPE, key=f"doc-{i}", content=f"c{i}").ref for i in range(3)]
    for ref in refs:
        assert provider.delete(scope=SCOPE, ref=ref).deleted is True
    inventory = provider.inventory(scope=SCOPE)
    assert (inventory.corpus_present, inventory.record_count, inventory.index_present) == (
        True,
        0,
        True,
    )
    never = provider.inventory(scope=ProviderScope(namespace="other", scope_ref="main"))
    assert (never.corpus_present, never.record_count, never.index_present) == (False, 0, True)


def test_write_many(provider: SQLiteProvider) -> None:
    provider.write(scope=SCOPE, key="doc-0", content="zero")
    results = provider.write_many(
        scope=SCOPE,
        items=[("doc-0", "zero"), ("doc-1", "one"), ("doc-0", "changed"), ("doc-1", "one")],
    )
    assert [r.status for r in results] == ["unchanged", "created", "conflict", "unchanged"]
    assert provider.inventory(scope=SCOPE).record_count == 2
    with pytest.raises(RecordValidationError):
        provider.write_many(scope=SCOPE, items=[("doc-2", "two"), ("bad key", "x")])
    with pytest.raises(RecordValidationError):
        provider.write_many(scope=SCOPE, items=[["doc-3", "three"]])  # type: ignore[list-item]
    assert provider.inventory(scope=SCOPE).record_count == 2
    assert provider.write_many(scope=SCOPE, items=[]) == ()


def test_closed_provider_is_unavailable(tmp_path: Path) -> None:
    with SQLiteProvider(path=tmp_path / "m.db") as provider:
        ref = provider.write(scope=SCOPE, key="doc-1", content="x").ref
    provider.close()  # closing twice is fine
    with pytest.raises(ProviderUnavailable) as caught:
        provider.read(scope=SCOPE, ref=ref)
    assert caught.value.reason_code == "provider_closed"


# -- unavailable stores ----------------------------------------------------------------


def test_location_under_a_file_is_unavailable(tmp_path: Path) -> None:
    blocker = tmp_path / MARKER
    blocker.write_text("a file, not a directory")
    provider = SQLiteProvider(path=blocker / "sub" / "memory.db")
    for call in (
        lambda: provider.write(scope=SCOPE, key="doc-1", content="x"),
        lambda: provider.read(scope=SCOPE, ref="doc-1"),
        lambda: provider.search(scope=SCOPE, query="x", limit=1),
        lambda: provider.inventory(scope=SCOPE),
    ):
        with pytest.raises(ProviderUnavailable) as caught:
            call()
        assert caught.value.reason_code == "provider_unavailable"
        _assert_public(caught.value, tmp_path)
    provider.close()


def test_corrupt_file_is_unavailable(tmp_path: Path) -> None:
    path = tmp_path / f"{MARKER}.db"
    path.write_bytes(os.urandom(8192))
    with SQLiteProvider(path=path) as provider:
        with pytest.raises(ProviderUnavailable) as caught:
            provider.write(scope=SCOPE, key="doc-1", content="x")
        _assert_public(caught.value, tmp_path)


def test_newer_schema_is_unavailable_and_untouched(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    with SQLiteProvider(path=path) as provider:
        provider.write(scope=SCOPE, key="doc-1", content="x")
    with _raw(path) as raw:
        raw.execute("PRAGMA user_version = 99")
    with SQLiteProvider(path=path) as provider, pytest.raises(ProviderUnavailable, match="newer"):
        provider.inventory(scope=SCOPE)
    with _raw(path) as raw:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == 99


def test_foreign_database_is_refused_and_untouched(tmp_path: Path) -> None:
    path = tmp_path / "app.db"
    with _raw(path) as raw:
        raw.execute("CREATE TABLE accounts (id INTEGER PRIMARY KEY, name TEXT)")
    with (
        SQLiteProvider(path=path) as provider,
        pytest.raises(ProviderUnavailable, match="not a reward-memory store"),
    ):
        provider.write(scope=SCOPE, key="doc-1", content="x")
    with _raw(path) as raw:
        names = [r[0] for r in raw.execute("SELECT name FROM sqlite_master")]
        assert names == ["accounts"]


# -- locks, timeouts, retries ----------------------------------------------------------


def test_a_held_write_lock_times_out_writes_but_not_reads(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    with SQLiteProvider(path=path) as provider:
        ref = provider.write(scope=SCOPE, key="doc-1", content="readable").ref
        legacy = _legacy_pending_write(path, "doc-0", "readable legacy")
        holder = sqlite3.connect(path, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        try:
            started = time.monotonic()
            with pytest.raises(ProviderUnavailable) as caught:
                provider.write(scope=SCOPE, key="doc-2", content="blocked", timeout=0.2)
            assert caught.value.reason_code == "provider_timeout"
            assert time.monotonic() - started < 2.0
            # WAL: readers are never blocked by a writer, and neither is a search: it
            # sees every acknowledged write (indexed with it), and answers from the
            # index as it stands for a not yet indexed (legacy) document ...
            assert provider.read(scope=SCOPE, ref=ref, timeout=0.2).content == "readable"
            started = time.monotonic()
            hits = provider.search(scope=SCOPE, query="readable", limit=5, timeout=0.2).hits
            assert [hit.ref for hit in hits] == [ref]
            assert time.monotonic() - started < 0.2
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        # ... and indexes that one as soon as the lock is free.
        hits = provider.search(scope=SCOPE, query="readable", limit=5).hits
        assert {hit.ref for hit in hits} == {ref, legacy}
        assert provider.write(scope=SCOPE, key="doc-2", content="now").status == "created"


def test_lock_contention_is_retried_until_the_lock_frees(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    with SQLiteProvider(path=path, busy_timeout_ms=20) as provider:
        provider.write(scope=SCOPE, key="doc-0", content="x")
        holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        holder.execute("BEGIN IMMEDIATE")
        release = threading.Timer(0.3, lambda: holder.execute("COMMIT"))
        release.start()
        try:
            started = time.monotonic()
            result = provider.write(scope=SCOPE, key="doc-1", content="waited", timeout=10)
            assert result.status == "created"
            assert time.monotonic() - started >= 0.25
        finally:
            release.join()
            holder.close()


def test_a_runaway_statement_is_interrupted_at_the_deadline(provider: SQLiteProvider) -> None:
    provider.write(scope=SCOPE, key="doc-1", content="x")
    endless = "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r) SELECT max(i) FROM r"
    started = time.monotonic()
    with pytest.raises(ProviderUnavailable) as caught:
        provider._call(0.1, create=False, op=lambda conn: conn.execute(endless).fetchall())
    assert caught.value.reason_code == "provider_timeout"
    assert time.monotonic() - started < 2.0
    assert provider.inventory(scope=SCOPE).record_count == 1  # still usable


def test_threads_share_one_provider(provider: SQLiteProvider) -> None:
    errors: list[BaseException] = []

    def work(worker: int) -> None:
        try:
            for i in range(40):
                ref = provider.write(
                    scope=SCOPE, key=f"t{worker}-{i}", content=f"w{worker} {i}"
                ).ref
                assert provider.read(scope=SCOPE, ref=ref).content == f"w{worker} {i}"
                provider.search(scope=SCOPE, query=f"w{worker}", limit=5)
        except BaseException as exc:  # noqa: BLE001 - collected and re-raised below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert provider.inventory(scope=SCOPE).record_count == 160


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_opens_its_own_connection(provider: SQLiteProvider) -> None:
    ref = provider.write(scope=SCOPE, key="doc-1", content="parent").ref
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through its exit status
        code = 1
        try:
            child_ref = provider.write(scope=SCOPE, key="doc-2", content="child").ref
            ok = provider.read(scope=SCOPE, ref=child_ref).content == "child"
            code = 0 if ok and provider.read(scope=SCOPE, ref=ref).found else 1
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert provider.inventory(scope=SCOPE).record_count == 2


# -- search ---------------------------------------------------------------------------

NASTY_QUERIES = [
    '"',
    '""',
    '"unbalanced',
    "*",
    "alpha*",
    "NEAR(alpha beta, 2)",
    "NEAR",
    "alpha -beta",
    "-",
    "col:alpha",
    ":",
    "alpha OR",
    "OR AND NOT",
    "AND",
    "( alpha",
    ")",
    "^alpha",
    "'",
    "\\",
    "{terms}: alpha",
    "terms:alpha",
    "documents_fts MATCH alpha",
    "%",
    "_",
    "\x00",
    "😀👩‍💻",
    "+alpha",
    "alpha AND NOT beta",
    "a" * 5000,
    " ".join(f"w{i}" for i in range(200)),
    "",
    "   \t\n",
]


@pytest.mark.parametrize("query", NASTY_QUERIES)
def test_search_never_chokes_on_query_syntax(provider: SQLiteProvider, query: str) -> None:
    provider.write(scope=SCOPE, key="doc-1", content="alpha beta gamma")
    provider.write(scope=SCOPE, key="doc-2", content="unrelated words")
    result = provider.search(scope=SCOPE, query=query, limit=5)
    if "alpha" in query:
        assert result.hits, "a plain term inside the query should still match"


def test_query_must_be_a_string(provider: SQLiteProvider) -> None:
    with pytest.raises(RecordValidationError):
        provider.search(scope=SCOPE, query=None, limit=1)  # type: ignore[arg-type]


def test_a_query_with_a_lone_surrogate_is_refused(provider: SQLiteProvider) -> None:
    """As every provider refuses it (the SPI's check_query; OpenViking could not send it)."""
    with pytest.raises(RecordValidationError) as caught:
        provider.search(scope=SCOPE, query="bad \ud800 surrogate alpha", limit=5)
    assert (caught.value.path, caught.value.code) == ("$.query", "unsafe_character")


@pytest.mark.parametrize(
    ("content", "query"),
    [
        ("长期记忆系统的设计原则", "记忆"),
        ("長期記憶を検索する", "記憶"),
        ("한국어 메모리 검색", "메모리"),
        ("Café crème brûlée", "cafe"),
        ("cafe crème", "CAFÉ"),
        ("cafe\u0301 au lait", "café"),
        ("Ελληνικά κείμενα", "ελληνικα"),
        ("РУССКИЙ текст", "русский"),
        ("\uff21\uff30\uff29 \uff56\uff45\uff52\uff53\uff49\uff4f\uff4e", "api"),
        ("Straße und Weg", "straße"),
        ("fixing flaky retries", "retry"),
        ("snake_case_identifier", "case"),
    ],
)
def test_unicode_search(provider: SQLiteProvider, content: str, query: str) -> None:
    wanted = provider.write(scope=SCOPE, key="doc-1", content=content)
    provider.write(scope=SCOPE, key="doc-2", content="something else entirely")
    hits = provider.search(scope=SCOPE, query=query, limit=5).hits
    assert [hit.ref for hit in hits] == [wanted.ref]


def test_search_stays_inside_the_scope(provider: SQLiteProvider) -> None:
    scopes = [
        SCOPE,
        ProviderScope(namespace="rm-test", scope_ref="project:other"),
        ProviderScope(namespace="rm-other", scope_ref="project:main"),
        ProviderScope(namespace="rm-test", scope_ref="project:main", actor_peer_id="peer-a"),
        ProviderScope(namespace="rm-test", scope_ref="project:main", actor_peer_id="peer-b"),
    ]
    refs = {
        s: provider.write(scope=s, key="doc-1", content=f"shared topic {i}").ref
        for i, s in enumerate(scopes)
    }
    for scope in scopes:
        hits = provider.search(scope=scope, query="shared topic", limit=10).hits
        assert [hit.ref for hit in hits] == [refs[scope]]


def test_content_cannot_forge_another_scopes_terms(provider: SQLiteProvider) -> None:
    first = ProviderScope(namespace="rm-test", scope_ref="first")
    second = ProviderScope(namespace="rm-test", scope_ref="second")
    provider.write(scope=first, key="doc-0", content="creates scope 1")
    provider.write(scope=second, key="doc-0", content="creates scope 2")
    # Looks like scope 2's index terms, but it is scope 1's content.
    provider.write(scope=first, key="doc-1", content="s2xsecret s2x secret")
    assert provider.search(scope=second, query="secret", limit=10).hits == ()
    assert len(provider.search(scope=first, query="secret", limit=10).hits) == 1


def test_rare_terms_rank_and_common_terms_fill_by_recency(
    provider: SQLiteProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_search, "RANK_BUDGET", 3)
    common = [
        provider.write(scope=SCOPE, key=f"doc-{i}", content=f"common note {i}").ref
        for i in range(10)
    ]
    rare = provider.write(scope=SCOPE, key="doc-rare", content="common and a rare needle").ref
    hits = provider.search(scope=SCOPE, query="common needle", limit=5).hits
    assert hits[0].ref == rare
    assert hits[0].score is not None
    # The rest: the newest documents that hold the common term, unscored.
    assert [hit.ref for hit in hits[1:]] == common[::-1][:4]
    assert all(hit.score is None for hit in hits[1:])
    only_common = provider.search(scope=SCOPE, query="common", limit=3).hits
    assert [hit.ref for hit in only_common] == [rare, *common[::-1][:2]]


def test_bm25_prefers_the_better_match(provider: SQLiteProvider) -> None:
    provider.write(scope=SCOPE, key="doc-1", content="retry once " + "filler " * 40)
    best = provider.write(scope=SCOPE, key="doc-2", content="retry backoff retry jitter").ref
    provider.write(scope=SCOPE, key="doc-3", content="nothing relevant")
    hits = provider.search(scope=SCOPE, query="retry backoff", limit=3).hits
    assert hits[0].ref == best
    assert len(hits) == 2
    assert hits[0].score is not None
    assert hits[1].score is not None
    assert hits[0].score > hits[1].score


def test_summaries_are_short_windows(provider: SQLiteProvider) -> None:
    long = "intro " * 300 + "the needle sits here " + "outro " * 300
    provider.write(scope=SCOPE, key="doc-long", content=long)
    provider.write(scope=SCOPE, key="doc-short", content="needle\r\n  in   a short note")
    hits = {hit.summary for hit in provider.search(scope=SCOPE, query="needle", limit=5).hits}
    short = "needle in a short note"
    assert short in hits
    (window,) = hits - {short}
    assert len(window) <= _terms.SUMMARY_CHARS
    assert window.startswith("…")
    assert window.endswith("…")
    assert "needle" in window


def test_deletes_remove_every_index_term(provider: SQLiteProvider, tmp_path: Path) -> None:
    samples = [
        "plain ascii words",
        "Grüße, 記憶, Ελληνικά, עברית, русский ǅ İ \uff21\uff30\uff29",
        "emoji 🧠💾 👩‍👩‍👧‍👦 1️⃣ and ZWJ a\u200db",
        "x" * 200 + " long token",
        "",
    ]
    refs = [
        provider.write(scope=SCOPE, key=f"doc-{i}", content=s).ref for i, s in enumerate(samples)
    ]
    path = tmp_path / "memory.db"
    assert _pending(path) == 0
    assert _indexed_terms(path) > 0
    for ref in refs:
        assert provider.delete(scope=SCOPE, ref=ref).deleted is True
    assert _indexed_terms(path) == 0
    with _raw(path) as raw:
        raw.execute("INSERT INTO documents_fts (documents_fts) VALUES ('integrity-check')")


def test_a_long_query_keeps_its_longest_terms(provider: SQLiteProvider) -> None:
    wanted = provider.write(scope=SCOPE, key="doc-1", content="the idempotency of retries").ref
    filler = " ".join(["a", "to", "of", "in", "is", "it", "on", "at", "by", "or"] * 3)
    query = f"{filler} {' '.join(f'w{i}' for i in range(12))} idempotency"
    assert [hit.ref for hit in provider.search(scope=SCOPE, query=query, limit=3).hits] == [wanted]
    assert _terms.query_terms("b a c a b") == ["b", "a", "c"]


# -- indexing ---------------------------------------------------------------------------


def _pending(path: Path) -> int:
    with _raw(path) as raw:
        return int(raw.execute("SELECT count(*) FROM pending").fetchone()[0])


def _indexed_terms(path: Path) -> int:
    with _raw(path) as raw:
        raw.execute("CREATE VIRTUAL TABLE temp.vocab USING fts5vocab(main, documents_fts, row)")
        return int(raw.execute("SELECT count(*) FROM temp.vocab").fetchone()[0])


def _legacy_pending_write(path: Path, key: str, content: str) -> str:
    """Write a document the way reward-memory 0.1 wrote single documents: not yet
    indexed, its id in ``pending`` (such stores exist; a search must still find it)."""
    with _raw(path) as raw:
        (scope_id,) = raw.execute(
            "SELECT scope_id FROM scopes WHERE namespace = ? AND scope_ref = ? AND peer = ''",
            (SCOPE.namespace, SCOPE.scope_ref),
        ).fetchone()
        ref = _provider._ref_digest((SCOPE.namespace, SCOPE.scope_ref, ""), key)
        digest = hashlib.sha256(content.encode()).digest()
        with raw:
            cursor = raw.execute(
                "INSERT INTO documents (scope_id, ref, sha256, key, content) VALUES (?,?,?,?,?)",
                (scope_id, ref, digest, key, content),
            )
            raw.execute("INSERT INTO pending (id) VALUES (?)", (cursor.lastrowid,))
            raw.execute(
                "UPDATE scopes SET record_count = record_count + 1, last_id = ? WHERE scope_id = ?",
                (cursor.lastrowid, scope_id),
            )
    return "sqlite:" + ref.hex()


def test_single_writes_are_indexed_at_once(provider: SQLiteProvider, tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    written = provider.write(scope=SCOPE, key="doc-1", content="fresh single note")
    assert _pending(path) == 0
    assert _indexed_terms(path) == 3
    # Another connection sees it in the index at once: searching needs no write.
    with SQLiteProvider(path=path) as other:
        assert [hit.ref for hit in other.search(scope=SCOPE, query="fresh", limit=5).hits] == [
            written.ref
        ]


def test_a_search_indexes_pending_writes_of_other_connections(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    with (
        SQLiteProvider(path=path) as writer,
        SQLiteProvider(path=path, synchronous="full") as reader,
    ):
        writer.write(scope=SCOPE, key="doc-0", content="an indexed note")
        ref = _legacy_pending_write(path, "doc-1", "fresh pending words")
        assert _pending(path) == 1
        hits = reader.search(scope=SCOPE, query="pending", limit=5).hits
        assert [hit.ref for hit in hits] == [ref]
        assert _pending(path) == 0
        assert reader._conn is not None
        assert reader._conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL again


def test_bulk_writes_are_indexed_at_once(provider: SQLiteProvider, tmp_path: Path) -> None:
    provider.write_many(scope=SCOPE, items=[(f"doc-{i}", f"bulk {i}") for i in range(5)])
    assert _pending(tmp_path / "memory.db") == 0


def test_deleting_a_pending_document_leaves_the_index_alone(
    provider: SQLiteProvider, tmp_path: Path
) -> None:
    path = tmp_path / "memory.db"
    kept = provider.write(scope=SCOPE, key="doc-kept", content="kept words").ref
    gone = _legacy_pending_write(path, "doc-gone", "gone words")
    assert provider.delete(scope=SCOPE, ref=gone).deleted is True
    assert _pending(path) == 0
    assert [hit.ref for hit in provider.search(scope=SCOPE, query="words", limit=5).hits] == [kept]
    with _raw(path) as raw:
        raw.execute("INSERT INTO documents_fts (documents_fts) VALUES ('integrity-check')")


def test_a_read_only_store_still_searches_what_is_indexed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    provider = SQLiteProvider(path=tmp_path / "memory.db", synchronous="full")
    indexed = provider.write(scope=SCOPE, key="doc-1", content="indexed words").ref
    _legacy_pending_write(tmp_path / "memory.db", "doc-2", "pending words")

    def read_only(conn: sqlite3.Connection) -> None:  # fault injection: SQLITE_READONLY
        error = sqlite3.OperationalError("attempt to write a readonly database")
        error.sqlite_errorcode = 8
        raise error

    monkeypatch.setattr(provider, "_index_pending", read_only)
    hits = provider.search(scope=SCOPE, query="words", limit=5).hits
    assert [hit.ref for hit in hits] == [indexed]
    assert provider._conn is not None
    assert provider._conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL again
    provider.close()


# -- the term derivation (the index depends on it never changing) -------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Fix flaky_retry-tests in HTTP/2 client.",
            ["fix", "flaky", "retry", "tests", "in", "http", "2", "client"],
        ),
        ("Café naïve ǅ İstanbul \uff21\uff30\uff29", ["cafe", "naive", "dz", "istanbul", "api"]),
        ("長期記憶 a 记", ["長期", "期記", "記憶", "a", "记"]),
        ("python中文版", ["python", "中文", "文版"]),
        ("Ελληνικά РУССКИЙ Straße", ["ελληνικα", "русскии", "straße"]),
        # U+00AD was punctuation in Unicode 3.2 (format only since 4.0): frozen as a separator.
        ("e\u0301 a\u200db soft\u00adhyphen", ["e", "ab", "soft", "hyphen"]),
        ("😀fix👩‍💻bug 1️⃣", ["fix", "bug", "1"]),
        ("", []),
        ("x" * 70, ["x" * 64]),
    ],
)
def test_terms_are_pinned(text: str, expected: list[str]) -> None:
    assert _terms.terms(text) == expected


_ASCII_WORD = re.compile(r"[a-z0-9]+")


@settings(max_examples=300)
@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=300))
def test_ascii_terms_equal_the_reference_derivation(text: str) -> None:
    """A contentless delete re-derives the terms a write indexed, possibly by an older
    version: the fast ASCII path must give exactly ``[a-z0-9]+`` of the lowered text."""
    expected = [word[:64] for word in _ASCII_WORD.findall(text.lower())]
    assert _terms.terms(text) == expected


_WORDS = st.sampled_from(["retry", "budget", "cache", "lint", "patch", "flaky", "rare", "x1"])


@settings(max_examples=40, deadline=None)
@given(
    documents=st.lists(st.lists(_WORDS, min_size=1, max_size=6), min_size=1, max_size=25),
    query=st.lists(_WORDS, min_size=1, max_size=4),
    budget=st.integers(min_value=1, max_value=30),
)
def test_the_union_probe_ranks_like_the_per_term_probes(
    tmp_path_factory: pytest.TempPathFactory,
    documents: list[list[str]],
    query: list[str],
    budget: int,
) -> None:
    """One probe for all the terms is only a shortcut: the same hits, order and scores."""
    path = tmp_path_factory.mktemp("union") / "memory.db"
    items = [(f"doc-{i}", " ".join(words)) for i, words in enumerate(documents)]
    with SQLiteProvider(path=path) as provider, pytest.MonkeyPatch.context() as patch:
        provider.write_many(scope=SCOPE, items=items)
        patch.setattr(_search, "RANK_BUDGET", budget)
        fast = provider.search(scope=SCOPE, query=" ".join(query), limit=10).hits
        patch.setattr(_search, "_rare_together", lambda *_: None)
        slow = provider.search(scope=SCOPE, query=" ".join(query), limit=10).hits
    # The same hits with the same scores; BM25 sums its terms in another order on the two
    # paths, so scores may differ in the last bit and near-ties may swap places.
    assert [hit.ref for hit in fast if hit.score is None] == [
        hit.ref for hit in slow if hit.score is None
    ]
    assert {
        hit.ref: pytest.approx(hit.score, rel=1e-9) for hit in fast if hit.score is not None
    } == {hit.ref: hit.score for hit in slow if hit.score is not None}
    for hits in (fast, slow):
        scores = [hit.score for hit in hits if hit.score is not None]
        assert all(a >= b * (1 - 1e-9) for a, b in itertools.pairwise(scores))


# -- several processes, and kill -9 ----------------------------------------------------

_CONTENT = """
def content(key):
    n = sum(map(ord, key))
    return f"document {key}\\r\\n" + "payload wörds 記憶 " * (n % 23) + " " * (n % 3)
"""

_SHARED_WRITER = (
    _CONTENT
    + """
import json, random, sys
from reward_memory.providers.spi import ProviderScope
from reward_memory.providers.sqlite import SQLiteProvider

path, seed = sys.argv[1], int(sys.argv[2])
provider = SQLiteProvider(path=path, timeout=60)
scope = ProviderScope(namespace="rm-mp", scope_ref="shared")
keys = [f"doc-{i}" for i in range(100)]
random.Random(seed).shuffle(keys)
print("ready", flush=True)
sys.stdin.readline()
statuses = {key: provider.write(scope=scope, key=key, content=content(key)).status for key in keys}
provider.close()
print(json.dumps(statuses), flush=True)
"""
)


def _child(code: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", code, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _content_of(key: str) -> str:
    namespace: dict[str, object] = {}
    exec(_CONTENT, namespace)  # the very function the child processes use
    return namespace["content"](key)  # type: ignore[operator, no-any-return]


@pytest.mark.slow
def test_eight_processes_write_the_same_documents(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    children = [_child(_SHARED_WRITER, str(path), str(seed)) for seed in range(8)]
    try:
        for child in children:
            assert child.stdout is not None
            assert child.stdout.readline().strip() == "ready"
        for child in children:  # start together, on a store none of them has created yet
            assert child.stdin is not None
            child.stdin.write("go\n")
            child.stdin.flush()
        outputs = [child.communicate(timeout=120) for child in children]
    finally:
        for child in children:
            child.kill()
    created: dict[str, int] = {}
    for child, (out, err) in zip(children, outputs, strict=True):
        assert child.returncode == 0, err
        assert err == ""
        statuses = json.loads(out)
        assert len(statuses) == 100
        assert set(statuses.values()) <= {"created", "unchanged"}
        for key, status in statuses.items():
            created[key] = created.get(key, 0) + (status == "created")
    assert created == {f"doc-{i}": 1 for i in range(100)}
    with _raw(path) as raw:
        assert raw.execute("SELECT count(*) FROM documents").fetchone()[0] == 100
        assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    scope = ProviderScope(namespace="rm-mp", scope_ref="shared")
    with SQLiteProvider(path=path) as provider:
        assert provider.inventory(scope=scope).record_count == 100
        for i in range(100):
            ref = provider.write(scope=scope, key=f"doc-{i}", content=_content_of(f"doc-{i}"))
            assert ref.status == "unchanged"
            assert provider.read(scope=scope, ref=ref.ref).content == _content_of(f"doc-{i}")


_CRASHING_WRITER = (
    _CONTENT
    + """
import sys
from reward_memory.providers.spi import ProviderScope
from reward_memory.providers.sqlite import SQLiteProvider

path, run = sys.argv[1], sys.argv[2]
provider = SQLiteProvider(path=path, timeout=60)
scope = ProviderScope(namespace="rm-crash", scope_ref="main")
out = sys.stdout
written = []
i = 0
while True:
    key = f"r{run}-{i}"
    body = content(key) * (40 if i % 17 == 0 else 1)  # now and then a multi-page document
    ref = provider.write(scope=scope, key=key, content=body).ref
    written.append(ref)
    out.write(f"w {key} {ref}\\n")
    out.flush()
    if i % 7 == 3:  # a search indexes what is pending: its transaction gets killed too
        provider.search(scope=scope, query=f"payload r{run}", limit=3)
    if i % 5 == 4:
        victim = written.pop(0)
        out.write(f"D {victim}\\n")  # about to delete: it may or may not be gone after a kill
        out.flush()
        provider.delete(scope=scope, ref=victim)
        out.write(f"d {victim}\\n")
        out.flush()
    i += 1
"""
)


@pytest.mark.slow
def test_acknowledged_writes_survive_sigkill(tmp_path: Path) -> None:
    path = tmp_path / "crash.db"
    seed = int.from_bytes(os.urandom(4), "big")
    rng = random.Random(seed)
    acknowledged: dict[str, tuple[str, str]] = {}  # key -> (ref, content)
    deleted: set[str] = set()  # acknowledged deletes
    deleting: set[str] = set()  # deletes begun, maybe cut short
    for run in range(20):
        child = _child(_CRASHING_WRITER, str(path), str(run))
        time.sleep(rng.uniform(0.15, 0.6))
        child.send_signal(signal.SIGKILL)
        out, _ = child.communicate(timeout=30)
        assert child.returncode == -signal.SIGKILL, f"seed {seed}: the child ended by itself"
        complete = out.split("\n")[:-1]  # a cut-off last line was never acknowledged
        for line in complete:
            kind, *values = line.split(" ")
            if kind == "w":
                key, ref = values
                body = _content_of(key) * (40 if int(key.rsplit("-", 1)[1]) % 17 == 0 else 1)
                acknowledged[key] = (ref, body)
            elif kind == "D":
                deleting.add(values[0])
            else:
                deleted.add(values[0])
    assert len(acknowledged) > 20, f"seed {seed}: too few writes to prove anything"
    scope = ProviderScope(namespace="rm-crash", scope_ref="main")
    with _raw(path) as raw:
        assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok", f"seed {seed}"
        raw.execute("INSERT INTO documents_fts (documents_fts) VALUES ('integrity-check')")
        stored = raw.execute("SELECT count(*) FROM documents").fetchone()[0]
    with SQLiteProvider(path=path) as provider:
        for key, (ref, body) in acknowledged.items():
            read = provider.read(scope=scope, ref=ref)
            if ref in deleted:
                assert read.found is False, f"seed {seed}: the delete of {key} was lost"
            elif ref in deleting:
                assert read.content in (None, body), f"seed {seed}: {key} changed"
            else:
                assert read.content == body, f"seed {seed}: {key} was lost or changed"
        assert provider.inventory(scope=scope).record_count == stored


_TOKEN_TAIL = st.text(alphabet="abz09._:/#-", min_size=1, max_size=6)


@settings(max_examples=40, deadline=None)
@given(
    part=st.sampled_from(["namespace", "scope_ref", "actor_peer_id"]),
    head=st.from_regex(r"[a-z0-9][a-z0-9._:/#-]{0,8}", fullmatch=True),
    tail=_TOKEN_TAIL,
    query_noise=st.sampled_from(["", "*", "%", "_", "?", '"', "NEAR", "-", "terms:"]),
)
def test_no_scope_sees_a_sibling_that_extends_its_name(
    tmp_path_factory: pytest.TempPathFactory,
    part: str,
    head: str,
    tail: str,
    query_noise: str,
) -> None:
    """Issue 9 item 7: ``…/a`` never sees ``…/ab`` (any part, any token characters,
    wildcard or FTS5 syntax around the query), and the longer name never sees the shorter."""
    base = {"namespace": "rm-prop", "scope_ref": "main", "actor_peer_id": None}
    try:
        short = ProviderScope(**{**base, part: head})  # type: ignore[arg-type]
        long = ProviderScope(**{**base, part: head + tail})  # type: ignore[arg-type]
    except RecordValidationError:  # e.g. "a:/" reads as a local path: not a scope at all
        assume(False)
    path = tmp_path_factory.mktemp("siblings") / "memory.db"
    with SQLiteProvider(path=path) as provider:
        in_short = provider.write(scope=short, key="doc", content="shortword shared").ref
        in_long = provider.write(scope=long, key="doc", content="longword shared").ref
        for home, own, other in ((short, in_short, in_long), (long, in_long, in_short)):
            assert provider.read(scope=home, ref=other).found is False
            for word in ("shortword", "longword", "shared"):
                query = f"{query_noise}{word}{query_noise}"
                hits = provider.search(scope=home, query=query, limit=10).hits
                assert {hit.ref for hit in hits} <= {own}
            assert provider.inventory(scope=home).record_count == 1


@pytest.mark.parametrize("marked", [False, True], ids=["tables-of-its-own", "another-app-id"])
def test_another_applications_sqlite_file_is_refused_untouched(
    tmp_path: Path, marked: bool
) -> None:
    """Refused before any pragma that writes (journal mode, schema, application id)."""
    path = tmp_path / "theirs.db"
    conn = sqlite3.connect(path)
    if marked:
        conn.execute("PRAGMA application_id = 1179659350")  # another app's mark, no tables
    else:
        conn.execute("CREATE TABLE notes (x)")
    conn.commit()
    conn.close()
    before = path.read_bytes()
    provider = SQLiteProvider(path=path)
    with pytest.raises(ProviderUnavailable, match="not a reward-memory store"):
        provider.inventory(scope=SCOPE)
    provider.close()
    assert path.read_bytes() == before
    assert not (tmp_path / "theirs.db-wal").exists()


def test_a_huge_finite_timeout_is_no_timeout_error(tmp_path: Path) -> None:
    provider = SQLiteProvider(path=tmp_path / "m.db")
    written = provider.write(scope=SCOPE, key="k", content="body", timeout=1e306)
    assert written.status == "created"
    assert provider.read(scope=SCOPE, ref=written.ref, timeout=1.7e308).found
    assert provider.search(scope=SCOPE, query="body", limit=1, timeout=1e300).hits
    provider.close()


_FIRST_WRITE = """
import sys
from reward_memory.providers.spi import ProviderScope
from reward_memory.providers.sqlite import SQLiteProvider
provider = SQLiteProvider(path=sys.argv[1])
try:
    provider.write(scope=ProviderScope(namespace="ns", scope_ref="a"), key="k" + sys.argv[2],
                   content="x")
    print("ok")
except Exception as exc:
    print(type(exc).__name__)
"""


def test_processes_creating_one_new_store_at_once_all_see_a_store(tmp_path: Path) -> None:
    """While one process creates the store (its tables and its mark in one commit), the
    others' is-it-ours check must read one snapshot, never tables without the mark."""
    for round_ in range(6):
        path = tmp_path / f"new-{round_}.db"
        runs = [
            subprocess.Popen(
                [sys.executable, "-c", _FIRST_WRITE, str(path), str(index)],
                stdout=subprocess.PIPE,
                text=True,
            )
            for index in range(8)
        ]
        answers = [run.communicate(timeout=60)[0].strip() for run in runs]
        assert answers == ["ok"] * 8
