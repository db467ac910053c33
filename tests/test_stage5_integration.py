"""Stage 5 over the real Stage 4 and the real operator controls.

Contract: seeds "Stage 5" and issue 9 item 3 ("Batch readiness
(`ready_for_bounded_issue_fix_pilot`) only when the gate still passes and the batch
holds an Issue Fix result, two distinct module domains, all three dispositions and both
operator controls"). The dogfood engineer tested against the pinned shapes; this file
joins the three parts: the evaluation is `evaluate()` itself and the controls are
receipts `operator_control()` really produced.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests._operator_support import NOW, binding, ingest_soft, request, stored_record

from reward_memory import schemas
from reward_memory.cli import main
from reward_memory.dogfood import build_batch, build_receipt, stage4_gate_verified
from reward_memory.evaluation import evaluate
from reward_memory.operator import operator_control
from reward_memory.records._plain import to_plain
from reward_memory.testing import InMemoryProvider

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "dogfood" / "dogfood-input.json"


def _example() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    return data


def _real_controls() -> list[dict[str, Any]]:
    provider = InMemoryProvider()
    receipt = ingest_soft(provider)
    assert receipt.status == "activated"
    record = stored_record(provider, receipt)
    controls = []
    for action in ("edit", "retire"):
        control = operator_control(
            request(record, action, provider_id="memory"),
            provider=provider,
            binding=binding("memory"),
            execute=True,
            now=NOW,
        )
        assert control.receipt is not None, control
        controls.append(to_plain(control.receipt))
    return controls


def test_a_batch_is_ready_with_the_real_gate_and_real_operator_receipts() -> None:
    evaluation = evaluate()
    assert stage4_gate_verified(evaluation)
    receipts = [build_receipt(observation) for observation in _example()["observations"]]
    batch = build_batch(receipts, _real_controls(), evaluation)
    assert (batch.status, batch.reason_codes) == ("ready_for_bounded_issue_fix_pilot", ())


def test_a_closed_gate_holds_the_batch() -> None:
    broken = evaluate(provider="memory://?unavailable=true")
    assert broken.release_gate.status == "hold"
    assert not stage4_gate_verified(broken)
    receipts = [build_receipt(observation) for observation in _example()["observations"]]
    batch = build_batch(receipts, _real_controls(), broken)
    assert batch.status == "hold"
    assert "stage4_release_gate_not_ready" in batch.reason_codes


def test_the_cli_runs_the_stage4_suite_when_the_input_carries_no_evaluation(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    document = _example()
    del document["evaluation"]
    target = tmp_path / "input.json"
    target.write_text(json.dumps(document), encoding="utf-8")
    code = main(["dogfood-evaluate", "--input", str(target), "--format", "json"])
    packet = json.loads(capsys.readouterr().out)
    schemas.validate(packet)
    assert code == 0
    assert packet["status"] == "ready_for_bounded_issue_fix_pilot"
    assert packet["stage4_gate_verified"] is True
