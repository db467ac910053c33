"""``reward-memory recall --input FILE [--provider URL]``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from _recall_support import (
    NOW,
    active_record,
    binding,
    checkpoint,
    content_of,
    corpus,
    request,
    scope_of,
)
from reward_memory import schemas, wire
from reward_memory.cli import VERBS, main
from reward_memory.records.recall import RecallInput

SCRIPT = Path(sys.executable).with_name("reward-memory")


def input_data(**changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = wire.dump(
        RecallInput(
            corpus=corpus(),
            request=request(),
            read_authority_checkpoint=checkpoint(),
            provider_binding=binding(),
        )
    )
    data.update(changes)
    return data


def write_input(tmp_path: Path, data: Any, name: str = "input.json") -> str:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return str(path)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any] | str]:
    code = main(["recall", *argv])
    out = capsys.readouterr().out
    try:
        packet = json.loads(out)
    except json.JSONDecodeError:
        return code, out
    schemas.validate(packet)
    return code, packet


def sqlite_url(tmp_path: Path) -> str:
    return "sqlite://" + (tmp_path / "x.db").as_posix()


def seed_sqlite(tmp_path: Path, count: int) -> list[str]:
    from reward_memory.providers.discovery import get_provider

    provider = get_provider(sqlite_url(tmp_path))
    try:
        refs = []
        for i in range(count):
            # Unexpiring records: the CLI recalls at the real current time.
            result = provider.write(
                scope=scope_of(binding()), key=f"record-{i}", content=content_of(active_record(i))
            )
            refs.append(result.ref)
        return refs
    finally:
        provider.close()


def test_the_verb_is_registered() -> None:
    assert VERBS["recall"] == (
        "reward_memory.cli._recall",
        "guarded recall from one corpus and surface",
    )


def test_completed_from_a_sqlite_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    seed_sqlite(tmp_path, 3)
    code, packet = run(
        capsys,
        "--input",
        write_input(tmp_path, input_data()),
        "--provider",
        sqlite_url(tmp_path),
        "--format",
        "json",
    )
    assert code == 0
    assert isinstance(packet, dict)
    assert packet["schema_version"] == "reward_memory_recall_v0"
    assert packet["status"] == "completed"
    assert packet["result_count"] == 3
    assert packet["provider_call_count"] == 4
    assert "reviewer summary tone" not in json.dumps(packet["query_evidence"])


def test_empty_sqlite_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    seed_sqlite(tmp_path, 0)
    code, packet = run(
        capsys,
        "--input",
        write_input(tmp_path, input_data()),
        "--provider",
        sqlite_url(tmp_path),
        "--format",
        "json",
    )
    assert code == 0
    assert isinstance(packet, dict)
    assert (packet["status"], packet["reason_code"]) == ("empty", "no_active_exact_corpus_results")


def test_memory_provider_is_empty(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, packet = run(
        capsys,
        "--input",
        write_input(tmp_path, input_data()),
        "--provider",
        "memory://",
        "--format",
        "json",
    )
    assert code == 0
    assert isinstance(packet, dict)
    assert packet["status"] == "empty"
    assert packet["provider_call_count"] == 1


def test_guard_blocked_prints_reasons(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = input_data()
    data["request"]["conflict_state"] = "unresolved"
    data["provider_binding"]["provider_id"] = "elsewhere"
    code, packet = run(
        capsys,
        "--input",
        write_input(tmp_path, data),
        "--provider",
        "memory://",
        "--format",
        "json",
    )
    assert code == 0
    assert isinstance(packet, dict)
    assert packet["status"] == "guard_blocked"
    assert packet["reason_codes"] == ["unresolved_conflict", "provider_binding_provider_mismatch"]
    assert packet["provider_call_count"] == 0


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("memory://?unavailable=true", "provider_unavailable"),
        ("memory://?times_out=true", "provider_timeout"),
    ],
)
def test_unavailable_provider_is_a_status_not_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], url: str, reason: str
) -> None:
    code, packet = run(
        capsys,
        "--input",
        write_input(tmp_path, input_data()),
        "--provider",
        url,
        "--format",
        "json",
    )
    assert code == 0
    assert isinstance(packet, dict)
    assert packet["status"] == "provider_unavailable"
    assert packet["reason_code"] == reason
    assert packet["setup_hints"]["install"]
    assert packet["provider_failure_is_user_gate"] is False


def test_text_format(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    refs = seed_sqlite(tmp_path, 1)
    code, out = run(
        capsys, "--input", write_input(tmp_path, input_data()), "--provider", sqlite_url(tmp_path)
    )
    assert code == 0
    assert isinstance(out, str)
    assert "reward_memory_recall_v0" in out
    assert "status: completed" in out
    assert "result_count: 1" in out
    assert "provider-" in out
    assert refs[0] not in out


def test_reads_stdin(tmp_path: Path) -> None:
    command = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "reward_memory"]
    done = subprocess.run(
        [*command, "recall", "--input", "-", "--provider", "memory://", "--format", "json"],
        input=json.dumps(input_data()),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    packet = json.loads(done.stdout)
    schemas.validate(packet)
    assert packet["status"] == "empty"


def _bad_inputs() -> list[tuple[str, Any, str]]:
    two_queries = input_data()
    two_queries["request"]["queries"] = two_queries["request"]["queries"] * 2
    unknown = input_data()
    unknown["request"]["raw_comment"] = "x"
    raw = input_data()
    raw["request"]["raw_content_captured"] = True
    missing = input_data()
    del missing["read_authority_checkpoint"]["corpus_id"]
    unsafe = input_data()
    unsafe["provider_binding"]["scope_ref"] = "x:/home/alice/memory.db"
    limit = input_data()
    limit["request"]["limit"] = 9
    return [
        ("invalid_json", "{not json", "invalid_json"),
        ("not_an_object", "[1, 2]", "wrong_type"),
        (
            "wrong_schema",
            {**input_data(), "schema_version": "reward_memory_recall_v0"},
            "schema_version_unsupported",
        ),
        (
            "no_schema",
            {k: v for k, v in input_data().items() if k != "schema_version"},
            "schema_version_missing",
        ),
        ("two_queries_at_a_function_boundary", two_queries, "invalid_value"),
        ("unknown_field", unknown, "unknown_field"),
        ("raw_content", raw, "invalid_value"),
        ("missing_checkpoint_field", missing, "missing_field"),
        ("unsafe_scope_ref", unsafe, "unsafe_text"),
        ("limit", limit, "invalid_value"),
    ]


@pytest.mark.parametrize(("name", "data", "code"), _bad_inputs(), ids=[c[0] for c in _bad_inputs()])
def test_bad_input_is_an_error_packet(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, data: Any, code: str
) -> None:
    del name
    exit_code, packet = run(
        capsys,
        "--input",
        write_input(tmp_path, data),
        "--provider",
        "memory://",
        "--format",
        "json",
    )
    assert exit_code == 2
    assert isinstance(packet, dict)
    assert packet["schema_version"] == "reward_memory_error_v0"
    assert packet["status"] == "invalid_request"
    assert packet["error_code"] == code
    if code == "unsafe_text":
        # Caught by the records (the schema cannot see it), path rooted at the file.
        assert packet["field_path"] == "$.provider_binding.scope_ref"
    assert "/home/alice" not in json.dumps(packet)


def test_missing_file_is_an_error_packet(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, packet = run(capsys, "--input", str(tmp_path / "nope.json"), "--provider", "memory://")
    assert code == 2
    assert isinstance(packet, dict)
    assert packet["error_code"] == "file_not_found"


def test_missing_input_flag_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, packet = run(capsys, "--provider", "memory://")
    assert code == 2
    assert isinstance(packet, dict)
    assert packet["status"] == "invalid_request"


def test_bad_provider_url_is_an_error_packet(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, packet = run(
        capsys, "--input", write_input(tmp_path, input_data()), "--provider", "memory://?nope=1"
    )
    assert code == 2
    assert isinstance(packet, dict)
    assert packet["status"] == "invalid_request"


def test_expiry_in_the_cli_uses_the_real_clock(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from reward_memory.providers.discovery import get_provider

    provider = get_provider(sqlite_url(tmp_path))
    try:
        expired = active_record(1, expires_at=NOW.replace(year=2020).isoformat())
        provider.write(scope=scope_of(binding()), key="expired", content=content_of(expired))
    finally:
        provider.close()
    code, packet = run(
        capsys,
        "--input",
        write_input(tmp_path, input_data()),
        "--provider",
        sqlite_url(tmp_path),
        "--format",
        "json",
    )
    assert code == 0
    assert isinstance(packet, dict)
    assert packet["status"] == "empty"
    assert packet["provider_call_count"] == 2


@pytest.mark.parametrize(
    ("where", "value", "path"),
    [
        (
            ("request", "queries", 0, "query"),
            "use token=abcdef1234567890xyz",
            "$.request.queries[0].query",
        ),
        (("corpus", "owner_ref"), "x:/home/alice", "$.corpus.owner_ref"),
        (
            ("read_authority_checkpoint", "source_ref"),
            "c:/Users/alice",
            "$.read_authority_checkpoint.source_ref",
        ),
    ],
)
def test_unsafe_text_is_named_by_its_full_path(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    where: tuple[Any, ...],
    value: str,
    path: str,
) -> None:
    data = input_data()
    node: Any = data
    for step in where[:-1]:
        node = node[step]
    node[where[-1]] = value
    code, packet = run(capsys, "--input", write_input(tmp_path, data), "--provider", "memory://")
    assert code == 2
    assert isinstance(packet, dict)
    assert packet["error_code"] == "unsafe_text"
    assert packet["field_path"] == path
    assert value not in json.dumps(packet)
