"""``reward-memory explain RECEIPT_FILE``: the lineage of a receipt, public-safe, from the CLI.

Contract: issue 9 item 6 (``explain RECEIPT_FILE [--provider URL]`` prints the
lineage; never raw content), DESIGN §8 (bad input: an error packet, exit 2).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests._experiment_support import config_data
from tests._ingest_support import HARD_SCOPE_REF, hard_corpus, ingest_hard
from tests._operator_support import binding, ingest_soft

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


def test_the_shipped_receipt_explains_without_a_provider(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, packet = _cli(capsys, "explain", str(EXAMPLES / "ingest-receipt.json"))
    assert code == 0
    schemas.validate(packet)
    assert packet["provider_checked"] is False
    assert {link["status"] for link in packet["links"]} == {"not_checked"}


def test_a_sqlite_receipt_is_verified(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "m.db"
    provider = SQLiteProvider(path=db)
    receipt = ingest_soft(provider)
    provider.close()
    code, packet = _cli(
        capsys,
        "explain",
        _write(tmp_path / "receipt.json", to_plain(receipt)),
        "--provider",
        f"sqlite://{db}",
        "--binding",
        _write(tmp_path / "b.json", [to_plain(binding("sqlite"))]),
    )
    assert code == 0
    assert [link["status"] for link in packet["links"]] == [
        "not_checked",
        "verified",
        "verified",
        "verified",
    ]
    text = json.dumps(packet)
    assert "Lead the review summary" not in text
    assert str(tmp_path) not in text


def test_scopes_from_a_config_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "m.db"
    provider = SQLiteProvider(path=db)
    receipt = ingest_hard(
        provider=provider, binding=_hard_binding(), corpus=hard_corpus(provider_id="sqlite")
    )
    provider.close()
    assert receipt.status == "activated"
    data = config_data()
    data["project_provider_binding"]["provider_id"] = "sqlite"
    for item in data["corpora"]:
        item["corpus"]["provider_id"] = "sqlite"
    code, packet = _cli(
        capsys,
        "explain",
        _write(tmp_path / "receipt.json", to_plain(receipt)),
        "--provider",
        f"sqlite://{db}",
        "--config",
        _write(tmp_path / "config.json", data),
    )
    assert code == 0, packet
    assert packet["links"][-1]["status"] == "verified"
    assert HARD_SCOPE_REF not in json.dumps(packet)


def _hard_binding() -> Any:
    from tests._ingest_support import hard_binding

    return hard_binding(provider_id="sqlite")


@pytest.mark.parametrize(
    ("content", "argv", "path"),
    [
        ('{"schema_version": "reward_memory_corpus_registry_v0"}', [], "$.schema_version"),
        ("[1]", [], "$"),
        ("{", [], "RECEIPT_FILE"),
        (None, ["--binding", "{missing}"], "--binding"),
        (None, ["--config", "{missing}"], "--config"),
    ],
)
def test_bad_input_is_an_error_packet(
    content: str | None,
    argv: list[str],
    path: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    receipt = str(EXAMPLES / "ingest-receipt.json")
    if content is not None:
        receipt = str(tmp_path / "r.json")
        Path(receipt).write_text(content, encoding="utf-8")
    argv = [arg.format(missing=tmp_path / "missing.json") for arg in argv]
    code, packet = _cli(capsys, "explain", receipt, *argv)
    assert code == 2
    assert packet["schema_version"] == "reward_memory_error_v0"
    assert packet["field_path"] == path, packet
    assert str(tmp_path) not in json.dumps(packet)


def test_a_binding_file_must_hold_bindings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, packet = _cli(
        capsys,
        "explain",
        str(EXAMPLES / "ingest-receipt.json"),
        "--binding",
        _write(tmp_path / "b.json", [to_plain(binding()), 3]),
    )
    assert (code, packet["field_path"]) == (2, "--binding[1]")


@pytest.mark.parametrize("as_list", [False, True])
def test_a_bad_binding_field_is_named_by_its_path_in_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], as_list: bool
) -> None:
    bad = {**to_plain(binding()), "timeout_seconds": "soon"}
    code, packet = _cli(
        capsys,
        "explain",
        str(EXAMPLES / "ingest-receipt.json"),
        "--binding",
        _write(tmp_path / "b.json", [to_plain(binding()), bad] if as_list else bad),
    )
    expected = "$[1].timeout_seconds" if as_list else "$.timeout_seconds"
    assert (code, packet["field_path"]) == (2, expected)


def test_the_text_view_lists_each_link(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", str(EXAMPLES / "ingest-receipt.json")]) == 0
    out = capsys.readouterr().out
    assert "active_record: not_checked (no_provider)" in out


_PROBE = """
import contextlib, io, json, sys
from reward_memory.cli import main
with contextlib.redirect_stdout(io.StringIO()) as out:
    code = main({argv!r})
wire = sys.modules.get("reward_memory.wire")
sys.stderr.write(json.dumps({{
    "code": code,
    "metadata": "importlib.metadata" in sys.modules,
    "cattrs": "cattrs" in sys.modules,
    "union": wire is not None and wire._packet_union.cache_info().currsize > 0,
}}))
"""


@pytest.mark.parametrize(
    "argv",
    [
        ["explain", str(EXAMPLES / "ingest-receipt.json"), "--format", "json"],
        [
            "operator-control",
            "--input",
            str(EXAMPLES / "revoke-request.json"),
            "--action",
            "revoke",
            "--format",
            "json",
        ],
    ],
    ids=["explain", "operator-control"],
)
def test_the_new_verbs_start_without_the_converter_or_the_scan(
    argv: list[str], tmp_path: Path
) -> None:
    """Issue 11: every verb answers in <= 0.15 s wall; the costly mechanisms a verb
    can avoid (entry-point scan, cattrs, the packet union) stay unloaded."""
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-c", _PROBE.format(argv=argv)],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    )
    report = json.loads(result.stderr)
    assert report == {"code": 0, "metadata": False, "cattrs": False, "union": False}
