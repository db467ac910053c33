"""Records embedded without their own schema_version still meet the schema's type gate.

Engineering standard: "Bad input always gets a clear, typed error (library) or an
error packet and exit code 2 (CLI), naming the field path." ``wire.structure`` is
for schema-valid data (cattrs alone would coerce 777 to "777"); a document that
embeds a corpus or a binding without a ``schema_version`` -- the full-packet
``ingest-event`` fixture -- validates each part against its schema definition
first (:func:`reward_memory.schemas.validate_definition`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reward_memory import schemas
from reward_memory.cli import main
from reward_memory.errors import RecordValidationError, SchemaError

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "experiment"
BINDING: dict[str, Any] = {"corpus_id": "c", "provider_id": "p", "namespace": "n", "scope_ref": "s"}
RECALL_INPUT = "reward_memory_recall_input_v0"


@pytest.mark.parametrize(
    ("data", "path"),
    [
        ({**BINDING, "namespace": 777}, "$.namespace"),
        ({**BINDING, "timeout_seconds": "5"}, "$.timeout_seconds"),
        ({**BINDING, "timeout_seconds": True}, "$.timeout_seconds"),
        ({**BINDING, "retries": 3}, "$.retries"),
    ],
)
def test_a_binding_part_meets_its_definition(data: dict[str, Any], path: str) -> None:
    with pytest.raises(RecordValidationError) as caught:
        schemas.validate_definition(data, RECALL_INPUT, "ProviderBinding")
    assert caught.value.path is not None
    assert caught.value.path.startswith(path)


def test_a_valid_part_passes_and_an_unknown_definition_is_a_schema_error() -> None:
    schemas.validate_definition(BINDING, RECALL_INPUT, "ProviderBinding")
    with pytest.raises(SchemaError):
        schemas.validate_definition(BINDING, RECALL_INPUT, "NoSuchThing")


@pytest.mark.parametrize(
    ("part", "member", "value"),
    [
        ("corpus", "owner_ref", 12345),
        ("corpus", "provider_scope_ref_digest", 5),
        ("provider_binding", "namespace", 777),
        ("provider_binding", "timeout_seconds", "5"),
    ],
)
def test_the_full_packet_ingest_fixture_refuses_a_wrong_type(
    part: str, member: str, value: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = json.loads((EXAMPLES / "ingest-fixture.json").read_text(encoding="utf-8"))
    data[part][member] = value
    target = tmp_path / "fixture.json"
    target.write_text(json.dumps(data), encoding="utf-8")
    assert main(["ingest-event", "--input", str(target), "--format", "json"]) == 2
    packet = json.loads(capsys.readouterr().out)
    assert packet["field_path"] == f"$.{part}.{member}"
