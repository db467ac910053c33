"""``reward-memory dogfood-evaluate --input FILE`` (seeds: "loopx reward-memory dogfood-evaluate
--input compact-observations.json --format json"; reference: exit 2 unless ready).

Every packet it prints validates against its schema; bad input of any kind is an
error packet naming the field, with exit 2, never a traceback.
"""

from __future__ import annotations

import copy
import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from reward_memory import schemas, wire
from reward_memory.cli import main
from reward_memory.records._plain import from_plain, load_plain, to_plain
from reward_memory.records.dogfood import DogfoodBatch, DogfoodInput

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "dogfood" / "dogfood-input.json"


def example() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    return data


def run(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, document: Any, *extra: str
) -> tuple[int, dict[str, Any]]:
    target = tmp_path / "input.json"
    target.write_text(
        document if isinstance(document, str) else json.dumps(document), encoding="utf-8"
    )
    code = main(["dogfood-evaluate", "--input", str(target), "--format", "json", *extra])
    packet: dict[str, Any] = json.loads(capsys.readouterr().out)
    schemas.validate(packet)  # every packet printed is a valid packet, errors included
    return code, packet


def test_the_example_is_ready_for_a_bounded_issue_fix_pilot(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, packet = run(capsys, tmp_path, example())
    assert code == 0
    assert (packet["status"], packet["ok"], packet["reason_codes"]) == (
        "ready_for_bounded_issue_fix_pilot",
        True,
        [],
    )
    assert packet["application_dispositions"] == ["applied", "not_applied", "refuted"]
    assert packet["operator_controls"] == ["edit", "retire"]
    assert packet["boundaries"]["semantic_uplift_claim_allowed"] is False
    assert packet["boundaries"]["production_rollout_allowed"] is False
    record = wire.load(packet, DogfoodBatch)
    assert wire.dump(record) == packet == to_plain(load_plain(packet, DogfoodBatch))


def test_an_evaluation_in_the_file_never_opens_the_gate(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ "The gate still passes" is checked now: the suite runs afresh, and an evaluation
    in the file (here one that says it passed) cannot stand in for it."""
    from reward_memory.cli import _dogfood
    from reward_memory.evaluation import evaluate
    from reward_memory.testing import InMemoryProvider

    given = example()
    assert given["evaluation"]["release_gate"]["status"] == "ready_for_bounded_dogfood"
    # Fault injection: the fresh run meets a provider that is down.
    monkeypatch.setattr(
        _dogfood, "_fresh_evaluation", lambda: evaluate(provider=InMemoryProvider(unavailable=True))
    )
    code, packet = run(capsys, tmp_path, given)
    assert code == 2
    assert packet["stage4_gate_verified"] is False
    assert packet["status"] != "ready_for_bounded_issue_fix_pilot"


def test_a_failed_evaluation_in_the_file_closes_the_gate(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from reward_memory.evaluation import evaluate
    from reward_memory.testing import InMemoryProvider

    given = example()
    given["evaluation"] = wire.dump(evaluate(provider=InMemoryProvider(unavailable=True)))
    code, packet = run(capsys, tmp_path, given)
    assert code == 2
    assert packet["stage4_gate_verified"] is False


def test_the_printed_batch_passes_schema_validate(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    main(["dogfood-evaluate", "--input", str(EXAMPLE), "--format", "json"])
    target = tmp_path / "batch.json"
    target.write_text(capsys.readouterr().out, encoding="utf-8")
    for path in (target, EXAMPLE):
        assert main(["schema", "validate", str(path), "--format", "json"]) == 0
        assert json.loads(capsys.readouterr().out)["status"] == "valid"


def test_the_example_input_loads_through_both_structurers() -> None:
    data = example()
    assert wire.load(data, DogfoodInput) == from_plain(DogfoodInput, data)


def test_the_original_input_shape_is_read_too(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The original's file is {observations, operator_controls}: no schema_version."""
    data = example()
    del data["schema_version"]
    code, packet = run(capsys, tmp_path, data)
    assert (code, packet["status"]) == (0, "ready_for_bounded_issue_fix_pilot")


def test_the_text_summary(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["dogfood-evaluate", "--input", str(EXAMPLE)]) == 0
    out = capsys.readouterr().out
    assert "status: ready_for_bounded_issue_fix_pilot" in out
    assert "receipts: 3 (applied 1, not_applied 1, refuted 1)" in out
    assert "operator_controls: edit, retire" in out


def test_stdin_input(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(EXAMPLE.read_bytes())))
    assert main(["dogfood-evaluate", "--input", "-", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["ok"] is True


@pytest.mark.parametrize(
    ("mutate", "reason"),
    [
        (lambda d: d["operator_controls"].pop(), "operator_control_missing:retire"),
        (lambda d: d["observations"].pop(0), "issue_fix_outcome_missing"),
        (lambda d: d["observations"].pop(2), "two_loopx_domains_required"),
        (
            lambda d: d.update(
                evaluation={
                    **d["evaluation"],
                    "ok": False,
                    "status": "failed",
                    "release_gate": {"status": "hold", "reason_codes": ["case_failed:x"]},
                }
            ),
            "stage4_release_gate_not_ready",
        ),
    ],
)
def test_a_held_batch_exits_2_with_its_reasons(
    mutate: Any, reason: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    data = example()
    mutate(data)
    code, packet = run(capsys, tmp_path, data)
    assert code == 2
    assert (packet["schema_version"], packet["status"], packet["ok"]) == (
        "reward_memory_dogfood_batch_v1",
        "hold",
        False,
    )
    assert reason in packet["reason_codes"]


def _at(document: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    clone = copy.deepcopy(document)
    target: Any = clone
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return clone


BAD_INPUTS: dict[str, tuple[Any, str, str]] = {
    "not json": ("{", "invalid_json", "--input"),
    "not an object": ("[]", "wrong_type", "$"),
    "no schema_version": ({"records": []}, "schema_version_missing", "$.schema_version"),
    "an empty object": ({}, "schema_version_missing", "$.schema_version"),
    "the original's shape, empty": ({"observations": []}, "invalid_value", "$.observations"),
    "another schema": (
        {"schema_version": "reward_memory_dogfood_input_v0"},
        "schema_version_unsupported",
        "$.schema_version",
    ),
    "unknown top-level field": (
        {**example(), "raw_log": "x"},
        "unknown_field",
        "$.raw_log",
    ),
    "a caller label": (
        _at(example(), ("observations", 0, "outcome"), "hit"),
        "unknown_field",
        "$.observations[0].outcome",
    ),
    "raw content in the outcome": (
        _at(example(), ("observations", 1, "module_outcome", "raw_log"), "transcript"),
        "unknown_field",
        "$.observations[1].module_outcome.raw_log",
    ),
    "an unverified refute": (
        _at(
            example(), ("observations", 2, "application_receipt", "result_readback_verified"), False
        ),
        "invalid_value",
        "$.observations[2].application_receipt.result_readback_verified",
    ),
    "another artifact": (
        _at(example(), ("observations", 0, "module_outcome", "artifact_ref"), "artifact:other"),
        "invalid_value",
        "$.observations[0].module_outcome.artifact_ref",
    ),
    "a secret in a summary": (
        _at(
            example(),
            ("observations", 0, "module_outcome", "summary"),
            "merged; ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        ),
        "unsafe_text",
        "$.observations[0].module_outcome.summary",
    ),
    "too many observations": (
        _at(example(), ("observations",), example()["observations"] * 9),
        "invalid_value",
        "$.observations",
    ),
    "an observation twice": (
        _at(
            example(), ("observations",), [*example()["observations"], example()["observations"][0]]
        ),
        "duplicate_item",
        "$.observations[3]",
    ),
    "a forged control": (
        _at(example(), ("operator_controls", 1, "effective_action"), "edit"),
        "contradictory_observation",
        "$.operator_controls[1].effective_action",
    ),
    "a malformed evaluation": (
        _at(example(), ("evaluation", "status"), "ready"),
        "invalid_value",
        "$.evaluation.status",
    ),
}


@pytest.mark.parametrize(
    ("document", "code", "path"), list(BAD_INPUTS.values()), ids=list(BAD_INPUTS)
)
def test_bad_input_is_an_error_packet_with_exit_2(
    document: Any, code: str, path: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    exit_code, packet = run(capsys, tmp_path, document)
    assert exit_code == 2
    assert packet["schema_version"] == "reward_memory_error_v0"
    assert (packet["error_code"], packet["field_path"]) == (code, path)
    assert "ghp_" not in json.dumps(packet)


def test_a_missing_file_is_an_error_packet(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert (
        main(["dogfood-evaluate", "--input", str(tmp_path / "none.json"), "--format", "json"]) == 2
    )
    packet = json.loads(capsys.readouterr().out)
    assert (packet["error_code"], packet["field_path"]) == ("file_not_found", "--input")
    assert str(tmp_path) not in json.dumps(packet)


def test_the_input_flag_is_required(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["dogfood-evaluate", "--format", "json"]) == 2
    assert json.loads(capsys.readouterr().out)["error_code"] == "usage_error"


_PROBE = """
import contextlib, io, json, sys
from reward_memory.cli import main
with contextlib.redirect_stdout(io.StringIO()) as out:
    code = main({argv!r})
wire = sys.modules.get("reward_memory.wire")
sys.stderr.write(json.dumps({{
    "code": code,
    "cattrs": "cattrs" in sys.modules,
    "metadata": "importlib.metadata" in sys.modules,
    "union": wire is not None and wire._packet_union.cache_info().currsize > 0,
    "evaluation": "reward_memory.evaluation" in sys.modules,
}}))
"""


def test_the_verb_starts_without_the_converter_or_the_entry_point_scan() -> None:
    """Start-up budget: one schema, the records, no cattrs. The Stage-4 suite runs afresh
    even with an evaluation in the file ("the gate still passes" is checked now)."""
    argv = ["dogfood-evaluate", "--input", str(EXAMPLE), "--format", "json"]
    result = subprocess.run(
        [sys.executable, "-c", _PROBE.format(argv=argv)], capture_output=True, text=True, check=True
    )
    report = json.loads(result.stderr)
    assert report == {
        "code": 0,
        "cattrs": False,
        "metadata": False,
        "union": False,
        "evaluation": True,
    }


_DELETE = object()
_VALUES = (_DELETE, None, 0, "", "Not A Token", [], {}, True, "a" * 600)


def _paths(document: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found: list[tuple[Any, ...]] = []
    items = (
        document.items()
        if isinstance(document, dict)
        else enumerate(document)
        if isinstance(document, list)
        else ()
    )
    for key, value in items:
        found.append((*path, key))
        found.extend(_paths(value, (*path, key)))
    return found


def test_no_mutation_of_the_input_is_a_crash(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Every member of the example replaced by every odd value (or deleted): the verb
    answers a valid batch (exit 0 or 2) or an error packet (exit 2) -- never exit 1."""
    base = example()
    target = tmp_path / "input.json"
    for path in _paths(base):
        for value in _VALUES:
            document = copy.deepcopy(base)
            parent: Any = document
            for key in path[:-1]:
                parent = parent[key]
            if value is _DELETE:
                del parent[path[-1]]
            else:
                parent[path[-1]] = copy.deepcopy(value)
            target.write_text(json.dumps(document), encoding="utf-8")
            code = main(["dogfood-evaluate", "--input", str(target), "--format", "json"])
            packet = json.loads(capsys.readouterr().out)
            assert code in (0, 2), (path, value, packet)
            schemas.validate(packet)
            if packet["schema_version"] == "reward_memory_dogfood_batch_v1":
                assert code == (0 if packet["ok"] else 2)
