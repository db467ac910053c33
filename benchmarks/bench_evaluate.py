"""In-process time of a full Stage-4 evaluation, and wall time of the two new CLI verbs.

    .venv/bin/python benchmarks/bench_evaluate.py [--runs N]

Every timed :func:`reward_memory.evaluation.evaluate` call binds the fixture in a
namespace of its own and seeds a fresh store; only the fixture's constant records
(the event, the corpora, the checkpoints: built once at import, like any module
constant; the lifecycle case's seed records, built on the first call) are shared
between calls, never a result. Rows:

- ``evaluate, memory, memos cleared``: the whole call (eight cases, seeding,
  cleanup, the packet) with every bounded memo of the library (its
  ``functools.lru_cache`` wrappers: parse, digest, text and ref caches) cleared
  before each call, so no call profits from what an earlier call cached.
- ``evaluate, memory, memos warm``: the same without clearing (what a process
  that evaluates repeatedly sees).
- ``eight cases, memory, memos cleared``: the sum of the per-case latencies the
  packet reports (the cases alone: no fixture building, cleanup or packet).
- ``evaluate, sqlite, memos cleared``: the whole call on a fresh SQLite file.
- ``share: operations inside the eight cases`` / ``share: the evaluation's own``:
  the case latencies split into the time spent inside the seams the cases run
  (ingest, propose, review, activate, recall, apply, the route check; each
  wrapped with a clock where the case modules call it) and the rest -- the
  evaluation's own: seeding writes, the restart, the counting proxy, checks and
  evidence (memos cleared, medians of the per-run sums).
- ``first evaluate in a new process``: median over new processes of the first
  call after import (cold regexes and memos: what the CLI pays).
- ``calibration: one fresh ingest, memory``: one executed ingest of the fixture
  event into a new store (the seam bench_ingest.py times against its 60 us
  target), to scale the rows above to the reference machine.
- CLI wall times (whole process, median): ``route-check`` and ``evaluate``.

Targets on the reference 2-core machine: the eight cases <= 0.5 ms on the memory
provider; every CLI verb <= 0.15 s.
"""

from __future__ import annotations

import argparse
import functools
import gc
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _util import console_script, report, wall_median

from reward_memory.evaluation import evaluate

CASES_TARGET_MS = 0.5
VERB_TARGET_S = 0.15


def _memos() -> list[Any]:
    """Every bounded lru_cache wrapper of the library (module level or in a closure)."""
    return [
        obj
        for obj in gc.get_objects()
        if isinstance(obj, functools._lru_cache_wrapper)
        and getattr(obj, "__module__", "").startswith("reward_memory")
        and obj.cache_parameters()["maxsize"] is not None
    ]


def _timed(runs: int, *, clear: bool, provider: Any = None) -> tuple[float, float]:
    """Median ms of the whole call and of the reported case latencies."""
    memos = _memos()
    whole, cases = [], []
    for index in range(runs):
        target = provider(index) if callable(provider) else provider
        if clear:
            for memo in memos:
                memo.cache_clear()
        start = time.perf_counter()
        result = evaluate(provider=target)
        whole.append((time.perf_counter() - start) * 1000.0)
        assert result.ok, result.release_gate.reason_codes
        cases.append(result.metrics.latency_ms)
    return statistics.median(whole), statistics.median(cases)


_FIRST = (
    "import time, reward_memory.evaluation as e; t = time.perf_counter(); "
    "r = e.evaluate(); print((time.perf_counter() - t) * 1000.0, r.ok)"
)


# Where the case modules call the seams (module, names): wrapped by _share() only.
_SEAMS = (
    ("reward_memory.evaluation.store_cases", ("ingest", "propose", "review", "activate")),
    ("reward_memory.evaluation.guard_cases", ("propose", "review")),
    ("reward_memory.evaluation.context", ("recall", "apply")),
    ("reward_memory.evaluation.application_cases", ("route_check",)),
)


def _share(runs: int) -> tuple[float, float]:
    """Median ms per run inside the seams the cases call, and of the cases' rest."""
    import importlib

    spent = [0]

    def clocked(seam: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter_ns()
            try:
                return seam(*args, **kwargs)
            finally:
                spent[0] += time.perf_counter_ns() - start

        return call

    originals = []
    for name, seams in _SEAMS:
        module = importlib.import_module(name)
        for seam in seams:
            originals.append((module, seam, getattr(module, seam)))
            setattr(module, seam, clocked(getattr(module, seam)))
    memos = _memos()
    inside, rest = [], []
    try:
        for _ in range(runs):
            for memo in memos:
                memo.cache_clear()
            spent[0] = 0
            result = evaluate()
            assert result.ok, result.release_gate.reason_codes
            inside.append(spent[0] / 1e6)
            rest.append(result.metrics.latency_ms - spent[0] / 1e6)
    finally:
        for module, seam, original in originals:
            setattr(module, seam, original)
    return statistics.median(inside), statistics.median(rest)


def _ingest_us(runs: int) -> float:
    from datetime import UTC, datetime

    from reward_memory.evaluation.fixture import build_fixture
    from reward_memory.ingestion import ingest
    from reward_memory.testing.memory import InMemoryProvider

    now = datetime.now(UTC)
    samples = []
    for _ in range(runs):
        fixture, provider = build_fixture(now), InMemoryProvider()
        start = time.perf_counter()
        receipt = ingest(
            fixture.event,
            adapter="issue_fix",
            corpus=fixture.corpus,
            standing_policy=fixture.policy,
            binding=fixture.binding,
            provider=provider,
            authority=fixture.authority,
            observed_at=fixture.observed_at,
            execute=True,
            now=now,
        )
        samples.append((time.perf_counter() - start) * 1e6)
        assert receipt.status == "activated"
    return statistics.median(samples)


def _first_call_ms(runs: int) -> float:
    samples = []
    for _ in range(runs):
        done = subprocess.run(
            [sys.executable, "-c", _FIRST], capture_output=True, text=True, check=True
        )
        samples.append(float(done.stdout.split()[0]))
    return statistics.median(samples)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    for _ in range(20):  # import-time work and one-off compilation, not memos
        evaluate()
    cleared_whole, cleared_cases = _timed(args.runs, clear=True)
    warm_whole, warm_cases = _timed(args.runs, clear=False)
    operations, own = _share(args.runs)
    with tempfile.TemporaryDirectory() as tmp:
        sqlite_whole, _ = _timed(
            max(20, args.runs // 10),
            clear=True,
            provider=lambda index: f"sqlite://{Path(tmp) / f'eval-{index}.db'}",
        )
        observation = Path(tmp) / "observation.json"
        observation.write_text(
            json.dumps(
                {
                    "behavior_status": "bug_confirmed",
                    "surface_count": 1,
                    "edge_case_complexity": "low",
                    **dict.fromkeys(
                        (
                            "semantic_contract_change",
                            "generic_boundary_for_specific_policy",
                            "user_visible_behavior_change",
                            "hot_path_or_storage_change",
                            "retrieval_or_memory_quality_claim",
                            "ux_evidence",
                            "benchmark_evidence",
                            "performance_evidence",
                        ),
                        False,
                    ),
                    "named_reproduction": True,
                    "named_validation": True,
                    "effect_evidence": True,
                }
            ),
            encoding="utf-8",
        )
        cli = console_script("reward-memory")
        verbs = {
            "route-check --case pr-3237": ["route-check", "--case", "pr-3237", "--format", "json"],
            "route-check --input": ["route-check", "--input", str(observation)],
            "route-check (flags)": ["route-check", "--surface-count", "2", "--ux-evidence"],
            "evaluate --format json": ["evaluate", "--format", "json"],
            "evaluate --provider sqlite": [
                "evaluate",
                "--provider",
                f"sqlite://{Path(tmp) / 'cli.db'}",
            ],
        }
        walls = {name: wall_median([cli, *argv], runs=9) for name, argv in verbs.items()}
    rows = [
        {"what": "eight cases, memory, memos cleared", "value": cleared_cases, "unit": "ms"},
        {"what": "eight cases, memory, memos warm", "value": warm_cases, "unit": "ms"},
        {"what": "share: operations inside the eight cases", "value": operations, "unit": "ms"},
        {"what": "share: the evaluation's own", "value": own, "unit": "ms"},
        {"what": "evaluate, memory, memos cleared", "value": cleared_whole, "unit": "ms"},
        {"what": "evaluate, memory, memos warm", "value": warm_whole, "unit": "ms"},
        {"what": "evaluate, sqlite, memos cleared", "value": sqlite_whole, "unit": "ms"},
        {"what": "first evaluate in a new process", "value": _first_call_ms(5), "unit": "ms"},
        {"what": "calibration: one fresh ingest, memory", "value": _ingest_us(200), "unit": "us"},
        *({"what": name, "value": value, "unit": "s"} for name, value in walls.items()),
    ]
    targets = {"eight cases, memory, memos cleared": CASES_TARGET_MS} | dict.fromkeys(
        walls, VERB_TARGET_S
    )
    return report("bench_evaluate", rows, targets=targets)


if __name__ == "__main__":
    sys.exit(main())
