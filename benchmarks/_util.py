"""Shared helpers for the benchmark scripts (medians, whole-process timing, output)."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"


def wall_median(cmd: list[str], *, runs: int, warmup: int = 2) -> float:
    """Median wall-clock seconds of a whole process, after warm-up runs.

    Bytecode caches are enabled, as on a user's machine: this environment sets
    ``PYTHONDONTWRITEBYTECODE``, and *any* non-empty value (even ``0``) disables
    writing them, so the variable is removed, not set.
    """
    env = bytecode_env()
    for _ in range(warmup):
        subprocess.run(cmd, capture_output=True, check=False, env=env)
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, capture_output=True, check=False, env=env)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def bytecode_env() -> dict[str, str]:
    """The environment with ``PYTHONDONTWRITEBYTECODE`` removed (``.pyc`` files written)."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def console_script(name: str) -> str:
    return str(Path(sys.executable).with_name(name))


def report(name: str, rows: list[dict[str, Any]], *, targets: dict[str, float]) -> int:
    """Print a table, save JSON under benchmarks/results/, return 1 if a target is missed."""
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{name}.json").write_text(json.dumps({"rows": rows, "targets": targets}, indent=2))
    failed = 0
    width = max(len(row["what"]) for row in rows)
    for row in rows:
        target = targets.get(row["what"])
        verdict = ""
        if target is not None:
            ok = row["value"] <= target
            failed |= not ok
            verdict = f"  (target <= {target:g} {row['unit']}: {'ok' if ok else 'MISSED'})"
        print(f"{row['what']:<{width}}  {row['value']:10.3f} {row['unit']}{verdict}")
    return 1 if failed else 0
