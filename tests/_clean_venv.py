"""A clean virtual environment for the wheel tests: pip into it, and its declared dependencies.

Shared by ``test_discovery`` (a third-party provider's wheel) and
``openviking/test_ov_distribution`` (both distributions' wheels).
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path


def pip(*args: str, python: Path | None = None) -> subprocess.CompletedProcess[str]:
    """This environment's pip, aimed at ``python``'s environment when given."""
    target = ["--python", str(python)] if python is not None else []
    return subprocess.run(
        [sys.executable, "-m", "pip", *target, "--disable-pip-version-check", *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )


def new_venv(where: Path) -> Path:
    """A new venv without pip (this environment's pip installs into it); its python."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    return where / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def install_declared(python: Path, *pyprojects: Path) -> None:
    """Install the runtime dependencies the ``pyproject.toml`` files declare into ``python``'s venv.

    Exactly as declared (a new dependency would otherwise pass only while this
    environment happens to lend it); ``reward-memory`` itself is left out (it comes
    from its wheel). Offline, the venv borrows them from this environment's
    site-packages instead: only a path is added (no ``.pth`` there is processed), so
    the packages under test still come from the wheels just installed.
    """
    declared = [
        requirement
        for pyproject in pyprojects
        for requirement in tomllib.loads(pyproject.read_text())["project"]["dependencies"]
        if not requirement.startswith("reward-memory")
    ]
    if pip("install", *declared, python=python).returncode == 0:
        return
    purelib = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True, text=True, check=True,
        ).stdout.strip()
    )  # fmt: skip
    (purelib / "_rm_borrowed_deps.pth").write_text(
        sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8"
    )
