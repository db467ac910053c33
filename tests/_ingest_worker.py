"""One worker process of the multi-process ingest test: ingest the events, print receipts.

Run as ``python tests/_ingest_worker.py <store.db> <count>``; waits for ``<store.db>.go``
so that every worker starts at once, then prints one JSON line per receipt.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _ingest_support import ingest_soft as run
from _ingest_support import soft_binding, soft_corpus, soft_event_data
from reward_memory.providers.discovery import get_provider


def event(index: int) -> dict[str, object]:
    return soft_event_data(f"Review summaries for module {index} lead with risk item{index}.")


def main() -> None:
    store, count = sys.argv[1], int(sys.argv[2])
    corpus = soft_corpus(provider_id="sqlite")
    binding = soft_binding(provider_id="sqlite", timeout_seconds=60)
    provider = get_provider(f"sqlite:///{store}")
    go = Path(store + ".go")
    deadline = time.monotonic() + 30
    while not go.exists() and time.monotonic() < deadline:
        time.sleep(0.005)
    try:
        for index in range(count):
            receipt = run(event(index), provider=provider, corpus=corpus, binding=binding)
            print(
                json.dumps(
                    {
                        "index": index,
                        "status": receipt.status,
                        "deduplicated": receipt.deduplicated,
                        "candidate_ref": receipt.candidate_ref,
                        "reasons": list(receipt.reason_codes),
                    }
                ),
                flush=True,
            )
    finally:
        provider.close()


if __name__ == "__main__":
    main()
