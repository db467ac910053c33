"""The SQLite provider's index tuning: what it changes, and what it must not.

Contract (issue 8 / issue 11, the provider share of the ingest target): an ingest's
verification search must be cheap, and "a store written by the current code must
still open and read". The tuning is the FTS5 ``crisismerge`` setting (fewer index
segments for every term lookup to visit) and a cheaper ASCII term derivation; the
terms themselves must stay exactly what they were, or a contentless delete would
name the wrong terms.
"""

from __future__ import annotations

import contextlib
import re
import sqlite3
import time
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from reward_memory.providers.spi import ProviderScope
from reward_memory.providers.sqlite import SCHEMA_VERSION, SQLiteProvider, _schema, _terms

SCOPE = ProviderScope(namespace="rm-test", scope_ref="project:tuning")
_ASCII_RUNS = re.compile(r"[a-z0-9]+")


def _reference_terms(text: str) -> list[str]:
    """The ASCII term derivation as first written: lowered runs of letters and digits, cut."""
    return [word[:64] for word in _ASCII_RUNS.findall(text.lower())]


def _crisismerge(path: Path) -> object:
    with contextlib.closing(sqlite3.connect(path)) as raw, raw:
        rows = raw.execute("SELECT v FROM documents_fts_config WHERE k = 'crisismerge'").fetchall()
    return rows[0][0] if rows else None


def _structure_levels(path: Path) -> list[int]:
    """Segments per level of the FTS5 index (its structure record, rowid 10)."""
    with contextlib.closing(sqlite3.connect(path)) as raw, raw:
        (blob,) = raw.execute("SELECT block FROM documents_fts_data WHERE id = 10").fetchone()

    def varint(at: int) -> tuple[int, int]:
        value = 0
        for step in range(9):
            byte = blob[at]
            at += 1
            if step == 8:
                return (value << 8) | byte, at
            value = (value << 7) | (byte & 0x7F)
            if not byte & 0x80:
                break
        return value, at

    at = 4  # the cookie
    levels, at = varint(at)
    _, at = varint(at)  # segments in all
    _, at = varint(at)  # writes
    counts = []
    for _ in range(levels):
        _, at = varint(at)  # segments being merged
        segments, at = varint(at)
        for _ in range(3 * segments):  # id, first page, last page
            _, at = varint(at)
        counts.append(segments)
    return counts


@given(
    st.text(
        alphabet=st.sampled_from("aZ09_-. \n\t\"'{}:,xyzQ" + "k" * 5),
        max_size=300,
    )
)
def test_ascii_terms_are_unchanged_by_the_fast_derivation(text: str) -> None:
    assert _terms.terms(text) == _reference_terms(text)


def test_long_runs_are_cut_exactly_at_64_characters() -> None:
    for length in (63, 64, 65, 200):
        word = "ab1" * 70
        text = f"head {word[:length]} tail"
        assert _terms.terms(text) == _reference_terms(text)
        assert max(map(len, _terms.terms(text))) == min(length, 64)


def test_a_new_store_merges_index_segments_early(tmp_path: Path) -> None:
    path = tmp_path / "new.db"
    with SQLiteProvider(path=path) as provider:
        for index in range(200):
            provider.write(scope=SCOPE, key=f"doc-{index}", content=f"note {index} words")
    assert _crisismerge(path) == _schema.CRISISMERGE
    # No level ever holds as many segments as the crisis-merge threshold: a term lookup
    # visits a few segments per level (FTS5's default of 16 let a dozen pile up).
    assert max(_structure_levels(path)) <= 3


def _old_store(path: Path) -> None:
    """A store as the previous release wrote it: schema 1 without the crisismerge row."""
    with SQLiteProvider(path=path) as provider:
        provider.write(scope=SCOPE, key="doc-old", content="written before the tuning")
    with contextlib.closing(sqlite3.connect(path)) as raw, raw:
        raw.execute("DELETE FROM documents_fts_config WHERE k = 'crisismerge'")
    assert _crisismerge(path) is None


def test_a_store_from_before_the_tuning_opens_reads_and_gets_it(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    _old_store(path)
    with SQLiteProvider(path=path) as provider:
        assert provider.read_key(scope=SCOPE, key="doc-old").content == "written before the tuning"
        (hit,) = provider.search(scope=SCOPE, query="tuning", limit=3).hits
        assert hit.ref == provider.read_key(scope=SCOPE, key="doc-old").ref
        assert provider.write(scope=SCOPE, key="doc-new", content="after tuning").status == (
            "created"
        )
    assert _crisismerge(path) == _schema.CRISISMERGE
    with contextlib.closing(sqlite3.connect(path)) as raw, raw:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 1


def test_a_busy_store_opens_without_waiting_and_is_tuned_later(tmp_path: Path) -> None:
    path = tmp_path / "busy.db"
    _old_store(path)
    holder = sqlite3.connect(path, isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")  # another process's write in progress
        with SQLiteProvider(path=path, busy_timeout_ms=5000) as provider:
            started = time.monotonic()
            read = provider.read_key(scope=SCOPE, key="doc-old")
            assert time.monotonic() - started < 2.5  # not the 5 s busy timeout
            assert read.content == "written before the tuning"
        holder.execute("ROLLBACK")
    finally:
        holder.close()
    assert _crisismerge(path) is None  # not tuned while the lock was taken
    with SQLiteProvider(path=path) as provider:
        assert provider.read_key(scope=SCOPE, key="doc-old").found
    assert _crisismerge(path) == _schema.CRISISMERGE
