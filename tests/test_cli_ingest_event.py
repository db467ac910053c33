"""``reward-memory ingest-event`` (issue 8 item 8; reference §15.3).

Contract sentences protected here:

- "``--execute`` without a configured route is an error packet, exit 2": a caller
  cannot bypass the default-off experiment by supplying a binding directly.
- The original's full-packet public fixture "stays readable as a dry-run
  evaluation input" -- it never reaches a provider.
- "Dry run (default) returns ``planned`` and makes no provider call"; the same
  event replayed is ``deduplicated``; a retry with another ``observed_at`` is a
  conflict, never a duplicate.
- Authority comes from the caller's authority source (``--authority``), never
  from the event; bad input "prints an error packet ... and exits 2".
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from reward_memory import schemas
from reward_memory.cli import VERBS, main

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "experiment"
EVENT = EXAMPLES / "event.json"
FIXTURE = EXAMPLES / "ingest-fixture.json"
AUTHORITY = EXAMPLES / "authority.json"
ACTIVATION = EXAMPLES / "activation.json"
OBSERVED = "2026-11-01T12:00:00Z"
ROUTE = (
    "--goal-id",
    "issue-fix",
    "--agent-id",
    "agent:patcher",
    "--activation",
    str(ACTIVATION),
    "--authority",
    str(AUTHORITY),
)


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The config names ``sqlite``: point its default location at a throw-away file."""
    path = tmp_path / "store" / "memory.db"
    monkeypatch.setenv("REWARD_MEMORY_SQLITE_PATH", str(path))
    return path


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code = main(["ingest-event", *argv, "--format", "json"])
    packet = json.loads(capsys.readouterr().out)
    schemas.validate(packet)  # every packet the verb prints is a valid packet
    return code, packet


def _write(tmp_path: Path, name: str, data: Any) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


def _event() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(EVENT.read_text("utf-8"))
    return data


def _fixture() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(FIXTURE.read_text("utf-8"))
    return data


def _error(code: int, packet: dict[str, Any], error_code: str, path: str) -> None:
    assert code == 2
    assert packet["schema_version"] == "reward_memory_error_v0"
    assert (packet["error_code"], packet["field_path"]) == (error_code, path)


def test_the_verb_is_in_the_verb_table() -> None:
    assert "ingest-event" in VERBS


def test_a_configured_dry_run_is_planned_with_zero_provider_calls(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, packet = _run(capsys, "--input", str(EVENT), *ROUTE)
    assert code == 0
    assert packet["schema_version"] == "reward_memory_ingest_receipt_v0"
    assert packet["status"] == "planned"
    assert packet["provider_call_count"] == 0
    assert packet["external_writes_performed"] is False
    assert not store.exists()  # no provider was built, let alone called


def test_execute_activates_then_a_replay_deduplicates_and_another_time_conflicts(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, first = _run(
        capsys, "--input", str(EVENT), *ROUTE, "--execute", "--observed-at", OBSERVED
    )
    assert code == 0
    assert first["status"] == "activated"
    assert first["exact_readback_verified"] is True
    assert first["memory_available_for_recall"] is True
    assert first["deduplicated"] is False
    assert store.is_file()

    code, again = _run(
        capsys, "--input", str(EVENT), *ROUTE, "--execute", "--observed-at", OBSERVED
    )
    assert (code, again["status"], again["deduplicated"]) == (0, "activated", True)
    assert again["record_ref"] == first["record_ref"]

    code, later = _run(
        capsys, "--input", str(EVENT), *ROUTE, "--execute", "--observed-at", "2026-11-03T08:00:00Z"
    )
    assert code == 0
    assert later["status"] == "conflict"
    assert later["deduplicated"] is False
    assert later["memory_available_for_recall"] is False


def test_the_wrapped_input_shape_carries_its_observed_at(
    tmp_path: Path, store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wrapped = {
        "event": _event(),
        "observed_at": OBSERVED,
        "adapter": "issue_fix_maintainer_feedback",
    }
    code, packet = _run(
        capsys, "--input", _write(tmp_path, "in.json", wrapped), *ROUTE, "--execute"
    )
    assert (code, packet["status"]) == (0, "activated")


def test_execute_needs_a_first_observation_time(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, packet = _run(capsys, "--input", str(EVENT), *ROUTE, "--execute")
    _error(code, packet, "missing_field", "--observed-at")
    assert not store.exists()


@pytest.mark.parametrize("source", [FIXTURE, EVENT], ids=["full-packet", "bare-event"])
def test_execute_without_a_configured_route_is_an_error_packet(
    source: Path, store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, packet = _run(capsys, "--input", str(source), "--execute", "--authority", str(AUTHORITY))
    _error(code, packet, "usage_error", "--execute")
    assert "--goal-id" in packet["message"]
    assert not store.exists()


@pytest.mark.parametrize("flag", ["--goal-id", "--agent-id"])
def test_goal_and_agent_come_together(flag: str, capsys: pytest.CaptureFixture[str]) -> None:
    value = "issue-fix" if flag == "--goal-id" else "agent:patcher"
    code, packet = _run(capsys, "--input", str(EVENT), flag, value)
    _error(code, packet, "usage_error", "--goal-id")


def test_an_agent_off_the_allowlist_is_an_unavailable_experiment(
    capsys: pytest.CaptureFixture[str],
) -> None:
    route = list(ROUTE)
    route[3] = "agent:stranger"
    code, packet = _run(capsys, "--input", str(EVENT), *route)
    _error(code, packet, "experiment_unavailable", "--agent-id")  # the agent is what is off
    assert "agent_not_enabled" in packet["message"]


def test_a_missing_activation_file_is_an_unavailable_experiment(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    route = list(ROUTE)
    route[5] = str(tmp_path / "none.json")
    code, packet = _run(capsys, "--input", str(EVENT), *route)
    _error(code, packet, "experiment_unavailable", "--activation")
    assert "activation_missing" in packet["message"]
    assert str(tmp_path) not in json.dumps(packet)


def test_a_broken_activation_file_is_named_with_its_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "activation.json"
    broken.write_text('{"schema_version": "reward_memory_activation_registry_v0", "goals": [')
    route = list(ROUTE)
    route[5] = str(broken)
    code, packet = _run(capsys, "--input", str(EVENT), *route)
    _error(code, packet, "experiment_unavailable", "--activation")
    assert "activation_invalid" in packet["message"]


def test_a_surface_the_config_does_not_name_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    event = _event()
    event["surface_id"] = "issue_fix.review_order"
    code, packet = _run(capsys, "--input", _write(tmp_path, "e.json", event), *ROUTE)
    _error(code, packet, "surface_not_configured", "$.surface_id")  # a bare event: its root


def test_a_mismatched_adapter_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wrapped = {"event": _event(), "adapter": "scoped_feedback"}
    code, packet = _run(capsys, "--input", _write(tmp_path, "in.json", wrapped), *ROUTE)
    _error(code, packet, "adapter_route_mismatch", "$.adapter")


@pytest.mark.parametrize(
    ("data", "path"),
    [
        pytest.param({"event": {}, "corpus": {}}, "$.corpus", id="configured-unknown-key"),
        pytest.param({"observed_at": OBSERVED}, "$.event", id="no-event"),
        pytest.param({"event": []}, "$.event", id="event-not-object"),
    ],
)
def test_configured_input_keys_are_strict(
    data: dict[str, Any], path: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, packet = _run(capsys, "--input", _write(tmp_path, "in.json", data), *ROUTE)
    assert code == 2
    assert packet["field_path"] == path


@pytest.mark.parametrize(
    ("version", "code"),
    [
        ("issue_fix_reward_memory_event_v1", "schema_version_unsupported"),
        (None, "schema_version_missing"),
    ],
)
@pytest.mark.parametrize("route", ["configured", "fixture"])
def test_an_event_of_another_version_is_named_by_its_schema_version(
    version: str | None,
    code: str,
    route: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Not taken for the wrapper (whose first unknown key was reported)."""
    event = _event()
    if version is None:
        del event["schema_version"]
    else:
        event["schema_version"] = version
    extra = ROUTE if route == "configured" else ("--authority", str(AUTHORITY))
    code_, packet = _run(capsys, "--input", _write(tmp_path, "ev.json", event), *extra)
    _error(code_, packet, code, "$.schema_version")


def test_a_bad_observed_at_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    code, packet = _run(capsys, "--input", str(EVENT), *ROUTE, "--observed-at", "yesterday")
    _error(code, packet, "invalid_format", "--observed-at")


def test_a_raw_event_is_guard_blocked_not_an_error(
    tmp_path: Path, store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    event = _event()
    event["raw_content_captured"] = True
    argv = ("--input", _write(tmp_path, "e.json", event), *ROUTE, "--execute")
    code, packet = _run(capsys, *argv, "--observed-at", OBSERVED)
    assert (code, packet["status"]) == (0, "guard_blocked")
    assert packet["provider_call_count"] == 0


def test_without_an_authority_source_a_hard_policy_is_guard_blocked(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, packet = _run(capsys, "--input", str(EVENT), *ROUTE[:6])
    assert (code, packet["status"]) == (0, "guard_blocked")
    assert "authority_source_missing" in packet["reason_codes"]


def test_a_bad_authority_file_is_an_error_packet(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = json.loads(AUTHORITY.read_text("utf-8"))
    data["grants"][0]["extra"] = 1
    route = list(ROUTE)
    route[7] = _write(tmp_path, "authority.json", data)
    code, packet = _run(capsys, "--input", str(EVENT), *route)
    assert code == 2
    assert packet["field_path"].startswith("$.grants[0]")
    route[7] = str(tmp_path / "missing.json")
    code, packet = _run(capsys, "--input", str(EVENT), *route)
    assert (code, packet["field_path"]) == (2, "--authority")


# -- the full-packet fixture: a dry-run evaluation only ---------------------------------------


def test_the_full_packet_fixture_is_a_dry_run_evaluation(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, packet = _run(capsys, "--input", str(FIXTURE), "--authority", str(AUTHORITY))
    assert (code, packet["status"]) == (0, "planned")
    assert packet["provider_call_count"] == 0
    assert not store.exists()
    # The authority comes from --authority, never from the packet or the event.
    code, packet = _run(capsys, "--input", str(FIXTURE))
    assert (code, packet["status"]) == (0, "guard_blocked")
    assert "authority_source_missing" in packet["reason_codes"]


@pytest.mark.parametrize(
    ("change", "error_code", "path"),
    [
        pytest.param(("corpus", "extra", 1), "unknown_field", None, id="corpus-unknown-field"),
        pytest.param(("standing_policy", "extra", 1), None, None, id="policy-unknown-field"),
        pytest.param(("provider_binding", "extra", 1), None, None, id="binding-unknown-field"),
        pytest.param((None, "comment_body", "x"), "unknown_field", "$.comment_body", id="top-key"),
        pytest.param((None, "adapter", "semantic"), "invalid_value", "$.adapter", id="adapter"),
        pytest.param((None, "corpus", []), "wrong_type", "$.corpus", id="corpus-not-object"),
    ],
)
def test_the_full_packet_fixture_is_strict(
    change: tuple[str | None, str, Any],
    error_code: str | None,
    path: str | None,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    data = copy.deepcopy(_fixture())
    part, key, value = change
    (data if part is None else data[part])[key] = value
    code, packet = _run(capsys, "--input", _write(tmp_path, "in.json", data))
    assert code == 2
    if error_code is not None:
        assert packet["error_code"] == error_code
    expected = path if path is not None else f"$.{part}"
    assert packet["field_path"].startswith(expected)


@pytest.mark.parametrize("missing", ["adapter", "corpus", "standing_policy", "provider_binding"])
def test_the_full_packet_fixture_needs_every_part(
    missing: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _fixture()
    del data[missing]
    code, packet = _run(capsys, "--input", _write(tmp_path, "in.json", data))
    _error(code, packet, "missing_field", f"$.{missing}")


def test_the_verb_as_a_process_prints_no_path(tmp_path: Path) -> None:
    cli = Path(sys.executable).with_name("reward-memory")
    env_store = tmp_path / "m.db"
    result = subprocess.run(
        [str(cli), "ingest-event", "--input", str(EVENT), *ROUTE, "--format", "json"],
        capture_output=True,
        text=True,
        check=False,
        env={"REWARD_MEMORY_SQLITE_PATH": str(env_store), "PATH": ""},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stderr == ""
    assert json.loads(result.stdout)["status"] == "planned"
    for text in (str(EXAMPLES), str(tmp_path), "scope_ref", "issue-fix-policies"):
        assert text not in result.stdout


def test_an_unbuildable_provider_fails_open_with_exit_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = (EXAMPLES / "config.json").read_text("utf-8")
    (tmp_path / "config.json").write_text(
        config.replace('"provider_id": "sqlite"', '"provider_id": "nosuch"'), encoding="utf-8"
    )
    (tmp_path / "activation.json").write_text(ACTIVATION.read_text("utf-8"), encoding="utf-8")
    route = list(ROUTE)
    route[5] = str(tmp_path / "activation.json")
    argv = ("--input", str(EVENT), *route, "--execute", "--observed-at", OBSERVED)
    code, packet = _run(capsys, *argv)
    assert (code, packet["status"]) == (0, "provider_unavailable")
    assert packet["memory_available_for_recall"] is False
    assert packet["exact_readback_verified"] is False


@pytest.mark.parametrize("version", [[], {"a": 1}, 5])
@pytest.mark.parametrize("wrapped", [False, True])
def test_a_schema_version_that_is_no_string_is_an_error_packet(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], version: Any, wrapped: bool
) -> None:
    """It used to be an internal_error (exit 1): a list is unhashable."""
    data: dict[str, Any] = _event()
    if wrapped:
        data = {"schema_version": version, "event": data}
    else:
        data["schema_version"] = version
    code, packet = _run(capsys, "--input", _write(tmp_path, "e.json", data), *ROUTE)
    _error(code, packet, "wrong_type", "$.schema_version")


@pytest.mark.parametrize(
    ("mutate", "error_code", "path"),
    [
        (lambda e: e.update(comment_body="the whole comment"), "unknown_field", "comment_body"),
        (lambda e: e["source"].update(extra=1), "unknown_field", "source.extra"),
        (lambda e: e.update(content_summary="keep\x00it"), "unsafe_character", "content_summary"),
    ],
)
@pytest.mark.parametrize("wrapped", [False, True])
def test_an_event_that_is_no_modelled_event_is_an_error_packet(
    tmp_path: Path,
    store: Path,
    capsys: pytest.CaptureFixture[str],
    mutate: Any,
    error_code: str,
    path: str,
    wrapped: bool,
) -> None:
    """DESIGN §8: bad input (unknown field, unsafe text) is an error packet, exit 2 (it
    used to be a guard_blocked receipt, exit 0); the path is rooted in the file."""
    event = _event()
    mutate(event)
    data = {"event": event} if wrapped else event
    code, packet = _run(capsys, "--input", _write(tmp_path, "e.json", data), *ROUTE)
    _error(code, packet, error_code, ("$.event." if wrapped else "$.") + path)
    assert not store.exists()


def test_a_binding_naming_a_document_is_named_where_the_file_has_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The full-packet route: the error names $.provider_binding.scope_ref (it named the
    library's own argument, binding.scope_ref, which is no path in the file)."""
    data = _fixture()
    data["provider_binding"]["scope_ref"] = data["provider_binding"]["scope_ref"] + "/doc.json"
    code, packet = _run(capsys, "--input", _write(tmp_path, "fx.json", data))
    _error(code, packet, "invalid_value", "$.provider_binding.scope_ref")


@pytest.mark.parametrize(("value", "error_code"), [(3, "wrong_type"), (None, "missing_field")])
@pytest.mark.parametrize("wrapped", [False, True])
def test_a_bad_surface_id_is_named_where_the_file_has_it(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    value: Any,
    error_code: str,
    wrapped: bool,
) -> None:
    event = _event()
    if value is None:
        del event["surface_id"]
    else:
        event["surface_id"] = value
    data = {"event": event} if wrapped else event
    code, packet = _run(capsys, "--input", _write(tmp_path, "e.json", data), *ROUTE)
    _error(code, packet, error_code, "$.event.surface_id" if wrapped else "$.surface_id")
