"""Bounded full-text search inside one scope (see the package docs, "Full-text search").

A search runs in three bounded steps: probe each query term's document frequency
in the scope, rank the rarest terms that fit :data:`RANK_BUDGET` with BM25, and
fill up from the scope's newest documents holding the most of the common terms.
"""

from __future__ import annotations

import heapq
from collections import Counter
from typing import TYPE_CHECKING, Final

from reward_memory.providers.spi import SearchHit
from reward_memory.providers.sqlite._schema import BY_ID, OLDER, PROBE, RANKED, WINDOW
from reward_memory.providers.sqlite._terms import fts_string, summary

if TYPE_CHECKING:
    import sqlite3

#: Most rows one search may rank with BM25 (about 1 us each in FTS5).
RANK_BUDGET: Final = 750
#: How far back (in row ids below the scope's newest document) the unranked fill looks,
#: in growing steps, and how many common terms it counts.
FILL_WINDOW: Final = 2048
_FILL_STEPS: Final = (128, 512, FILL_WINDOW)
MAX_FILL_TERMS: Final = 4
REF_PREFIX: Final = "sqlite:"


def search(
    conn: sqlite3.Connection, scope_id: int, terms: list[str], limit: int
) -> tuple[SearchHit, ...]:
    """At most ``limit`` hits of ``terms`` in the scope, ranked first, then filled."""
    ranked, common = _split(conn, scope_id, terms)
    hits: list[SearchHit] = []
    seen: set[int] = set()
    if ranked:
        match = " OR ".join(fts_string(scope_id, term) for term in ranked)
        for doc_id, ref, content, rank in conn.execute(RANKED, (match, scope_id, limit)).fetchall():
            seen.add(doc_id)
            hits.append(_hit(ref, content, ranked, -float(rank)))
    # 3. Fill up from the scope's newest documents: those holding the most common
    #    terms first, newest first among equals. Only FILL_WINDOW row ids are looked
    #    at, one term at a time (FTS5 seeks a single term to a row id cheaply, while
    #    its AND first walks the doclists from their start), so the cost is bounded.
    if common and len(hits) < limit:
        hits.extend(_fill(conn, scope_id, common, limit - len(hits), seen))
    return tuple(hits)


def _split(
    conn: sqlite3.Connection, scope_id: int, terms: list[str]
) -> tuple[list[str], list[str]]:
    """The terms to rank with BM25 (rarest first, within the budget) and the common rest."""
    together = _rare_together(conn, scope_id, terms)
    if together is not None:
        return (terms, []) if together else ([], [])
    # 1. Probe each term's document frequency in the scope, bounded by the budget.
    frequencies: list[tuple[int, str]] = []
    for term in terms:
        (count,) = conn.execute(PROBE, (fts_string(scope_id, term), RANK_BUDGET + 1)).fetchone()
        if count:
            frequencies.append((int(count), term))
    frequencies.sort()
    # 2. Rank the rarest terms that fit the budget with BM25; the rest are "common".
    ranked: list[str] = []
    spent = 0
    for count, term in frequencies:
        if spent + count > RANK_BUDGET:
            break
        ranked.append(term)
        spent += count
    common_set = {term for _, term in frequencies[len(ranked) :]}
    return ranked, [term for term in terms if term in common_set]  # common: in query order


def _rare_together(conn: sqlite3.Connection, scope_id: int, terms: list[str]) -> int | None:
    """How many rows the terms match together, when that many are few enough to rank all.

    When all the terms together match at most ``RANK_BUDGET // n`` rows, each term
    matches at most that many, their sum fits the budget, and the per-term probes
    would rank every term: one probe instead of n (the ingest's verification query
    is two rare digests). ``None`` when there are more, or only one term.
    """
    if len(terms) < 2:
        return None
    cap = RANK_BUDGET // len(terms)
    union = " OR ".join(fts_string(scope_id, term) for term in terms)
    (count,) = conn.execute(PROBE, (union, cap + 1)).fetchone()
    return int(count) if count <= cap else None


def _fill(
    conn: sqlite3.Connection,
    scope_id: int,
    common: list[str],
    wanted: int,
    seen: set[int],
) -> list[SearchHit]:
    (newest,) = conn.execute(
        "SELECT last_id FROM scopes WHERE scope_id = ?", (scope_id,)
    ).fetchone()
    terms = common[:MAX_FILL_TERMS]
    matched: Counter[int] = Counter()
    high = newest
    for step in _FILL_STEPS:  # newest first; stop once enough hold every term
        low = newest - step + 1
        for term in terms:
            cursor = conn.execute(WINDOW, (fts_string(scope_id, term), low, high))
            matched.update(row for (row,) in cursor)
        high = low - 1
        complete = sum(1 for doc, n in matched.items() if n == len(terms) and doc not in seen)
        if complete >= wanted:
            break
    if sum(1 for doc in matched if doc not in seen) < wanted:
        # Row ids are shared by every scope in the file, so other scopes' writes (or the
        # scope's own later documents) can leave a common term's matches all below the
        # window: then take each term's newest matches below it, which the scope prefix
        # of the term bounds to this scope (FTS5 walks a single term's doclist backwards
        # from a row id, stopping after the LIMIT).
        for term in terms:
            cursor = conn.execute(OLDER, (fts_string(scope_id, term), high + 1, wanted + len(seen)))
            matched.update(row for (row,) in cursor)
    best = heapq.nlargest(wanted, ((n, doc) for doc, n in matched.items() if doc not in seen))
    hits = []
    for _, doc_id in best:
        for ref, content in conn.execute(BY_ID, (doc_id, scope_id)).fetchall():
            hits.append(_hit(ref, content, common, None))
    return hits


def _hit(ref: bytes, content: str, terms: list[str], score: float | None) -> SearchHit:
    return SearchHit(
        ref=REF_PREFIX + bytes(ref).hex(), summary=summary(content, terms), score=score
    )
