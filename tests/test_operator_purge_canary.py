"""Purge means gone, end to end: an ingested record purged through the operator control
leaves no byte of its content in any SQLite store file, and explain shows the tombstone.

Contract: issue 9 item 5 ("After a purge, no byte of the purged content is readable through
any provider operation, and on SQLite none remains in the database file, its WAL or its
full-text index ... A test writes a canary record, purges it and scans the raw bytes of
every store file") and its "Done when" ("the canary purge test finds 0 bytes; explain then
shows the tombstone").
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from tests._operator_support import NOW, binding, ingest_soft, request, stored_record

from reward_memory.lineage import explain
from reward_memory.operator import operator_control
from reward_memory.providers.sqlite import SQLiteProvider


def _occurrences(directory: Path, needle: str) -> int:
    wanted = needle.lower().encode()
    return sum(
        path.read_bytes().lower().count(wanted) for path in directory.iterdir() if path.is_file()
    )


def test_a_purged_canary_leaves_zero_bytes_and_explain_shows_the_tombstone(
    tmp_path: Path,
) -> None:
    canary = "qzcanary" + uuid.uuid4().hex[:12]
    store = tmp_path / "store"
    store.mkdir()
    provider = SQLiteProvider(path=store / "memory.db")
    try:
        receipt = ingest_soft(provider, summary=f"Lead the review summary with the {canary} risk.")
        assert receipt.status == "activated"
        record = stored_record(provider, receipt)
        assert _occurrences(store, canary) > 0, "the scan must be able to see the canary"

        purged = operator_control(
            request(record, "purge", provider_id="sqlite"),
            provider=provider,
            binding=binding("sqlite"),
            execute=True,
            now=NOW,
        )
        assert purged.status == "completed"
        assert purged.receipt is not None
        assert purged.receipt.result_state == "purged"

        assert _occurrences(store, canary) == 0
        scope = binding("sqlite").provider_scope
        assert provider.search(scope=scope, query=canary, limit=8).hits == ()

        lineage = explain(receipt, provider=provider, bindings=(binding("sqlite"),))
        states = {link.status for link in lineage.links}
        assert "purged" in states
        assert canary not in repr(lineage)
    finally:
        provider.close()
    assert _occurrences(store, canary) == 0


def test_a_retried_purge_finishes_the_erase_an_interrupted_one_left(tmp_path: Path) -> None:
    """A reader's snapshot keeps the WAL from being emptied: the first purge says
    ``partial``; its retry finds nothing left to delete, and must still finish the
    erase before it says ``completed`` (the SPI's delete of a missing ref does)."""
    import sqlite3

    canary = "qzheld" + uuid.uuid4().hex[:12]
    store = tmp_path / "store"
    store.mkdir()
    provider = SQLiteProvider(path=store / "memory.db", timeout=0.5)
    reader = sqlite3.connect(store / "memory.db", isolation_level=None)
    try:
        receipt = ingest_soft(provider, summary=f"Lead the review summary with the {canary} risk.")
        assert receipt.status == "activated"
        record = stored_record(provider, receipt)
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM documents").fetchall()  # holds a snapshot

        def purge() -> object:
            return operator_control(
                request(record, "purge", provider_id="sqlite"),
                provider=provider,
                binding=binding("sqlite"),
                execute=True,
                now=NOW,
            )

        first = purge()
        assert first.status == "partial"  # type: ignore[attr-defined]
        reader.execute("COMMIT")
        again = purge()
        assert again.status == "completed"  # type: ignore[attr-defined]
        assert _occurrences(store, canary) == 0  # the store still open
    finally:
        reader.close()
        provider.close()


class _PurgedWhileWriting:
    """Fault injection: the purge runs (to completion) between ingest's closed-marker
    read and its write landing -- as when the write waits on another writer's lock."""

    def __init__(self, inner: SQLiteProvider, purge: object) -> None:
        self._inner = inner
        self._purge = purge
        self.provider_id = inner.provider_id
        self.spi_version = inner.spi_version
        self.armed = False

    def write(self, **kwargs: object) -> object:
        if self.armed:
            self.armed = False
            assert self._purge().status == "completed"  # type: ignore[operator]
        return self._inner.write(**kwargs)  # type: ignore[arg-type]

    def __getattr__(self, name: str) -> object:
        return getattr(self._inner, name)


def test_an_ingest_whose_write_lands_after_a_purge_takes_it_back(tmp_path: Path) -> None:
    """A replay under a revised standing policy writes to another target key: the purge
    closed the record after ingest looked, so ingest looks again and deletes its write."""
    from tests._ingest_support import OBSERVED, soft_binding, soft_event_data, soft_policy

    from reward_memory.ingestion import ingest

    canary = "qzrace" + uuid.uuid4().hex[:12]
    store = tmp_path / "store"
    store.mkdir()
    inner = SQLiteProvider(path=store / "memory.db")
    try:
        summary = f"Lead the review summary with the {canary} risk."
        receipt = ingest_soft(inner, summary=summary)
        record = stored_record(inner, receipt)
        wrapped = _PurgedWhileWriting(
            inner,
            lambda: operator_control(
                request(record, "purge", provider_id="sqlite"),
                provider=inner,
                binding=binding("sqlite"),
                execute=True,
                now=NOW,
            ),
        )
        wrapped.armed = True
        from tests._operator_support import corpus

        replay = ingest(
            soft_event_data(summary),
            adapter="scoped_feedback",
            corpus=corpus(provider_id="sqlite"),
            standing_policy=soft_policy(policy_id="policy:review-summary-v2"),
            binding=soft_binding(provider_id="sqlite"),
            observed_at=OBSERVED,
            provider=wrapped,
            execute=True,
            now=NOW,
        )
        assert (replay.status, replay.reason_codes) == ("conflict", ("record_closed_by_operator",))
        assert replay.external_writes_performed is False
        scope = binding("sqlite").provider_scope
        assert inner.search(scope=scope, query=canary, limit=8).hits == ()
        assert _occurrences(store, canary) == 0
    finally:
        inner.close()


class _IngestBeforeFirstWrite:
    """Fault injection: a whole ingest runs just before the control's first write lands."""

    def __init__(self, inner: Any, ingest_now: Any) -> None:
        self._inner, self._ingest_now, self._fired = inner, ingest_now, False
        self.provider_id, self.spi_version = inner.provider_id, inner.spi_version

    def write(self, **kwargs: Any) -> Any:
        if not self._fired:
            self._fired = True
            self._ingest_now()
        return self._inner.write(**kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def test_an_ingest_that_ran_before_the_purge_closed_the_record_is_purged_too() -> None:
    """The control closes the record (its marker) before it locates: an ingest that wrote
    just before is found and deleted, one just after sees the marker -- either way the
    purge that says completed leaves nothing."""
    from tests._ingest_support import OBSERVED, soft_binding, soft_event_data, soft_policy
    from tests._operator_support import corpus

    from reward_memory.ingestion import ingest
    from reward_memory.testing import InMemoryProvider

    canary = "qzbefore" + uuid.uuid4().hex[:12]
    summary = f"Lead the review summary with the {canary} risk."
    provider = InMemoryProvider()
    record = stored_record(provider, ingest_soft(provider, summary=summary))
    replays: list[Any] = []

    def replay() -> None:
        replays.append(
            ingest(
                soft_event_data(summary),
                adapter="scoped_feedback",
                corpus=corpus(),
                standing_policy=soft_policy(policy_id="policy:review-summary-v2"),
                binding=soft_binding(),
                observed_at=OBSERVED,
                provider=provider,
                execute=True,
                now=NOW,
            )
        )

    purged = operator_control(
        request(record, "purge"),
        provider=_IngestBeforeFirstWrite(provider, replay),  # type: ignore[arg-type]
        binding=binding(),
        execute=True,
        now=NOW,
    )
    assert [r.status for r in replays] == ["activated"]
    assert purged.status == "completed"
    held = provider.documents(binding().provider_scope).values()
    assert not any(canary in content for content in held)
