"""Purge means gone: what a delete does so that no byte of the content stays in the files.

A deleted row is zeroed in place (``PRAGMA secure_delete``), but two copies outlive
it. The contentless FTS5 index keeps the document's terms in its old segments and
only records a delete marker (SQLite 3.40 has no FTS5 ``secure-delete``); merging
every segment into one (``optimize``) drops them. And the write-ahead log keeps
the page images that held the content until a checkpoint copies the new pages
into the database and ``TRUNCATE`` cuts the log to zero bytes (a ``RESTART``
would leave old frames in the file to be overwritten later).

An ``optimize`` on SQLite before 3.51 leaves an empty level behind in the index
structure, and an FTS5 index with too many levels (2,000) is unreadable for good
(``SQLITE_CORRUPT_VTAB``): about a thousand deletes did it here on 3.40. So every
:data:`REBUILD_EVERY` merges the index is rebuilt from the documents instead
(``delete-all``, then every indexed document again), which starts a new structure;
the cost is linear in the store, once per that many deletes.

Both steps run after the delete has committed, so a crash or timeout in between
leaves a flag in ``meta``; the next delete (of any ref, found or not) finishes the
job, so an operator's purge is safe to retry until it reports success.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Final

from reward_memory.errors import ProviderUnavailable
from reward_memory.providers.sqlite._terms import index_text, terms

if TYPE_CHECKING:
    import sqlite3

#: ``meta`` row set in the delete's transaction when index terms must be merged away.
ERASE_FLAG: Final = "erase_index_pending"
MARK_ERASE: Final = "INSERT OR REPLACE INTO meta (name, value) VALUES (?, '1')"
_FLAGGED: Final = "SELECT 1 FROM meta WHERE name = ?"
_CLEAR: Final = "DELETE FROM meta WHERE name = ?"
_OPTIMIZE: Final = "INSERT INTO documents_fts (documents_fts) VALUES ('optimize')"
_DELETE_ALL: Final = "INSERT INTO documents_fts (documents_fts) VALUES ('delete-all')"
_MERGES: Final = "erase_merges"
_READ_MERGES: Final = "SELECT value FROM meta WHERE name = ?"
_SET_MERGES: Final = "INSERT OR REPLACE INTO meta (name, value) VALUES (?, ?)"
_INDEXED: Final = (
    "SELECT d.id, d.scope_id, d.content FROM documents AS d "
    "WHERE NOT EXISTS (SELECT 1 FROM pending AS p WHERE p.id = d.id) ORDER BY d.id"
)
_INSERT_TERMS: Final = "INSERT INTO documents_fts (rowid, terms) VALUES (?, ?)"

#: Merges between two rebuilds: far below the 2,000 levels an old FTS5 can hold.
REBUILD_EVERY: Final = 128


def index_erase_pending(conn: sqlite3.Connection) -> bool:
    """Do deleted documents still have terms in the full-text index?"""
    return conn.execute(_FLAGGED, (ERASE_FLAG,)).fetchone() is not None


def merge_index(conn: sqlite3.Connection) -> None:
    """Merge every index segment (inside the caller's write transaction), clear the flag.

    Every :data:`REBUILD_EVERY` merges, rebuild the index instead (see above).
    """
    row = conn.execute(_READ_MERGES, (_MERGES,)).fetchone()
    merges = int(row[0]) + 1 if row is not None else 1
    if merges >= REBUILD_EVERY:
        rebuild_index(conn)
        merges = 0
    else:
        conn.execute(_OPTIMIZE)
    conn.execute(_SET_MERGES, (_MERGES, str(merges)))
    conn.execute(_CLEAR, (ERASE_FLAG,))


def rebuild_index(conn: sqlite3.Connection) -> None:
    """Index every indexed document afresh (inside the caller's write transaction)."""
    conn.execute(_DELETE_ALL)
    cursor = conn.execute(_INDEXED)
    while rows := cursor.fetchmany(256):
        conn.executemany(
            _INSERT_TERMS,
            [(doc_id, index_text(scope_id, terms(content))) for doc_id, scope_id, content in rows],
        )


def truncate_log(conn: sqlite3.Connection, deadline: float) -> None:
    """Checkpoint the whole WAL into the database and cut it to zero bytes.

    Readers of other connections pin old frames; SQLite's busy handler waits for
    them, and this retries until ``deadline``. Raises ``ProviderUnavailable``
    (``provider_timeout``) when the log could not be emptied in time.
    """
    delay = 0.001
    while True:
        (busy, _, _) = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        if not busy:
            return
        if time.monotonic() >= deadline:
            raise ProviderUnavailable(
                "the sqlite store could not empty its write-ahead log in time; "
                "deleted content may remain there until the delete is retried",
                reason_code="provider_timeout",
            )
        time.sleep(delay)
        delay = min(delay * 2, 0.05)
