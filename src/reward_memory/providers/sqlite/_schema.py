"""The store's schema, its SQL statements, and opening a file as a store (pragmas, migrations)."""

from __future__ import annotations

import contextlib
import sqlite3
from typing import Final

from reward_memory.errors import ProviderUnavailable
from reward_memory.providers.sqlite._terms import TOKENIZER

SCHEMA_VERSION: Final = 1
#: Merge a level's index segments as soon as it holds this many (FTS5's default is 16).
#: Every write commits one small segment, and incremental automerge only works per 64
#: leaf pages written, so with the default a dozen one-page segments pile up on the
#: first level, and every term lookup visits each of them: a search looks a term up
#: two or three times (probe, match, BM25's document frequency). Four halves the
#: segments a lookup visits (search -25 %, write +4 %, measured on ingest records).
CRISISMERGE: Final = 4
APPLICATION_ID: Final = 0x524D3031  # "RM01": marks a reward-memory store file
TUNE_CRISISMERGE: Final = (  # the value is CRISISMERGE (a test holds them equal)
    "INSERT INTO documents_fts (documents_fts, rank) VALUES ('crisismerge', 4)"
)

SCHEMA_V1: Final = (
    """
    CREATE TABLE meta (
        name TEXT PRIMARY KEY,
        value TEXT NOT NULL
    ) WITHOUT ROWID
    """,
    """
    CREATE TABLE scopes (
        scope_id INTEGER PRIMARY KEY,
        namespace TEXT NOT NULL,
        scope_ref TEXT NOT NULL,
        peer TEXT NOT NULL,
        record_count INTEGER NOT NULL DEFAULT 0 CHECK (record_count >= 0),
        last_id INTEGER NOT NULL DEFAULT 0,
        UNIQUE (namespace, scope_ref, peer)
    )
    """,
    """
    CREATE TABLE documents (
        id INTEGER PRIMARY KEY,
        scope_id INTEGER NOT NULL REFERENCES scopes (scope_id),
        ref BLOB NOT NULL CHECK (length(ref) = 16),
        sha256 BLOB NOT NULL CHECK (length(sha256) = 32),
        key TEXT NOT NULL,
        content TEXT NOT NULL,
        UNIQUE (scope_id, ref)
    )
    """,
    # Documents written but not yet in the full-text index (see "Indexing").
    "CREATE TABLE pending (id INTEGER PRIMARY KEY)",
    """
    CREATE VIRTUAL TABLE documents_fts USING fts5(
        terms, content='', detail=full, tokenize='porter ascii'
    )
    """,
    # Merge index segments two at a time (default four): fewer segments for every
    # term lookup to visit; measured -20 % search p95 for +15 % bulk-load time.
    "INSERT INTO documents_fts (documents_fts, rank) VALUES ('automerge', 2)",
    TUNE_CRISISMERGE,
)

SELECT_SCOPE: Final = (
    "SELECT scope_id FROM scopes WHERE namespace = ? AND scope_ref = ? AND peer = ?"
)
SELECT_DIGEST: Final = "SELECT sha256 FROM documents WHERE scope_id = ? AND ref = ?"
SELECT_CONTENT: Final = "SELECT content FROM documents WHERE scope_id = ? AND ref = ?"
SELECT_FOR_DELETE: Final = "SELECT id, content FROM documents WHERE scope_id = ? AND ref = ?"
INSERT_DOCUMENT: Final = (
    "INSERT INTO documents (scope_id, ref, sha256, key, content) VALUES (?, ?, ?, ?, ?) "
    "ON CONFLICT (scope_id, ref) DO NOTHING"
)
INSERT_TERMS: Final = "INSERT INTO documents_fts (rowid, terms) VALUES (?, ?)"
PENDING: Final = (
    "SELECT p.id, d.scope_id, d.content FROM pending AS p "
    "JOIN documents AS d ON d.id = p.id ORDER BY p.id LIMIT ?"
)
DELETE_TERMS: Final = (
    "INSERT INTO documents_fts (documents_fts, rowid, terms) VALUES ('delete', ?, ?)"
)
COUNT: Final = (
    "UPDATE scopes SET record_count = record_count + ?, last_id = max(last_id, ?) "
    "WHERE scope_id = ?"
)
PROBE: Final = (
    "SELECT count(*) FROM (SELECT 1 FROM documents_fts WHERE documents_fts MATCH ? LIMIT ?)"
)
RANKED: Final = (
    # bm25() sorted as a plain column: a third cheaper than ORDER BY rank (same values).
    "SELECT d.id, d.ref, d.content, bm25(documents_fts) AS score FROM documents_fts AS f "
    "JOIN documents AS d ON d.id = f.rowid "
    "WHERE documents_fts MATCH ? AND d.scope_id = ? ORDER BY score LIMIT ?"
)
BY_ID: Final = "SELECT ref, content FROM documents WHERE id = ? AND scope_id = ?"
WINDOW: Final = (
    "SELECT rowid FROM documents_fts WHERE documents_fts MATCH ? AND rowid BETWEEN ? AND ?"
)
OLDER: Final = (
    "SELECT rowid FROM documents_fts WHERE documents_fts MATCH ? AND rowid < ? "
    "ORDER BY rowid DESC LIMIT ?"
)


def configure(conn: sqlite3.Connection, synchronous: str, *, create: bool = True) -> bool:
    """Set the connection's pragmas and bring the file to :data:`SCHEMA_VERSION`.

    Returns ``False``, having written nothing, for a file that holds no store yet
    (empty, or a fresh SQLite file) when ``create`` is false: reads leave it as it is.
    """
    # Before any pragma that writes to the file (journal_mode does).
    if not _refuse_foreign(conn) and not create:
        return False
    (mode,) = conn.execute("PRAGMA journal_mode = WAL").fetchone()
    if str(mode).lower() != "wal":
        raise ProviderUnavailable("the sqlite store cannot use WAL journaling here")
    conn.execute(f"PRAGMA synchronous = {synchronous.upper()}")
    conn.execute("PRAGMA temp_store = MEMORY")
    conn.execute("PRAGMA cache_size = -16384")  # 16 MiB page cache
    conn.execute("PRAGMA secure_delete = ON")  # deleted content is zeroed, not left behind
    conn.execute("PRAGMA journal_size_limit = 67108864")
    _migrate(conn)
    return True


_MARK_AND_OBJECTS: Final = (
    "SELECT (SELECT application_id FROM pragma_application_id()),"
    " (SELECT count(*) FROM sqlite_master)"
)


def _refuse_foreign(conn: sqlite3.Connection) -> bool:
    """Leave another application's SQLite file as it is: refuse it before touching it.

    Ours carries :data:`APPLICATION_ID`; a new store carries none and holds nothing.
    A file marked by another application, or unmarked with tables of its own, is not a
    store (``_migrate`` checks again under its write lock). Returns whether the file
    is marked as a store already.
    """
    # One statement, so one snapshot: another process may be creating the store right
    # now (its tables and its mark land in one commit), and two reads could see each side.
    app, objects = conn.execute(_MARK_AND_OBJECTS).fetchone()
    if app == APPLICATION_ID:
        return True
    if app != 0 or objects:
        raise ProviderUnavailable("the sqlite file is not a reward-memory store")
    return False


def _migrate(conn: sqlite3.Connection) -> None:
    (version,) = conn.execute("PRAGMA user_version").fetchone()
    if version == SCHEMA_VERSION:
        (app,) = conn.execute("PRAGMA application_id").fetchone()
        if app != APPLICATION_ID:
            raise ProviderUnavailable("the sqlite file is not a reward-memory store")
        _tune(conn)
        return
    if version > SCHEMA_VERSION:
        raise ProviderUnavailable(
            f"the sqlite store has schema version {int(version)}, newer than this "
            f"reward-memory supports ({SCHEMA_VERSION})"
        )
    conn.execute("BEGIN IMMEDIATE")
    try:
        (version,) = conn.execute("PRAGMA user_version").fetchone()
        if version == 0:
            (objects,) = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            if objects:
                raise ProviderUnavailable("the sqlite file is not a reward-memory store")
            for statement in SCHEMA_V1:
                conn.execute(statement)
            conn.executemany(
                "INSERT INTO meta (name, value) VALUES (?, ?)",
                [("tokenizer", TOKENIZER), ("created_schema_version", str(SCHEMA_VERSION))],
            )
            conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        # Later versions add ``elif version == N: migrate to N + 1`` steps here.
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
        raise


def _tune(conn: sqlite3.Connection) -> None:
    """Give a store created before :data:`CRISISMERGE` that setting (once, if writable).

    The setting lives in the FTS5 config table, which every SQLite reads the same way,
    so the file stays at schema version 1. A store this process cannot write to just
    keeps FTS5's default: search is correct either way, only slower.
    """
    rows = conn.execute(_CRISISMERGE_SET, ("crisismerge",)).fetchall()
    if rows and rows[0][0] == CRISISMERGE:
        return
    conn.execute("PRAGMA busy_timeout = 2")  # never queue behind a writer for this
    try:
        conn.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError:
        return  # busy or read-only: another open will set it
    try:
        conn.execute(TUNE_CRISISMERGE)
        conn.execute("COMMIT")
    except sqlite3.OperationalError:
        with contextlib.suppress(sqlite3.Error):
            conn.execute("ROLLBACK")


_CRISISMERGE_SET: Final = "SELECT v FROM documents_fts_config WHERE k = ?"
