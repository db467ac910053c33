"""The converter-free twin (records._plain) agrees with the cattrs converter (wire)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reward_memory import schemas, wire
from reward_memory.cli import main
from reward_memory.errors import RecordValidationError
from reward_memory.records._plain import from_plain, load_plain, to_plain
from test_cli_packets import EXAMPLES, INVOCATIONS


def _emitted(argv: tuple[str, ...], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    main([*argv, "--format", "json"])
    packet: dict[str, Any] = json.loads(capsys.readouterr().out)
    return packet


@pytest.mark.parametrize("argv", INVOCATIONS, ids=lambda argv: " ".join(argv)[-60:])
def test_both_structurers_build_the_same_record(
    argv: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    packet = _emitted(argv, capsys)
    cls = wire.packet_type(schemas.validate(packet))
    via_cattrs = wire.structure(packet, cls)
    via_plain = from_plain(cls, packet)
    assert via_cattrs == via_plain
    assert to_plain(via_plain) == wire.dump(via_cattrs) == packet


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.json")), ids=lambda p: p.name)
def test_examples_round_trip(path: Path) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    cls = wire.packet_type(data["schema_version"])
    record = load_plain(data, cls)
    assert record == wire.load(data)
    assert to_plain(record) == wire.dump(record) == data


def test_load_plain_refuses_another_packet() -> None:
    data = json.loads((EXAMPLES / "health-request.json").read_text(encoding="utf-8"))
    with pytest.raises(RecordValidationError) as info:
        load_plain(data, wire.packet_type("reward_memory_recall_input_v0"))
    assert info.value.path == "$.schema_version"


def test_from_plain_names_unknown_and_missing_fields() -> None:
    data = json.loads((EXAMPLES / "health-request.json").read_text(encoding="utf-8"))
    cls = wire.packet_type(data["schema_version"])
    data["observation"]["raw_log"] = "x"
    with pytest.raises(RecordValidationError) as info:
        from_plain(cls, data)
    assert (info.value.code, info.value.path) == ("unknown_field", "$.observation.raw_log")
    del data["observation"]["raw_log"]
    del data["observation"]["record_count"]
    with pytest.raises(RecordValidationError) as info:
        from_plain(cls, data)
    assert (info.value.code, info.value.path) == ("missing_field", "$.observation.record_count")


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.json")), ids=lambda p: p.name)
def test_the_converter_dispatches_on_the_schema_version_tag(path: Path) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    record = wire.load(data)  # no class given: the tag picks it
    assert type(record) is wire.packet_type(data["schema_version"])
    assert wire.dump_packet(record) == data
