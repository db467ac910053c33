"""Benchmark the embedded SQLite provider: write+readback, search, size, import time.

Run with the project's interpreter::

    .venv/bin/python benchmarks/bench_sqlite.py            # 10k, 100k and 1M documents
    .venv/bin/python benchmarks/bench_sqlite.py --quick    # 10k only (CI-friendly)
    .venv/bin/python benchmarks/bench_sqlite.py --ingest   # the ingest operations only

It prints a table and writes the numbers as JSON to
``benchmarks/results/bench_sqlite-<UTC time>.json`` (``--json -`` prints them instead).
Every latency is a median unless it says p95.

What is measured
    * the provider side of an executed ingest (``--ingest`` runs only this): the
      operations ``ingest()`` makes, recorded from the real loop (adapter, candidate,
      activation) on the memory provider and replayed on SQLite: ``write`` of a
      fresh active record (~1.7 KB of JSON, unique per call), the exact ``read``,
      the verification ``search`` (the candidate and activation digests, limit 8)
      and the ``read`` of its hit. Cold: every call a new record, read for the first
      time. Warm: the same record again (``unchanged`` write, same reads and
      search). Medians of wall time and of ``time.thread_time`` (CPU), the default
      ``synchronous=normal`` store interleaved in blocks with a ``synchronous=full``
      one and with the in-memory fixture provider (A/B/C on the same machine at the
      same moment; the memory rows are that provider's share of an ingest).
    * write+readback: one ``write`` of a new document followed by the ``read`` that
      checks it, per call, on a fresh store and on the store holding the largest
      corpus; a ``synchronous=full`` store for reference (one fsync per write).
    * search p50/p95 with ``limit=10`` at each corpus size, all documents in the one
      scope searched (the worst case: nothing is filtered away by the scope), first as
      built by ordinary writes (FTS5 segments as automerge left them), then after
      :meth:`SQLiteProvider.optimize`. A second store spreads the largest corpus over
      100 scopes and searches one of them.
    * database bytes per document: the database file after a checkpoint (the WAL,
      reused space of at most 64 MiB, is not counted).
    * import time: wall time of ``python -c "import reward_memory"`` and of importing
      the provider module, median of 15 runs each.

How the corpora are built
    Documents look like compact active memory records: JSON of ~300-600 bytes with
    a summary and a rationale drawn from a 40,000-word Zipf-distributed vocabulary
    (technical English words first, then synthetic ones). They are loaded with the
    provider's own bulk method, :meth:`SQLiteProvider.write_many` (same schema, same
    term derivation and index as ``write``, one transaction per 5,000 documents),
    and the corpus grows in place: 10k, then 100k, then 1M. Queries are 2-5 words,
    mostly taken from a stored document's summary (what a recall for a similar task
    would ask), sometimes with a word the corpus may not hold.
"""

from __future__ import annotations

import argparse
import bisect
import itertools
import json
import os
import platform
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from reward_memory.providers.spi import ProviderScope
from reward_memory.providers.sqlite import SQLiteProvider
from reward_memory.testing import InMemoryProvider

RESULTS = Path(__file__).resolve().parent / "results"
SIZES_FULL = (10_000, 100_000, 1_000_000)
SIZES_QUICK = (10_000,)
BATCH = 5_000
QUERIES = 400
WARMUP = 40
WRITES = 2_000
SCOPE = ProviderScope(namespace="bench", scope_ref="project:main")

_TECH_TEXT = (
    "fix test retry flaky timeout cache config build deploy review patch error handler "
    "client server request response module function branch merge commit issue bug feature "
    "docs lint type check import export parse format schema prefer avoid always never small "
    "focused diff rollback migrate database query index search memory policy scope "
    "maintainer feedback correction accepted rejected change run job step pipeline release "
    "version upgrade python rust http json yaml sql api cli log trace metric alert latency "
    "throughput async thread lock queue worker backoff jitter token parser lexer grammar "
    "compiler cache eviction session cookie header proxy gateway route handler middleware "
    "retry idempotent transaction commit rollback snapshot replica shard partition leader "
    "follower consensus quorum heartbeat lease deadline cancel context span sampler exporter "
    "fixture mock stub assertion coverage benchmark profile allocation leak buffer stream "
    "socket tls certificate rotate secret vault config env flag toggle rollout canary "
    "dashboard incident postmortem runbook oncall escalation severity regression bisect"
)
_SYLLABLE_TEXT = (
    "ka ri to mu ne sa lo vi de pa zu fo ge hi ju ba co ty wen lor mic tas ber pol gra "
    "nix sel dun qua rem"
)
_TECH = _TECH_TEXT.split()
_SYLLABLES = _SYLLABLE_TEXT.split()


class Corpus:
    """Deterministic compact memory records and recall-like queries."""

    def __init__(self, seed: int = 7, vocabulary: int = 40_000) -> None:
        rng = random.Random(seed)
        words = list(dict.fromkeys(_TECH))
        seen = set(words)
        while len(words) < vocabulary:
            word = "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4)))
            if word not in seen:
                seen.add(word)
                words.append(word)
        self.words = words
        self.cumulative = list(itertools.accumulate(1 / (i + 1) ** 1.05 for i in range(len(words))))
        self.rng = random.Random(seed + 1)

    def _words(self, low: int, high: int) -> str:
        total = self.cumulative[-1]
        count = self.rng.randint(low, high)
        return " ".join(
            self.words[bisect.bisect(self.cumulative, self.rng.random() * total)]
            for _ in range(count)
        )

    def document(self, index: int) -> str:
        r = self.rng
        record = {
            "schema_version": "reward_memory_active_record_v1",
            "activation_ref": f"act:{r.getrandbits(64):016x}",
            "activated_at": f"2025-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}T"
            f"{r.randint(0, 23):02d}:{r.randint(0, 59):02d}:00Z",
            "corpus_id": r.choice(
                ["scoped_preferences", "execution_trajectories", "distilled_experiences"]
            ),
            "target_class": r.choice(["soft_preference", "procedural_experience"]),
            "content_summary": self._words(8, 26).capitalize() + ".",
            "scope": {
                "project_ref": f"proj-{index % 97}",
                "surface_ids": [r.choice(["issue_fix.diagnosis", "codegen.patch", "review.note"])],
            },
            "review": {
                "reviewer_ref": f"maint-{r.randint(1, 30)}",
                "reasoning": self._words(3, 12),
            },
            "lifecycle": {"state": "active"},
        }
        return json.dumps(record, separators=(",", ":"))

    def query(self, documents: list[str]) -> str:
        r = self.rng
        if r.random() < 0.8:
            summary = json.loads(r.choice(documents))["content_summary"].rstrip(".").split()
            words = r.sample(summary, min(len(summary), r.randint(2, 4)))
            if r.random() < 0.3:
                words.append(self._words(1, 1))
            return " ".join(words)
        return self._words(2, 5)


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def _us(seconds: float) -> float:
    return round(seconds * 1e6, 1)


def _ms(seconds: float) -> float:
    return round(seconds * 1e3, 3)


def write_readback(
    provider: SQLiteProvider, corpus: Corpus, count: int, tag: str
) -> dict[str, Any]:
    docs = [corpus.document(i) for i in range(count)]
    scope = ProviderScope(namespace="bench-writes", scope_ref=tag)
    provider.write(scope=scope, key="warmup", content="warm up")
    times = []
    for index, content in enumerate(docs):
        started = time.perf_counter()
        written = provider.write(scope=scope, key=f"{tag}-{index}", content=content)
        read = provider.read(scope=scope, ref=written.ref)
        times.append(time.perf_counter() - started)
        assert written.status == "created"
        assert read.content == content
    return {
        "median_us": _us(statistics.median(times)),
        "p95_us": _us(_percentile(times, 0.95)),
        "mean_us": _us(statistics.fmean(times)),
        "calls": count,
    }


def ingest_operations(count: int) -> list[tuple[ProviderScope, str, str, str]]:
    """(scope, key, content, verification query) of ``count`` real executed ingests.

    Recorded from ``ingest()`` on the memory provider (bench_ingest's fresh Issue
    Fix events, each with a unique summary), so the records and queries are
    exactly what the loop writes and asks, byte for byte.
    """
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import bench_ingest  # the ingest fixtures (corpus, policy, authority)

    recorder = InMemoryProvider()
    bench_ingest.run(recorder, "memory", bench_ingest.events(count, "sqlite-bench"))
    writes = [call for call in recorder.calls if call.op == "write"]
    searches = [call for call in recorder.calls if call.op == "search"]
    assert len(writes) == len(searches) == count  # one verification search per ingest
    (scope,) = {call.scope for call in writes}
    assert scope is not None
    contents = list(recorder.documents(scope).values())  # in write order
    return [
        (scope, str(write.target), content, str(search.target))
        for write, content, search in zip(writes, contents, searches, strict=True)
    ]


_INGEST_STEPS = ("write", "read", "search", "read_hit", "total", "total_cpu")


def _ingest_once(
    provider: SQLiteProvider | InMemoryProvider,
    scope: ProviderScope,
    key: str,
    content: str,
    query: str,
) -> tuple[float, ...]:
    cpu = time.thread_time()
    t0 = time.perf_counter()
    written = provider.write(scope=scope, key=key, content=content)
    t1 = time.perf_counter()
    read = provider.read(scope=scope, ref=written.ref)
    t2 = time.perf_counter()
    hits = provider.search(scope=scope, query=query, limit=8).hits
    t3 = time.perf_counter()
    again = provider.read(scope=scope, ref=hits[0].ref)
    t4 = time.perf_counter()
    cpu = time.thread_time() - cpu
    assert read.content == content
    assert hits[0].ref == written.ref
    assert again.content == content
    return (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t4 - t0, cpu)


def ingest_latency(workdir: Path, count: int) -> dict[str, Any]:
    """Median per step of the ingest's provider operations, cold and warm, normal vs full.

    Each store runs its calls in blocks of 100, the blocks of the two stores
    alternating (A/B in the same minutes of a shared machine); not call by call,
    because a ``full`` store's fsync makes the kernel flush the other store's
    writes too and would charge them to the ``normal`` one.
    """
    operations = ingest_operations(count + WARMUP)
    stores: dict[str, SQLiteProvider | InMemoryProvider] = {
        "normal": SQLiteProvider(path=workdir / "ingest-normal.db"),
        "full": SQLiteProvider(path=workdir / "ingest-full.db", synchronous="full"),
        # The fixture provider's share of an ingest (its own budget: <= 15 us in all).
        "memory": InMemoryProvider(),
    }
    samples: dict[str, list[tuple[float, ...]]] = {f"{name}_cold": [] for name in stores}
    samples.update({f"{name}_warm": [] for name in stores})
    for low in range(0, len(operations), 100):
        for name, provider in stores.items():
            for index in range(low, min(low + 100, len(operations))):
                scope, key, content, query = operations[index]
                cold = _ingest_once(provider, scope, key, content, query)
                warm = _ingest_once(provider, scope, key, content, query)
                if index >= WARMUP:
                    samples[f"{name}_cold"].append(cold)
                    samples[f"{name}_warm"].append(warm)
    for provider in stores.values():
        provider.close()
    out: dict[str, Any] = {"calls": count, "content_bytes": len(operations[0][2].encode())}
    for label, rows in samples.items():
        columns = list(zip(*rows, strict=True))
        medians: dict[str, float] = {
            step: _us(statistics.median(column))
            for step, column in zip(_INGEST_STEPS, columns, strict=True)
        }
        medians["total_mean"] = _us(statistics.fmean(columns[4]))
        out[label] = medians
    return out


def search_latency(
    provider: SQLiteProvider, scope: ProviderScope, queries: list[str]
) -> dict[str, Any]:
    for query in queries[:WARMUP]:
        provider.search(scope=scope, query=query, limit=10)
    times = []
    hits = 0
    for query in queries[WARMUP:]:
        started = time.perf_counter()
        result = provider.search(scope=scope, query=query, limit=10)
        times.append(time.perf_counter() - started)
        hits += len(result.hits)
    return {
        "p50_ms": _ms(statistics.median(times)),
        "p95_ms": _ms(_percentile(times, 0.95)),
        "max_ms": _ms(max(times)),
        "mean_hits": round(hits / len(times), 2),
        "queries": len(times),
    }


def load(
    provider: SQLiteProvider,
    corpus: Corpus,
    scope: ProviderScope,
    start: int,
    stop: int,
    documents: list[str],
    sample_every: int = 50,
) -> float:
    started = time.perf_counter()
    for low in range(start, stop, BATCH):
        batch = []
        for index in range(low, min(stop, low + BATCH)):
            content = corpus.document(index)
            if index % sample_every == 0:
                documents.append(content)
            batch.append((f"doc-{index}", content))
        provider.write_many(scope=scope, items=batch, timeout=600)
    return time.perf_counter() - started


def warm(path: Path) -> None:
    """Read the database once, so the OS page cache holds it (as on a host serving it).

    This VM proactively evicts idle page cache (DAMON), which otherwise turns some
    searches of a freshly built 1 GB corpus into disk reads; the latencies reported
    are those of a store whose file is cached.
    """
    with path.open("rb") as handle:
        while handle.read(1 << 20):
            pass


def db_bytes(path: Path) -> int:
    """Size of the database file once the WAL is folded into it.

    The WAL itself is not counted: it is reused space of at most
    ``journal_size_limit`` (64 MiB), whatever the corpus size.
    """
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(RESTART)").fetchall()
    return path.stat().st_size


def import_times(runs: int = 15) -> dict[str, float]:
    out = {}
    for label, code in (
        ("import_reward_memory_ms", "import reward_memory"),
        ("import_sqlite_provider_ms", "import reward_memory.providers.sqlite"),
        ("python_startup_ms", "pass"),
    ):
        times = []
        for _ in range(runs):
            started = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], check=True)
            times.append(time.perf_counter() - started)
        out[label] = _ms(statistics.median(times))
    return out


def _environment() -> dict[str, Any]:
    return {
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "system": platform.system(),
    }


def run(sizes: tuple[int, ...], workdir: Path, scoped: bool, calls: int) -> dict[str, Any]:
    results: dict[str, Any] = {
        "environment": _environment(),
        "settings": {"synchronous": "normal", "search_limit": 10, "queries": QUERIES - WARMUP},
    }
    corpus = Corpus()
    print("measuring import time ...", flush=True)
    results["import"] = import_times()

    print("the provider operations of an ingest ...", flush=True)
    results["ingest"] = ingest_latency(workdir, calls)
    print("write+readback on a fresh store ...", flush=True)
    with SQLiteProvider(path=workdir / "fresh.db") as fresh:
        results["write_readback_fresh"] = write_readback(fresh, corpus, WRITES, "fresh")
    # For reference: with one fsync per commit (survives power loss too).
    with SQLiteProvider(path=workdir / "full.db", synchronous="full") as full:
        results["write_readback_fresh_sync_full"] = write_readback(full, corpus, WRITES, "full")

    path = workdir / "corpus.db"
    provider = SQLiteProvider(path=path)
    documents: list[str] = []
    loaded = 0
    results["sizes"] = {}
    for size in sizes:
        print(f"loading up to {size:,} documents ...", flush=True)
        seconds = load(provider, corpus, SCOPE, loaded, size, documents)
        loaded = size
        queries = [corpus.query(documents) for _ in range(QUERIES)]
        row: dict[str, Any] = {"load_seconds": round(seconds, 1)}
        warm(path)
        row["search_as_built"] = search_latency(provider, SCOPE, queries)
        provider.optimize(timeout=600)
        warm(path)
        row["search_optimized"] = search_latency(provider, SCOPE, queries)
        row["db_bytes_per_doc"] = round(db_bytes(path) / size, 1)
        results["sizes"][str(size)] = row
        print(f"  {size:,}: {json.dumps(row)}", flush=True)
    print("write+readback on the largest store ...", flush=True)
    os.sync()  # the bulk load's writeback would otherwise compete with the measured fsyncs
    warm(path)
    results["write_readback_large"] = write_readback(provider, corpus, WRITES, "large")
    provider.close()

    if scoped:
        size = sizes[-1]
        print(f"{size:,} documents over 100 scopes ...", flush=True)
        spread = SQLiteProvider(path=workdir / "scoped.db")
        scopes = [ProviderScope(namespace="bench", scope_ref=f"project:{i}") for i in range(100)]
        per_scope: list[list[str]] = [[] for _ in scopes]
        for low in range(0, size, BATCH):
            grouped: dict[int, list[tuple[str, str]]] = {}
            for index in range(low, min(size, low + BATCH)):
                content = corpus.document(index)
                grouped.setdefault(index % 100, []).append((f"doc-{index}", content))
                if (index // 100) % 50 == 0:
                    per_scope[index % 100].append(content)
            for which, items in grouped.items():
                spread.write_many(scope=scopes[which], items=items, timeout=600)
        queries = [corpus.query(per_scope[7]) for _ in range(QUERIES)]
        warm(workdir / "scoped.db")
        results["scoped_100"] = {
            "documents": size,
            "scope_documents": size // 100,
            "search_as_built": search_latency(spread, scopes[7], queries),
        }
        spread.close()
    return results


def ingest_table(ingest: dict[str, Any]) -> list[str]:
    lines = [
        f"provider side of an executed ingest ({ingest['calls']} calls, "
        f"{ingest['content_bytes']} B records), medians in us:",
        f"{'store':>12} | " + " ".join(f"{step:>9}" for step in _INGEST_STEPS) + " | total mean",
    ]
    for label in (
        "normal_cold",
        "normal_warm",
        "full_cold",
        "full_warm",
        "memory_cold",
        "memory_warm",
    ):
        row = ingest.get(label)
        if row is None:  # results written before the memory rows existed
            continue
        cells = " ".join(f"{row[step]:>9}" for step in _INGEST_STEPS)
        lines.append(f"{label:>12} | {cells} | {row['total_mean']:>10}")
    return lines


def table(results: dict[str, Any]) -> str:
    lines = ingest_table(results["ingest"])
    if "import" not in results:
        return "\n".join(lines)
    lines.append("")
    imp = results["import"]
    lines.append(
        f"import reward_memory: {imp['import_reward_memory_ms']} ms wall "
        f"(python startup alone {imp['python_startup_ms']} ms; "
        f"provider module {imp['import_sqlite_provider_ms']} ms)"
    )
    for label in (
        "write_readback_fresh",
        "write_readback_large",
        "write_readback_fresh_sync_full",
    ):
        wr = results.get(label)
        if wr:
            lines.append(
                f"{label}: median {wr['median_us']} us  p95 {wr['p95_us']} us  "
                f"mean {wr['mean_us']} us"
            )
    lines.append("")
    lines.append(
        f"{'documents':>10} | {'search p50':>10} {'p95':>8} | {'optimized p50':>13} {'p95':>8} "
        f"| {'bytes/doc':>9} | {'load s':>7}"
    )
    for size, row in results["sizes"].items():
        built, opt = row["search_as_built"], row["search_optimized"]
        lines.append(
            f"{int(size):>10,} | {built['p50_ms']:>8} ms {built['p95_ms']:>5} ms | "
            f"{opt['p50_ms']:>10} ms {opt['p95_ms']:>5} ms | {row['db_bytes_per_doc']:>9} | "
            f"{row['load_seconds']:>7}"
        )
    scoped = results.get("scoped_100")
    if scoped:
        built = scoped["search_as_built"]
        lines.append(
            f"{scoped['documents']:,} documents over 100 scopes, search in one "
            f"({scoped['scope_documents']:,}): p50 {built['p50_ms']} ms  p95 {built['p95_ms']} ms"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="10k documents only")
    parser.add_argument("--json", metavar="PATH", help="where to write the JSON ('-': stdout)")
    parser.add_argument("--workdir", type=Path, help="keep the databases here (default: temp)")
    parser.add_argument("--no-scoped", action="store_true", help="skip the 100-scope store")
    parser.add_argument(
        "--ingest", action="store_true", help="only the provider operations of an ingest"
    )
    parser.add_argument("--calls", type=int, default=WRITES, help="ingests to time (default 2000)")
    args = parser.parse_args(argv)
    sizes = SIZES_QUICK if args.quick else SIZES_FULL
    with tempfile.TemporaryDirectory(prefix="rm-bench-") as temp:
        workdir = args.workdir or Path(temp)
        workdir.mkdir(parents=True, exist_ok=True)
        if args.ingest:
            results: dict[str, Any] = {
                "environment": _environment(),
                "ingest": ingest_latency(workdir, args.calls),
            }
        else:
            results = run(sizes, workdir, scoped=not args.no_scoped, calls=args.calls)
    results["command"] = " ".join([Path(sys.executable).name, *sys.argv])
    results["finished_at"] = datetime.now(UTC).isoformat(timespec="seconds")
    print()
    print(table(results))
    text = json.dumps(results, indent=2)
    if args.json == "-":
        print(text)
    else:
        target = (
            Path(args.json)
            if args.json
            else RESULTS
            / ("bench_sqlite-" + datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ") + ".json")
        )
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text + "\n", encoding="utf-8")
        print(f"\nJSON: {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
