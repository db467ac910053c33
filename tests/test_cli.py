"""The CLI frame: dispatch, formats, and an error packet (exit 2) for every bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from reward_memory import schemas
from reward_memory.cli import VERBS, main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


def error_of(out: str) -> dict[str, Any]:
    packet = json.loads(out)
    schemas.validate(packet)
    assert packet["ok"] is False
    assert packet["schema_version"] == "reward_memory_error_v0"
    return packet


def test_no_verb_is_an_error_packet_with_the_help_on_stderr(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main([]) == 2
    captured = capsys.readouterr()
    packet = json.loads(captured.out)
    assert (packet["schema_version"], packet["error_code"]) == (
        "reward_memory_error_v0",
        "usage_error",
    )
    for verb in VERBS:
        assert verb in captured.err


def test_help_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    assert "architecture" in capsys.readouterr().out


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    from reward_memory import __version__

    code, out = run(capsys, "--version")
    assert code == 0
    assert out.strip() == f"reward-memory {__version__}"


def test_unknown_verb_is_an_error_packet(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, "forget-everything")
    assert code == 2
    assert error_of(out)["error_code"] == "usage_error"


def test_unknown_option_is_an_error_packet(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, "architecture", "--frobnicate")
    assert code == 2
    assert "frobnicate" in error_of(out)["message"]


def test_abbreviated_options_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, "architecture", "--form", "json")
    assert code == 2
    error_of(out)


def test_bad_format_choice(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, "architecture", "--format", "yaml")
    assert code == 2
    assert error_of(out)["error_code"] == "usage_error"


def test_unsafe_argument_is_never_echoed(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, "architecture", "--format", "/home/alice/.ssh/id_rsa")
    assert code == 2
    assert "/home/alice" not in out
    error_of(out)


def test_architecture_json_lists_five_classes_and_precedence(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out = run(capsys, "architecture", "--format", "json")
    assert code == 0
    packet = json.loads(out)
    assert [c["class_id"] for c in packet["memory_classes"]] == [
        "run_bound_reward",
        "hard_policy",
        "soft_preference",
        "procedural_experience",
        "working_context",
    ]
    assert packet["precedence"] == [
        "explicit_action_authority_and_privacy_boundary",
        "active_in_scope_hard_policy",
        "fresh_working_context_and_current_source_of_truth",
        "current_artifact_verified_procedural_experience",
        "active_in_scope_soft_preference",
        "run_bound_reward_as_evidence_only",
    ]
    assert "confidence_never_increases_authority" in packet["safety_invariants"]
    assert schemas.validate(packet) == "reward_memory_architecture_v0"


def test_architecture_text_is_a_short_summary(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, "architecture")
    assert code == 0
    assert out.startswith("reward_memory_architecture_v0\n")
    assert "1. explicit_action_authority_and_privacy_boundary" in out
    assert len(out.splitlines()) < 20


# -- schema verb and input-file errors ---------------------------------------------------------


def test_schema_list(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, "schema", "list", "--format", "json")
    assert code == 0
    packet = json.loads(out)
    schemas.validate(packet)
    names = [entry["name"] for entry in packet["schemas"]]
    assert names == schemas.schema_names()
    assert packet["schema_count"] == len(names)


def test_schema_show_prints_the_document(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, "schema", "show", "reward_memory_error_v0")
    assert code == 0
    assert json.loads(out) == schemas.get_schema("reward_memory_error_v0")


def test_schema_show_unknown(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, "schema", "show", "reward_memory_nope_v0")
    assert code == 2
    assert error_of(out)["error_code"] == "unknown_schema"


def test_schema_validate_accepts_an_emitted_packet(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    _, out = run(capsys, "architecture", "--format", "json")
    target = tmp_path / "arch.json"
    target.write_text(out)
    code, out = run(capsys, "schema", "validate", str(target), "--format", "json")
    assert code == 0
    assert json.loads(out)["validated_schema"] == "reward_memory_architecture_v0"


def test_schema_validate_names_an_unknown_field(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    _, out = run(capsys, "architecture", "--format", "json")
    packet = json.loads(out)
    packet["memory_classes"][1]["raw_comment"] = "x"
    target = tmp_path / "arch.json"
    target.write_text(json.dumps(packet))
    code, out = run(capsys, "schema", "validate", str(target))
    assert code == 2
    error = error_of(out)
    assert error["error_code"] == "unknown_field"
    assert error["field_path"] == "$.memory_classes[1].raw_comment"


@pytest.mark.parametrize(
    ("content", "code"),
    [
        (None, "file_not_found"),
        (b"{not json", "invalid_json"),
        (b"\xff\xfe\x00", "not_utf8"),
        (b'{"schema_version": NaN}', "invalid_json"),
        (b"[1, 2]", "wrong_type"),
        (b"{}", "schema_version_missing"),
        (b'{"schema_version": "reward_memory_nope_v0"}', "schema_version_unsupported"),
        (b'{"schema_version": 3}', "schema_version_unsupported"),
    ],
)
def test_schema_validate_bad_files(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, content: bytes | None, code: str
) -> None:
    target = tmp_path / "input.json"
    if content is not None:
        target.write_bytes(content)
    exit_code, out = run(capsys, "schema", "validate", str(target))
    assert exit_code == 2
    error = error_of(out)
    assert error["error_code"] == code
    assert str(tmp_path) not in out  # local paths never reach the packet


def test_directory_as_input(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    exit_code, out = run(capsys, "schema", "validate", str(tmp_path))
    assert exit_code == 2
    assert error_of(out)["error_code"] == "file_unreadable"


def test_unreadable_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Fault injection: CI runs as root, which reads any file, so refuse the read.
    target = tmp_path / "secret.json"
    target.write_text("{}")

    def refuse(path: str, flags: int) -> int:
        raise PermissionError(13, "Permission denied", path)

    # The bounded reader opens with os.open (non-blocking, for FIFOs).
    monkeypatch.setattr("reward_memory.jsonio.os.open", refuse)
    exit_code, out = run(capsys, "schema", "validate", str(target))
    assert exit_code == 2
    assert error_of(out)["error_code"] == "file_unreadable"
    assert "secret.json" not in out


def test_stdin_input(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import io

    _, out = run(capsys, "architecture", "--format", "json")
    fake = io.TextIOWrapper(io.BytesIO(out.encode()))
    monkeypatch.setattr(sys, "stdin", fake)
    code, out = run(capsys, "schema", "validate", "-", "--format", "json")
    assert code == 0


def test_internal_errors_are_packets_with_exit_1(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Fault injection: a verb that crashes must still not show a traceback.
    import reward_memory.cli._architecture as verb

    def boom(args: object) -> object:
        raise RuntimeError("/home/alice/secret details")

    monkeypatch.setattr(verb, "run", boom)
    code, out = run(capsys, "architecture")
    assert code == 1
    packet = error_of(out)
    assert packet["error_code"] == "internal_error"
    assert "alice" not in out


# -- the real console script and python -m ---------------------------------------------------


def test_console_script_and_module_agree() -> None:
    script = Path(sys.executable).with_name("reward-memory")
    via_script = subprocess.run(
        [str(script), "architecture", "--format", "json"], capture_output=True, check=True
    )
    via_module = subprocess.run(
        [sys.executable, "-m", "reward_memory", "architecture", "--format", "json"],
        capture_output=True,
        check=True,
    )
    assert via_script.stdout == via_module.stdout
    assert via_script.stderr == b""


def test_bad_input_never_prints_a_traceback(tmp_path: Path) -> None:
    target = tmp_path / "broken.json"
    target.write_text("{")
    result = subprocess.run(
        [sys.executable, "-m", "reward_memory", "schema", "validate", str(target)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 2
    assert "Traceback" not in result.stdout + result.stderr
    error_of(result.stdout)


@pytest.mark.parametrize(
    ("argv", "path"),
    [
        (["recall"], "--input"),
        (["architecture", "--format", "yaml"], "--format"),
        (["architecture", "--bogus"], "--bogus"),
        (["recall", "--input"], "--input"),
    ],
)
def test_a_usage_error_names_the_option(
    capsys: pytest.CaptureFixture[str], argv: list[str], path: str
) -> None:
    """README: bad input gets a packet naming the field path (it was null for these)."""
    assert main(argv) == 2
    packet = json.loads(capsys.readouterr().out)
    assert (packet["error_code"], packet["field_path"]) == ("usage_error", path)
