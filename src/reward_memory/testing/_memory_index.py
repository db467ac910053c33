"""The in-memory provider's search index: documents, per-scope spaces, ranking.

Private to :mod:`reward_memory.testing.memory`. The index is honest (an inverted
index per scope, ranking by matched terms then recency), so that what is measured
on the fixture provider is not flattered by the fixture.
"""

from __future__ import annotations

import functools
import re
from collections import Counter, defaultdict, deque
from itertools import chain, repeat
from typing import Final

from reward_memory.providers.spi import ReadResult, SearchHit, SearchResult

SUMMARY_LENGTH: Final = 160
_TERMS: Final = re.compile(r"\w+")
# On ASCII text ``\w`` is exactly letters, digits and "_", and casefold is lower: one
# bytes translation folds case and blanks every other byte (C speed, no per-character
# dictionary lookups), and a split then gives exactly the ``\w+`` words.
_ASCII_FOLD: Final = (
    bytes(c + 32 if 65 <= c <= 90 else c if chr(c).isalnum() or c == 95 else 32 for c in range(128))
    + b" " * 128
)
_SUMMARY_SCAN: Final = 4 * SUMMARY_LENGTH
_DRAIN: Final[deque[object]] = deque(maxlen=0)  # consumes an iterator in C
_NO_HITS: Final = SearchResult()
# Up to this many matched terms, ranking by set algebra (about terms**2 / 2 C-level set
# operations) beats counting every posting; beyond it, counting wins. Under
# _FEW_POSTINGS postings in all, a plain counting loop beats both.
_LEVELS_UP_TO: Final = 4
# From this many documents in a scope on, terms held by more than three quarters of
# them are kept as their complement (see _Space); below it, every term has postings.
_COMMON_FROM: Final = 32
_FEW_POSTINGS: Final = 64


class _Document:
    """One stored document, with what reads and searches need derived at write time.

    Its index terms are not kept: the space's postings hold them, and a remove (rare)
    derives them again from the content (the same terms: ``_terms`` is pure). A
    frozenset of ~125 strings per document would be most of the store's memory and
    the garbage collector's work.
    """

    __slots__ = ("_hits", "content", "digest", "key", "readback", "ref", "sequence")

    def __init__(self, *, ref: str, key: str, content: str, digest: str, sequence: int) -> None:
        self.ref = ref
        self.key = key
        self.content = content
        self.digest = digest  # sha256 hex of the content, for an idempotent rewrite
        self.sequence = sequence
        # Results are frozen records: one readback object serves every read.
        self.readback = ReadResult(ref=ref, found=True, content=content)
        self._hits: dict[int, SearchHit] = {}

    def hit(self, overlap: int) -> SearchHit:
        """The search hit of this document for ``overlap`` shared terms (built once: frozen)."""
        try:
            return self._hits[overlap]
        except KeyError:
            # The summary only when a search first lists the document (most never are).
            hit = self._hits[overlap] = SearchHit(
                ref=self.ref, summary=_summary(self.content), score=float(overlap)
            )
            return hit


class _Space:
    """The documents of one scope and their inverted index (term -> write sequences).

    A key names one ref in a scope (the ref is derived from scope and key), so
    ``by_key`` finds a document without deriving its ref.

    Terms that most documents hold (the field names of a JSON record, say) are
    kept as their complement: ``absent[term]`` lists the documents *without* the
    term, so a write touches only the few terms its document has that are not
    common and the few common terms it lacks, instead of every term it holds
    (about 125 set insertions for an active record, the largest part of a write).
    Which terms are common is settled again whenever the space doubles in size;
    the holders a search sees are the same either way.
    """

    __slots__ = (
        "_rebalance_at",
        "absent",
        "by_key",
        "by_sequence",
        "common",
        "documents",
        "last_written",
        "postings",
    )

    def __init__(self) -> None:
        self.documents: dict[str, _Document] = {}
        self.by_key: dict[str, _Document] = {}
        self.by_sequence: dict[int, _Document] = {}
        # A missing term gets its empty set on first ``[]`` (only ``add`` indexes with
        # ``[]``; lookups use ``get``, which never creates one).
        self.postings: defaultdict[str, set[int]] = defaultdict(set)
        # The common terms (never in ``postings``) and the documents lacking each.
        self.common: set[str] = set()
        self.absent: dict[str, set[int]] = {}
        self.last_written: int | None = None
        self._rebalance_at = _COMMON_FROM

    def add(self, document: _Document, terms: frozenset[str]) -> None:
        """Store ``document`` and index its ``terms`` (``_terms`` of its content)."""
        self.documents[document.ref] = document
        self.by_key[document.key] = document
        self.by_sequence[document.sequence] = document
        sequence = document.sequence
        common = self.common
        if common:
            missing = common - terms
            if missing:
                _DRAIN.extend(map(set.add, map(self.absent.__getitem__, missing), repeat(sequence)))
            terms = terms - common  # the terms that are not common
        # Every term's posting set gets the sequence, the loop run in C.
        _DRAIN.extend(map(set.add, map(self.postings.__getitem__, terms), repeat(sequence)))
        self.last_written = sequence
        if len(self.by_sequence) >= self._rebalance_at:
            self._rebalance()

    def _rebalance(self) -> None:
        """Settle again which terms are common (when the space has doubled: amortised O(1))."""
        count = len(self.by_sequence)
        self._rebalance_at = 2 * count
        everyone = self.by_sequence.keys()
        postings, absent, common = self.postings, self.absent, self.common
        for term in [term for term, held in postings.items() if 4 * len(held) > 3 * count]:
            absent[term] = set(everyone - postings.pop(term))
            common.add(term)
        for term in [term for term, lacking in absent.items() if 2 * len(lacking) > count]:
            held = everyone - absent.pop(term)
            common.discard(term)
            if held:
                postings[term] = set(held)

    def remove(self, ref: str) -> _Document | None:
        document = self.documents.pop(ref, None)
        if document is None:
            return None
        sequence = document.sequence
        del self.by_sequence[sequence]
        del self.by_key[document.key]
        postings = self.postings
        common = self.common
        terms = _terms(document.content)
        # A common term it holds has no postings (its holders are everyone but the absent).
        for term in terms - common if common else terms:
            holders = postings.get(term)
            if holders is not None:
                holders.discard(sequence)
                if not holders:
                    del postings[term]
        for term in common - terms:
            self.absent[term].discard(sequence)
        if self.last_written == sequence:
            self.last_written = None
        return document

    def search(self, wanted: frozenset[str], limit: int, missed: int | None) -> SearchResult:
        """The best ``limit`` documents: most shared terms, then oldest (first written) first.

        Call with the provider's lock held (the posting sets must not change meanwhile).
        """
        postings, common = self.postings, self.common
        lists: list[set[int]] = []
        for term in wanted:  # a common term's holders: everyone but those lacking it
            holders = postings.get(term)
            if holders is None and term in common:
                holders = self.by_sequence.keys() - self.absent[term]
            if holders:
                lists.append(holders)
        if not lists:
            return _NO_HITS
        by_sequence = self.by_sequence
        shared = len(lists)
        # Documents holding every matched term rank first; when they alone fill the
        # limit, nothing needs counting per document (set intersection runs in C).
        if shared == 1:
            full = lists[0]
        else:
            lists.sort(key=len)  # the intersection then walks the shortest posting list
            full = lists[0].intersection(*lists[1:])
        if missed is not None and missed in full:
            full = full - {missed}
        if shared == 1 or len(full) >= limit:
            best = sorted(full)[:limit]
            return _result([by_sequence[sequence].hit(shared) for sequence in best])
        postings_total = sum(map(len, lists))
        if shared <= _LEVELS_UP_TO and postings_total > _FEW_POSTINGS:
            ranked = _by_levels(lists, limit, missed)
        else:
            ranked = _by_counts(lists, limit, missed, postings_total)
        return _result([by_sequence[sequence].hit(count) for sequence, count in ranked])


def _by_levels(lists: list[set[int]], limit: int, missed: int | None) -> list[tuple[int, int]]:
    """Best ``limit`` (sequence, shared terms), by set algebra (few terms: C-level set ops).

    ``at_least[j]`` collects the sequences held by at least ``j`` of the lists; the
    documents sharing exactly ``j`` terms are ``at_least[j] - at_least[j + 1]``.
    """
    at_least: list[set[int]] = [set() for _ in range(len(lists) + 2)]
    for seen, holders in enumerate(lists, 1):
        for j in range(seen, 1, -1):  # from the top: at_least[j - 1] is still the old set
            at_least[j] |= at_least[j - 1] & holders
        at_least[1] |= holders
    ranked: list[tuple[int, int]] = []
    for j in range(len(lists), 0, -1):
        level = at_least[j] - at_least[j + 1]
        if missed is not None:
            level.discard(missed)
        ranked.extend((sequence, j) for sequence in sorted(level)[: limit - len(ranked)])
        if len(ranked) >= limit:
            break
    return ranked


def _by_counts(
    lists: list[set[int]], limit: int, missed: int | None, postings_total: int
) -> list[tuple[int, int]]:
    """Best ``limit`` (sequence, shared terms), by counting every posting."""
    counts: dict[int, int]
    if postings_total > _FEW_POSTINGS:
        counts = Counter(chain.from_iterable(lists))  # counts in C
    else:  # a plain loop is cheaper than setting up a Counter
        counts = {}
        get = counts.get
        for holders in lists:
            for sequence in holders:
                counts[sequence] = get(sequence, 0) + 1
    if missed is not None:
        counts.pop(missed, None)
    # Oldest first, then (a stable sort) most shared terms first.
    best = sorted(sorted(counts), key=counts.__getitem__, reverse=True)[:limit]
    return [(sequence, counts[sequence]) for sequence in best]


def _result(hits: list[SearchHit]) -> SearchResult:
    return SearchResult(hits=tuple(hits)) if hits else _NO_HITS


def _terms(text: str) -> frozenset[str]:
    """The ``\\w+`` words of ``text``, case-folded (the index terms)."""
    if text.isascii():
        return frozenset(text.encode("ascii").translate(_ASCII_FOLD).decode("ascii").split())
    return frozenset(_TERMS.findall(text.casefold()))


@functools.lru_cache(maxsize=1024)
def _query_terms(query: str) -> frozenset[str]:
    return _terms(query)


def _summary(content: str) -> str:
    """The first :data:`SUMMARY_LENGTH` characters of ``content``, whitespace runs as one space."""
    if len(content) > _SUMMARY_SCAN:
        # The words of a prefix but its last (which the cut may have split) begin the
        # words of the whole text: enough of them settle the summary without
        # splitting a long document.
        words = content[:_SUMMARY_SCAN].split()[:-1]
        head = " ".join(words)
        if len(head) >= SUMMARY_LENGTH:
            return head[:SUMMARY_LENGTH]
    return " ".join(content.split())[:SUMMARY_LENGTH]
