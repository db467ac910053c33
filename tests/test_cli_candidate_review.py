"""``reward-memory candidate-review``: the fixture (reference §15.2) and --input requests."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from _stage2 import GOLDEN_REF, checkpoint, decision, proposal
from reward_memory import schemas
from reward_memory.candidates import propose
from reward_memory.cli import VERBS, main
from reward_memory.records._plain import to_plain

ROOT = Path(__file__).resolve().parents[1]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


def packet_of(out: str) -> dict[str, Any]:
    """The printed review packet, validated as a whole against its schema."""
    packet: dict[str, Any] = json.loads(out)
    assert schemas.validate(packet) == "reward_memory_candidate_review_v0"
    return packet


def error_of(out: str) -> dict[str, Any]:
    packet: dict[str, Any] = json.loads(out)
    schemas.validate(packet)
    assert packet["ok"] is False
    return packet


def test_the_verb_is_registered() -> None:
    assert VERBS["candidate-review"][0] == "reward_memory.cli._candidate_review"


# -- the fixture ------------------------------------------------------------------------------


@pytest.mark.parametrize("argv", [(), ("--case", "issue-fix-verified-contributor")])
def test_the_default_is_accept(capsys: pytest.CaptureFixture[str], argv: tuple[str, ...]) -> None:
    code, out = run(capsys, "candidate-review", *argv, "--format", "json")
    assert code == 0
    packet = packet_of(out)
    assert (packet["status"], packet["effective_decision"]) == ("active", "accept")
    assert packet["review"] == {
        "reviewer_ref": "github:user:maintainer",
        "review_ref": "review:fixture:accept",
        "reasoning_summary": "The compact evidence and scope were reviewed.",
    }
    assert packet["record"]["candidate_ref"] == GOLDEN_REF
    assert packet["persistence_next_step"] == (
        "caller_uses_declared_corpus_write_authority_then_readback"
    )


@pytest.mark.parametrize(
    ("kind", "status"),
    [
        ("accept", "active"),
        ("edit", "review_ready"),
        ("reject", "rejected"),
        ("retire", "retired"),
        ("no_write", "no_write"),
    ],
)
def test_every_decision(capsys: pytest.CaptureFixture[str], kind: str, status: str) -> None:
    code, out = run(capsys, "candidate-review", "--decision", kind, "--format", "json")
    assert code == 0
    packet = packet_of(out)
    assert (packet["status"], packet["requested_decision"], packet["effective_decision"]) == (
        status,
        kind,
        kind,
    )
    assert packet["review"]["review_ref"] == f"review:fixture:{kind}"
    if kind == "edit":
        assert packet["record"]["content_summary"] == (
            "Keep focused fixes within the affected module unless current evidence requires a "
            "broader surface."
        )
        assert packet["record"]["lifecycle"]["supersedes_refs"] == [GOLDEN_REF]
    else:
        assert packet["record"]["candidate_ref"] == GOLDEN_REF


def test_the_text_view(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, "candidate-review", "--decision", "retire")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "reward_memory_candidate_review_v0"
    assert "  status: retired" in lines
    assert "  effective_decision: retire" in lines
    assert "  reason_codes: -" in lines
    assert f"  candidate_ref: {GOLDEN_REF}" in lines


# -- --input ----------------------------------------------------------------------------------

# The request's proposal has an expiry, which is part of its candidate_ref (so not the golden).
_EXPIRING_REF = propose(proposal(expires_at="2030-01-01T00:00:00Z")).candidate.candidate_ref


def _request(tmp_path: Path, **overrides: Any) -> str:
    document: dict[str, Any] = {
        "schema_version": "reward_memory_candidate_review_request_v0",
        "proposal": to_plain(proposal(expires_at="2030-01-01T00:00:00Z")),
        "authority_checkpoint": to_plain(checkpoint()),
        "reviews": [to_plain(decision("accept"))],
        "now": "2026-03-01T12:00:00Z",
    }
    document.update(overrides)
    path = tmp_path / "request.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return str(path)


def test_an_input_request(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out = run(capsys, "candidate-review", "--input", _request(tmp_path), "--format", "json")
    assert code == 0
    packet = packet_of(out)
    assert "adapter" not in packet
    assert (packet["status"], packet["record"]["candidate_ref"]) == ("active", _EXPIRING_REF)
    assert packet["record"]["lifecycle"]["expires_at"] == "2030-01-01T00:00:00Z"


def test_reviews_apply_in_order(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    reviews = [
        to_plain(decision("edit")),
        to_plain(decision("accept")),
        to_plain(decision("retire")),
    ]
    code, out = run(
        capsys,
        "candidate-review",
        "--input",
        _request(tmp_path, reviews=reviews),
        "--format",
        "json",
    )
    assert code == 0
    packet = packet_of(out)
    assert packet["status"] == "retired"
    assert packet["record"]["lifecycle"]["supersedes_refs"] == [_EXPIRING_REF]


def test_a_blocked_candidate_is_an_answer(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    for gate in (None, to_plain(checkpoint(project_ref="repository:other"))):
        path = _request(tmp_path, authority_checkpoint=gate)
        code, out = run(capsys, "candidate-review", "--input", path, "--format", "json")
        assert code == 0
        packet = packet_of(out)
        assert (packet["status"], packet["effective_decision"]) == ("guard_blocked", "no_write")
        assert packet["guard_passed"] is False
        assert packet["reason_codes"]


def test_now_in_the_request_drives_expiry(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = _request(tmp_path, now="2030-01-01T00:00:00Z")
    code, out = run(capsys, "candidate-review", "--input", path, "--format", "json")
    assert code == 0
    assert packet_of(out)["reason_codes"] == ["candidate_expired"]


def _bad(tmp_path: Path, text: str) -> str:
    path = tmp_path / "bad.json"
    path.write_text(text, encoding="utf-8")
    return str(path)


@pytest.mark.parametrize(
    ("document", "code", "path"),
    [
        ("{not json", "invalid_json", "--input"),
        ("[]", "wrong_type", "$"),
        (
            '{"schema_version": "reward_memory_candidate_v0"}',
            "schema_version_unsupported",
            "$.schema_version",
        ),
        (
            '{"schema_version": "reward_memory_nope_v0"}',
            "schema_version_unsupported",
            "$.schema_version",
        ),
    ],
)
def test_bad_files_are_error_packets(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, document: str, code: str, path: str
) -> None:
    exit_code, out = run(capsys, "candidate-review", "--input", _bad(tmp_path, document))
    assert exit_code == 2
    packet = error_of(out)
    assert (packet["error_code"], packet["field_path"]) == (code, path)


@pytest.mark.parametrize(
    ("overrides", "code", "path"),
    [
        ({"comment_body": "raw"}, "unknown_field", "$.comment_body"),
        ({"reviews": []}, "invalid_value", "$.reviews"),
        ({"now": "yesterday"}, "invalid_format", "$.now"),
        (
            {
                "reviews": [
                    {
                        "decision": "edit",
                        "reviewer_ref": "u:r",
                        "review_ref": "r:1",
                        "reasoning_summary": "why",
                    }
                ]
            },
            "missing_field",
            "$.reviews[0].edited_content_summary",
        ),
        (
            {
                "reviews": [
                    {
                        "decision": "retire",
                        "reviewer_ref": "u:r",
                        "review_ref": "r:1",
                        "reasoning_summary": "why",
                    }
                ]
            },
            "invalid_state",
            "$.reviews[0].decision",
        ),
    ],
)
def test_bad_requests_name_the_field(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    overrides: dict[str, Any],
    code: str,
    path: str,
) -> None:
    exit_code, out = run(capsys, "candidate-review", "--input", _request(tmp_path, **overrides))
    assert exit_code == 2
    packet = error_of(out)
    assert (packet["error_code"], packet["field_path"]) == (code, path)


def test_nested_proposal_errors_name_the_full_path(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    document = to_plain(proposal())
    document["source"]["raw"] = "the whole comment body"
    exit_code, out = run(
        capsys, "candidate-review", "--input", _request(tmp_path, proposal=document)
    )
    assert exit_code == 2
    assert error_of(out)["field_path"] == "$.proposal.source.raw"
    document = to_plain(proposal())
    document["content_summary"] = "see /home/alice/secret.txt"
    exit_code, out = run(
        capsys, "candidate-review", "--input", _request(tmp_path, proposal=document)
    )
    assert exit_code == 2
    packet = error_of(out)
    assert (packet["error_code"], packet["field_path"]) == (
        "unsafe_text",
        "$.proposal.content_summary",
    )
    assert "/home/alice" not in out


def test_missing_file_and_conflicting_flags(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    exit_code, out = run(capsys, "candidate-review", "--input", str(tmp_path / "missing.json"))
    assert exit_code == 2
    assert error_of(out)["error_code"] == "file_not_found"
    assert str(tmp_path) not in out
    path = _request(tmp_path)
    exit_code, out = run(capsys, "candidate-review", "--input", path, "--decision", "accept")
    assert exit_code == 2
    assert error_of(out)["field_path"] == "--decision"
    exit_code, out = run(
        capsys, "candidate-review", "--input", path, "--case", "issue-fix-verified-contributor"
    )
    assert (exit_code, error_of(out)["error_code"]) == (2, "usage_error")
    exit_code, out = run(capsys, "candidate-review", "--decision", "approve")
    assert (exit_code, error_of(out)["error_code"]) == (2, "usage_error")
    exit_code, out = run(capsys, "candidate-review", "--case", "nope")
    assert (exit_code, error_of(out)["error_code"]) == (2, "usage_error")


# -- as a process -----------------------------------------------------------------------------


def test_the_fixture_path_loads_neither_jsonschema_nor_cattrs() -> None:
    code = (
        "import sys\n"
        "from reward_memory.cli import main\n"
        "rc = main(['candidate-review', '--format', 'json'])\n"
        "heavy = [m for m in sys.modules if m.split('.')[0] in ('jsonschema', 'cattrs')]\n"
        "sys.stderr.write(repr((rc, heavy)))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert result.stderr == "(0, [])"
    assert json.loads(result.stdout)["status"] == "active"


def test_the_console_script(tmp_path: Path) -> None:
    script = Path(sys.executable).with_name("reward-memory")
    result = subprocess.run(
        [str(script), "candidate-review", "--decision", "no_write", "--format", "json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0
    assert packet_of(result.stdout)["status"] == "no_write"


# -- --authority: the checkpoint from an authority map, never from the request file ----------

_EXAMPLE_REQUEST = ROOT / "examples" / "candidate-review-request.json"
_AUTHORITY_MAP = ROOT / "examples" / "experiment" / "authority.json"


def _example_request(tmp_path: Path, **source: Any) -> str:
    document = json.loads(_EXAMPLE_REQUEST.read_text("utf-8"))
    del document["authority_checkpoint"]
    document["proposal"]["source"].update(source)
    path = tmp_path / "request.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize(
    ("source", "status"),
    [({}, "active"), ({"actor_ref": "github:user:anyone"}, "guard_blocked")],
)
def test_the_authority_map_decides_the_checkpoint(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, source: dict[str, Any], status: str
) -> None:
    request = _example_request(tmp_path, **source)
    code, out = run(
        capsys,
        "candidate-review",
        "--input",
        request,
        "--authority",
        str(_AUTHORITY_MAP),
        "--format",
        "json",
    )
    assert code == 0
    assert packet_of(out)["status"] == status


def test_with_an_authority_map_the_file_may_not_vouch_for_itself(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out = run(
        capsys,
        "candidate-review",
        "--input",
        str(_EXAMPLE_REQUEST),
        "--authority",
        str(_AUTHORITY_MAP),
        "--format",
        "json",
    )
    assert code == 2
    assert error_of(out)["field_path"] == "$.authority_checkpoint"
    code, out = run(capsys, "candidate-review", "--authority", str(_AUTHORITY_MAP))
    assert code == 2
