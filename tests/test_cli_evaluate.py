"""`reward-memory evaluate`: the packet, exit 0 when the gate is ready, exit 2 when it holds."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from reward_memory import schemas
from reward_memory.cli import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code = main(["evaluate", *argv, "--format", "json"])
    packet: dict[str, Any] = json.loads(capsys.readouterr().out)
    return code, packet


def test_evaluate_passes_on_the_memory_provider(capsys: pytest.CaptureFixture[str]) -> None:
    """Done when: `reward-memory evaluate --format json` passes all eight cases, gate open."""
    code, packet = run(capsys)
    assert code == 0
    assert packet["schema_version"] == "reward_memory_evaluation_v0"
    assert packet["status"] == "passed"
    assert [case["passed"] for case in packet["cases"]] == [True] * 8
    assert packet["release_gate"]["status"] == "ready_for_bounded_dogfood"
    assert packet["release_gate"]["production_rollout_allowed"] is False
    schemas.validate(packet)


def test_evaluate_passes_on_sqlite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, packet = run(capsys, "--provider", f"sqlite://{tmp_path / 'eval.db'}")
    assert code == 0
    assert packet["provider_id"] == "sqlite"
    assert packet["release_gate"]["reason_codes"] == []


def test_a_broken_provider_holds_the_gate_and_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    """Done when: 'a deliberately broken provider (fault switch) closes it with a reason and
    exit 2'."""
    code, packet = run(capsys, "--provider", "memory://?unavailable=true")
    assert code == 2
    assert packet["schema_version"] == "reward_memory_evaluation_v0"
    assert packet["ok"] is False
    assert packet["release_gate"]["status"] == "hold"
    assert "provider_failures_observed" in packet["release_gate"]["reason_codes"]
    schemas.validate(packet)


@pytest.mark.parametrize(
    ("argv", "code"),
    [
        (("--provider", "nosuch://x"), "provider_not_found"),
        (("--provider", "memory://?unavailable=maybe"), None),
        (("--provider", "sqlite://relative/path.db"), None),
        (("--now", "yesterday"), None),
        (("--now", "2026-08-01T09:00:00"), None),
        (("--unknown-flag",), "usage_error"),
    ],
)
def test_bad_input_is_an_error_packet(
    capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], code: str | None
) -> None:
    exit_code, packet = run(capsys, *argv)
    assert exit_code == 2
    assert packet["schema_version"] == "reward_memory_error_v0"
    if code is not None:
        assert packet["error_code"] == code


def test_a_fixed_clock(capsys: pytest.CaptureFixture[str]) -> None:
    code, packet = run(capsys, "--now", "2026-08-01T09:00:00Z")
    assert (code, packet["status"]) == (0, "passed")


def test_text_summary_names_the_gate_and_the_failed_cases(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["evaluate"]) == 0
    out = capsys.readouterr().out
    assert "release_gate: ready_for_bounded_dogfood (advance_stage_5)" in out
    assert out.count("  pass ") == 8
    assert main(["evaluate", "--provider", "memory://?unavailable=true"]) == 2
    held = capsys.readouterr().out
    assert "release_gate: hold (repair_stage_4)" in held
    assert "FAIL compact_restart_survival (seed_activated" in held
    assert "FAIL supersede_revoke_rejection (ProviderUnavailable)" in held


def test_a_real_process_exits_2_on_hold(tmp_path: Path) -> None:
    """The exit code an operator's script sees."""
    command = [sys.executable, "-m", "reward_memory", "evaluate", "--format", "json"]
    ok = subprocess.run(command, capture_output=True, text=True, check=False, cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["ok"] is True
    held = subprocess.run(
        [*command, "--provider", "memory://?times_out=true"],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    assert held.returncode == 2
    assert json.loads(held.stdout)["release_gate"]["status"] == "hold"
    assert held.stderr == ""


def test_schema_validate_accepts_what_evaluate_emits(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["evaluate", "--format", "json"])
    target = tmp_path / "packet.json"
    target.write_text(capsys.readouterr().out, encoding="utf-8")
    assert main(["schema", "validate", str(target), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["validated_schema"] == "reward_memory_evaluation_v0"
