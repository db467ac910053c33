"""``sqlite``: the embedded default provider (stdlib :mod:`sqlite3`, one database file).

Location
    ``path=`` when given; else ``$REWARD_MEMORY_SQLITE_PATH`` when set; else
    ``$XDG_DATA_HOME/reward-memory/memory.db`` (``~/.local/share/reward-memory/memory.db``
    when ``XDG_DATA_HOME`` is unset or not absolute). URLs: ``sqlite://`` (that default)
    or ``sqlite:///abs/path/memory.db``, options in the query string
    (``sqlite:///abs/memory.db?timeout=5&busy_timeout_ms=2000``). Constructing a
    provider touches nothing on disk; the file and its parent directories are created
    by the first ``write``. Reading, searching, deleting in or inventorying a store
    that does not exist yet answers "empty" without creating it.

Durability
    WAL journal with ``synchronous=FULL``: every commit fsyncs the WAL before
    ``write`` returns, so an acknowledged write survives ``kill -9`` of the writing
    process *and* an OS crash or power loss (``NORMAL`` would survive only the
    former: it defers the fsync to checkpoints). ``synchronous=extra`` is accepted
    for the paranoid; ``normal`` is an explicit opt-in for throughput. The price
    of ``FULL`` is one ``fdatasync`` of the WAL per write (about 100-150 us on an
    idle local SSD, far more on a busy or network disk).

Concurrency
    Many processes may share one file. Writes take the lock up front with
    ``BEGIN IMMEDIATE`` (so no transaction ever has to upgrade a read lock and hit
    ``SQLITE_BUSY_SNAPSHOT``), wait for it with SQLite's busy handler, and are
    retried while the call's timeout lasts; readers never wait for writers (WAL),
    and neither do searches (see Indexing). A
    call that cannot finish in time raises :class:`ProviderUnavailable` with
    ``reason_code="provider_timeout"``; a store that cannot be opened or read
    (missing permissions, not a database, a newer schema) raises it with
    ``provider_unavailable``. Within a process, one connection is shared behind a
    lock: SQLite serialises a connection anyway, a file has one writer at a time,
    reads take well under a millisecond, and one connection can be closed
    deterministically (per-thread connections leak when threads end). Open one
    provider per thread when reads must run in parallel. After ``fork`` the
    child opens its own connection.

Schema (``PRAGMA user_version`` = :data:`SCHEMA_VERSION`, ``application_id`` marks the file)
    ``scopes`` maps (namespace, scope_ref, peer — ``''`` for none) to a small integer
    id and keeps the scope's record count (so inventory is O(1), and an emptied
    corpus stays "present") and its newest row id. ``documents`` holds the content
    as TEXT, exactly as given, with its sha256, its key, and a 16-byte ref digest;
    ``UNIQUE(scope_id, ref)`` is the idempotency key; ``pending`` lists documents
    not yet in the full-text index. The ref is ``sqlite:`` + 32 hex of
    sha256(namespace, scope_ref, peer, key), so it is stable, opaque, never holds a
    path, and the same (scope, key) always gets the same ref; uniqueness of the ref
    within a scope is uniqueness of the key.

Full-text search (FTS5)
    ``documents_fts`` is a *contentless* FTS5 table (the text lives once, in
    ``documents``) over terms this module derives from the content: each term is
    prefixed with its scope id (``s12x`` + word). That partitions the index by
    scope: a query can only ever name terms of its own scope, every hit is also
    joined back to ``documents`` and checked against the scope id, and FTS5's
    BM25 document frequencies are per scope, so ranking in one scope does not
    depend on another scope's content (only the global row count and average
    length are shared). The term derivation is deterministic across Python
    versions (ASCII folding, Latin/Greek/Cyrillic case and accent folding from the
    frozen Unicode 3.2 tables, CJK as overlapping character bigrams), which a
    contentless delete requires: it must re-derive exactly the terms it indexed.

    Queries are tokenised the same way, so user text never reaches the FTS5
    parser as syntax (``"``, ``*``, ``NEAR``, ``-``, ``:`` are just separators).
    FTS5 computes BM25 for *every* matching row before it can sort, so a term
    that matches half of a million-document scope would make each search take a
    second. A search therefore runs in three bounded steps:

    1. Each query term's document frequency in the scope is probed with a
       ``LIMIT``-ed count (cost bounded by :data:`RANK_BUDGET` rows per term).
    2. The rarest terms whose matches together fit the budget are ranked with
       BM25 (``ORDER BY rank``); more common terms, whose BM25 weight is small
       anyway, are left out of the ranking, as Lucene's CommonTermsQuery does.
    3. If that gives fewer hits than the limit, the rest come from the scope's
       newest documents (the last :data:`FILL_WINDOW` row ids, in growing steps)
       that hold the most of the common terms, newest first among equals, with
       ``score=None``. Each common term is looked up on its own with a row-id
       range, because FTS5 seeks a single term to a row id cheaply, whereas its
       AND operator first walks the doclists from their start.

    Summaries are a window of at most 200 characters around the first query
    term found, with an ellipsis wherever text was left out.

Indexing (write-behind, read-your-writes)
    FTS5 flushes a new index segment at every commit: about 60 us of CPU and
    four more WAL pages, a third of a single write's cost. So a single ``write``
    commits the document and its id in ``pending`` (same transaction, same fsync)
    and leaves indexing to a batch: the write that finds :data:`INDEX_BATCH`
    documents pending indexes them all inside its own transaction, ``write_many``
    always does, and every ``search`` first indexes whatever is pending (in a
    transaction without fsync: the index is derived data, and a lost batch is
    redone from ``pending``). A search therefore sees every acknowledged write,
    from any process, except while another process holds the write lock: a
    search does not queue behind writers (it waits at most
    :data:`CATCH_UP_WAIT_MS`) and then answers from the index as it stands, so the
    up to :data:`INDEX_BATCH` newest documents may show up one search later.
    Deleting a pending document just drops it from ``pending``.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import heapq
import math
import os
import re
import sqlite3
import threading
import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal, NamedTuple, Self, TypeVar

from reward_memory.errors import ProviderConfigError, ProviderUnavailable, RecordValidationError
from reward_memory.grammars import check_token
from reward_memory.providers.spi import (
    SPI_VERSION,
    DeleteResult,
    Inventory,
    ProviderScope,
    ReadResult,
    SearchHit,
    SearchResult,
    WriteResult,
    WriteStatus,
    check_content,
    check_limit,
    check_query,
    check_scope,
    check_timeout,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping
    from types import TracebackType

__all__ = [
    "DEFAULT_BUSY_TIMEOUT_MS",
    "DEFAULT_TIMEOUT",
    "ENV_PATH",
    "SCHEMA_VERSION",
    "SQLiteProvider",
    "default_path",
]

ENV_PATH: Final = "REWARD_MEMORY_SQLITE_PATH"
SCHEMA_VERSION: Final = 1
APPLICATION_ID: Final = 0x524D3031  # "RM01": marks a reward-memory store file
TOKENIZER: Final = "rm-terms-1"  # recorded in the file; a change needs a reindex migration
DEFAULT_TIMEOUT: Final = 10.0
DEFAULT_BUSY_TIMEOUT_MS: Final = 5000
MAX_TIMEOUT: Final = 3600.0
#: Most rows one search may rank with BM25 (about 1 us each in FTS5).
RANK_BUDGET: Final = 750
#: How far back (in row ids below the scope's newest document) the unranked fill looks,
#: in growing steps, and how many common terms it counts.
FILL_WINDOW: Final = 2048
_FILL_STEPS: Final = (128, 512, FILL_WINDOW)
MAX_FILL_TERMS: Final = 4
#: Single writes leave indexing to a batch: at this many pending documents, a write
#: indexes them all in its own transaction (a search indexes any pending ones first).
INDEX_BATCH: Final = 64
INDEX_CHUNK: Final = 2000
#: How long a search waits for the write lock to index pending documents first.
CATCH_UP_WAIT_MS: Final = 2
MAX_QUERY_TERMS: Final = 16
MAX_QUERY_CHARS: Final = 4096
SUMMARY_CHARS: Final = 200
_SUMMARY_LEAD: Final = 60  # characters of context shown before the matched term
_SUMMARY_SCAN: Final = 65536  # a match further into a huge document is not looked for
REF_PREFIX: Final = "sqlite:"

Synchronous = Literal["normal", "full", "extra"]
_SYNCHRONOUS: Final = ("normal", "full", "extra")
_OPTIONS: Final = ("path", "timeout", "busy_timeout_ms", "synchronous")
_OPTION_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
_REF: Final = re.compile(r"sqlite:([0-9a-f]{32})")
_REF_DOMAIN: Final = b"reward-memory/sqlite/ref/v1\n"
_INTEGER: Final = re.compile(r"[0-9]{1,10}")

# SQLite primary result codes (``sqlite3.Error.sqlite_errorcode & 0xff``).
_SQLITE_BUSY: Final = 5
_SQLITE_LOCKED: Final = 6
_SQLITE_READONLY: Final = 8
_SQLITE_INTERRUPT: Final = 9

_T = TypeVar("_T")


# -- configuration -----------------------------------------------------------------------


def _option_error(name: str, problem: str) -> ProviderConfigError:
    return ProviderConfigError(f"sqlite provider option {name!r} {problem}")


def default_path(environ: Mapping[str, str] | None = None) -> str:
    """The store location used when no ``path`` is given (see the module docs)."""
    env = os.environ if environ is None else environ
    explicit = env.get(ENV_PATH, "")
    if explicit:
        return _checked_path(explicit, source=ENV_PATH)
    xdg = env.get("XDG_DATA_HOME", "")
    if xdg and Path(xdg).is_absolute():
        base = Path(xdg)
    else:
        try:
            base = Path.home() / ".local" / "share"
        except RuntimeError:  # no HOME and no passwd entry
            raise ProviderConfigError(
                f"the sqlite provider has no default location here: set {ENV_PATH} or pass path="
            ) from None
    return str((base / "reward-memory" / "memory.db").absolute())


def _checked_path(value: object, *, source: str = "path") -> str:
    """An absolute file path, validated without touching the filesystem beyond ``stat``."""
    what = f"option {source!r}" if source == "path" else source
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if not isinstance(value, str) or not value:
        raise ProviderConfigError(f"sqlite provider {what} must be a non-empty file path")
    if "\x00" in value or value == ":memory:" or value.startswith("file:"):
        raise ProviderConfigError(f"sqlite provider {what} must be a plain file path")
    if value.endswith(("/", os.sep)) or Path(value).is_dir():
        raise ProviderConfigError(f"sqlite provider {what} names a directory, not a file")
    return str(Path(value).absolute())


def _checked_timeout(value: object, name: str) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or not 0 < value <= MAX_TIMEOUT
    ):
        raise _option_error(name, f"must be a number of seconds in (0, {MAX_TIMEOUT:g}]")
    return float(value)


def _checked_busy(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 3_600_000:
        raise _option_error("busy_timeout_ms", "must be an integer from 0 to 3600000")
    return value


def _checked_synchronous(value: object) -> Synchronous:
    if not isinstance(value, str) or value.lower() not in _SYNCHRONOUS:
        raise _option_error("synchronous", f"must be one of: {', '.join(_SYNCHRONOUS)}")
    return value.lower()  # type: ignore[return-value]  # checked just above


def _url_option(name: str, raw: str) -> object:
    """Convert one query-string option to the type the constructor takes."""
    if name == "timeout":
        try:
            return float(raw)
        except ValueError:
            raise _option_error(name, "must be a number of seconds") from None
    if name == "busy_timeout_ms":
        if _INTEGER.fullmatch(raw) is None:
            raise _option_error(name, "must be an integer number of milliseconds")
        return int(raw)
    if name == "path":
        raise ProviderConfigError("the sqlite URL carries its path in the URL, not in the query")
    return raw


def _shown(name: str) -> str:
    return repr(name) if _OPTION_NAME.fullmatch(name) else "(not an identifier)"


# -- terms: what the full-text index sees -------------------------------------------------

_ASCII_WORD: Final = re.compile(r"[a-z0-9]+")
# Runs of ASCII letters/digits and non-ASCII characters, except emoji/pictographs and tags.
_RUN_PATTERN: Final = r"[A-Za-z0-9\x80-\U0001efff\U0001fb00-\U000dffff\U000e0080-\U0010ffff]+"
# Han, kana, Hangul: written without spaces, indexed as overlapping character bigrams.
_CJK_CLASS: Final = (
    "\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u3400-\u4dbf\u4e00-\u9fff"
    "\uac00-\ud7af\uf900-\ufaff\U00020000-\U0003ffff"
)
_MAX_TERM_CHARS: Final = 64
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


def _terms(text: str) -> list[str]:
    """The index terms of ``text``, in order (see the module docs; deterministic)."""
    if text.isascii():
        words: list[str] = _ASCII_WORD.findall(text.lower())
        if words and max(map(len, words)) > _MAX_TERM_CHARS:
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


def _query_terms(query: str) -> list[str]:
    """Distinct terms of a query, first seen first, at most :data:`MAX_QUERY_TERMS`.

    A longer query keeps its longest terms: short words are the likely stopwords,
    which the ranking would leave out as too common anyway.
    """
    distinct = list(dict.fromkeys(_terms(query[:MAX_QUERY_CHARS])))
    if len(distinct) <= MAX_QUERY_TERMS:
        return distinct
    longest = set(sorted(distinct, key=len, reverse=True)[:MAX_QUERY_TERMS])
    return [term for term in distinct if term in longest][:MAX_QUERY_TERMS]


def _index_text(scope_id: int, terms: list[str]) -> str:
    if not terms:
        return ""
    prefix = f"s{scope_id}x"
    return prefix + (" " + prefix).join(terms)


def _fts_string(scope_id: int, term: str) -> str:
    # A quoted FTS5 string: terms hold only letters and digits, but quote-escape anyway.
    return '"' + f"s{scope_id}x{term}".replace('"', '""') + '"'


def _summary(content: str, terms: list[str]) -> str:
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


# -- the schema ----------------------------------------------------------------------------

_SCHEMA_V1: Final = (
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
)

_SELECT_SCOPE: Final = (
    "SELECT scope_id FROM scopes WHERE namespace = ? AND scope_ref = ? AND peer = ?"
)
_SELECT_DIGEST: Final = "SELECT sha256 FROM documents WHERE scope_id = ? AND ref = ?"
_SELECT_CONTENT: Final = "SELECT content FROM documents WHERE scope_id = ? AND ref = ?"
_SELECT_FOR_DELETE: Final = "SELECT id, content FROM documents WHERE scope_id = ? AND ref = ?"
_INSERT_DOCUMENT: Final = (
    "INSERT INTO documents (scope_id, ref, sha256, key, content) VALUES (?, ?, ?, ?, ?) "
    "ON CONFLICT (scope_id, ref) DO NOTHING"
)
_INSERT_TERMS: Final = "INSERT INTO documents_fts (rowid, terms) VALUES (?, ?)"
_PENDING: Final = (
    "SELECT p.id, d.scope_id, d.content FROM pending AS p "
    "JOIN documents AS d ON d.id = p.id ORDER BY p.id LIMIT ?"
)
_DELETE_TERMS: Final = (
    "INSERT INTO documents_fts (documents_fts, rowid, terms) VALUES ('delete', ?, ?)"
)
_COUNT: Final = (
    "UPDATE scopes SET record_count = record_count + ?, last_id = max(last_id, ?) "
    "WHERE scope_id = ?"
)
_PROBE: Final = (
    "SELECT count(*) FROM (SELECT 1 FROM documents_fts WHERE documents_fts MATCH ? LIMIT ?)"
)
_RANKED: Final = (
    "SELECT d.id, d.ref, d.content, f.rank FROM documents_fts AS f "
    "JOIN documents AS d ON d.id = f.rowid "
    "WHERE documents_fts MATCH ? AND d.scope_id = ? ORDER BY f.rank LIMIT ?"
)
_BY_ID: Final = "SELECT ref, content FROM documents WHERE id = ? AND scope_id = ?"
_WINDOW: Final = (
    "SELECT rowid FROM documents_fts WHERE documents_fts MATCH ? AND rowid BETWEEN ? AND ?"
)


# -- the provider ----------------------------------------------------------------------------


class _Item(NamedTuple):
    """One validated document on its way into :meth:`SQLiteProvider._write`."""

    key: str
    ref: bytes
    content: str
    digest: bytes


def _prepare(skey: tuple[str, str, str], key: str, content: str) -> _Item:
    checked = check_token(key, "$.key")
    digest = hashlib.sha256(check_content(content)).digest()
    return _Item(key=checked, ref=_ref_digest(skey, checked), content=content, digest=digest)


def _scope_key(scope: ProviderScope) -> tuple[str, str, str]:
    return (scope.namespace, scope.scope_ref, scope.actor_peer_id or "")


def _ref_digest(scope: tuple[str, str, str], key: str) -> bytes:
    # Tokens never hold a newline and are never empty, so the join is unambiguous
    # and the empty peer can only mean "no peer".
    material = _REF_DOMAIN + "\n".join((*scope, key)).encode("utf-8")
    return hashlib.sha256(material).digest()[:16]


def _parse_ref(ref: object) -> bytes | None:
    """The digest of one of this provider's refs; ``None`` for anything else."""
    match = _REF.fullmatch(ref) if isinstance(ref, str) else None
    return None if match is None else bytes.fromhex(match.group(1))


def _is_busy(exc: sqlite3.Error) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int):
        return code & 0xFF in (_SQLITE_BUSY, _SQLITE_LOCKED)
    message = str(exc)
    return "locked" in message or "busy" in message


def _is_readonly(exc: sqlite3.Error) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    return isinstance(code, int) and code & 0xFF == _SQLITE_READONLY


def _is_interrupt(exc: sqlite3.Error) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    return (code & 0xFF == _SQLITE_INTERRUPT) if isinstance(code, int) else "interrupt" in str(exc)


class SQLiteProvider:
    """The embedded SQLite provider (id ``sqlite``); see the module docs for the design.

    Args:
        path: the database file (default: :func:`default_path`). Relative paths are
            resolved against the working directory at construction.
        timeout: seconds a call may take when it passes ``timeout=None`` (default 10).
        busy_timeout_ms: how long SQLite waits for another process's lock before
            this provider retries (default 5000; never longer than the call's timeout).
        synchronous: ``"full"`` (default), ``"extra"`` or ``"normal"`` (see Durability).

    Raises:
        ProviderConfigError: an unknown option, or an option value it cannot use.

    .. versionadded:: 0.1.0
    """

    provider_id: str = "sqlite"
    spi_version: int = SPI_VERSION

    def __init__(
        self,
        *,
        path: str | os.PathLike[str] | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS,
        synchronous: Synchronous = "full",
        **unknown: object,
    ) -> None:
        for name in unknown:
            raise ProviderConfigError(
                f"unknown option {_shown(name)} for provider 'sqlite'; "
                f"it accepts: {', '.join(_OPTIONS)}"
            )
        self._timeout = _checked_timeout(timeout, "timeout")
        self._busy_ms = _checked_busy(busy_timeout_ms)
        self._synchronous = _checked_synchronous(synchronous)
        self._path = default_path() if path is None else _checked_path(path)
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        self._pid = 0
        self._orphans: list[sqlite3.Connection] = []  # inherited across fork: never used again
        self._busy_set = -1
        self._deadline = math.inf
        self._scope_ids: dict[tuple[str, str, str], int] = {}
        self._pending_scope: tuple[tuple[str, str, str], int] | None = None
        self._closed = False

    @classmethod
    def from_url(cls, url: str) -> Self:
        """Build from ``sqlite://`` (default location) or ``sqlite:///abs/path.db?opt=v``.

        Raises:
            ProviderConfigError: another scheme, a host, a relative or directory path,
                a fragment, a malformed query, or an unknown or invalid option. Nothing
                is created on disk in any case.
        """
        from urllib.parse import parse_qsl, unquote  # noqa: PLC0415 - only URL users pay

        prefix = "sqlite://"
        if not isinstance(url, str) or url[: len(prefix)].lower() != prefix:
            raise ProviderConfigError(
                "a sqlite provider URL is sqlite:// (default location) or sqlite:///abs/path.db"
            )
        rest = url[len(prefix) :]
        if "#" in rest:
            raise ProviderConfigError("a sqlite provider URL takes no fragment")
        location, _, query = rest.partition("?")
        if location and not location.startswith("/"):
            raise ProviderConfigError(
                "a sqlite provider URL names no host: use sqlite:///abs/path.db (three slashes)"
            )
        try:
            pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=True) if query else []
            path = unquote(location, errors="strict") if location else None
        except (ValueError, UnicodeDecodeError):
            raise ProviderConfigError("the sqlite provider URL is malformed") from None
        options: dict[str, Any] = {}
        for name, raw in pairs:
            if name in options:
                raise ProviderConfigError(f"option {_shown(name)} is given twice")
            options[name] = _url_option(name, raw)
        if path is not None:
            if re.match(r"/[A-Za-z]:[/\\]", path) and os.name == "nt":
                path = path[1:]
            options["path"] = path
        return cls(**options)

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return f"<SQLiteProvider {state}>"  # the path is deliberately not shown

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    # -- the SPI ------------------------------------------------------------------------

    def write(
        self, *, scope: ProviderScope, key: str, content: str, timeout: float | None = None
    ) -> WriteResult:
        """Store ``content`` under ``key`` (idempotent); durable before it returns."""
        scope = check_scope(scope)
        skey = _scope_key(scope)
        (result,) = self._write_prepared(
            skey, [_prepare(skey, key, content)], check_timeout(timeout)
        )
        return result

    def write_many(
        self,
        *,
        scope: ProviderScope,
        items: Iterable[tuple[str, str]],
        timeout: float | None = None,
    ) -> tuple[WriteResult, ...]:
        """Write several documents of one scope in a single transaction (bulk loads).

        Each item is ``(key, content)`` with :meth:`write`'s semantics; a key that
        repeats within the batch is ``unchanged`` or ``conflict`` like a later call.
        Everything is validated before anything is written; all or nothing commits.
        """
        scope = check_scope(scope)
        limit = check_timeout(timeout)
        skey = _scope_key(scope)
        prepared: list[_Item] = []
        for index, item in enumerate(items):
            if not isinstance(item, tuple) or len(item) != 2:
                raise RecordValidationError(
                    "must be a (key, content) pair", path=f"$.items[{index}]", code="wrong_type"
                )
            try:
                prepared.append(_prepare(skey, *item))
            except RecordValidationError as exc:
                raise exc.under(f"items[{index}]") from None
        return self._write_prepared(skey, prepared, limit) if prepared else ()

    def _write_prepared(
        self, skey: tuple[str, str, str], items: list[_Item], limit: float | None
    ) -> tuple[WriteResult, ...]:
        statuses = self._call(limit, create=True, op=lambda c: self._write(c, skey, items))
        return tuple(
            WriteResult(ref=REF_PREFIX + item.ref.hex(), status=status, content_sha256=digest.hex())
            for item, (status, digest) in zip(items, statuses, strict=True)
        )

    def read(self, *, scope: ProviderScope, ref: str, timeout: float | None = None) -> ReadResult:
        """The exact content stored under ``ref`` in ``scope``, or ``found=False``."""
        scope = check_scope(scope)
        digest = _parse_ref(ref)
        if digest is None:
            ref = check_token(ref, "$.ref")
        limit = check_timeout(timeout)
        skey = _scope_key(scope)

        def op(conn: sqlite3.Connection) -> str | None:
            scope_id = self._scope_id(conn, skey)
            if scope_id is None or digest is None:
                return None
            rows = conn.execute(_SELECT_CONTENT, (scope_id, digest)).fetchall()
            return str(rows[0][0]) if rows else None

        content = self._call(limit, create=False, op=op, empty=lambda: None)
        if content is None:
            return ReadResult(ref=ref, found=False)
        return ReadResult(ref=ref, found=True, content=content)

    def search(
        self, *, scope: ProviderScope, query: str, limit: int, timeout: float | None = None
    ) -> SearchResult:
        """At most ``limit`` hits from ``scope``, best first (see the module docs)."""
        scope = check_scope(scope)
        query = check_query(query)
        limit = check_limit(limit)
        call_limit = check_timeout(timeout)
        skey = _scope_key(scope)
        terms = _query_terms(query)

        def op(conn: sqlite3.Connection) -> tuple[SearchHit, ...]:
            scope_id = self._scope_id(conn, skey)
            if scope_id is None or not terms:
                return ()
            return self._search(conn, scope_id, terms, limit)

        hits = self._call(call_limit, create=False, op=op, empty=lambda: ())
        return SearchResult(hits=hits)

    def delete(
        self, *, scope: ProviderScope, ref: str, timeout: float | None = None
    ) -> DeleteResult:
        """Remove ``ref`` from ``scope``; a missing ref gives ``deleted=False``."""
        scope = check_scope(scope)
        digest = _parse_ref(ref)
        if digest is None:
            ref = check_token(ref, "$.ref")
        limit = check_timeout(timeout)
        skey = _scope_key(scope)

        def op(conn: sqlite3.Connection) -> bool:
            scope_id = self._scope_id(conn, skey)
            if scope_id is None or digest is None:
                return False
            if not conn.execute(_SELECT_DIGEST, (scope_id, digest)).fetchall():
                return False
            return self._delete(conn, scope_id, digest)

        deleted = self._call(limit, create=False, op=op, empty=lambda: False)
        return DeleteResult(ref=ref, deleted=deleted)

    def inventory(self, *, scope: ProviderScope, timeout: float | None = None) -> Inventory:
        """Availability, corpus presence, record count and index presence for ``scope``."""
        scope = check_scope(scope)
        limit = check_timeout(timeout)
        skey = _scope_key(scope)

        def op(conn: sqlite3.Connection) -> Inventory:
            rows = conn.execute(
                "SELECT record_count FROM scopes WHERE namespace = ? AND scope_ref = ? "
                "AND peer = ?",
                skey,
            ).fetchall()
            index = conn.execute(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?",
                ("documents_fts",),
            ).fetchall()
            return Inventory(
                provider_id=self.provider_id,
                available=True,
                corpus_present=bool(rows),
                record_count=int(rows[0][0]) if rows else 0,
                index_present=bool(index[0][0]),
            )

        def empty() -> Inventory:
            return Inventory(
                provider_id=self.provider_id,
                available=True,
                corpus_present=False,
                record_count=0,
                index_present=False,
            )

        return self._call(limit, create=False, op=op, empty=empty)

    def close(self) -> None:
        """Close the connection; every later call raises ``ProviderUnavailable``."""
        with self._lock:
            self._closed = True
            conn, self._conn = self._conn, None
            if conn is not None:
                if self._pid == os.getpid():
                    conn.close()
                else:  # inherited through fork: the parent's to close, never finalise it here
                    self._orphans.append(conn)

    # -- maintenance ----------------------------------------------------------------------

    def optimize(self, *, timeout: float | None = None) -> None:
        """Merge the full-text index into one segment and refresh planner statistics.

        Optional housekeeping (after a bulk load, or from an operator job): search
        is correct without it, and somewhat faster after it.
        """
        limit = check_timeout(timeout)

        def op(conn: sqlite3.Connection) -> None:
            self._catch_up(conn)
            conn.execute("INSERT INTO documents_fts (documents_fts) VALUES ('optimize')")
            conn.execute("PRAGMA optimize")
            # RESTART, not TRUNCATE: the next write trims the WAL to journal_size_limit
            # and then reuses its blocks; a truncated WAL grows again, and every fsync
            # of a growing file also commits the new file size (about twice as slow).
            conn.execute("PRAGMA wal_checkpoint(RESTART)").fetchall()

        self._call(limit, create=False, op=op, empty=lambda: None)

    # -- operations (run under the lock, inside _call) ------------------------------------

    def _write(
        self,
        conn: sqlite3.Connection,
        skey: tuple[str, str, str],
        items: list[_Item],
    ) -> list[tuple[WriteStatus, bytes]]:
        scope_id = self._scope_ids.get(skey)
        conn.execute("BEGIN IMMEDIATE")
        try:
            if scope_id is None:
                scope_id = self._create_scope(conn, skey)
            results: list[tuple[WriteStatus, bytes]] = []
            created = newest = 0
            bulk = len(items) > 1  # a batch is indexed at once; a single write waits
            for key, ref, content, digest in items:
                cursor = conn.execute(_INSERT_DOCUMENT, (scope_id, ref, digest, key, content))
                if cursor.rowcount != 1:  # the key is taken: same content or a conflict
                    rows = conn.execute(_SELECT_DIGEST, (scope_id, ref)).fetchall()
                    stored = bytes(rows[0][0])
                    results.append(("unchanged" if stored == digest else "conflict", stored))
                    continue
                newest = int(cursor.lastrowid or 0)
                if bulk:
                    conn.execute(_INSERT_TERMS, (newest, _index_text(scope_id, _terms(content))))
                else:
                    conn.execute("INSERT INTO pending (id) VALUES (?)", (newest,))
                results.append(("created", digest))
                created += 1
            if created:
                conn.execute(_COUNT, (created, newest, scope_id))
                (waiting,) = conn.execute("SELECT count(*) FROM pending").fetchone()
                if waiting >= (1 if bulk else INDEX_BATCH):
                    self._index_pending(conn)  # in this transaction: one commit, one fsync
            self._commit(conn)
        except BaseException:
            self._rollback(conn)
            raise
        return results

    def _index_pending(self, conn: sqlite3.Connection) -> None:
        """Index every pending document (inside the caller's write transaction)."""
        while True:
            rows = conn.execute(_PENDING, (INDEX_CHUNK,)).fetchall()
            for doc_id, scope_id, content in rows:
                conn.execute(_INSERT_TERMS, (doc_id, _index_text(scope_id, _terms(content))))
            if not rows:
                return
            conn.execute("DELETE FROM pending WHERE id <= ?", (rows[-1][0],))

    def _catch_up(self, conn: sqlite3.Connection) -> None:
        """Index what is pending before a search, if the write lock is free.

        The index is derived data, so this transaction skips the fsync: if power
        fails before a later write syncs the WAL, it is lost together with the
        ``pending`` rows it cleared, and simply done again. A search never queues
        behind writers: when another connection holds the write lock for longer
        than :data:`CATCH_UP_WAIT_MS`, or the store is read-only, the search answers
        from the index as it stands.
        """
        if not conn.execute("SELECT EXISTS (SELECT 1 FROM pending)").fetchone()[0]:
            return
        conn.execute(f"PRAGMA busy_timeout = {CATCH_UP_WAIT_MS}")
        conn.execute("PRAGMA synchronous = NORMAL")
        try:
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as exc:
                if _is_busy(exc) or _is_readonly(exc):
                    return
                raise
            try:
                self._index_pending(conn)
                self._commit(conn)
            except sqlite3.OperationalError as exc:
                self._rollback(conn)
                if not _is_readonly(exc):
                    raise
            except BaseException:
                self._rollback(conn)
                raise
        finally:
            try:
                conn.execute(f"PRAGMA synchronous = {self._synchronous.upper()}")
                conn.execute(f"PRAGMA busy_timeout = {self._busy_set}")
            except sqlite3.Error:
                self._discard()  # never keep a connection that might not fsync its writes
                raise

    def _delete(self, conn: sqlite3.Connection, scope_id: int, digest: bytes) -> bool:
        conn.execute("BEGIN IMMEDIATE")
        try:
            rows = conn.execute(_SELECT_FOR_DELETE, (scope_id, digest)).fetchall()
            if not rows:
                self._rollback(conn)
                return False
            doc_id, content = rows[0]
            conn.execute("DELETE FROM documents WHERE id = ?", (doc_id,))
            if conn.execute("DELETE FROM pending WHERE id = ?", (doc_id,)).rowcount != 1:
                # Indexed already: a contentless delete names exactly the terms it indexed.
                conn.execute(_DELETE_TERMS, (doc_id, _index_text(scope_id, _terms(content))))
            conn.execute(_COUNT, (-1, 0, scope_id))
            self._commit(conn)
        except BaseException:
            self._rollback(conn)
            raise
        return True

    def _search(
        self, conn: sqlite3.Connection, scope_id: int, terms: list[str], limit: int
    ) -> tuple[SearchHit, ...]:
        self._catch_up(conn)
        # 1. Probe each term's document frequency in the scope, bounded by the budget.
        frequencies: list[tuple[int, str]] = []
        for term in terms:
            (count,) = conn.execute(
                _PROBE, (_fts_string(scope_id, term), RANK_BUDGET + 1)
            ).fetchone()
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
        common = [term for term in terms if term in common_set]  # in query order
        hits: list[SearchHit] = []
        seen: set[int] = set()
        if ranked:
            match = " OR ".join(_fts_string(scope_id, term) for term in ranked)
            for doc_id, ref, content, rank in conn.execute(
                _RANKED, (match, scope_id, limit)
            ).fetchall():
                seen.add(doc_id)
                hits.append(self._hit(ref, content, ranked, -float(rank)))
        # 3. Fill up from the scope's newest documents: those holding the most common
        #    terms first, newest first among equals. Only FILL_WINDOW row ids are looked
        #    at, one term at a time (FTS5 seeks a single term to a row id cheaply, while
        #    its AND first walks the doclists from their start), so the cost is bounded.
        if common and len(hits) < limit:
            hits.extend(self._fill(conn, scope_id, common, limit - len(hits), seen))
        return tuple(hits)

    def _fill(
        self,
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
                cursor = conn.execute(_WINDOW, (_fts_string(scope_id, term), low, high))
                matched.update(row for (row,) in cursor)
            high = low - 1
            complete = sum(1 for doc, n in matched.items() if n == len(terms) and doc not in seen)
            if complete >= wanted:
                break
        best = heapq.nlargest(wanted, ((n, doc) for doc, n in matched.items() if doc not in seen))
        hits = []
        for _, doc_id in best:
            for ref, content in conn.execute(_BY_ID, (doc_id, scope_id)).fetchall():
                hits.append(self._hit(ref, content, common, None))
        return hits

    @staticmethod
    def _hit(ref: bytes, content: str, terms: list[str], score: float | None) -> SearchHit:
        return SearchHit(
            ref=REF_PREFIX + bytes(ref).hex(), summary=_summary(content, terms), score=score
        )

    # -- scopes --------------------------------------------------------------------------

    def _scope_id(self, conn: sqlite3.Connection, skey: tuple[str, str, str]) -> int | None:
        scope_id = self._scope_ids.get(skey)
        if scope_id is None:
            rows = conn.execute(_SELECT_SCOPE, skey).fetchall()
            if rows:
                scope_id = int(rows[0][0])
                self._scope_ids[skey] = scope_id  # scopes are never deleted: safe to cache
        return scope_id

    def _create_scope(self, conn: sqlite3.Connection, skey: tuple[str, str, str]) -> int:
        rows = conn.execute(_SELECT_SCOPE, skey).fetchall()
        if rows:
            scope_id = int(rows[0][0])
        else:
            cursor = conn.execute(
                "INSERT INTO scopes (namespace, scope_ref, peer) VALUES (?, ?, ?)", skey
            )
            scope_id = int(cursor.lastrowid or 0)
        # Cached only once committed; a rollback forgets it with the transaction.
        self._pending_scope = (skey, scope_id)
        return scope_id

    # -- connection, transactions, errors -----------------------------------------------

    def _commit(self, conn: sqlite3.Connection) -> None:
        # A commit is never interrupted by the deadline: it is bounded by one fsync,
        # and a timeout reported for a write that did commit would be a lie.
        deadline, self._deadline = self._deadline, math.inf
        try:
            conn.execute("COMMIT")
        finally:
            self._deadline = deadline
        if self._pending_scope is not None:
            skey, scope_id = self._pending_scope
            self._scope_ids[skey] = scope_id
            self._pending_scope = None

    def _rollback(self, conn: sqlite3.Connection) -> None:
        self._pending_scope = None
        if conn.in_transaction:
            # If ROLLBACK fails, SQLite has already rolled the transaction back.
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")

    def _call(
        self,
        limit: float | None,
        *,
        create: bool,
        op: Callable[[sqlite3.Connection], _T],
        empty: Callable[[], _T] | None = None,
    ) -> _T:
        """Run ``op`` on the connection with retries on lock contention until the deadline."""
        seconds = self._timeout if limit is None else limit
        deadline = time.monotonic() + seconds
        delay = 0.001
        with self._lock:
            if self._closed:
                raise ProviderUnavailable(
                    "the sqlite provider is closed", reason_code="provider_closed"
                )
            while True:
                try:
                    conn = self._connection(create=create, seconds=seconds)
                    if conn is None:
                        if empty is None:  # pragma: no cover - write paths always create
                            raise ProviderUnavailable("the sqlite store does not exist")
                        return empty()
                    self._arm(conn, deadline)
                    try:
                        return op(conn)
                    finally:
                        self._deadline = math.inf
                except sqlite3.Error as exc:
                    if self._conn is not None:
                        self._rollback(self._conn)
                    remaining = deadline - time.monotonic()
                    if _is_interrupt(exc) or (_is_busy(exc) and remaining <= 0):
                        raise ProviderUnavailable(
                            f"the sqlite store did not answer within {seconds:g} s",
                            reason_code="provider_timeout",
                        ) from exc
                    if not _is_busy(exc):
                        self._discard()
                        raise ProviderUnavailable(
                            "the sqlite store cannot be used "
                            f"({getattr(exc, 'sqlite_errorname', type(exc).__name__)})",
                        ) from exc
                    time.sleep(min(delay, max(remaining, 0.0)))
                    delay = min(delay * 2, 0.05)
                except OSError as exc:  # creating or inspecting the store's directory
                    raise ProviderUnavailable(
                        f"the sqlite store's location cannot be used ({type(exc).__name__})"
                    ) from exc

    def _arm(self, conn: sqlite3.Connection, deadline: float) -> None:
        """Bound SQLite's lock waits and statement time by the call's deadline."""
        remaining_ms = max(1, math.ceil((deadline - time.monotonic()) * 1000))
        wanted = min(self._busy_ms, remaining_ms)
        if wanted != self._busy_set:
            conn.execute(f"PRAGMA busy_timeout = {int(wanted)}")
            self._busy_set = wanted
        self._deadline = deadline

    def _progress(self) -> int:
        # Called by SQLite every few thousand VM steps: non-zero interrupts the statement.
        return 1 if time.monotonic() > self._deadline else 0

    def _discard(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(sqlite3.Error):
                conn.close()

    def _exists(self) -> bool:
        """Does the store file exist? ``ProviderUnavailable`` if it never could."""
        path = Path(self._path)
        if path.exists():
            return True
        parent = path.parent
        while not parent.exists() and parent.parent != parent:
            parent = parent.parent
        if not parent.is_dir():
            raise ProviderUnavailable("the sqlite store's location is not a directory")
        return False

    def _connection(self, *, create: bool, seconds: float) -> sqlite3.Connection | None:
        pid = os.getpid()
        if self._conn is not None:
            if self._pid == pid:
                return self._conn
            # Inherited through fork: SQLite forbids using it, and closing it here could
            # disturb the parent's locks. Keep it referenced so it is never finalised.
            self._orphans.append(self._conn)
            self._conn = None
        if not create and not self._exists():
            return None
        if create:
            Path(self._path).parent.mkdir(parents=True, exist_ok=True)
        uri = Path(self._path).as_uri() + ("?mode=rwc" if create else "?mode=rw")
        conn = sqlite3.connect(
            uri,
            uri=True,
            timeout=min(seconds, self._busy_ms / 1000),
            isolation_level=None,
            check_same_thread=False,
            cached_statements=64,
        )
        try:
            self._configure(conn)
        except BaseException:
            conn.close()
            raise
        self._conn, self._pid, self._busy_set = conn, pid, -1
        return conn

    def _configure(self, conn: sqlite3.Connection) -> None:
        conn.set_progress_handler(self._progress, 2000)
        (mode,) = conn.execute("PRAGMA journal_mode = WAL").fetchone()
        if str(mode).lower() != "wal":
            raise ProviderUnavailable("the sqlite store cannot use WAL journaling here")
        conn.execute(f"PRAGMA synchronous = {self._synchronous.upper()}")
        conn.execute("PRAGMA temp_store = MEMORY")
        conn.execute("PRAGMA cache_size = -16384")  # 16 MiB page cache
        conn.execute("PRAGMA secure_delete = ON")  # deleted content is zeroed, not left behind
        conn.execute("PRAGMA journal_size_limit = 67108864")
        self._migrate(conn)

    def _migrate(self, conn: sqlite3.Connection) -> None:
        (version,) = conn.execute("PRAGMA user_version").fetchone()
        if version == SCHEMA_VERSION:
            (app,) = conn.execute("PRAGMA application_id").fetchone()
            if app != APPLICATION_ID:
                raise ProviderUnavailable("the sqlite file is not a reward-memory store")
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
                for statement in _SCHEMA_V1:
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
            self._rollback(conn)
            raise
