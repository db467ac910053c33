"""The file-reading verbs and an unwritable stdout: an OS error is bad input or a lost
answer, never a traceback or an ``internal_error`` (DESIGN.md §8: bad input "prints an
error packet naming the problem and exits 2 -- never a traceback")."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from _experiment_support import config_data, experiment_dir, write_json
from reward_memory.cli import main
from reward_memory.experiment import resolve_experiment

ROOT = Path(__file__).resolve().parents[1]
EVENT = ROOT / "examples" / "experiment" / "event.json"
GOAL = ("--goal-id", "issue-fix", "--agent-id", "agent:patcher")


def _packet(capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    return dict(json.loads(capsys.readouterr().out))


@pytest.mark.parametrize(
    "argv",
    [
        ("ingest-event", "--input", str(EVENT), *GOAL),
        ("configure", "--goal-id", "g", "--config", "c.json", "--agent", "agent:a"),
        ("experiment-status", *GOAL),
    ],
    ids=["ingest-event", "configure", "experiment-status"],
)
def test_an_activation_name_too_long_is_an_error_packet(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: tuple[str, ...]
) -> None:
    long_name = tmp_path / ("a" * 300 + ".json")
    code = main([*argv, "--activation", str(long_name), "--format", "json"])
    packet = _packet(capsys)
    assert code == 2
    assert packet["error_code"] != "internal_error"


def test_configure_execute_through_a_symlink_loop_is_an_error_packet(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_json(tmp_path / "c.json", config_data())
    (tmp_path / "a.json").symlink_to(tmp_path / "b.json")
    (tmp_path / "b.json").symlink_to(tmp_path / "a.json")
    argv = ["configure", "--goal-id", "g", "--config", "c.json", "--agent", "agent:a"]
    code = main([*argv, "--activation", str(tmp_path / "a.json"), "--execute", "--format", "json"])
    packet = _packet(capsys)
    assert code == 2
    assert packet["error_code"] in ("file_unreadable", "file_unwritable")


def test_an_unsearchable_directory_fails_open_in_the_library(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fault injection (root ignores permissions): ``is_file`` on a path under a directory
    that may not be searched raises ``PermissionError``; the library resolves unavailable."""
    activation = experiment_dir(tmp_path)
    real = pathlib.Path.is_file

    def denied(self: Path) -> bool:
        if self.name in ("activation.json", "config.json"):
            raise PermissionError(13, "Permission denied")
        return real(self)

    monkeypatch.setattr(pathlib.Path, "is_file", denied)
    runtime = resolve_experiment(activation, goal_id="issue-fix", agent_id="agent:patcher")
    assert runtime.available is False
    assert runtime.reason_code == "activation_invalid"


@pytest.mark.parametrize("good", [False, True], ids=["bad-input", "good-input"])
def test_a_full_stdout_is_a_line_on_stderr_not_a_traceback(tmp_path: Path, good: bool) -> None:
    given = ROOT / "examples" / "experiment" / "config.json" if good else tmp_path / "nope.json"
    argv = ["architecture"] if good else ["health-check", "--input", str(given)]
    with Path(os.devnull).open("rb") as stdin, Path("/dev/full").open("wb") as full:
        done = subprocess.run(
            [sys.executable, "-m", "reward_memory", *argv, "--format", "json"],
            stdin=stdin,
            stdout=full,
            stderr=subprocess.PIPE,
            check=False,
            text=True,
        )
    assert "Traceback" not in done.stderr
    assert "could not be written" in done.stderr
    assert done.returncode == (1 if good else 2)


@pytest.mark.parametrize(
    "url",
    ["nosuch://", "sqlite:///{tmp}/dir.db", "sqlite:///{tmp}/" + "a" * 300 + "/m.db"],
    ids=["unknown-id", "directory", "name-too-long"],
)
@pytest.mark.parametrize("verb", ["recall", "evaluate"])
def test_a_provider_that_cannot_be_had_names_the_provider_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], url: str, verb: str
) -> None:
    (tmp_path / "dir.db").mkdir()
    argv = [verb, "--provider", url.format(tmp=tmp_path), "--format", "json"]
    if verb == "recall":
        argv[1:1] = ["--input", str(ROOT / "examples" / "recall-input.json")]
    code = main(argv)
    packet = _packet(capsys)
    if packet.get("schema_version") == "reward_memory_error_v0":
        assert code == 2
        assert packet["field_path"] == "--provider"
    else:  # a provider that opens and then fails is a fail-open status, not an error
        assert packet.get("status") != "invalid_request"


def test_configure_writes_through_a_dangling_activation_link(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A link to a registry not written yet is an empty registry: --execute writes the file
    the link names, and the link stays."""
    write_json(tmp_path / "c.json", config_data())
    (tmp_path / "activation.json").symlink_to(tmp_path / "target.json")
    argv = ["configure", "--goal-id", "g", "--config", "c.json", "--agent", "agent:a"]
    code = main([*argv, "--activation", str(tmp_path / "activation.json"), "--execute"])
    capsys.readouterr()
    assert code == 0
    assert (tmp_path / "activation.json").is_symlink()
    assert json.loads((tmp_path / "target.json").read_text())["goals"][0]["goal_id"] == "g"


@pytest.mark.parametrize("good", [False, True], ids=["bad-input", "good-input"])
def test_a_closed_stdout_is_a_line_on_stderr_not_a_traceback(tmp_path: Path, good: bool) -> None:
    """``>&-``: Python sets sys.stdout to None; that is a stdout that cannot be written."""
    argv = ["architecture"] if good else ["recall", "--input", str(tmp_path / "nope.json")]
    done = subprocess.run(
        [sys.executable, "-c", "import os, runpy, sys; os.close(1); sys.stdout = None; "
         "sys.argv = ['reward-memory', *sys.argv[1:]]; "
         "runpy.run_module('reward_memory', run_name='__main__')", *argv, "--format", "json"],
        stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        check=False,
        text=True,
    )  # fmt: skip
    assert "Traceback" not in done.stderr
    assert "could not be written" in done.stderr
    assert done.returncode == (1 if good else 2)


@pytest.mark.parametrize(
    "argv",
    [["recall", "--input", "/nonexistent/nope.json"], ["bogus"], ["architecture", "--bogus"]],
)
def test_a_reader_gone_on_the_error_path_keeps_exit_2_without_a_traceback(
    argv: list[str],
) -> None:
    """`reward-memory ... | true` on bad input: the pipe breaks while the error packet is
    written (it used to escape main() as a BrokenPipeError, exit 1)."""
    reader, writer = os.pipe()
    os.close(reader)  # nobody reads: the first write breaks the pipe
    try:
        done = subprocess.run(
            [sys.executable, "-m", "reward_memory", *argv, "--format", "json"],
            stdin=subprocess.DEVNULL,
            stdout=writer,
            stderr=subprocess.PIPE,
            check=False,
            text=True,
        )
    finally:
        os.close(writer)
    assert "Traceback" not in done.stderr
    assert "BrokenPipeError" not in done.stderr
    assert done.returncode == 2
