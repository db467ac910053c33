"""Utility attribution of a post-outcome observation: proposal-only, default off (issue 9 item 3).

Protected: an evaluator's proposal is bound to the trusted facts (application
receipt, verified outcome, attribution context) or rejected; a rejected or
absent proposal never changes the dogfood receipt ("fail-open"); set-level
credit is never copied to items; the observation grants nothing, writes
nothing, and utility labels never affect batch readiness.
"""

from __future__ import annotations

import copy
import math
from typing import Any

import pytest

from reward_memory import schemas, wire
from reward_memory.dogfood import (
    build_batch,
    build_receipt,
    build_utility_observation,
    validate_utility_observation,
)
from reward_memory.errors import InputError, RecordValidationError
from reward_memory.records._plain import to_plain
from reward_memory.records.dogfood import DogfoodReceipt
from reward_memory.records.utility import UtilityObservation
from test_dogfood import DIGESTS, ISSUE_FIX_SURFACE, app_receipt, observation, refusal
from test_dogfood_batch import control, evaluation, loopx

CREATED = "2026-03-01T12:05:00+00:00"


def context(**changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "scope": {
            "agent_id": "agent:patcher",
            "project_id": "project:alpha",
            "corpus_id": "review_policy",
            "surface_id": ISSUE_FIX_SURFACE,
        },
        "retrieval_snapshot_ref": "snapshot:retrieval:1",
        "policy_snapshot_ref": "snapshot:policy:1",
    }
    data.update(changes)
    return data


def proposal(receipt: Any = None, **changes: Any) -> dict[str, Any]:
    receipt = receipt or app_receipt()
    data: dict[str, Any] = {
        "scope": context()["scope"],
        "application_id": receipt.application_id,
        "artifact_ref": receipt.artifact_ref,
        "outcome_ref": f"outcome:{receipt.application_id}",
        "outcome_status": "merged",
        "retrieval_snapshot_ref": "snapshot:retrieval:1",
        "policy_snapshot_ref": "snapshot:policy:1",
        "memory_ref_digests": list(receipt.memory_ref_digests),
        "utility_label": "helpful",
        "attribution_level": "set",
        "evidence_basis": "controlled_replay",
        "confidence": 0.8,
        "reason_codes": ["replay_matched"],
        "evidence_refs": ["replay:run-1"],
        "evaluator_ref": "evaluator:replay",
        "evaluation_version": "v1",
    }
    data.update(changes)
    return data


def with_attribution(receipt: Any = None, **changes: Any) -> dict[str, Any]:
    receipt = receipt or app_receipt()
    attribution = {"context": context(), "proposal": proposal(receipt), "created_at": CREATED}
    attribution.update(changes)
    return observation(receipt, utility_attribution=attribution)


def verified(receipt: Any = None) -> dict[str, Any]:
    receipt = receipt or app_receipt()
    return {
        "verified": True,
        "outcome_ref": f"outcome:{receipt.application_id}",
        "artifact_ref": receipt.artifact_ref,
        "outcome_status": "merged",
    }


def built(**changes: Any) -> UtilityObservation:
    receipt = app_receipt()
    return build_utility_observation(
        receipt, verified(receipt), context(), proposal(receipt, **changes), CREATED
    )


# -- default off, fail-open -------------------------------------------------------------------


def test_absent_attribution_is_not_requested() -> None:
    receipt = build_receipt(observation())
    assert (receipt.utility_evaluation.status, receipt.utility_evaluation.reason_code) == (
        "not_requested",
        "utility_attribution_not_requested",
    )
    assert receipt.utility_observation is None


def test_a_bound_proposal_is_accepted_as_an_observation() -> None:
    receipt = build_receipt(with_attribution())
    assert (receipt.utility_evaluation.status, receipt.utility_evaluation.reason_code) == (
        "accepted",
        None,
    )
    obs = receipt.utility_observation
    assert obs is not None
    assert obs.application_receipt_id == receipt.application_receipt_id
    assert obs.memory_ref_digests == receipt.memory_ref_digests
    assert obs.outcome_ref == receipt.module_outcome.outcome_ref
    assert obs.created_at == "2026-03-01T12:05:00Z"
    assert (
        obs.grants_new_action_authority,
        obs.provider_write_performed,
        obs.external_writes_performed,
        obs.raw_content_captured,
    ) == (False, False, False, False)
    packet = to_plain(receipt)
    schemas.validate(packet)
    schemas.validate(packet["utility_observation"])
    assert wire.load(packet, DogfoodReceipt) == receipt


def _rejects(**changes: Any) -> dict[str, Any]:
    receipt = app_receipt()
    data = with_attribution(receipt)
    for key, value in changes.items():
        target, _, name = key.partition("__")
        if name:
            data["utility_attribution"][target][name] = value
        else:
            data["utility_attribution"][key] = value
    return data


REJECTED = {
    "unknown proposal key": {"proposal__raw_comment": "x"},
    "scope echo": {"proposal__scope": {**context()["scope"], "agent_id": "agent:other"}},
    "application echo": {"proposal__application_id": "application:other"},
    "artifact echo": {"proposal__artifact_ref": "artifact:other"},
    "outcome echo": {"proposal__outcome_ref": "outcome:other"},
    "status echo": {"proposal__outcome_status": "reverted"},
    "retrieval snapshot echo": {"proposal__retrieval_snapshot_ref": "snapshot:retrieval:2"},
    "policy snapshot echo": {"proposal__policy_snapshot_ref": "snapshot:policy:2"},
    "insufficient but labelled": {"proposal__evidence_basis": "insufficient"},
    "no attribution but labelled": {"proposal__attribution_level": "none"},
    "label without evidence": {
        "proposal__evidence_refs": [],
        "proposal__evidence_basis": "evaluator_inference",
    },
    "strong basis without evidence": {
        "proposal__evidence_refs": [],
        "proposal__utility_label": "unknown",
    },
    "item credit for two memories": {"proposal__attribution_level": "item"},
    "item credit for a foreign memory": {
        "proposal__attribution_level": "item",
        "proposal__memory_ref_digests": ["ffffffffffffffff"],
    },
    "set credit for part of the set": {"proposal__memory_ref_digests": [DIGESTS[0]]},
    "confidence above one": {"proposal__confidence": 1.5},
    "confidence as a boolean": {"proposal__confidence": True},
    "confidence below zero": {"proposal__confidence": -0.1},
    "unknown label": {"proposal__utility_label": "great"},
    "duplicate evidence": {"proposal__evidence_refs": ["replay:run-1", "replay:run-1"]},
    "secret in a reason": {"proposal__reason_codes": ["sk-live-ABCDEFGHIJKLMNOPQRST1234"]},
    "uri as evidence": {"proposal__evidence_refs": ["https://example.com/x"]},
    "context corpus": {"context__scope": {**context()["scope"], "corpus_id": "other_corpus"}},
    "context surface": {
        "context__scope": {**context()["scope"], "surface_id": "semantic_preference.selection"}
    },
    "unknown context key": {"context__peer": "peer:x"},
    "created_at without offset": {"created_at": "2026-03-01T12:05:00"},
    "extra attribution key": {"label": "helpful"},
    "proposal not an object": {"proposal": ["helpful"]},
}


@pytest.mark.parametrize("changes", list(REJECTED.values()), ids=list(REJECTED))
def test_a_bad_proposal_is_rejected_and_changes_nothing_else(changes: dict[str, Any]) -> None:
    plain = build_receipt(observation(app_receipt()))
    rejected = build_receipt(_rejects(**changes))
    assert (rejected.utility_evaluation.status, rejected.utility_evaluation.reason_code) == (
        "rejected",
        "utility_attribution_rejected",
    )
    assert rejected.utility_observation is None
    # The settlement, its id and everything but the utility evaluation are unchanged.
    assert rejected.receipt_id == plain.receipt_id
    left, right = to_plain(rejected), to_plain(plain)
    del left["utility_evaluation"], right["utility_evaluation"]
    assert left == right


def test_the_receipt_id_is_the_same_whatever_the_utility_evaluation() -> None:
    ids = {
        build_receipt(observation()).receipt_id,
        build_receipt(with_attribution()).receipt_id,
        build_receipt(_rejects(proposal__utility_label="great")).receipt_id,
    }
    assert len(ids) == 1


def test_a_miss_has_no_memory_to_attribute() -> None:
    receipt = app_receipt("ignored")
    data = observation(
        receipt,
        utility_attribution={
            "context": context(),
            "proposal": proposal(receipt, memory_ref_digests=list(DIGESTS)),
            "created_at": CREATED,
        },
    )
    assert build_receipt(data).utility_evaluation.status == "rejected"


@pytest.mark.parametrize("value", [math.inf, math.nan, "0.5", None])
def test_a_confidence_is_a_finite_number(value: Any) -> None:
    assert refusal(lambda: built(confidence=value))[1] == "$.evaluator_proposal.confidence"


def test_a_non_json_value_in_the_observation_is_an_input_error() -> None:
    """A NaN never reaches the builder: the JSON boundary refuses the whole observation."""
    data = with_attribution()
    data["utility_attribution"]["proposal"]["confidence"] = math.nan
    with pytest.raises(InputError):
        build_receipt(data)


def test_item_level_credit_names_one_settled_memory() -> None:
    obs = built(attribution_level="item", memory_ref_digests=[DIGESTS[1]])
    assert obs.memory_ref_digests == (DIGESTS[1],)


def test_a_refute_can_be_attributed_too() -> None:
    receipt = app_receipt("refuted")
    built_receipt = build_receipt(with_attribution(receipt))
    assert built_receipt.application_disposition == "refuted"
    assert built_receipt.utility_evaluation.status == "accepted"


# -- the evaluation key -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "changes",
    [
        {"utility_label": "harmful"},
        {"confidence": 0.1},
        {"reason_codes": ["another_reason"]},
    ],
)
def test_the_observation_id_ignores_label_confidence_and_reasons(changes: dict[str, Any]) -> None:
    assert built(**changes).observation_id == built().observation_id


def test_the_order_of_listed_refs_changes_nothing() -> None:
    shuffled = built(
        memory_ref_digests=list(reversed(DIGESTS)),
        reason_codes=["b_reason", "a_reason"],
        evidence_refs=["replay:run-2", "replay:run-1"],
    )
    ordered = built(
        reason_codes=["a_reason", "b_reason"], evidence_refs=["replay:run-1", "replay:run-2"]
    )
    assert shuffled == ordered
    assert shuffled.memory_ref_digests == DIGESTS
    assert shuffled.reason_codes == ("a_reason", "b_reason")


def test_the_observation_id_is_stable_across_retries() -> None:
    receipt = app_receipt()
    later = build_utility_observation(
        receipt, verified(receipt), context(), proposal(receipt), "2026-03-02T00:00:00Z"
    )
    assert later.observation_id == built().observation_id


@pytest.mark.parametrize(
    "changes",
    [
        {"evaluation_version": "v2"},
        {"evidence_refs": ["replay:run-2"]},
        {"evaluator_ref": "evaluator:other"},
    ],
)
def test_the_observation_id_follows_the_evaluation(changes: dict[str, Any]) -> None:
    assert built(**changes).observation_id != built().observation_id


def test_the_observation_id_follows_the_receipt() -> None:
    receipt = app_receipt(n=5)
    other = build_utility_observation(
        receipt, verified(receipt), context(), proposal(receipt), CREATED
    )
    assert other.observation_id != built().observation_id
    assert other.observation_id.startswith("muo_")


# -- re-validation ---------------------------------------------------------------------------


def test_a_tampered_observation_is_refused() -> None:
    packet = to_plain(built())
    packet["evaluation_version"] = "v9"
    assert refusal(lambda: validate_utility_observation(packet)) == (
        "invalid_value",
        "$.observation_id",
    )
    packet = to_plain(built())
    packet["provider_write_performed"] = True
    assert refusal(lambda: validate_utility_observation(packet))[1] == "$.provider_write_performed"


def test_validation_re_binds_only_with_every_trusted_fact() -> None:
    receipt = app_receipt()
    obs = built()
    assert validate_utility_observation(to_plain(obs)) == obs
    assert validate_utility_observation(obs, receipt, verified(receipt), context()) == obs
    assert validate_utility_observation(obs, to_plain(receipt), verified(receipt), context()) == obs
    with pytest.raises(RecordValidationError, match="re-binding needs"):
        validate_utility_observation(obs, receipt)
    other = app_receipt(n=3)
    assert refusal(
        lambda: validate_utility_observation(obs, other, verified(other), context())
    ) == ("invalid_value", "$.application_receipt_id")
    assert refusal(
        lambda: validate_utility_observation(
            obs, receipt, verified(receipt), context(policy_snapshot_ref="snapshot:policy:9")
        )
    ) == ("invalid_value", "$.policy_snapshot_ref")


def test_a_loaded_receipt_refuses_an_observation_about_another_settlement() -> None:
    mine = to_plain(build_receipt(with_attribution()))
    foreign = to_plain(build_receipt(with_attribution(app_receipt(n=4))))
    mine["utility_observation"] = foreign["utility_observation"]
    assert refusal(lambda: wire.load(mine))[1] == "$.utility_observation.application_receipt_id"
    hidden = to_plain(build_receipt(with_attribution()))
    hidden["utility_evaluation"] = {
        "status": "rejected",
        "reason_code": "utility_attribution_rejected",
    }
    assert refusal(lambda: wire.load(hidden))[1] == "$.utility_observation"


@pytest.mark.parametrize(
    "evaluation_value",
    [
        {"status": "accepted", "reason_code": "utility_attribution_rejected"},
        {"status": "rejected", "reason_code": None},
    ],
)
def test_the_utility_evaluation_carries_its_own_reason(evaluation_value: dict[str, Any]) -> None:
    packet = to_plain(build_receipt(observation()))
    packet["utility_evaluation"] = evaluation_value
    with pytest.raises(RecordValidationError):
        wire.load(packet)


# -- labels never affect readiness -------------------------------------------------------------


@pytest.mark.parametrize("label", ["helpful", "harmful", "neutral"])
def test_utility_labels_never_change_readiness(label: str) -> None:
    receipt = app_receipt("applied")
    data = with_attribution(receipt)
    data["utility_attribution"]["proposal"]["utility_label"] = label
    receipts = [
        build_receipt(data),
        loopx("loopx.alpha", "ignored", 1),
        loopx("loopx.beta", "refuted", 2),
    ]
    batch = build_batch(receipts, [control("edit"), control("retire")], evaluation())
    plain = build_batch(
        [build_receipt(observation(receipt)), *receipts[1:]],
        [control("edit"), control("retire")],
        evaluation(),
    )
    assert (batch.status, batch.reason_codes) == (plain.status, plain.reason_codes)
    assert batch.metrics.utility_observation_count == 1
    assert getattr(batch.metrics, f"utility_{label}_count") == 1


def test_rejected_and_not_requested_are_counted() -> None:
    receipts = [
        build_receipt(_rejects(proposal__utility_label="great")),
        loopx("loopx.alpha", "ignored", 1),
    ]
    metrics = build_batch(receipts, [], evaluation()).metrics
    assert (metrics.utility_rejected_count, metrics.utility_not_requested_count) == (1, 1)
    assert metrics.utility_observation_count == 0


def test_the_builder_takes_the_wire_form_of_the_receipt() -> None:
    receipt = app_receipt()
    from_mapping = build_utility_observation(
        copy.deepcopy(to_plain(receipt)), verified(receipt), context(), proposal(receipt), CREATED
    )
    assert from_mapping == built()
    not_a_receipt: Any = "receipt"
    call = lambda: build_utility_observation(  # noqa: E731
        not_a_receipt, verified(receipt), context(), proposal(receipt), CREATED
    )
    assert refusal(call)[0] == "wrong_type"
