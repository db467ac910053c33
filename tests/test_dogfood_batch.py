"""The Stage-5 dogfood batch and its readiness (seeds, "Stage 5").

Contract: "reward_memory_dogfood_batch_v0 becomes ready_for_bounded_issue_fix_pilot
only when the Stage 4 gate still passes and the bounded batch contains at least
one Issue Fix result, two distinct LoopX domain results, all three hit/miss/refute
classes, and both operator controls. This is a trial-readiness statement.
Semantic-uplift and production-rollout claims remain false."
"""

from __future__ import annotations

import copy
import functools
import json
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reward_memory import schemas, wire
from reward_memory.dogfood import (
    build_batch,
    build_receipt,
    stage4_gate_verified,
    summarize_control,
)
from reward_memory.errors import RecordValidationError
from reward_memory.evaluation import evaluate
from reward_memory.records._plain import load_plain, to_plain
from reward_memory.records.dogfood import READY, DogfoodBatch, DogfoodReceipt
from test_dogfood import LOOPX_SURFACE, app_receipt, observation, refusal

READINESS_REASONS = (
    "stage4_release_gate_not_ready",
    "issue_fix_outcome_missing",
    "two_loopx_domains_required",
    "application_disposition_missing:applied",
    "application_disposition_missing:not_applied",
    "application_disposition_missing:refuted",
    "operator_control_missing:edit",
    "operator_control_missing:retire",
)


@functools.cache
def _passed_evaluation() -> str:
    return json.dumps(wire.dump(evaluate()))


def evaluation(*, passed: bool = True, gate: str | None = None) -> dict[str, Any]:
    """A real passed run (an open gate is believed only of a whole evaluation), or the
    compact shape of a closed one (which can only close the gate)."""
    if passed and gate is None:
        data: dict[str, Any] = json.loads(_passed_evaluation())
        return data
    gate = gate or ("ready_for_bounded_dogfood" if passed else "hold")
    return {
        "schema_version": "reward_memory_evaluation_v0",
        "ok": passed,
        "status": "passed" if passed else "failed",
        "release_gate": {
            "status": gate,
            "reason_codes": [] if gate == "ready_for_bounded_dogfood" else ["case_failed:x"],
            "semantic_uplift_claim_allowed": False,
            "production_rollout_allowed": False,
        },
    }


def control(kind: str = "edit", **changes: Any) -> dict[str, Any]:
    state = {"edit": "candidate", "retire": "retired", "revoke": "revoked", "purge": "purged"}
    data: dict[str, Any] = {
        "schema_version": "reward_memory_operator_control_receipt_v0",
        "control_ref": f"control:test:{kind}",
        "action": kind,
        "effective_action": kind,
        "operator_ref": "github:user:maintainer",
        "authority_ref": "owner:review-team",
        "authority_source_ref": "repository:authority-map",
        "authority_verified": True,
        "corpus_id": "review_policy",
        "prior_record_digest": "0123456789abcdef",
        "result_record_digest": "fedcba9876543210" if kind != "purge" else None,
        "result_state": state[kind],
        "reasoning_summary": "Current source truth supersedes this record.",
        "provider_write_performed": True,
        "readback_verified": True,
        "grants_new_action_authority": False,
        "raw_content_captured": False,
        "external_writes_performed": False,
    }
    data.update(changes)
    return data


def issue_fix(outcome: str = "applied", n: int = 0) -> DogfoodReceipt:
    return build_receipt(observation(app_receipt(outcome, n=n)))


def loopx(domain: str, outcome: str = "ignored", n: int = 1) -> DogfoodReceipt:
    # A LoopX domain is a module: each label its own module's surface.
    surface = LOOPX_SURFACE if domain == "loopx.alpha" else f"{domain.split('.')[1]}.selection"
    receipt = app_receipt(outcome, surface_id=surface, n=n)
    return build_receipt(observation(receipt, family="loopx", domain_id=domain))


def ready_receipts() -> list[DogfoodReceipt]:
    return [
        issue_fix("applied"),
        loopx("loopx.alpha", "ignored", 1),
        loopx("loopx.beta", "refuted", 2),
    ]


def ready_controls() -> list[dict[str, Any]]:
    return [control("edit"), control("retire")]


def test_a_complete_batch_is_ready_for_a_bounded_issue_fix_pilot() -> None:
    batch = build_batch(ready_receipts(), ready_controls(), evaluation())
    assert (batch.ok, batch.status, batch.reason_codes) == (True, READY, ())
    assert batch.stage4_gate_verified is True
    assert batch.loopx_domains == ("loopx.alpha", "loopx.beta")
    assert batch.application_dispositions == ("applied", "not_applied", "refuted")
    assert batch.operator_controls == ("edit", "retire")
    packet = to_plain(batch)
    schemas.validate(packet)
    assert packet["boundaries"] == {
        "semantic_uplift_claim_allowed": False,
        "production_rollout_allowed": False,
        "automatic_recall_enabled": False,
        "new_store_provider_or_scheduler_added": False,
        "operator_write_performed": False,
        "raw_content_captured": False,
    }
    assert wire.load(packet, DogfoodBatch) == batch == load_plain(packet, DogfoodBatch)
    assert wire.dump(batch) == packet


def test_the_metrics_count_and_total_the_batch() -> None:
    receipts = ready_receipts()
    metrics = build_batch(receipts, ready_controls(), evaluation()).metrics
    assert (metrics.receipt_count, metrics.issue_fix_receipt_count, metrics.loopx_domain_count) == (
        3,
        1,
        2,
    )
    assert (metrics.applied_count, metrics.not_applied_count, metrics.refuted_count) == (1, 1, 1)
    assert metrics.latency_ms == sum(r.cost.latency_ms for r in receipts)
    assert metrics.model_tokens == sum(r.cost.model_tokens for r in receipts)
    assert metrics.provider_call_count == sum(r.cost.provider_call_count for r in receipts)
    assert metrics.utility_not_requested_count == 3
    assert (metrics.operator_control_count, metrics.counted_operator_control_count) == (2, 2)


# -- every readiness condition -----------------------------------------------------------------


@pytest.mark.parametrize(
    "given_evaluation",
    [evaluation(passed=False), evaluation(passed=True, gate="hold")],
    ids=["failed", "held"],
)
def test_the_stage4_gate_must_still_pass(given_evaluation: dict[str, Any]) -> None:
    if given_evaluation["status"] == "passed":
        given_evaluation["release_gate"]["reason_codes"] = ["nonzero:provider_write_count"]
    batch = build_batch(ready_receipts(), ready_controls(), given_evaluation)
    assert (batch.ok, batch.status) == (False, "hold")
    assert batch.reason_codes == ("stage4_release_gate_not_ready",)
    assert batch.stage4_gate_verified is False


def test_an_issue_fix_result_is_required() -> None:
    receipts = [
        loopx("loopx.alpha", "applied", 1),
        loopx("loopx.beta", "ignored", 2),
        loopx("loopx.gamma", "refuted", 3),
    ]
    batch = build_batch(receipts, ready_controls(), evaluation())
    assert batch.reason_codes == ("issue_fix_outcome_missing",)


def test_two_distinct_loopx_domains_are_required() -> None:
    receipts = [
        issue_fix("applied"),
        loopx("loopx.alpha", "ignored", 1),
        loopx("loopx.alpha", "refuted", 2),
    ]
    batch = build_batch(receipts, ready_controls(), evaluation())
    assert batch.reason_codes == ("two_loopx_domains_required",)
    assert batch.metrics.loopx_domain_count == 1


def test_issue_fix_results_are_not_loopx_domains() -> None:
    receipts = [
        issue_fix("applied", 0),
        issue_fix("refuted", 1),
        loopx("loopx.alpha", "ignored", 2),
    ]
    batch = build_batch(receipts, ready_controls(), evaluation())
    assert batch.reason_codes == ("two_loopx_domains_required",)


@pytest.mark.parametrize(
    ("outcomes", "missing"),
    [
        (("ignored", "ignored", "refuted"), "applied"),
        (("applied", "applied", "refuted"), "not_applied"),
        (("applied", "failed", "not_available"), "refuted"),
    ],
)
def test_all_three_dispositions_are_required(outcomes: tuple[str, str, str], missing: str) -> None:
    receipts = [
        issue_fix(outcomes[0]),
        loopx("loopx.alpha", outcomes[1], 1),
        loopx("loopx.beta", outcomes[2], 2),
    ]
    batch = build_batch(receipts, ready_controls(), evaluation())
    assert batch.reason_codes == (f"application_disposition_missing:{missing}",)


@pytest.mark.parametrize("missing", ["edit", "retire"])
def test_both_operator_controls_are_required(missing: str) -> None:
    kept = [c for c in ready_controls() if c["action"] != missing]
    batch = build_batch(ready_receipts(), kept, evaluation())
    assert batch.reason_codes == (f"operator_control_missing:{missing}",)


@pytest.mark.parametrize(
    ("changes", "counted"),
    [
        ({"authority_verified": False}, False),
        ({"provider_write_performed": True, "readback_verified": False}, False),
        ({"provider_write_performed": False, "readback_verified": False}, True),
        ({"provider_write_performed": True, "readback_verified": True}, True),
        # A control that failed performed nothing, whatever its other flags say.
        *(
            ({"status": failed, "readback_verified": False}, False)
            for failed in ("provider_unavailable", "partial", "readback_unverified")
        ),
        ({"status": "lineage_conflict", "readback_verified": False, "reason_codes": ["x"]}, False),
        (
            {
                "status": "control_ready",
                "readback_verified": False,
                "provider_write_performed": False,
            },
            True,
        ),
        ({"status": "completed"}, True),
    ],
)
def test_a_control_counts_only_with_verified_authority_and_readback(
    changes: dict[str, Any], counted: bool
) -> None:
    controls = [control("edit", **changes), control("retire")]
    batch = build_batch(ready_receipts(), controls, evaluation())
    assert batch.controls[0].counted is counted
    assert batch.ok is counted
    if not counted:
        assert batch.reason_codes == ("operator_control_missing:edit",)
        assert batch.metrics.counted_operator_control_count == 1


@pytest.mark.parametrize(
    "changes",
    [
        {"status": "provider_unavailable"},  # failed, yet read back
        {"status": "completed", "readback_verified": False},
        {"status": "completed", "reason_codes": ["provider_write_failed"]},
        {"status": "partial", "readback_verified": False, "reason_codes": []},
    ],
)
def test_a_control_whose_status_contradicts_its_flags_is_refused(changes: dict[str, Any]) -> None:
    with pytest.raises(RecordValidationError) as caught:
        build_batch(ready_receipts(), [control("edit", **changes), control("retire")], None)
    assert caught.value.code == "inconsistent_receipt"


def test_a_control_status_outside_the_vocabulary_is_refused() -> None:
    with pytest.raises(RecordValidationError) as caught:
        build_batch(ready_receipts(), [control("edit", status="done"), control("retire")], None)
    assert caught.value.path == "$.operator_controls[0].status"


def test_revoke_and_purge_do_not_stand_in_for_edit_and_retire() -> None:
    controls = [control("revoke"), control("purge")]
    batch = build_batch(ready_receipts(), controls, evaluation())
    assert batch.reason_codes == (
        "operator_control_missing:edit",
        "operator_control_missing:retire",
    )
    assert batch.operator_controls == ("purge", "revoke")


def test_every_reason_in_its_fixed_order() -> None:
    receipts = [loopx("loopx.alpha", "failed", 1)]
    batch = build_batch(receipts, [], evaluation(passed=False))
    assert batch.reason_codes == tuple(
        r for r in READINESS_REASONS if r != "application_disposition_missing:not_applied"
    )


_KINDS = st.sampled_from(
    [
        ("issue_fix", None, "applied"),
        ("issue_fix", None, "ignored"),
        ("issue_fix", None, "refuted"),
        ("loopx", "loopx.alpha", "applied"),
        ("loopx", "loopx.alpha", "failed"),
        ("loopx", "loopx.beta", "refuted"),
        ("loopx", "loopx.gamma", "available_not_applied"),
    ]
)


@settings(max_examples=60, deadline=None)
@given(
    kinds=st.lists(_KINDS, min_size=1, max_size=8),
    actions=st.lists(
        st.sampled_from(["edit", "retire", "revoke", "purge"]), max_size=4, unique=True
    ),
    gate=st.booleans(),
)
def test_readiness_holds_exactly_when_every_condition_does(
    kinds: list[tuple[str, str | None, str]], actions: list[str], gate: bool
) -> None:
    receipts = []
    for n, (_family, domain, outcome) in enumerate(kinds):
        receipts.append(issue_fix(outcome, n) if domain is None else loopx(domain, outcome, n))
    batch = build_batch(receipts, [control(a) for a in actions], evaluation(passed=gate))
    conditions = (
        gate,
        any(family == "issue_fix" for family, _, _ in kinds),
        len({domain for _, domain, _ in kinds if domain}) >= 2,
        {r.application_disposition for r in receipts} == {"applied", "not_applied", "refuted"},
        {"edit", "retire"} <= set(actions),
    )
    assert batch.ok is all(conditions)
    assert (batch.status == READY) is all(conditions)
    assert set(batch.reason_codes) <= set(READINESS_REASONS)
    assert list(batch.reason_codes) == [r for r in READINESS_REASONS if r in batch.reason_codes]
    assert wire.load(to_plain(batch)) == batch


# -- nothing is counted twice --------------------------------------------------------------


def test_a_receipt_is_not_counted_twice() -> None:
    receipts = ready_receipts()
    assert refusal(
        lambda: build_batch([*receipts, receipts[0]], ready_controls(), evaluation())
    ) == (
        "duplicate_item",
        "$.receipts[3]",
    )


def test_an_application_settlement_is_not_counted_twice() -> None:
    """Two observations over one application receipt (another module outcome) are one settlement."""
    receipts = ready_receipts()
    again = observation(app_receipt("applied"))
    again["module_outcome"]["outcome_status"] = "reverted"
    twin = build_receipt(again)
    assert twin.receipt_id != receipts[0].receipt_id
    with pytest.raises(RecordValidationError, match="application settlement") as info:
        build_batch([*receipts, twin], ready_controls(), evaluation())
    assert info.value.path == "$.receipts[3]"


def test_an_edited_copy_of_one_application_is_not_another_settlement() -> None:
    """The same application (id, artifact, corpus, surface, memory) with one character of
    its reasoning changed has another receipt id, but it is one settlement: it is refused,
    not counted again (nor as a second module domain)."""
    import attrs

    receipts = ready_receipts()
    original = app_receipt("applied")
    edited = attrs.evolve(original, reasoning_summary=original.reasoning_summary + "!")
    twin = build_receipt(observation(edited))
    assert twin.application_id == receipts[0].application_id
    assert twin.application_receipt_id != receipts[0].application_receipt_id
    with pytest.raises(RecordValidationError, match="application settlement") as info:
        build_batch([*receipts, twin], ready_controls(), evaluation())
    assert info.value.path == "$.receipts[3]"


def test_an_operator_control_is_not_counted_twice() -> None:
    controls = [
        *ready_controls(),
        control(
            "retire",
            action="edit",
            effective_action="edit",
            result_state="candidate",
            control_ref="control:test:edit",
        ),
    ]
    with pytest.raises(RecordValidationError, match="operator control"):
        build_batch(ready_receipts(), controls, evaluation())


def test_a_loaded_batch_with_a_duplicate_is_refused() -> None:
    packet = to_plain(build_batch(ready_receipts(), ready_controls(), evaluation()))
    packet["receipts"].append(copy.deepcopy(packet["receipts"][0]))
    with pytest.raises(RecordValidationError):
        wire.load(packet)


# -- bounds ------------------------------------------------------------------------------------


def test_a_batch_holds_one_to_twenty_four_receipts_and_eight_controls() -> None:
    assert refusal(lambda: build_batch([], [], evaluation()))[1] == "$.receipts"
    many = [issue_fix("applied", n) for n in range(25)]
    assert refusal(lambda: build_batch(many, [], evaluation()))[1] == "$.receipts"
    controls = [control("edit", control_ref=f"control:{n}") for n in range(9)]
    assert (
        refusal(lambda: build_batch(ready_receipts(), controls, evaluation()))[1]
        == "$.operator_controls"
    )
    assert refusal(lambda: build_batch("receipts", [], evaluation()))[0] == "wrong_type"  # type: ignore[arg-type]


# -- receipts given as data are re-validated in full -------------------------------------------


def test_receipt_mappings_are_re_validated() -> None:
    packets = [to_plain(r) for r in ready_receipts()]
    assert build_batch(packets, ready_controls(), evaluation()).ok is True
    forged = copy.deepcopy(packets)
    forged[1]["receipt_id"] = "dogfood:" + "a" * 20
    assert refusal(lambda: build_batch(forged, ready_controls(), evaluation())) == (
        "invalid_value",
        "$.receipts[1].receipt_id",
    )
    nested = copy.deepcopy(packets)
    nested[0]["verification"]["raw_log"] = "transcript"
    assert refusal(lambda: build_batch(nested, ready_controls(), evaluation())) == (
        "unknown_field",
        "$.receipts[0].verification.raw_log",
    )
    relabelled = copy.deepcopy(packets)
    relabelled[1]["application_disposition"] = "applied"
    assert refusal(lambda: build_batch(relabelled, ready_controls(), evaluation()))[1] == (
        "$.receipts[1].application_disposition"
    )


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("status", READY),
        ("ok", True),
        ("reason_codes", []),
        ("stage4_gate_verified", "yes"),
        ("loopx_domains", ["loopx.alpha", "loopx.beta", "loopx.gamma"]),
        ("operator_controls", ["edit", "retire"]),
    ],
)
def test_a_loaded_batch_is_re_derived_not_trusted(key: str, value: Any) -> None:
    held = build_batch(ready_receipts(), ready_controls()[:1], evaluation())
    packet = to_plain(held)
    packet[key] = value
    with pytest.raises(RecordValidationError):
        wire.load(packet)
    with pytest.raises(RecordValidationError):
        load_plain(copy.deepcopy(packet), DogfoodBatch)


def test_loaded_metrics_are_re_derived() -> None:
    packet = to_plain(build_batch(ready_receipts(), ready_controls(), evaluation()))
    packet["metrics"]["refuted_count"] = 2
    assert refusal(lambda: wire.load(packet))[1] == "$.metrics"


def test_a_loaded_ready_batch_cannot_claim_uplift() -> None:
    packet = to_plain(build_batch(ready_receipts(), ready_controls(), evaluation()))
    packet["boundaries"]["semantic_uplift_claim_allowed"] = True
    with pytest.raises(RecordValidationError):
        wire.load(packet)


# -- the evaluation is checked strictly ---------------------------------------------------------


@pytest.mark.parametrize(
    ("mutate", "path"),
    [
        (
            lambda e: e.update(schema_version="reward_memory_evaluation_v1"),
            "$.evaluation.schema_version",
        ),
        (lambda e: e.pop("schema_version"), "$.evaluation.schema_version"),
        (lambda e: e.update(status="ready"), "$.evaluation.status"),
        (lambda e: e.update(status=True), "$.evaluation.status"),
        (lambda e: e.pop("release_gate"), "$.evaluation.release_gate"),
        (lambda e: e.update(release_gate="ready_for_bounded_dogfood"), "$.evaluation.release_gate"),
        (
            lambda e: e["release_gate"].update(status="advance_stage_5"),
            "$.evaluation.release_gate.status",
        ),
        (lambda e: e.update(ok=False), "$.evaluation.ok"),
        (lambda e: e.update(ok="true"), "$.evaluation.ok"),
        (lambda e: e.update(status="failed", ok=False), "$.evaluation.release_gate.status"),
        (
            lambda e: e["release_gate"].update(reason_codes=["case_failed:x"]),
            "$.evaluation.release_gate.status",
        ),
        (
            lambda e: e["release_gate"].update(reason_codes="none"),
            "$.evaluation.release_gate.reason_codes",
        ),
        (
            lambda e: e["release_gate"].update(production_rollout_allowed=True),
            "$.evaluation.release_gate.production_rollout_allowed",
        ),
        (
            lambda e: e["release_gate"].update(semantic_uplift_claim_allowed=None),
            "$.evaluation.release_gate.semantic_uplift_claim_allowed",
        ),
    ],
)
def test_a_malformed_or_contradictory_evaluation_is_refused(mutate: Any, path: str) -> None:
    given_evaluation = evaluation()
    mutate(given_evaluation)
    assert (
        refusal(lambda: build_batch(ready_receipts(), ready_controls(), given_evaluation))[1]
        == path
    )


@pytest.mark.parametrize("value", ["passed", ["passed"], 1, True])
def test_an_evaluation_must_be_a_mapping_or_a_record(value: Any) -> None:
    assert refusal(lambda: stage4_gate_verified(value)) == ("wrong_type", "$.evaluation")


def test_no_evaluation_is_a_closed_gate() -> None:
    batch = build_batch(ready_receipts(), ready_controls(), None)
    assert (batch.status, batch.reason_codes) == ("hold", ("stage4_release_gate_not_ready",))


@attrs.frozen(kw_only=True)
class _Gate:
    status: str
    reason_codes: tuple[str, ...] = ()


@attrs.frozen(kw_only=True)
class _Evaluation:
    schema_version: str = "reward_memory_evaluation_v0"
    status: str
    release_gate: _Gate


@pytest.mark.parametrize(
    ("status", "gate", "verified"),
    [("passed", "ready_for_bounded_dogfood", True), ("failed", "hold", False)],
)
def test_an_evaluation_record_is_unstructured_through_the_wire(
    status: str, gate: str, verified: bool
) -> None:
    """The Stage-4 evaluation arrives as its attrs record as well as its mapping; an open
    gate is believed only of a whole evaluation (a look-alike that says so is refused)."""
    record = _Evaluation(status=status, release_gate=_Gate(status=gate))
    assert stage4_gate_verified(record) is verified  # the shape says so
    batch = build_batch(ready_receipts(), ready_controls(), record)
    assert batch.ok is False  # but a look-alike proves nothing: the batch holds
    assert batch.reason_codes == ("stage4_release_gate_not_ready",)
    assert build_batch(ready_receipts(), ready_controls(), evaluate()).ok is True


def test_an_open_gate_is_believed_only_when_its_cases_bear_it_out() -> None:
    """A failed run edited to say ``passed``, or a mapping that only says so, is refused
    with its field path: the evaluation record re-derives the gate from its cases."""
    edited = evaluation()
    for case in edited["cases"]:
        case["passed"] = False
    bare = {
        "schema_version": "reward_memory_evaluation_v0",
        "status": "passed",
        "release_gate": {"status": "ready_for_bounded_dogfood"},
    }
    for claim in (edited, bare):
        batch = build_batch(ready_receipts(), ready_controls(), claim)
        assert (batch.status, batch.reason_codes) == ("hold", ("stage4_release_gate_not_ready",))
        assert batch.stage4_gate_verified is False


def test_a_default_application_id_over_other_memory_is_another_settlement() -> None:
    """The boundary's default application id repeats: the same id and artifact over
    other memory is another application, not a double count."""
    first = issue_fix("applied", 0)
    again = build_receipt(
        observation(
            app_receipt(
                "applied",
                n=0,
                application_id=first.application_id,
                memory_ref_digests=("a0a1550ba29bc88b",),
            )
        )
    )
    assert again.memory_ref_digests != first.memory_ref_digests
    assert build_batch([first, again], ready_controls(), evaluation()).receipts == (first, again)


def test_two_labels_on_one_module_are_one_loopx_domain() -> None:
    """A domain id is a label; the module is the application's surface."""
    one_module = [
        issue_fix("applied"),
        build_receipt(
            observation(
                app_receipt("ignored", surface_id=LOOPX_SURFACE, n=1),
                family="loopx",
                domain_id="loopx.anything",
            )
        ),
        build_receipt(
            observation(
                app_receipt("refuted", surface_id=LOOPX_SURFACE, n=2),
                family="loopx",
                domain_id="loopx.else",
            )
        ),
    ]
    batch = build_batch(one_module, ready_controls(), evaluation())
    assert batch.reason_codes == ("two_loopx_domains_required",)
    assert batch.metrics.loopx_domain_count == 1


def test_a_control_with_its_status_keeps_its_receipts_invariants() -> None:
    """Ours carry a status: then the whole receipt is loaded (a missing optional key
    does not skip the check that a completed control names no failure)."""
    bad = control("edit", status="completed", reason_codes=["provider_write_failed"])
    bad.pop("deleted_count", None)
    with pytest.raises(RecordValidationError) as caught:
        build_batch(ready_receipts(), [bad, control("retire")], evaluation())
    assert caught.value.path.startswith("$.operator_controls[0]")


def test_a_control_with_an_unknown_field_is_refused() -> None:
    with pytest.raises(RecordValidationError) as caught:
        build_batch(
            ready_receipts(), [control("edit", raw_log="x"), control("retire")], evaluation()
        )
    assert (caught.value.path, caught.value.code) == (
        "$.operator_controls[0].raw_log",
        "unknown_field",
    )


# -- operator-control receipts ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "path"),
    [
        ({"schema_version": "reward_memory_operator_control_v0"}, "$.schema_version"),
        ({"effective_action": "retire"}, "$.effective_action"),
        ({"action": "delete", "effective_action": "delete"}, "$.action"),
        ({"result_state": "retired"}, "$.result_state"),
        ({"authority_verified": "true"}, "$.authority_verified"),
        ({"provider_write_performed": 1}, "$.provider_write_performed"),
        ({"readback_verified": None}, "$.readback_verified"),
        ({"grants_new_action_authority": True}, "$.grants_new_action_authority"),
        ({"raw_content_captured": True}, "$.raw_content_captured"),
        ({"external_writes_performed": None}, "$.external_writes_performed"),
        ({"prior_record_digest": "XYZ"}, "$.prior_record_digest"),
        ({"result_record_digest": None}, "$.result_record_digest"),
        ({"control_ref": "control ref with spaces"}, "$.control_ref"),
        ({"operator_ref": "/home/alice/key"}, "$.operator_ref"),
        ({"corpus_id": "Review Policy"}, "$.corpus_id"),
        ({"reasoning_summary": "x" * 501}, "$.reasoning_summary"),
    ],
)
def test_a_malformed_control_receipt_is_refused(changes: dict[str, Any], path: str) -> None:
    assert refusal(lambda: summarize_control(control("edit", **changes)))[1] == path


@pytest.mark.parametrize(
    "key", ["control_ref", "authority_verified", "grants_new_action_authority", "readback_verified"]
)
def test_a_control_receipt_missing_a_field_is_refused(key: str) -> None:
    data = control("retire")
    del data[key]
    assert refusal(lambda: summarize_control(data)) == ("missing_field", f"$.{key}")


def test_a_control_error_names_its_position_in_the_batch() -> None:
    controls = [control("edit"), control("retire", effective_action="edit")]
    assert refusal(lambda: build_batch(ready_receipts(), controls, evaluation()))[1] == (
        "$.operator_controls[1].effective_action"
    )


def test_a_control_keeps_only_what_the_batch_needs() -> None:
    """Extra keys of the control receipt are neither trusted nor copied."""
    data = control("retire", next_step="owner_write_retirement_then_exact_readback")
    summary = summarize_control(data)
    assert set(to_plain(summary)) == {
        "control_ref",
        "action",
        "result_state",
        "authority_verified",
        "provider_write_performed",
        "readback_verified",
        "counted",
        "status",  # the control's own status: a failed control never counts
    }
    packet = to_plain(build_batch(ready_receipts(), [control("edit"), data], evaluation()))
    assert "reasoning_summary" not in str(packet["controls"])
    assert "owner_write_retirement" not in str(packet)


def test_a_loaded_control_summary_cannot_claim_to_count() -> None:
    packet = to_plain(
        build_batch(
            ready_receipts(),
            [control("edit", authority_verified=False), control("retire")],
            evaluation(),
        )
    )
    packet["controls"][0]["counted"] = True
    with pytest.raises(RecordValidationError):
        wire.load(packet)


def test_applications_sharing_a_default_id_on_other_artifacts_are_distinct() -> None:
    """``Experiment.boundary`` names every application ``boundary`` by default: three
    applications on three artifacts are three settlements, not one counted thrice."""
    import attrs

    receipts = [
        build_receipt(
            observation(
                attrs.evolve(app_receipt(outcome, n=n), application_id="boundary"),
                **({"family": "loopx", "domain_id": f"loopx.d{n}"} if family == "loopx" else {}),
            )
        )
        for n, (outcome, family) in enumerate(
            [("applied", "issue_fix"), ("ignored", "issue_fix"), ("refuted", "issue_fix")]
        )
    ]
    batch = build_batch(receipts, ready_controls(), evaluation())
    assert len(batch.receipts) == 3


def test_a_failed_control_with_its_status_taken_out_never_counts() -> None:
    """A real failed receipt (lineage_conflict, record_not_found) with only its status
    key deleted used to read as the original's status-less kind and count."""
    failed = control(
        "retire",
        status="lineage_conflict",
        reason_codes=["record_not_found"],
        provider_write_performed=False,
        readback_verified=False,
    )
    stripped = {key: value for key, value in failed.items() if key != "status"}
    with pytest.raises(RecordValidationError) as caught:
        summarize_control(stripped)
    assert (caught.value.path, caught.value.code) == ("$.status", "missing_field")
    assert build_batch(ready_receipts(), [control("edit"), failed], evaluation()).status == "hold"
