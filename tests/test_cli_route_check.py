"""`reward-memory route-check`: --case pr-3237, --input FILE, one flag per observation field."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import attrs
import pytest

from reward_memory import schemas, wire
from reward_memory.cli import main
from reward_memory.cli._route_check import FLAGS
from reward_memory.records.route import RouteObservation
from reward_memory.routing import PR_3237_OBSERVATION


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code = main(["route-check", *argv, "--format", "json"])
    packet: dict[str, Any] = json.loads(capsys.readouterr().out)
    return code, packet


def test_the_pr_3237_case(capsys: pytest.CaptureFixture[str]) -> None:
    """`loopx reward-memory route-check --case pr-3237 --format json` yields meta_design_gate."""
    code, packet = run(capsys, "--case", "pr-3237")
    assert code == 0
    assert packet["decision"] == "meta_design_gate"
    assert packet["missing_required_evidence"] == ["effect", "ux", "performance"]
    assert packet["pilot_authorized"] is False
    assert packet["memory_patch_authority"] is False
    schemas.validate(packet)


def test_no_flags_hold_for_evidence(capsys: pytest.CaptureFixture[str]) -> None:
    """The flag defaults are a confirmed bug, one surface, low complexity, every flag false."""
    code, packet = run(capsys)
    assert code == 0
    assert packet["decision"] == "hold_for_evidence"
    assert packet["reason_codes"] == [
        "missing_effect_evidence",
        "missing_named_reproduction",
        "missing_named_validation",
    ]
    assert packet["case_ref"] == "manual_observation"


def test_flags_build_a_pilot_sized_observation(capsys: pytest.CaptureFixture[str]) -> None:
    code, packet = run(
        capsys,
        "--case-ref",
        "fixture:bounded",
        "--edge-case-complexity",
        "medium",
        "--named-reproduction",
        "--named-validation",
        "--effect-evidence",
    )
    assert code == 0
    assert packet["decision"] == "pilot_fix"
    assert packet["pilot_authorized"] is True
    assert packet["case_ref"] == "fixture:bounded"
    assert "edge_case_complexity_medium" in packet["reason_codes"]


def test_the_flags_reproduce_pr_3237(capsys: pytest.CaptureFixture[str]) -> None:
    """A flag for every observation field: the PR #3237 observation spelled as flags."""
    argv = [
        "--case-ref",
        PR_3237_OBSERVATION.case_ref,
        "--behavior-status",
        "by_design",
        "--surface-count",
        "2",
        "--edge-case-complexity",
        "high",
    ]
    for name in FLAGS:
        on = getattr(PR_3237_OBSERVATION, name)
        argv.append(("--" if on else "--no-") + name.replace("_", "-"))
    code, packet = run(capsys, *argv)
    assert code == 0
    _, expected = run(capsys, "--case", "pr-3237")
    assert packet == expected


def test_every_observation_field_has_a_flag() -> None:
    import argparse

    from reward_memory.cli._route_check import configure

    parser = argparse.ArgumentParser()
    configure(parser)
    dests = {action.dest for action in parser._actions}
    names = {field.name for field in attrs.fields(RouteObservation)} - {"schema_version"}
    assert len(names) == 15
    assert names <= dests, sorted(names - dests)


@pytest.mark.parametrize(
    ("flag", "value", "reason"),
    [
        ("--behavior-status", "uncertain", "semantics_uncertain"),
        ("--surface-count", "3", "cross_surface_change"),
        ("--edge-case-complexity", "high", "high_edge_case_complexity"),
    ],
)
def test_valued_flags_reach_the_guard(
    capsys: pytest.CaptureFixture[str], flag: str, value: str, reason: str
) -> None:
    code, packet = run(capsys, flag, value)
    assert code == 0
    assert packet["decision"] == "meta_design_gate"
    assert packet["reason_codes"][0] == reason


def test_input_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "observation.json"
    target.write_text(json.dumps(wire.dump(PR_3237_OBSERVATION)), encoding="utf-8")
    code, packet = run(capsys, "--input", str(target))
    assert code == 0
    assert packet["decision"] == "meta_design_gate"


def test_input_without_schema_version(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plain = wire.dump(PR_3237_OBSERVATION)
    del plain["schema_version"]
    target = tmp_path / "observation.json"
    target.write_text(json.dumps(plain), encoding="utf-8")
    code, packet = run(capsys, "--input", str(target))
    assert (code, packet["decision"]) == (0, "meta_design_gate")


@pytest.mark.parametrize(
    ("content", "path"),
    [
        ({"comment_body": "raw"}, "$.comment_body"),
        ({"surface_count": "2"}, "$.surface_count"),
        ({"named_validation": None}, "$.named_validation"),
        ({"case_ref": "/home/alice/pr.md"}, "$.case_ref"),
    ],
)
def test_bad_input_is_an_error_packet_naming_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: dict[str, Any], path: str
) -> None:
    plain = wire.dump(PR_3237_OBSERVATION)
    plain.update(content)
    target = tmp_path / "observation.json"
    target.write_text(json.dumps(plain), encoding="utf-8")
    code, packet = run(capsys, "--input", str(target))
    assert code == 2
    assert packet["schema_version"] == "reward_memory_error_v0"
    assert packet["field_path"] == path
    assert "/home/alice" not in json.dumps(packet)


@pytest.mark.parametrize("text", ["not json", "[1, 2]", "", '{"a": 1, "a": 2}'])
def test_unreadable_input_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str
) -> None:
    target = tmp_path / "observation.json"
    target.write_text(text, encoding="utf-8")
    code, packet = run(capsys, "--input", str(target))
    assert code == 2
    assert packet["ok"] is False


def test_a_missing_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, packet = run(capsys, "--input", str(tmp_path / "absent.json"))
    assert code == 2
    assert packet["schema_version"] == "reward_memory_error_v0"
    assert str(tmp_path) not in json.dumps(packet)


@pytest.mark.parametrize(
    "argv",
    [
        ("--case", "pr-3237", "--ux-evidence"),
        ("--case", "pr-3237", "--surface-count", "1"),
        ("--input", "-", "--no-effect-evidence"),
        ("--case", "pr-3237", "--input", "-"),
        ("--case", "pr-9999"),
        ("--behavior-status", "bug"),
        ("--edge-case-complexity", "extreme"),
    ],
)
def test_conflicting_or_unknown_flags_exit_2(
    capsys: pytest.CaptureFixture[str], argv: tuple[str, ...]
) -> None:
    """Flags next to --case or --input are refused, never silently ignored."""
    code, packet = run(capsys, *argv)
    assert code == 2
    assert packet["schema_version"] == "reward_memory_error_v0"


@pytest.mark.parametrize(
    ("value", "code"),
    [
        ("0", "invalid_value"),
        ("21", "invalid_value"),
        ("2x", "wrong_type"),
        ("-1", "invalid_value"),  # a number out of range, as the library says
        ("1.5", "wrong_type"),
    ],
)
def test_a_bad_surface_count_names_the_field(
    capsys: pytest.CaptureFixture[str], value: str, code: str
) -> None:
    exit_code, packet = run(capsys, "--surface-count", value)
    assert exit_code == 2
    assert packet["field_path"] == "$.surface_count"
    assert packet["error_code"] == code


def test_text_summary(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["route-check", "--case", "pr-3237"]) == 0
    out = capsys.readouterr().out
    assert "decision: meta_design_gate" in out
    assert "missing_required_evidence: effect, ux, performance" in out
    assert "pilot_authorized: false" in out


def test_a_real_process(tmp_path: Path) -> None:
    """The console entry point, as an operator runs it (stdin input, exit codes)."""
    plain = wire.dump(PR_3237_OBSERVATION)
    done = subprocess.run(
        [sys.executable, "-m", "reward_memory", "route-check", "--input", "-", "--format", "json"],
        input=json.dumps(plain),
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["decision"] == "meta_design_gate"
    bad = subprocess.run(
        [sys.executable, "-m", "reward_memory", "route-check", "--surface-count", "many"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert bad.returncode == 2
    assert json.loads(bad.stdout)["field_path"] == "$.surface_count"


@pytest.mark.parametrize(
    "argv",
    [("--case", "pr-3237"), (), ("--surface-count", "4", "--ux-evidence")],
)
def test_schema_validate_accepts_what_route_check_emits(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: tuple[str, ...]
) -> None:
    main(["route-check", *argv, "--format", "json"])
    target = tmp_path / "packet.json"
    target.write_text(capsys.readouterr().out, encoding="utf-8")
    assert main(["schema", "validate", str(target), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["validated_schema"] == (
        "reward_memory_pilot_meta_route_v0"
    )


@pytest.mark.parametrize(
    "argv",
    [
        ("route-check", "--case", "pr-3237"),
        ("route-check", "--surface-count", "2"),
        ("evaluate",),
    ],
)
def test_the_verbs_start_without_the_schema_and_converter_machinery(
    tmp_path: Path, argv: tuple[str, ...]
) -> None:
    """Start-up budget (<= 0.15 s a verb): neither verb loads cattrs or jsonschema, not even
    for --input (the observation record is the whole boundary; see routing.as_observation)."""
    target = tmp_path / "observation.json"
    target.write_text(json.dumps(wire.dump(PR_3237_OBSERVATION)), encoding="utf-8")
    script = (
        "import sys, io, contextlib\n"
        "from reward_memory.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    main({list(argv)!r})\n"
        f"    main(['route-check', '--input', {str(target)!r}])\n"
        "heavy = {'cattrs', 'jsonschema', 'referencing'}\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & heavy))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize("count", ["-1", "0", "99999"])
def test_an_out_of_range_surface_count_gets_the_libraries_error(
    count: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same value, the same error as route_check({... "surface_count": -1}): it was
    wrong_type ("must be an integer") for a signed or long number."""
    assert main(["route-check", f"--surface-count={count}", "--format", "json"]) == 2
    packet = json.loads(capsys.readouterr().out)
    assert (packet["error_code"], packet["field_path"]) == ("invalid_value", "$.surface_count")
