"""The private converter never coerces: bad input gets a typed error naming the field.

Engineering standard: "Bad input always gets a clear, typed error (library) or an
error packet and exit code 2 (CLI), naming the field path." cattrs' stock hooks
turn 777 into "777", "5" into 5 and "no" into True; data structured without a
schema first (``wire.structure``, the full-packet ``ingest-event`` fixture) must
not pass as something it is not.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reward_memory import wire
from reward_memory.cli import main
from reward_memory.errors import RecordValidationError
from reward_memory.records.corpus import CorpusRetrieval
from reward_memory.records.recall import FreshnessContext, ProviderBinding

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "experiment"
BINDING: dict[str, Any] = {"corpus_id": "c", "provider_id": "p", "namespace": "n", "scope_ref": "s"}


@pytest.mark.parametrize(
    ("cls", "data", "path"),
    [
        (ProviderBinding, {**BINDING, "namespace": 777}, "$.namespace"),
        (ProviderBinding, {**BINDING, "timeout_seconds": "5"}, "$.timeout_seconds"),
        (ProviderBinding, {**BINDING, "timeout_seconds": True}, "$.timeout_seconds"),
        (FreshnessContext, {"source_truth_current": "no"}, "$.source_truth_current"),
        (FreshnessContext, {"source_truth_current": 1}, "$.source_truth_current"),
        (
            FreshnessContext,
            {"source_truth_current": True, "age_seconds": "3"},
            "$.age_seconds",
        ),
        (
            CorpusRetrieval,
            {"index_required": 0, "readback_required": True, "application_receipt_required": True},
            "$.index_required",
        ),
    ],
)
def test_structure_refuses_wrong_primitive_types(cls: Any, data: dict[str, Any], path: str) -> None:
    with pytest.raises(RecordValidationError) as caught:
        wire.structure(data, cls)
    assert caught.value.path == path


def test_structure_keeps_exact_types() -> None:
    bound = wire.structure({**BINDING, "timeout_seconds": 5}, ProviderBinding)
    assert bound.namespace == "n"
    assert bound.timeout_seconds == 5


def test_the_full_packet_ingest_fixture_refuses_a_number_for_a_token(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = json.loads((EXAMPLES / "ingest-fixture.json").read_text(encoding="utf-8"))
    data["corpus"]["owner_ref"] = 12345
    target = tmp_path / "fixture.json"
    target.write_text(json.dumps(data), encoding="utf-8")
    assert main(["ingest-event", "--input", str(target), "--format", "json"]) == 2
    packet = json.loads(capsys.readouterr().out)
    assert packet["field_path"] == "$.corpus.owner_ref"
