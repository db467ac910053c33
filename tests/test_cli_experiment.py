"""``reward-memory configure`` and ``reward-memory experiment-status``.

Contract: seeds, "Experimental activation" (preview first, ``--execute`` writes; status
"without exposing scope refs"); DESIGN.md §8: bad input "prints an error packet naming the
problem and exits 2 -- never a traceback".
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from _experiment_support import SCOPES, config_data, experiment_dir, write_json
from reward_memory import schemas
from reward_memory.cli import VERBS, main

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "experiment"


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code = main([*argv, "--format", "json"])
    packet = json.loads(capsys.readouterr().out)
    schemas.validate(packet)  # every packet the verbs print is a valid packet
    return code, packet


def test_both_verbs_are_in_the_verb_table() -> None:
    assert "configure" in VERBS
    assert "experiment-status" in VERBS


def test_configure_previews_then_executes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    activation = tmp_path / "activation.json"
    write_json(tmp_path / "c.json", config_data())
    argv = ("configure", "--goal-id", "g", "--config", "c.json", "--agent", "agent:a")
    code, packet = _run(capsys, *argv, "--activation", str(activation))
    assert (code, packet["status"], packet["activation_written"]) == (0, "preview", False)
    assert packet["config_status"] == "valid"
    assert not activation.exists()
    code, packet = _run(capsys, *argv, "--activation", str(activation), "--execute")
    assert (code, packet["status"], packet["activation_written"]) == (0, "written", True)
    assert json.loads(activation.read_text())["goals"][0]["enabled_agents"] == ["agent:a"]
    assert "c.json" not in json.dumps(packet)


def test_configure_uses_the_default_location_in_the_current_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write_json(tmp_path / "config" / "experiment.json", config_data())
    code, packet = _run(
        capsys,
        "configure",
        "--goal-id",
        "g",
        "--config",
        "config/experiment.json",
        "--agent",
        "agent:a",
        "--execute",
    )
    assert (code, packet["config_status"]) == (0, "valid")
    assert (tmp_path / ".reward-memory" / "activation.json").is_file()
    code, packet = _run(capsys, "experiment-status", "--goal-id", "g", "--agent-id", "agent:a")
    assert (code, packet["status"]) == (0, "available")


@pytest.mark.parametrize(
    ("extra", "path", "code"),
    [
        (("--config", "../c.json", "--agent", "agent:a"), "--config", "config_path_traversal"),
        (("--config", "/abs/c.json", "--agent", "agent:a"), "--config", "config_path_absolute"),
        (("--config", "c.yaml", "--agent", "agent:a"), "--config", "invalid_format"),
        (("--config", "c.json"), "--agent", "agents_required"),
        (("--agent", "agent:a"), "--config", "missing_field"),
        (("--config", "c.json", "--agent", "Agent A"), "--agent", "invalid_format"),
        (("--clear", "--agent", "agent:a"), "--clear", "conflict"),
    ],
)
def test_configure_refuses_bad_options_naming_them(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    extra: tuple[str, ...],
    path: str,
    code: str,
) -> None:
    activation = tmp_path / "activation.json"
    exit_code, packet = _run(
        capsys, "configure", "--goal-id", "g", *extra, "--execute", "--activation", str(activation)
    )
    assert exit_code == 2
    assert (packet["error_code"], packet["field_path"]) == (code, path)
    assert not activation.exists()


def test_configure_refuses_an_invalid_activation_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    activation = tmp_path / "activation.json"
    activation.write_text("{", encoding="utf-8")
    code, packet = _run(
        capsys,
        "configure",
        "--goal-id",
        "g",
        "--config",
        "c.json",
        "--agent",
        "agent:a",
        "--execute",
        "--activation",
        str(activation),
    )
    assert (code, packet["error_code"], packet["field_path"]) == (2, "invalid_json", "--activation")
    assert activation.read_text() == "{"


def test_configure_clear_removes_the_goal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    activation = experiment_dir(tmp_path)
    code, packet = _run(
        capsys,
        "configure",
        "--goal-id",
        "issue-fix",
        "--clear",
        "--execute",
        "--activation",
        str(activation),
    )
    assert (code, packet["status"], packet["after"]) == (0, "written", None)
    code, packet = _run(
        capsys,
        "experiment-status",
        "--goal-id",
        "issue-fix",
        "--agent-id",
        "agent:patcher",
        "--activation",
        str(activation),
    )
    assert (code, packet["status"], packet["reason_code"]) == (0, "disabled", "goal_not_configured")


def _status(capsys: pytest.CaptureFixture[str], activation: Path, agent: str) -> Any:
    return _run(
        capsys,
        "experiment-status",
        "--goal-id",
        "issue-fix",
        "--agent-id",
        agent,
        "--activation",
        str(activation),
    )


def test_status_of_an_available_experiment(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, packet = _status(capsys, experiment_dir(tmp_path), "agent:patcher")
    assert code == 0
    assert packet["status"] == "available"
    assert (packet["corpus_count"], packet["surface_count"]) == (3, 2)
    assert packet["recall_profile_ids"] == ["planning_v1", "summary_v1"]
    assert (packet["automatic_recall"], packet["automatic_ingest"]) == (True, False)
    assert packet["provider_health"]["status"] == "available"


def test_status_of_an_agent_off_the_allowlist(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, packet = _status(capsys, experiment_dir(tmp_path), "agent:other")
    assert (code, packet["status"], packet["configured_for_agent"]) == (
        0,
        "agent_not_enabled",
        False,
    )
    assert (packet["automatic_recall"], packet["automatic_ingest"]) == (False, False)


def test_status_of_an_invalid_config_has_both_flags_false(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = config_data()
    data["schema_version"] = "reward_memory_experiment_config_v0"
    code, packet = _status(capsys, experiment_dir(tmp_path, config=data), "agent:patcher")
    assert (code, packet["status"], packet["reason_code"]) == (
        0,
        "config_invalid",
        "config_version_unsupported",
    )
    assert (packet["automatic_recall"], packet["automatic_ingest"]) == (False, False)


def test_status_never_prints_a_path_or_a_scope_ref(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    activation = experiment_dir(tmp_path / "hidden-location")
    for agent in ("agent:patcher", "agent:other"):
        for output in ("json", "text"):
            assert (
                main(
                    [
                        "experiment-status",
                        "--goal-id",
                        "issue-fix",
                        "--agent-id",
                        agent,
                        "--activation",
                        str(activation),
                        "--format",
                        output,
                    ]
                )
                == 0
            )
            shown = capsys.readouterr().out
            assert "hidden-location" not in shown
            assert "config.json" not in shown
            assert "scope_ref" not in shown
            for scope_ref in SCOPES.values():
                assert scope_ref not in shown


@pytest.mark.parametrize(
    ("argv", "path", "code"),
    [
        (
            ("--agent-id", "agent:a", "--activation", "missing.json"),
            "--activation",
            "file_not_found",
        ),
        (("--agent-id", "Bad Agent"), "--agent-id", "invalid_format"),
    ],
)
def test_status_bad_input_is_an_error_packet(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    argv: tuple[str, ...],
    path: str,
    code: str,
) -> None:
    activation = experiment_dir(tmp_path)
    monkeypatch.chdir(tmp_path)
    extra = argv if "--activation" in argv else (*argv, "--activation", str(activation))
    exit_code, packet = _run(capsys, "experiment-status", "--goal-id", "issue-fix", *extra)
    assert (exit_code, packet["error_code"], packet["field_path"]) == (2, code, path)


def test_the_shipped_example_resolves_through_the_real_cli(tmp_path: Path) -> None:
    """Run as a user would: a real process, the example files, a throw-away SQLite store."""
    env = {**os.environ, "REWARD_MEMORY_SQLITE_PATH": str(tmp_path / "store.db")}
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "reward_memory",
            "experiment-status",
            "--goal-id",
            "issue-fix",
            "--agent-id",
            "agent:patcher",
            "--activation",
            str(EXAMPLES / "activation.json"),
            "--format",
            "json",
        ],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=60,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    packet = json.loads(result.stdout)
    assert packet["status"] == "available"
    assert packet["provider_id"] == "sqlite"
    assert packet["provider_health"]["status"] == "available"
    assert not (tmp_path / "store.db").exists()  # a status check writes nothing


@pytest.mark.parametrize("name", ["activation.json", "config.json"])
def test_the_example_files_validate(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema", "validate", str(EXAMPLES / name)]) == 0
    capsys.readouterr()


def _malformed_cases() -> list[Any]:
    from test_cli_malformed import generic_cases

    return generic_cases()


# A missing activation file is where configure starts a new one: not a malformed one.
@pytest.mark.parametrize(
    ("verb", "case"),
    [
        pytest.param(verb, case, id=f"{case.id}-{verb}")
        for case in _malformed_cases()
        for verb in ("experiment-status", "configure")
        if case.content is not None or verb == "experiment-status"
    ],
)
def test_a_malformed_activation_file_is_an_error_packet_naming_it(
    verb: str, case: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """DESIGN.md §8: every bad input is an error packet with exit 2, never a traceback."""
    from test_cli_malformed import WHOLE

    target = tmp_path / "activation.json"
    if case.content is not None:
        target.write_bytes(case.content)
    before = target.read_bytes() if target.exists() else None
    if verb == "experiment-status":
        argv = ["experiment-status", "--goal-id", "g", "--agent-id", "agent:a"]
    else:
        argv = ["configure", "--goal-id", "g", "--config", "c.json", "--agent", "agent:a"]
        argv.append("--execute")
    exit_code = main([*argv, "--activation", str(target), "--format", "json"])
    captured = capsys.readouterr()
    assert exit_code == 2, captured.out
    packet = json.loads(captured.out)
    schemas.validate(packet)
    path = "--activation" if case.path == WHOLE else case.path
    assert (packet["error_code"], packet["field_path"]) == (case.code, path)
    assert str(tmp_path) not in captured.out
    assert (target.read_bytes() if target.exists() else None) == before  # never overwritten


@pytest.mark.parametrize(
    "argv",
    [
        ["configure", "--goal-id", "issue-fix", "--config", "config.json", "--agent", "a:b"],
        ["experiment-status", "--goal-id", "issue-fix", "--agent-id", "agent:patcher"],
        ["ingest-event", "--input", "event.json", "--goal-id", "g", "--agent-id", "a:b"],
    ],
)
def test_an_activation_file_named_dash_is_refused(
    argv: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """'-' was stdin for experiment-status, a file named '-' for ingest-event, and both for
    configure --execute (it read stdin and wrote ./-)."""
    monkeypatch.chdir(tmp_path)
    assert main([*argv, "--activation", "-", "--format", "json"]) == 2
    packet = json.loads(capsys.readouterr().out)
    assert (packet["error_code"], packet["field_path"]) == ("usage_error", "--activation")
    assert list(tmp_path.iterdir()) == []
