"""``sqlite``: the embedded default provider (stdlib :mod:`sqlite3`, one database file).

Location
    ``path=`` when given; else ``$REWARD_MEMORY_SQLITE_PATH`` when set; else
    ``$XDG_DATA_HOME/reward-memory/memory.db`` (``~/.local/share/reward-memory/memory.db``
    when ``XDG_DATA_HOME`` is unset or not absolute). URLs: ``sqlite://`` (that default)
    or ``sqlite:///abs/path/memory.db``, options in the query string
    (``sqlite:///abs/memory.db?timeout=5&busy_timeout_ms=2000``). Constructing a
    provider touches nothing on disk; the file (mode ``0o600``) and its missing parent
    directories (``0o700``) are created by the first ``write``, readable by their owner
    only; an existing file or directory keeps its mode. Reading, searching, deleting in
    or inventorying a store that does not exist yet, or an empty file, answers "empty"
    without creating it. A path that is not a regular file (a device, a FIFO, also
    through a symlink) is refused before SQLite opens it.

Durability
    WAL journal with ``synchronous=NORMAL`` (the default): a commit is in the WAL,
    in the operating system's hands, before ``write`` returns, so an acknowledged
    write survives ``kill -9`` or any other crash of the writing process (the
    contract: "an activated receipt means the record survives a crash of the
    writing process"; ``tests/test_sqlite_provider.py`` kills real writers). An
    OS crash or power loss may lose the last commits before the next checkpoint
    (never corrupt the file). ``synchronous=full`` fsyncs the WAL at every commit
    and survives those too, at one ``fdatasync`` per write (about 100-200 us on an
    idle local SSD, far more on a busy or network disk); ``extra`` is accepted for
    the paranoid.

Concurrency
    Many processes may share one file. Writes take the lock up front with
    ``BEGIN IMMEDIATE`` (so no transaction ever has to upgrade a read lock and hit
    ``SQLITE_BUSY_SNAPSHOT``), wait for it with SQLite's busy handler, and are
    retried while the call's timeout lasts; readers never wait for writers (WAL),
    and neither do searches (see Indexing). A
    call that cannot finish in time raises :class:`ProviderUnavailable` with
    ``reason_code="provider_timeout"``; a store that cannot be opened or read
    (missing permissions, not a database, a damaged schema, a newer schema) raises
    it with ``provider_unavailable``. Within a process, one connection is shared behind a
    lock: SQLite serialises a connection anyway, a file has one writer at a time,
    reads take well under a millisecond, and one connection can be closed
    deterministically (per-thread connections leak when threads end). A call waits
    for that lock only as long as its timeout (``provider_timeout`` after it). Open
    one provider per thread when reads must run in parallel. After ``fork`` the
    child gets a fresh lock (a thread of the parent may have held it) and opens its
    own connection.

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
       AND operator first walks the doclists from their start. Row ids are shared
       by every scope in the file, so when that window holds too few matches
       (another scope wrote much since), each common term's newest matches below
       it are taken instead, found through the term's scope prefix alone.

    Summaries are a window of at most 200 characters around the first query
    term found, with an ellipsis wherever text was left out.

Indexing (in the write's transaction, read-your-writes)
    Every write indexes its documents in its own transaction, so a search sees
    every acknowledged write, from any process, and a search never takes the
    write lock. (FTS5 flushes a new index segment at every commit: for a compact
    1.7 KB record that is about 80 us of the write, the largest part of it.)
    A level of the index merges its segments once it holds
    ``_schema.CRISISMERGE`` (4) of them (FTS5's default is 16), so a term lookup
    visits few segments: a search looks each term up two or three times (probe,
    match, BM25's document frequencies), at about 1 us per segment visited.
    ``pending`` lists documents written but not indexed: stores written by
    earlier versions, which indexed single writes in batches, may hold some;
    a search first indexes them if the write lock is free within
    :data:`CATCH_UP_WAIT_MS` (in a transaction without fsync: the index is
    derived data, and a lost batch is redone from ``pending``), and otherwise
    answers from the index as it stands. Deleting a pending document just drops
    it from ``pending``.

Erasure (delete means gone)
    After ``delete`` returns, no byte of the document is left in the database
    file, its WAL or the full-text index (see :mod:`._erase`): ``secure_delete``
    zeroes the row in place, the delete of an indexed document merges the index
    into one segment (a contentless FTS5 delete only adds a marker; SQLite 3.40
    has no FTS5 ``secure-delete``), and the WAL is checkpointed and truncated to
    zero bytes. Deletes are rare (purge, operator controls), and that merge costs
    time in proportion to the index: give a delete in a large store a generous
    ``timeout``. When the erase cannot finish (another connection's open read pins
    the WAL past the deadline) the delete has still committed, the call raises
    ``ProviderUnavailable``, and any later delete finishes the erase.
"""

from reward_memory.providers.sqlite._options import (
    DEFAULT_BUSY_TIMEOUT_MS,
    DEFAULT_TIMEOUT,
    ENV_PATH,
    default_path,
)
from reward_memory.providers.sqlite._provider import SQLiteProvider
from reward_memory.providers.sqlite._schema import SCHEMA_VERSION

__all__ = [
    "DEFAULT_BUSY_TIMEOUT_MS",
    "DEFAULT_TIMEOUT",
    "ENV_PATH",
    "SCHEMA_VERSION",
    "SQLiteProvider",
    "default_path",
]
