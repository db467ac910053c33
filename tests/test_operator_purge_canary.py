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
