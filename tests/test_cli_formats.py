"""The original's CLI surface kept (reference 15.1): ``--format markdown``, ``--format``
and ``--registry`` given before the verb."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reward_memory.cli import main

ROOT = Path(__file__).resolve().parents[1]

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "experiment"


def _out(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


def test_markdown_is_the_originals_heading_and_key_lines(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, text = _out(capsys, "route-check", "--case", "pr-3237", "--format", "markdown")
    assert code == 0
    lines = text.split("\n")
    assert lines[:2] == ["# Reward Memory", ""]
    assert "- decision: `meta_design_gate`" in lines
    assert any(line.startswith("- case_ref: `") for line in lines)
    assert any(line.startswith("- reason_codes: `semantics_by_design, ") for line in lines)
    assert text.endswith("`\n\n")  # the original's print added one more newline


@pytest.mark.parametrize(
    ("verb", "line"),
    [
        (("architecture",), "- memory_classes: `5`"),
        (("corpus-registry",), "- corpus_count: `7`"),
        (("health-check",), "- health_state: `retrieval_verified`"),
    ],
)
def test_markdown_counts_and_states(
    capsys: pytest.CaptureFixture[str], verb: tuple[str, ...], line: str
) -> None:
    code, text = _out(capsys, *verb, "--format", "markdown")
    assert code == 0
    assert line in text.split("\n")


@pytest.mark.parametrize("spelling", [("--format", "json"), ("--format=json",)])
def test_format_may_come_before_the_verb(
    capsys: pytest.CaptureFixture[str], spelling: tuple[str, ...]
) -> None:
    code, text = _out(capsys, *spelling, "architecture")
    assert code == 0
    assert json.loads(text)["schema_version"] == "reward_memory_architecture_v0"


def test_a_format_after_the_verb_wins_over_one_before(capsys: pytest.CaptureFixture[str]) -> None:
    code, text = _out(capsys, "--format", "markdown", "architecture", "--format", "json")
    assert code == 0
    assert json.loads(text)["status"] == "design_contract"


def test_a_global_format_without_a_value_is_a_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, text = _out(capsys, "--format")
    assert code == 2
    assert json.loads(text)["error_code"] == "usage_error"


@pytest.mark.parametrize("before", [True, False])
def test_registry_names_the_activation_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, before: bool
) -> None:
    for name in ("activation.json", "config.json"):
        (tmp_path / name).write_text((EXAMPLES / name).read_text("utf-8"), "utf-8")
    status = ["experiment-status", "--goal-id", "issue-fix", "--agent-id", "agent:patcher"]
    given = ["--registry", str(tmp_path / "activation.json")]
    argv = [*given, *status] if before else [*status, *given]
    code, text = _out(capsys, *argv, "--format", "json")
    assert code == 0
    assert json.loads(text)["status"] == "available"


@pytest.mark.parametrize(
    "verb", [("health-check", "--case", "retrieval-verified"), ("corpus-registry",)]
)
def test_a_global_registry_is_ignored_by_verbs_that_read_none(
    verb: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    """The original's global option: a verb with no activation registry does not use it."""
    assert main(["--registry", "elsewhere.json", *verb, "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["ok"] is True


def test_an_error_about_the_registry_names_the_flag_as_typed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "activation.json"
    broken.mkdir()  # a directory where the file belongs
    code = main(
        [
            "--registry",
            str(broken),
            "experiment-status",
            "--goal-id",
            "g",
            "--agent-id",
            "agent:a",
            "--format",
            "json",
        ]
    )
    packet = json.loads(capsys.readouterr().out)
    assert code == 2
    assert packet["field_path"] == "--registry"


def test_operator_control_markdown_is_the_originals_view(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = ROOT / "examples" / "operator" / "revoke-request.json"
    argv = ["operator-control", "--input", str(path), "--action", "revoke", "--format", "markdown"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert out.startswith("# Reward Memory\n")
    assert "- status: `control_ready`" in out
