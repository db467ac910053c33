#!/usr/bin/env python3
"""Developer entry point: set up a local virtual environment and run a job.

    python3 dev.py demo    # the main job, end to end, on the embedded default store
    python3 dev.py test    # the whole test suite (what .ci/run calls)
    python3 dev.py lint    # ruff + mypy --strict
    python3 dev.py bench   # the benchmark scripts in benchmarks/

Only the standard library is used here, so the commands work on a fresh machine
with Python >= 3.11: the first run creates ``.venv`` and installs the project
(editable) with its test and lint tools; later runs reinstall only when
``pyproject.toml`` changed. The sibling distribution ``reward-memory-openviking``
(``openviking/pyproject.toml``) is installed editable beside it.

``test`` and ``bench`` also need a real OpenViking server: ``openviking==0.5.2`` is
installed, when missing, into its own virtual environment (about 1.3 GB, two
minutes), kept apart from ``.venv`` in a cache directory that later runs reuse:
``$REWARD_MEMORY_OPENVIKING_HOME`` or ``~/.cache/reward-memory/openviking-0.5.2``
(``$XDG_CACHE_HOME`` honoured). A stamp file written last marks a finished
install, so an interrupted one is redone. ``$REWARD_MEMORY_OPENVIKING_SERVER``
names an existing ``openviking-server`` instead.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import time
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
STAMP = VENV / ".reward-memory-installed"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
OPENVIKING_PIN = "openviking==0.5.2"
ENV_OV_SERVER = "REWARD_MEMORY_OPENVIKING_SERVER"
ENV_OV_HOME = "REWARD_MEMORY_OPENVIKING_HOME"


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
        print("dev.py: installing reward-memory-openviking (editable) into .venv", flush=True)
        subprocess.run([*pip, "install", "-e", str(ROOT / "openviking")], check=True)
        STAMP.write_text(fingerprint)
    return _python()


def openviking_home() -> Path:
    """Where the OpenViking server's own venv lives (outside the checkout, reused)."""
    explicit = os.environ.get(ENV_OV_HOME)
    if explicit:
        return Path(explicit)
    cache = os.environ.get("XDG_CACHE_HOME")
    base = Path(cache) if cache and Path(cache).is_absolute() else Path.home() / ".cache"
    return base / "reward-memory" / "openviking-0.5.2"


def ensure_openviking() -> Path:
    """The ``openviking-server`` binary; installs the pinned server when it is missing."""
    explicit = os.environ.get(ENV_OV_SERVER)
    if explicit:
        return Path(explicit)
    home = openviking_home()
    venv_dir = home / "venv"
    stamp = home / ".installed"
    server = venv_dir / ("Scripts" if os.name == "nt" else "bin") / "openviking-server"
    if stamp.is_file() and stamp.read_text() == OPENVIKING_PIN and server.is_file():
        return server
    print(f"dev.py: installing {OPENVIKING_PIN} into {venv_dir} (once; ~2 min)", flush=True)
    started = time.monotonic()
    stamp.unlink(missing_ok=True)
    shutil.rmtree(venv_dir, ignore_errors=True)  # a half-finished install is redone whole
    home.mkdir(parents=True, exist_ok=True)
    venv.EnvBuilder(with_pip=True, clear=True).create(venv_dir)
    python = venv_dir / ("Scripts" if os.name == "nt" else "bin") / "python"
    log = home / "install.log"
    with log.open("w") as out:
        done = subprocess.run(
            [
                str(python),
                "-m",
                "pip",
                "--disable-pip-version-check",
                "-q",
                "install",
                OPENVIKING_PIN,
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            check=False,
        )
    if done.returncode != 0 or not server.is_file():
        sys.exit(f"dev.py: installing {OPENVIKING_PIN} failed; see {log}")
    stamp.write_text(OPENVIKING_PIN)
    print(f"dev.py: {OPENVIKING_PIN} installed in {time.monotonic() - started:.0f} s", flush=True)
    return server


def _run(cmd: list[str]) -> int:
    print("+", " ".join(cmd), flush=True)
    return subprocess.run(cmd, cwd=ROOT, check=False).returncode


def demo(py: Path, extra: list[str]) -> int:
    # The demo runs from the repository root; a relative store path means the caller's
    # directory (where it was typed), never a file inside the repository.
    store = os.environ.get("REWARD_MEMORY_SQLITE_PATH")
    if store and not Path(store).is_absolute():
        os.environ["REWARD_MEMORY_SQLITE_PATH"] = str(Path.cwd() / store)
    return _run([str(py), str(ROOT / "examples" / "main_job.py"), *extra])


def _with_openviking() -> None:
    # The test session and the benchmark find the server through this variable.
    os.environ[ENV_OV_SERVER] = str(ensure_openviking())


def test(py: Path, extra: list[str]) -> int:
    _with_openviking()
    return _run([str(py), "-m", "pytest", *extra])


def lint(py: Path, extra: list[str]) -> int:
    del extra
    code = _run(
        [
            str(py),
            "-m",
            "ruff",
            "check",
            "src",
            "tests",
            "benchmarks",
            "examples",
            "openviking",
            "dev.py",
        ]
    )
    code |= _run(
        [
            str(py),
            "-m",
            "ruff",
            "format",
            "--check",
            "src",
            "tests",
            "benchmarks",
            "examples",
            "openviking",
        ]
    )
    return code | _run([str(py), "-m", "mypy"])


def bench(py: Path, extra: list[str]) -> int:
    _with_openviking()
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
