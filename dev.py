#!/usr/bin/env python3
"""Developer entry point: set up a local virtual environment and run a job.

    python3 dev.py demo    # the main job, end to end, on the embedded default store
    python3 dev.py test    # the whole test suite (what .ci/run calls)
    python3 dev.py lint    # ruff + mypy --strict
    python3 dev.py bench   # the benchmark scripts in benchmarks/

Only the standard library is used here, so the commands work on a fresh machine
with Python >= 3.11: the first run creates ``.venv`` and installs the project
(editable) with its test and lint tools; later runs reinstall only when
``pyproject.toml`` changed.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
STAMP = VENV / ".reward-memory-installed"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")


def _python() -> Path:
    return BIN / ("python.exe" if os.name == "nt" else "python")


def _install_fingerprint() -> str:
    digest = hashlib.sha256()
    for name in ("pyproject.toml", "openviking/pyproject.toml"):
        path = ROOT / name
        if path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()


def ensure_venv() -> Path:
    if sys.version_info < (3, 11):  # noqa: UP036 - this file must run on old Pythons to say so
        sys.exit("reward-memory needs Python >= 3.11 (found {}.{})".format(*sys.version_info[:2]))
    if not _python().exists():
        print("dev.py: creating .venv", flush=True)
        venv.EnvBuilder(with_pip=True, clear=True).create(VENV)
    fingerprint = _install_fingerprint()
    if not STAMP.is_file() or STAMP.read_text() != fingerprint:
        print("dev.py: installing reward-memory[dev] into .venv", flush=True)
        pip = [str(_python()), "-m", "pip", "--disable-pip-version-check", "-q"]
        subprocess.run([*pip, "install", "-U", "pip"], check=True)
        subprocess.run([*pip, "install", "-e", f"{ROOT}[dev]"], check=True)
        STAMP.write_text(fingerprint)
    return _python()


def _run(cmd: list[str]) -> int:
    print("+", " ".join(cmd), flush=True)
    return subprocess.run(cmd, cwd=ROOT, check=False).returncode


def demo(py: Path, extra: list[str]) -> int:
    return _run([str(py), str(ROOT / "examples" / "main_job.py"), *extra])


def test(py: Path, extra: list[str]) -> int:
    return _run([str(py), "-m", "pytest", *extra])


def lint(py: Path, extra: list[str]) -> int:
    del extra
    code = _run(
        [str(py), "-m", "ruff", "check", "src", "tests", "benchmarks", "examples", "dev.py"]
    )
    code |= _run(
        [str(py), "-m", "ruff", "format", "--check", "src", "tests", "benchmarks", "examples"]
    )
    return code | _run([str(py), "-m", "mypy"])


def bench(py: Path, extra: list[str]) -> int:
    code = 0
    for script in sorted((ROOT / "benchmarks").glob("bench_*.py")):
        code |= _run([str(py), str(script), *extra])
    return code


JOBS = {"demo": demo, "test": test, "lint": lint, "bench": bench}


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in JOBS:
        print(__doc__)
        return 2
    py = ensure_venv()
    return JOBS[argv[0]](py, argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
