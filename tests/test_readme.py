"""The README is true: its Python snippet runs, and it names only files that exist.

Contract (issue 8 item 9): "make the README's Python snippet complete and runnable,
and have a test execute it"; "name only example files that exist".
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def python_snippet() -> str:
    text = README.read_text("utf-8")
    section = text[text.index("## Use it from Python") :]
    match = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert match is not None, "the Python section has a snippet"
    return match.group(1)


def run_snippet(store: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "REWARD_MEMORY_SQLITE_PATH": str(store)}
    return subprocess.run(
        [sys.executable, "-c", python_snippet()],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


def test_the_python_snippet_runs_on_a_throw_away_store_and_replays(tmp_path: Path) -> None:
    store = tmp_path / "memory.db"
    first = run_snippet(store)
    assert first.returncode == 0, first.stdout + first.stderr
    assert first.stderr == ""
    lines = first.stdout.splitlines()
    assert lines[0] == "ingest: activated deduplicated: False"
    assert lines[1] == "recall: applied ['src/parser/module.py']"
    assert lines[2].startswith("boundary: {'files': ['src/parser/module.py']")
    assert lines[3] == "status: available"
    assert store.is_file()  # the store named by REWARD_MEMORY_SQLITE_PATH, nothing else

    second = run_snippet(store)
    assert second.returncode == 0, second.stdout + second.stderr
    assert second.stdout.splitlines()[0] == "ingest: activated deduplicated: True"


def test_every_example_file_the_readme_names_exists() -> None:
    text = README.read_text("utf-8")
    named = set(re.findall(r"examples/[\w./-]+\.(?:json|py)", text))
    # Paths given relative to examples/experiment/ in the `cd examples/experiment` block.
    block = text[text.index("cd examples/experiment") :]
    block = block[: block.index("```")]
    named |= {f"examples/experiment/{name}" for name in re.findall(r"[\w-]+\.json", block)}
    assert named, "the README names example files"
    missing = sorted(name for name in named if not (ROOT / name).is_file())
    assert missing == []


def test_the_two_top_commands_are_dev_py_jobs() -> None:
    text = README.read_text("utf-8")
    dev = (ROOT / "dev.py").read_text("utf-8")
    for job in re.findall(r"^python3 dev\.py (\w+)", text, re.MULTILINE):
        assert f'"{job}": {job}' in dev
