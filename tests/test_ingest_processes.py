"""Eight real processes ingest the same 100 events into one SQLite store (issue 8, "Done when").

"8 processes ingesting the same 100 events into one SQLite store end with exactly 100
activated records and 700 deduplicated receipts; none reports activated without its
record being readable." -- and "an activated receipt means the record survives a crash
of the writing process" (DESIGN.md §7): the parent reads every record back after the
workers have exited, through a fresh connection.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

from _ingest_support import soft_binding, soft_corpus
from _ingest_worker import event
from reward_memory.providers.discovery import get_provider

WORKERS = 8
EVENTS = 100
WORKER = Path(__file__).parent / "_ingest_worker.py"


def test_eight_processes_one_store_exactly_one_record_per_event(tmp_path: Path) -> None:
    store = tmp_path / "store.db"
    # Create the schema once, so the workers race on records, not on setup.
    get_provider(f"sqlite:///{store}").close()
    workers = [
        subprocess.Popen(
            [sys.executable, str(WORKER), str(store), str(EVENTS)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(WORKERS)
    ]
    Path(str(store) + ".go").touch()
    receipts = []
    for worker in workers:
        out, err = worker.communicate(timeout=300)
        assert worker.returncode == 0, err[-2000:]
        receipts.extend(json.loads(line) for line in out.splitlines())
    assert len(receipts) == WORKERS * EVENTS
    statuses = Counter(r["status"] for r in receipts)
    assert statuses == {"activated": WORKERS * EVENTS}, statuses
    fresh = [r for r in receipts if not r["deduplicated"]]
    assert len(fresh) == EVENTS
    assert sum(r["deduplicated"] for r in receipts) == (WORKERS - 1) * EVENTS
    assert {r["index"] for r in fresh} == set(range(EVENTS))  # one first write per event
    refs = {r["candidate_ref"] for r in receipts}
    assert len(refs) == EVENTS

    # After every writer has exited: exactly 100 records, each readable through recall.
    binding = soft_binding(provider_id="sqlite")
    provider = get_provider(f"sqlite:///{store}")
    try:
        assert provider.inventory(scope=binding.provider_scope).record_count == EVENTS
        from _ingest_support import ingest_soft

        corpus = soft_corpus(provider_id="sqlite")
        for index in range(EVENTS):
            again = ingest_soft(event(index), provider=provider, corpus=corpus, binding=binding)
            assert again.status == "activated"
            assert again.deduplicated
            assert again.candidate_ref in refs
    finally:
        provider.close()
