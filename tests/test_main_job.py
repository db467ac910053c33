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
    store = tmp_path / "memory.db"
    first = run_job(store, via_env=True)
    assert store.is_file()
    assert first["candidate"] == {
        "status": "review_ready",
        "candidate_ref": "candidate:0e073f348a2a6c3ffc3c",
    }
    assert first["review"] == {"status": "active", "effective_decision": "accept"}
    assert first["active_record"]["authority"]["level"] == "constraint"
    assert first["active_record"]["authority"]["action_scopes"] == ["issue_fix:scope_selection"]
    assert first["write"] == {"status": "created", "exact_readback": True}
    assert first["recall"]["status"] == "completed"
    assert first["application"]["status"] == "applied"
    assert first["health"]["health_state"] == "applied_verified"
    assert first["health"]["memory_patch_authority"] is False
    assert first["blocked_recall"]["status"] == "guard_blocked"
    assert first["blocked_recall"]["provider_call_count"] == 0
    for packet in (first["recall"], first["application"]["receipt"], first["health"]):
        schemas.validate(packet)

    second = run_job(store, via_env=False)
    assert second["write"] == {"status": "unchanged", "exact_readback": True}
    assert second["active_record"] == first["active_record"]


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
