"""The Stage-1 verbs: ``corpus-registry`` and ``health-check`` (``--case`` / ``--input``)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from reward_memory import schemas
from reward_memory.cli import main
from reward_memory.cli._health import CASES, DEFAULT_CASE
from reward_memory.health import HEALTH_CASES, health_case
from reward_memory.records._plain import to_plain as as_plain

SCRIPT = Path(sys.executable).with_name("reward-memory")
PIPELINE_FIELDS = {
    "provider_available",
    "corpus_present",
    "record_count",
    "index_required",
    "index_present",
    "retrieval_query_succeeded",
    "result_readback_verified",
    "memory_applied_with_receipt",
}


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


def packet_of(out: str) -> dict[str, Any]:
    packet: dict[str, Any] = json.loads(out)
    schemas.validate(packet)
    return packet


def error_of(out: str) -> dict[str, Any]:
    packet = packet_of(out)
    assert packet["ok"] is False
    assert packet["schema_version"] == "reward_memory_error_v0"
    assert packet["status"] == "invalid_request"
    return packet


def console(*argv: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    command = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "reward_memory"]
    return subprocess.run(
        [*command, *argv],
        capture_output=True,
        text=True,
        input=stdin,
        check=False,
        env={**os.environ, "PYTHONWARNINGS": "error"},
    )


def request_file(tmp_path: Path, packet: dict[str, Any]) -> str:
    path = tmp_path / "request.json"
    path.write_text(json.dumps(packet), encoding="utf-8")
    return str(path)


# -- through the real console script ----------------------------------------------------------


def test_console_corpus_registry_json() -> None:
    result = console("corpus-registry", "--format", "json")
    assert result.returncode == 0, result.stderr
    packet = packet_of(result.stdout)
    assert packet["schema_version"] == "reward_memory_corpus_registry_v0"
    assert packet["status"] == "reference_registry"
    assert packet["corpus_count"] == len(packet["corpora"]) == 7
    assert set(packet["class_coverage"]) == {
        "run_bound_reward",
        "hard_policy",
        "soft_preference",
        "procedural_experience",
        "working_context",
    }
    assert result.stderr == ""


def test_console_health_check_wrong_project() -> None:
    result = console("health-check", "--case", "wrong-project", "--format", "json")
    assert result.returncode == 0, result.stderr
    packet = packet_of(result.stdout)
    assert packet["health_state"] == "wrong_project"
    assert packet["reason_codes"] == ["requested_project_outside_corpus_scope"]
    assert set(packet["pipeline"]) == PIPELINE_FIELDS
    assert packet["memory_patch_authority"] is False
    assert packet["external_write_authorized"] is False


def test_console_contradictory_input_is_exit_2(tmp_path: Path) -> None:
    packet = as_plain(health_case("retrieval-verified"))
    packet["observation"]["provider_available"] = False
    result = console("health-check", "--input", request_file(tmp_path, packet), "--format", "json")
    assert result.returncode == 2
    error = error_of(result.stdout)
    assert error["error_code"] == "contradictory_observation"
    # "provider unavailable with anything later": the first later stage is named.
    assert error["field_path"] == "$.observation.corpus_present"
    assert "Traceback" not in result.stderr


def test_console_module_entry_point_reads_stdin() -> None:
    packet = as_plain(health_case("stale"))
    result = subprocess.run(
        [sys.executable, "-m", "reward_memory", "health-check", "--input", "-", "--format", "json"],
        capture_output=True,
        text=True,
        input=json.dumps(packet),
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert packet_of(result.stdout)["health_state"] == "stale"


# -- in process ------------------------------------------------------------------------------------


def test_cli_case_list_matches_the_library() -> None:
    assert CASES == HEALTH_CASES
    assert DEFAULT_CASE in CASES


@pytest.mark.parametrize("name", HEALTH_CASES)
def test_health_check_every_case(capsys: pytest.CaptureFixture[str], name: str) -> None:
    code, out = run(capsys, "health-check", "--case", name, "--format", "json")
    assert code == 0
    packet = packet_of(out)
    assert packet["health_state"] == name.replace("-", "_")
    assert set(packet["pipeline"]) == PIPELINE_FIELDS
    assert len(packet["reason_codes"]) == 1
    assert packet["may_apply_memory"] is (name in {"retrieval-verified", "applied-verified"})
    assert packet["memory_patch_authority"] is False
    assert packet["external_write_authorized"] is False
    assert packet["raw_memory_captured"] is False


def test_health_check_default_case(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, "health-check", "--format", "json")
    assert code == 0
    assert packet_of(out)["health_state"] == "retrieval_verified"


def test_health_check_text_summary(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, "health-check", "--case", "empty")
    assert code == 0
    assert out.startswith("reward_memory_corpus_health_v0\n")
    assert "health_state: empty" in out
    assert "reason_codes: corpus_present_without_records" in out
    assert "may_apply_memory: false" in out
    assert "record_count=0" in out


def test_corpus_registry_text_summary(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, "corpus-registry")
    assert code == 0
    assert "status: reference_registry" in out
    assert "corpus_count: 7" in out
    assert "distilled_experiences (procedural_experience" in out


def test_corpus_registry_json_is_the_library_packet(capsys: pytest.CaptureFixture[str]) -> None:
    from reward_memory.registry import reference_registry

    code, out = run(capsys, "corpus-registry", "--format", "json")
    assert code == 0
    assert json.loads(out) == as_plain(reference_registry())


def test_health_check_input_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    packet = as_plain(health_case("applied-verified"))
    code, out = run(capsys, "health-check", "--input", request_file(tmp_path, packet), "--format",
                    "json")  # fmt: skip
    assert code == 0
    result = packet_of(out)
    assert result["health_state"] == "applied_verified"
    assert result["may_apply_memory"] is True
    assert result["memory_patch_authority"] is False


def test_health_check_input_stdin(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    data = json.dumps(as_plain(health_case("index-unavailable"))).encode()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    code, out = run(capsys, "health-check", "--input", "-", "--format", "json")
    assert code == 0
    assert packet_of(out)["health_state"] == "index_unavailable"


CONTRADICTIONS = [
    ({"corpus_present": False, "retrieval_query_succeeded": False,
      "result_readback_verified": False}, "$.observation.record_count"),
    ({"corpus_present": False, "record_count": 0}, "$.observation.retrieval_query_succeeded"),
    ({"retrieval_query_succeeded": False}, "$.observation.result_readback_verified"),
    ({"result_readback_verified": False, "memory_applied_with_receipt": True},
     "$.observation.memory_applied_with_receipt"),
]  # fmt: skip


@pytest.mark.parametrize(("changes", "path"), CONTRADICTIONS)
def test_health_check_contradictions_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, changes: dict[str, Any], path: str
) -> None:
    packet = as_plain(health_case("retrieval-verified"))
    packet["observation"].update(changes)
    code, out = run(capsys, "health-check", "--input", request_file(tmp_path, packet))
    assert code == 2
    error = error_of(out)
    assert (error["error_code"], error["field_path"]) == ("contradictory_observation", path)


@pytest.mark.parametrize(
    ("mutate", "code", "path"),
    [
        (lambda p: p["corpus"]["scope"].update(raw_comment="x"), "unknown_field",
         "$.corpus.scope.raw_comment"),
        (lambda p: p["observation"].update(record_count="1"), "wrong_type",
         "$.observation.record_count"),
        (lambda p: p["corpus"]["privacy"].update(raw_content_in_registry=True), "invalid_value",
         "$.corpus.privacy.raw_content_in_registry"),
        (lambda p: p["corpus"]["freshness"].update(source_revision=None), "missing_field",
         "$.corpus.freshness.source_revision"),
        (lambda p: p["corpus"].update(owner_ref="x:/home/someone/y"), "unsafe_text",
         "$.corpus.owner_ref"),
        (lambda p: p.update(schema_version="reward_memory_corpus_health_v0"), None, None),
        (lambda p: p.pop("schema_version"), "schema_version_missing", "$.schema_version"),
    ],
)  # fmt: skip
def test_health_check_bad_input_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, mutate: Any, code: str | None,
    path: str | None,
) -> None:  # fmt: skip
    packet = as_plain(health_case("retrieval-verified"))
    mutate(packet)
    exit_code, out = run(capsys, "health-check", "--input", request_file(tmp_path, packet))
    assert exit_code == 2
    error = error_of(out)
    if code is not None:
        assert (error["error_code"], error["field_path"]) == (code, path)


def test_health_check_missing_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out = run(capsys, "health-check", "--input", str(tmp_path / "absent.json"))
    assert code == 2
    error = error_of(out)
    assert error["error_code"] == "file_not_found"
    assert str(tmp_path) not in out


def test_health_check_invalid_json(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text("{not json", encoding="utf-8")
    code, out = run(capsys, "health-check", "--input", str(path))
    assert code == 2
    assert error_of(out)["error_code"] == "invalid_json"


def test_health_check_non_object(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "list.json"
    path.write_text("[]", encoding="utf-8")
    code, out = run(capsys, "health-check", "--input", str(path))
    assert code == 2
    assert error_of(out)["error_code"] == "wrong_type"


def test_case_and_input_are_mutually_exclusive(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    packet = as_plain(health_case("empty"))
    code, out = run(
        capsys, "health-check", "--case", "empty", "--input", request_file(tmp_path, packet)
    )
    assert code == 2
    assert error_of(out)["error_code"] == "usage_error"


@pytest.mark.parametrize("name", ["wrong_project", "healthy", ""])
def test_unknown_case_is_a_usage_error(capsys: pytest.CaptureFixture[str], name: str) -> None:
    code, out = run(capsys, "health-check", "--case", name)
    assert code == 2
    assert error_of(out)["error_code"] == "usage_error"


def test_corpus_registry_takes_no_options(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, "corpus-registry", "--case", "empty")
    assert code == 2
    assert error_of(out)["error_code"] == "usage_error"


def test_case_path_stays_light() -> None:
    # The fixture path serialises records directly: no cattrs, no jsonschema import.
    probe = (
        "import sys\n"
        "from reward_memory.cli import main\n"
        "main(['health-check', '--case', 'wrong-project', '--format', 'json'])\n"
        "main(['corpus-registry', '--format', 'json'])\n"
        "heavy = sorted(m for m in ('cattrs', 'jsonschema', 'referencing') if m in sys.modules)\n"
        "sys.stderr.write(','.join(heavy))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )
    assert result.stderr == ""
