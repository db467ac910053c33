"""Terms: what the full-text index sees, how queries are tokenised, and hit summaries.

See the package docs ("Full-text search"): the derivation is deterministic across
Python versions, which a contentless FTS5 delete requires.
"""

from __future__ import annotations

import functools
import re
from typing import Final, NamedTuple

TOKENIZER: Final = "rm-terms-1"  # recorded in the file; a change needs a reindex migration
MAX_QUERY_TERMS: Final = 16
MAX_QUERY_CHARS: Final = 4096
SUMMARY_CHARS: Final = 200
_SUMMARY_LEAD: Final = 60  # characters of context shown before the matched term
_SUMMARY_SCAN: Final = 65536  # a match further into a huge document is not looked for

# ASCII text: letters folded to lower case, every other byte a separator. A bytes
# translation and a split find exactly the runs of [a-z0-9] of the lowered text,
# four times faster than the regular expression ``[a-z0-9]+`` (the same terms).
_ASCII_FOLD: Final = bytes(
    c + 32 if 65 <= c <= 90 else c if 48 <= c <= 57 or 97 <= c <= 122 else 32 for c in range(256)
)
# Every letter/digit as "a", every other byte a space: a run of more than
# _MAX_TERM_CHARS "a"s is a term to cut, found by one substring search (C speed),
# where measuring every word's length costs as much as splitting the text.
_ASCII_CLASS: Final = bytes(97 if chr(c).isalnum() and c < 128 else 32 for c in range(256))
# Runs of ASCII letters/digits and non-ASCII characters, except emoji/pictographs and tags.
_RUN_PATTERN: Final = r"[A-Za-z0-9\x80-\U0001efff\U0001fb00-\U000dffff\U000e0080-\U0010ffff]+"
# Han, kana, Hangul: written without spaces, indexed as overlapping character bigrams.
_CJK_CLASS: Final = (
    "\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u3400-\u4dbf\u4e00-\u9fff"
    "\uac00-\ud7af\uf900-\ufaff\U00020000-\U0003ffff"
)
_MAX_TERM_CHARS: Final = 64
_LONG_RUN: Final = b"a" * (_MAX_TERM_CHARS + 1)
# Code points whose case and accents are folded (Latin, Greek, Cyrillic, Armenian,
# Latin Extended Additional, Greek Extended, fullwidth ASCII variants).
_FOLD_RANGES: Final = ((0xC0, 0x590), (0x1E00, 0x2000), (0xFF01, 0xFF5F))
# BMP blocks that need a category lookup; the rest (CJK, Hangul, private use) are letters.
_SCAN_RANGES: Final = ((0x80, 0x3400), (0xA000, 0xAC00), (0xD800, 0xE000), (0xF900, 0x10000))


class _NonAscii(NamedTuple):
    """What non-ASCII text needs; built on first use (a few ms, kept off the import)."""

    table: dict[int, str | None]
    run: re.Pattern[str]
    cjk_any: re.Pattern[str]
    cjk_split: re.Pattern[str]


@functools.cache
def _non_ascii() -> _NonAscii:
    return _NonAscii(
        table=_build_fold_table(),
        run=re.compile(_RUN_PATTERN),
        cjk_any=re.compile(f"[{_CJK_CLASS}]"),
        cjk_split=re.compile(f"([{_CJK_CLASS}]+)"),
    )


def _build_fold_table() -> dict[int, str | None]:
    """``str.translate`` table for non-ASCII text, from the frozen Unicode 3.2 database.

    Separators (punctuation, symbols, spaces, controls) become a space, marks and
    format characters vanish, folded letters become their lower-case unaccented
    form; everything else (letters, digits, characters newer than Unicode 3.2)
    stays as it is. Unicode 3.2 never changes, so neither does this table: the
    terms of a stored document can always be derived again for its delete.
    """
    import unicodedata  # noqa: PLC0415 - only text with non-ASCII characters needs it

    ucd = unicodedata.ucd_3_2_0
    table: dict[int, str | None] = {cp: chr(cp + 32) for cp in range(ord("A"), ord("Z") + 1)}

    def kind(ch: str) -> str:
        category = ucd.category(ch)
        if category[0] in "LN" or category in ("Co", "Cn"):
            return "word"
        if category[0] == "M" or category in ("Cf", "Cs"):
            return "drop"
        return "space"

    for start, stop in _SCAN_RANGES:
        for cp in range(start, stop):
            found = kind(chr(cp))
            if found == "space":
                table[cp] = " "
            elif found == "drop":
                table[cp] = None
    for start, stop in _FOLD_RANGES:
        for cp in range(start, stop):
            ch = chr(cp)
            if ucd.category(ch)[0] not in "LN":
                continue
            parts = []
            for part in ucd.normalize("NFKD", ch.lower()):
                found = kind(part)
                if found == "word":
                    parts.append(part.lower() if part.isascii() else part)
                elif found == "space":
                    parts.append(" ")
            folded = "".join(parts)
            if folded != ch:
                table[cp] = folded
    return table


def terms(text: str) -> list[str]:
    """The index terms of ``text``, in order (see the module docs; deterministic)."""
    if text.isascii():
        data = text.encode("ascii")
        words = data.translate(_ASCII_FOLD).decode("ascii").split()
        if _LONG_RUN in data.translate(_ASCII_CLASS):
            return [word[:_MAX_TERM_CHARS] for word in words]
        return words
    unicode = _non_ascii()
    terms: list[str] = []
    for run in unicode.run.findall(text):
        if run.isascii():
            terms.append(run.lower()[:_MAX_TERM_CHARS])
            continue
        for word in run.translate(unicode.table).split(" "):
            if not word:
                continue
            if unicode.cjk_any.search(word) is None:
                terms.append(word[:_MAX_TERM_CHARS])
                continue
            for index, piece in enumerate(unicode.cjk_split.split(word)):
                if not piece:
                    continue
                if index % 2 == 0:
                    terms.append(piece[:_MAX_TERM_CHARS])
                elif len(piece) == 1:
                    terms.append(piece)
                else:
                    terms.extend(piece[i : i + 2] for i in range(len(piece) - 1))
    return terms


def query_terms(query: str) -> list[str]:
    """Distinct terms of a query, first seen first, at most :data:`MAX_QUERY_TERMS`.

    A longer query keeps its longest terms: short words are the likely stopwords,
    which the ranking would leave out as too common anyway.
    """
    distinct = list(dict.fromkeys(terms(query[:MAX_QUERY_CHARS])))
    if len(distinct) <= MAX_QUERY_TERMS:
        return distinct
    longest = set(sorted(distinct, key=len, reverse=True)[:MAX_QUERY_TERMS])
    return [term for term in distinct if term in longest][:MAX_QUERY_TERMS]


def index_text(scope_id: int, terms: list[str]) -> str:
    if not terms:
        return ""
    prefix = f"s{scope_id}x"
    return prefix + (" " + prefix).join(terms)


def fts_string(scope_id: int, term: str) -> str:
    # A quoted FTS5 string: terms hold only letters and digits, but quote-escape anyway.
    return '"' + f"s{scope_id}x{term}".replace('"', '""') + '"'


def summary(content: str, terms: list[str]) -> str:
    """At most :data:`SUMMARY_CHARS` characters around the first query term found.

    Whitespace runs collapse to one space; an ellipsis marks text left out at
    either end, so a summary never passes for the whole of a long document.
    """
    lowered = content[:_SUMMARY_SCAN].lower()
    found = -1
    for term in terms:
        stem = term[: max(4, len(term) - 3)]  # "retrying" still finds "retry"
        found = lowered.find(stem)
        if found >= 0:
            break
    start = 0
    if found > _SUMMARY_LEAD:
        start = found - _SUMMARY_LEAD
        space = content.find(" ", start, found)
        start = space + 1 if space >= 0 else start
    stop = start + 2 * SUMMARY_CHARS
    window = " ".join(content[start:stop].split())
    lead = "…" if start > 0 else ""
    room = SUMMARY_CHARS - len(lead)
    if len(window) > room or (stop < len(content) and content[stop:].strip()):
        window = window[: room - 1].rstrip() + "…"
    return lead + window
