"""The README's main job runs end to end on a real SQLite file, and is idempotent."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from reward_memory import schemas
from reward_memory.text import find_unsafe

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "main_job.py"


def run_job(store: Path, *, via_env: bool) -> dict[str, Any]:
    env = dict(os.environ)
    argv = [sys.executable, str(EXAMPLE), "--format", "json"]
    if via_env:
        env["REWARD_MEMORY_SQLITE_PATH"] = str(store)
    else:
        argv += ["--store", f"sqlite://{store}"]
    result = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stderr == ""
    out: dict[str, Any] = json.loads(result.stdout)
    return out


def test_main_job_end_to_end_and_replay(tmp_path: Path) -> None:
    """Issue 8 item 9: configure, ingest (activated, exact readback), recall at a
    function boundary, apply; a second run is idempotent (``deduplicated``)."""
    store = tmp_path / "memory.db"
    first = run_job(store, via_env=True)
    assert store.is_file()
    assert first["configure"] == {"status": "written", "config_status": "valid"}
    ingest = first["ingest"]
    assert ingest["status"] == "activated"
    receipt = ingest["receipt"]
    assert receipt["exact_readback_verified"] is True
    assert receipt["memory_available_for_recall"] is True
    assert receipt["deduplicated"] is False
    assert first["recall"]["status"] == "applied"
    assert first["recall"]["hit_corpus_id"] == "issue_fix_policies"
    assert first["recall"]["application"]["outcome"] == "applied"
    assert first["output"]["files"] == ["src/parser/module.py"]
    assert first["decorated_output"] == first["output"]
    assert first["status"]["status"] == "available"
    assert first["health"]["health_state"] == "applied_verified"
    assert first["health"]["memory_patch_authority"] is False
    # Another project: the map answers no read checkpoint, the guards stop it.
    assert first["blocked_recall"]["provider_call_count"] == 0
    assert first["blocked_recall"]["output_is_base"] is True
    for packet in (first["ingest"], receipt, first["recall"], first["status"], first["health"]):
        schemas.validate(packet)

    second = run_job(store, via_env=False)
    again = second["ingest"]["receipt"]
    assert second["ingest"]["status"] == "activated"
    assert again["deduplicated"] is True
    assert again["record_ref"] == receipt["record_ref"]
    assert again["target_ref"] == receipt["target_ref"]
    assert second["recall"]["status"] == "applied"


def test_a_run_leaves_the_repository_clean(tmp_path: Path) -> None:
    before = sorted(p.name for p in (EXAMPLE.parent / "experiment").iterdir())
    run_job(tmp_path / "memory.db", via_env=True)
    assert sorted(p.name for p in (EXAMPLE.parent / "experiment").iterdir()) == before
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("memory.db")) == []


def test_main_job_output_is_public_safe(tmp_path: Path) -> None:
    out = run_job(tmp_path / "memory.db", via_env=True)
    text = json.dumps(out)
    assert str(tmp_path) not in text
    assert "Keep focused fixes" not in text  # raw memory content stays in the store

    def strings(node: Any) -> list[str]:
        if isinstance(node, dict):
            return [s for value in node.values() for s in strings(value)]
        if isinstance(node, list):
            return [s for value in node for s in strings(value)]
        return [node] if isinstance(node, str) else []

    assert [s for s in strings(out) if find_unsafe(s)] == []


def test_the_shipped_activation_file_is_what_configure_writes(tmp_path: Path) -> None:
    import reward_memory as rm

    rm.configure_goal(
        tmp_path / "activation.json",
        goal_id="issue-fix",
        config_path="config.json",
        agents=["agent:patcher"],
        execute=True,
    )
    shipped = json.loads((EXAMPLE.parent / "experiment" / "activation.json").read_text("utf-8"))
    assert json.loads((tmp_path / "activation.json").read_text("utf-8")) == shipped
