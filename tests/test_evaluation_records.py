"""Evaluation records and the release gate rule, directly: a packet cannot claim a pass
it does not have, and the gate's reasons follow their fixed order."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import attrs
import pytest

from reward_memory import schemas, wire
from reward_memory.errors import RecordValidationError
from reward_memory.evaluation import evaluate
from reward_memory.evaluation.gate import GATED_METRICS, release_gate
from reward_memory.evaluation.metrics import metrics_of
from reward_memory.records.evaluation import (
    CASE_IDS,
    CaseResult,
    Evaluation,
    FixtureReport,
    ReleaseGate,
)

NOW = datetime(2026, 8, 1, 9, 0, tzinfo=UTC)


def case(case_id: str = CASE_IDS[0], **changes: Any) -> CaseResult:
    values: dict[str, Any] = {
        "case_id": case_id,
        "passed": True,
        "assertion_count": 3,
        "failure_kind": None,
        "latency_ms": 0.25,
        "public_evidence_bytes": 2,
        "model_call_count": 0,
        "model_tokens": 0,
        "provider_call_count": 1,
        "provider_write_count": 0,
        "storage_write_bytes": 0,
        "external_write_count": 0,
        "fixture_write_count": 0,
        "false_application_count": 0,
        "maintainer_interruption_count": 0,
        "user_gate_count": 0,
    }
    values.update(changes)
    return CaseResult(**values)


def fixture(**changes: Any) -> FixtureReport:
    values: dict[str, Any] = {
        "seed_write_count": 3,
        "seed_write_bytes": 10,
        "seed_provider_call_count": 6,
        "cleanup_delete_count": 3,
        "cleaned_up": True,
        "restart_count": 1,
        "provider_failure_count": 0,
    }
    values.update(changes)
    return FixtureReport(**values)


def all_cases(**changes: Any) -> list[CaseResult]:
    return [case(case_id) for case_id in CASE_IDS]


def test_a_clean_run_opens_the_gate() -> None:
    cases = all_cases()
    gate = release_gate(cases, metrics_of(cases), fixture())
    assert gate.status == "ready_for_bounded_dogfood"
    assert gate.decision == "advance_stage_5"
    assert gate.reason_codes == ()


@pytest.mark.parametrize("metric", GATED_METRICS)
def test_each_gated_count_holds_the_gate(metric: str) -> None:
    """'all write, false-application, interruption, and user-gate counts remain zero'."""
    cases = all_cases()
    cases[3] = attrs.evolve(cases[3], **{metric: 1})
    gate = release_gate(cases, metrics_of(cases), fixture())
    assert gate.reason_codes == (f"nonzero:{metric}",)
    assert (gate.status, gate.decision) == ("hold", "repair_stage_4")


def test_ungated_measurements_do_not_hold_the_gate() -> None:
    """Provider reads, model calls and tokens, evidence bytes and seeding are measured,
    not gated (zero tokens is a statement about this suite, not a requirement)."""
    cases = [
        case(cid, provider_call_count=9, model_call_count=2, model_tokens=50, fixture_write_count=4)
        for cid in CASE_IDS
    ]
    assert release_gate(cases, metrics_of(cases), fixture()).reason_codes == ()


def test_reasons_keep_their_fixed_order() -> None:
    cases = all_cases()
    cases[6] = case(
        CASE_IDS[6],
        passed=False,
        failure_kind="assertion_failed",
        failed_assertions=("x",),
        user_gate_count=1,
    )
    cases[1] = case(
        CASE_IDS[1],
        passed=False,
        failure_kind="RuntimeError",
        storage_write_bytes=5,
        provider_write_count=1,
    )
    gate = release_gate(
        cases, metrics_of(cases), fixture(cleaned_up=False, provider_failure_count=2)
    )
    assert gate.reason_codes == (
        "case_failed:project_module_scope_isolation",
        "case_failed:candidate_ranking_influence",
        "nonzero:provider_write_count",
        "nonzero:storage_write_bytes",
        "nonzero:user_gate_count",
        "provider_failures_observed",
        "fixture_cleanup_incomplete",
    )


@pytest.mark.parametrize(
    ("changes", "path"),
    [
        ({"status": "ready_for_bounded_dogfood", "reason_codes": ("case_failed:x",)}, "$.status"),
        ({"status": "hold", "decision": "repair_stage_4", "reason_codes": ()}, "$.status"),
        ({"decision": "repair_stage_4"}, "$.decision"),
        ({"semantic_uplift_claim_allowed": True}, "$.semantic_uplift_claim_allowed"),
        ({"production_rollout_allowed": True}, "$.production_rollout_allowed"),
        ({"claim_scope": "production"}, "$.claim_scope"),
    ],
)
def test_a_gate_cannot_claim_what_its_reasons_deny(changes: dict[str, Any], path: str) -> None:
    """'It ... does not claim semantic uplift, and does not authorize production rollout.'"""
    ready = ReleaseGate(status="ready_for_bounded_dogfood", decision="advance_stage_5")
    with pytest.raises(RecordValidationError) as caught:
        attrs.evolve(ready, **changes)
    assert caught.value.path == path


@pytest.fixture(scope="module")
def passed() -> Evaluation:
    return evaluate(now=NOW)


def test_an_evaluation_cannot_pass_with_a_held_gate(passed: Evaluation) -> None:
    held = ReleaseGate(status="hold", decision="repair_stage_4", reason_codes=("nonzero:x",))
    with pytest.raises(RecordValidationError) as caught:
        attrs.evolve(passed, release_gate=held)
    assert caught.value.path == "$.status"


def test_ok_follows_the_status(passed: Evaluation) -> None:
    with pytest.raises(RecordValidationError) as caught:
        attrs.evolve(passed, ok=False)
    assert caught.value.path == "$.ok"


def test_a_passed_evaluation_has_only_passed_cases(passed: Evaluation) -> None:
    failing = attrs.evolve(
        passed.cases[0], passed=False, failure_kind="assertion_failed", failed_assertions=("x",)
    )
    with pytest.raises(RecordValidationError) as caught:
        attrs.evolve(passed, cases=(failing, *passed.cases[1:]))
    assert caught.value.path == "$.cases"


def test_the_metrics_count_the_cases(passed: Evaluation) -> None:
    with pytest.raises(RecordValidationError) as caught:
        attrs.evolve(passed, cases=passed.cases[:7])
    assert caught.value.path == "$.metrics.case_count"


def test_a_tampered_packet_does_not_load(passed: Evaluation) -> None:
    """A packet is data: a hand-edited pass over a failed case is refused on load."""
    plain = wire.dump(passed)
    plain["release_gate"]["production_rollout_allowed"] = True
    with pytest.raises(RecordValidationError):
        wire.load(plain)
    plain = json.loads(json.dumps(wire.dump(passed)))
    plain["cases"][2]["passed"] = False
    plain["cases"][2]["failure_kind"] = "assertion_failed"
    with pytest.raises(RecordValidationError):
        wire.load(plain)


@pytest.mark.parametrize(
    ("changes", "path"),
    [
        ({"passed": False}, "$.failure_kind"),
        ({"failure_kind": "assertion_failed"}, "$.failure_kind"),
        ({"failed_assertions": ("x",)}, "$.failed_assertions"),
        ({"latency_ms": -1.0}, "$.latency_ms"),
        ({"latency_ms": float("nan")}, "$.latency_ms"),
        ({"latency_ms": True}, "$.latency_ms"),
        ({"provider_write_count": -1}, "$.provider_write_count"),
        ({"case_id": "surrogate_case"}, "$.case_id"),
        ({"evidence": {"content": "Memory-core changes require evidence"}}, "$.evidence.content"),
        ({"evidence": {"scope": {"nested": 1}}}, "$.evidence.scope"),
        ({"evidence": {"path": "/home/alice/x"}}, "$.evidence.path"),
        ({"evidence": {"refs": ["ok", "not a token"]}}, "$.evidence.refs[1]"),
        ({"evidence": {"Bad-Key": 1}}, "$.evidence"),
        ({"evidence": {"ratio": 0.5}}, "$.evidence.ratio"),
    ],
)
def test_a_case_result_holds_its_invariants(changes: dict[str, Any], path: str) -> None:
    with pytest.raises(RecordValidationError) as caught:
        case(**changes)
    assert caught.value.path == path


def test_latency_is_a_float_of_milliseconds() -> None:
    assert case(latency_ms=3).latency_ms == 3.0
    assert isinstance(case(latency_ms=3).latency_ms, float)


def test_the_schema_refuses_what_the_records_refuse(passed: Evaluation) -> None:
    plain = wire.dump(passed)
    plain["cases"][0]["evidence"]["content"] = "raw text with spaces"
    with pytest.raises(RecordValidationError):
        schemas.validate(plain)
    plain = wire.dump(passed)
    plain["runner"] = "surrogate"
    with pytest.raises(RecordValidationError):
        schemas.validate(plain)


def _edited(passed: Evaluation, edit: Any) -> dict[str, Any]:
    plain: dict[str, Any] = json.loads(json.dumps(wire.dump(passed)))
    edit(plain)
    return plain


def _writes_hidden(plain: dict[str, Any]) -> None:
    # The probe's forgery: a case wrote, the sums and the flags say so, the fixture failed,
    # and the gate still says ready.
    plain["cases"][1]["provider_write_count"] = 3
    plain["metrics"]["provider_write_count"] = 3
    plain["dimensions"]["performance_and_cost"]["provider_write_count"] = 3
    plain["boundaries"]["provider_writes_performed"] = True
    plain["fixture"]["cleaned_up"] = False


@pytest.mark.parametrize(
    ("edit", "path"),
    [
        (_writes_hidden, "$.release_gate.reason_codes"),
        (lambda p: p["cases"][1].update(provider_write_count=3), "$.metrics.provider_write_count"),
        (lambda p: p["metrics"].update(model_tokens=7), "$.metrics.model_tokens"),
        (lambda p: p["cases"].reverse(), "$.cases"),
        (lambda p: p["dimensions"]["user_experience"].update(user_gate_count=1), "$.dimensions"),
        (
            lambda p: p["boundaries"].update(provider_writes_performed=True),
            "$.boundaries.provider_writes_performed",
        ),
        (lambda p: p["fixture"].update(provider_failure_count=4), "$.release_gate.reason_codes"),
    ],
)
def test_an_evaluation_whose_figures_disagree_with_its_cases_does_not_load(
    passed: Evaluation, edit: Any, path: str
) -> None:
    """DESIGN §4: a recorded verdict that disagrees with the re-derived one blocks; the
    dogfood gate reads the evaluation through this record, so it cannot be forged open."""
    from reward_memory._dogfood_batch import _open_gate_holds

    assert _open_gate_holds(_edited(passed, lambda p: None))
    plain = _edited(passed, edit)
    with pytest.raises(RecordValidationError) as caught:
        wire.load(plain)
    assert caught.value.path == path
    assert not _open_gate_holds(plain)
