"""``reward-memory operator-control``: dry run, execute through a real SQLite file, bad input.

Contract: seeds "Stage 5" (the operator-control command), issue 9 item 4 (the
CLI performs the declared corpus owner's write and readback through the
configured provider), DESIGN §8 (bad input: an error packet, exit 2).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests._operator_support import (
    binding,
    ingest_soft,
    recall_soft,
    request,
    stored_record,
)

from reward_memory import schemas
from reward_memory.cli import main
from reward_memory.providers.sqlite import SQLiteProvider
from reward_memory.records._plain import to_plain

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "operator"


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code = main([*argv, "--format", "json"])
    return code, json.loads(capsys.readouterr().out)


def _write(path: Path, data: Any) -> str:
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("action", ["edit", "retire", "revoke", "purge"])
def test_the_shipped_requests_are_ready_on_a_dry_run(
    action: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(EXAMPLES / f"{action}-request.json")
    code, packet = _cli(capsys, "operator-control", "--input", path, "--action", action)
    assert code == 0
    assert packet["status"] == "control_ready"
    assert packet["provider_call_count"] == 0
    schemas.validate(packet)
    schemas.validate(packet["receipt"])
    assert packet["receipt"]["schema_version"] == "reward_memory_operator_control_receipt_v0"


def test_revoke_then_purge_through_a_real_sqlite_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "memory.db"
    provider = SQLiteProvider(path=db)
    record = stored_record(provider, ingest_soft(provider))
    provider.close()
    url = f"sqlite://{db}"
    bound = _write(tmp_path / "binding.json", to_plain(binding("sqlite")))
    for action in ("revoke", "purge"):
        given = _write(
            tmp_path / f"{action}.json", to_plain(request(record, action, provider_id="sqlite"))
        )
        code, packet = _cli(
            capsys,
            "operator-control",
            "--input",
            given,
            "--action",
            action,
            "--execute",
            "--provider",
            url,
            "--binding",
            bound,
        )
        assert code == 0
        assert packet["status"] == "completed", packet
        assert packet["receipt"]["readback_verified"] is True
        assert str(tmp_path) not in json.dumps(packet)
        schemas.validate(packet)
    reopened = SQLiteProvider(path=db)
    assert recall_soft(reopened).packet.result_count == 0
    reopened.close()
    receipt = _write(tmp_path / "receipt.json", packet["receipt"])
    code, lineage = _cli(capsys, "explain", receipt, "--provider", url, "--binding", bound)
    assert code == 0
    assert [link["status"] for link in lineage["links"]][1] == "purged"


def test_a_refused_checkpoint_is_a_packet(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = json.loads((EXAMPLES / "retire-request.json").read_text(encoding="utf-8"))
    data["operator_checkpoint"]["authority_ref"] = data["corpus"]["owner_ref"]
    code, packet = _cli(
        capsys,
        "operator-control",
        "--input",
        _write(tmp_path / "r.json", data),
        "--action",
        "retire",
    )
    assert code == 0
    assert packet["status"] == "guard_blocked"
    assert packet["reason_codes"] == ["operator_authority_mismatch"]
    assert packet["receipt"] is None


def test_the_action_may_come_from_the_flag_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = json.loads((EXAMPLES / "revoke-request.json").read_text(encoding="utf-8"))
    del data["action"]
    code, packet = _cli(
        capsys,
        "operator-control",
        "--input",
        _write(tmp_path / "r.json", data),
        "--action",
        "revoke",
    )
    assert (code, packet["status"]) == (0, "control_ready")


@pytest.mark.parametrize(
    ("mutate", "argv", "path"),
    [
        (lambda d: d.update(extra=1), [], "$.extra"),
        (lambda d: d.update(action="purge"), [], "$.action"),
        (lambda d: d.pop("schema_version"), [], "$.schema_version"),
        (lambda d: d.update(schema_version="reward_memory_recall_v0"), [], "$.schema_version"),
        (lambda d: d["record"].update(content_summary="changed"), [], "$.record.activation_ref"),
        (lambda d: None, ["--execute"], "--provider"),
        (lambda d: None, ["--execute", "--provider", "memory://"], "--binding"),
    ],
)
def test_bad_input_is_an_error_packet(
    mutate: Any, argv: list[str], path: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = json.loads((EXAMPLES / "revoke-request.json").read_text(encoding="utf-8"))
    mutate(data)
    code, packet = _cli(
        capsys,
        "operator-control",
        "--input",
        _write(tmp_path / "r.json", data),
        "--action",
        "revoke",
        *argv,
    )
    assert code == 2
    assert packet["schema_version"] == "reward_memory_error_v0"
    assert packet["field_path"] == path, packet
    schemas.validate(packet)


def test_a_missing_file_is_an_error_packet(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, packet = _cli(
        capsys, "operator-control", "--input", str(tmp_path / "nope.json"), "--action", "purge"
    )
    assert code == 2
    assert str(tmp_path) not in json.dumps(packet)


def test_an_unreachable_provider_fails_open(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bound = _write(tmp_path / "b.json", to_plain(binding()))
    code, packet = _cli(
        capsys,
        "operator-control",
        "--input",
        str(EXAMPLES / "revoke-request.json"),
        "--action",
        "revoke",
        "--execute",
        "--provider",
        "memory://",
        "--binding",
        bound,
    )
    # An empty store holds nothing of the record: no control to complete (it used to
    # say completed, and its revocation record closed a record that was never there).
    assert code == 0
    assert (packet["status"], packet["reason_codes"]) == ("lineage_conflict", ["record_not_found"])
    assert packet["receipt"]["readback_verified"] is False
    code, packet = _cli(
        capsys,
        "operator-control",
        "--input",
        str(EXAMPLES / "revoke-request.json"),
        "--action",
        "revoke",
        "--execute",
        "--provider",
        f"sqlite://{tmp_path / 'no-such-dir' / 'x' / 'm.db'}",
        "--binding",
        _write(tmp_path / "b2.json", to_plain(binding("sqlite"))),
    )
    assert code == 0
    assert packet["status"] in ("guard_blocked", "provider_unavailable"), packet


def test_the_text_summary_is_short(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(
            ["operator-control", "--input", str(EXAMPLES / "edit-request.json"), "--action", "edit"]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "replacement_candidate: candidate:" in out
    assert "content_summary" not in out


# -- the original's input form (reference §15.2): {reviewed_record, corpus, operator_checkpoint} --


def _original(tmp_path: Path, capsys: pytest.CaptureFixture[str], action: str) -> str:
    from tests._ingest_support import hard_corpus

    assert main(["candidate-review", "--decision", "accept", "--format", "json"]) == 0
    reviewed = json.loads(capsys.readouterr().out)
    data = {
        "reviewed_record": reviewed,
        "corpus": to_plain(hard_corpus()),
        "operator_checkpoint": {
            "verified": True,
            "operator_ref": "operator:alice",
            "authority_ref": "repository:example:maintainers",
            "source_ref": "operator-source:example",
            "corpus_id": "issue_fix_policies",
            "project_ref": "repository:example",
            "action": action,
        },
    }
    return _write(tmp_path / "reviewed-record.json", data)


@pytest.mark.parametrize("action", ["edit", "retire"])
def test_the_original_reviewed_record_input_is_a_dry_run(
    action: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    given = _original(tmp_path, capsys, action)
    argv = [
        "operator-control",
        "--input",
        given,
        "--action",
        action,
        "--control-ref",
        f"control:example:{action}",
        "--reasoning-summary",
        "Current source truth supersedes this record.",
    ]
    if action == "edit":
        argv += ["--edited-content-summary", "Keep the patch to the named surface only."]
    code, packet = _cli(capsys, *argv)
    assert code == 0
    assert packet["status"] == "control_ready"
    receipt = packet["receipt"]
    assert receipt["result_state"] == ("candidate" if action == "edit" else "retired")
    assert receipt["provider_write_performed"] is False
    assert receipt["grants_new_action_authority"] is False
    if action == "edit":
        assert packet["decision"]["status"] == "review_ready"
    schemas.validate(packet)


def test_the_original_input_checks_the_checkpoint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    given = _original(tmp_path, capsys, "edit")  # an edit checkpoint, used to retire
    code, packet = _cli(
        capsys,
        "operator-control",
        "--input",
        given,
        "--action",
        "retire",
        "--control-ref",
        "control:x",
        "--reasoning-summary",
        "Why.",
    )
    assert code == 0
    assert packet["status"] == "guard_blocked"
    assert packet["reason_codes"] == ["operator_checkpoint_action_mismatch"]


@pytest.mark.parametrize(
    ("extra", "path"),
    [
        ([], "--control-ref"),
        (["--control-ref", "control:x", "--reasoning-summary", "Why.", "--execute"], "--execute"),
    ],
)
def test_the_original_input_needs_its_flags_and_never_writes(
    extra: list[str], path: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    given = _original(tmp_path, capsys, "retire")
    code, packet = _cli(capsys, "operator-control", "--input", given, "--action", "retire", *extra)
    assert (code, packet["field_path"]) == (2, path)


def test_an_edit_given_the_store_reads_the_record_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """As the library does: an edit of a purged record makes no replacement (it would
    carry the closed record's text back)."""
    db = tmp_path / "memory.db"
    provider = SQLiteProvider(path=db)
    record = stored_record(provider, ingest_soft(provider))
    provider.close()
    url, bound = f"sqlite://{db}", _write(tmp_path / "binding.json", to_plain(binding("sqlite")))
    purge = _write(tmp_path / "p.json", to_plain(request(record, "purge", provider_id="sqlite")))
    code, packet = _cli(
        capsys, "operator-control", "--input", purge, "--action", "purge", "--execute",
        "--provider", url, "--binding", bound,
    )  # fmt: skip
    assert (code, packet["status"]) == (0, "completed")
    edit = _write(tmp_path / "e.json", to_plain(request(record, "edit", provider_id="sqlite")))
    code, packet = _cli(
        capsys, "operator-control", "--input", edit, "--action", "edit",
        "--provider", url, "--binding", bound,
    )  # fmt: skip
    assert code == 0
    assert (packet["status"], packet["reason_codes"]) == ("lineage_conflict", ["record_purged"])
    assert packet["provider_call_count"] > 0


@pytest.mark.parametrize("flag", ["--provider", "--binding"])
def test_a_store_flag_a_dry_run_would_ignore_is_refused(
    flag: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A dry run reads nothing: a --provider (even nosuch://) or --binding given to it
    was taken and ignored (exit 0); route-check refuses flags it will not use, too."""
    value = (
        "nosuch://" if flag == "--provider" else _write(tmp_path / "b.json", to_plain(binding()))
    )
    code, packet = _cli(
        capsys, "operator-control", "--input", str(EXAMPLES / "revoke-request.json"),
        "--action", "revoke", flag, value,
    )  # fmt: skip
    assert (code, packet["field_path"]) == (2, flag)
