"""Stage 5: dogfood receipts over Stage-3 application receipts.

One thin evidence layer, no store, scheduler, router, automatic recall or
evaluator of its own (seeds, "Stage 5"):

- :func:`build_receipt` turns a compact real-module observation into a
  ``reward_memory_dogfood_receipt_v1``. The disposition is *derived* from the
  application receipt's outcome -- ``applied`` (the seeds' hit), ``not_applied``
  (miss: ignored, failed, not available, available but not applied) or
  ``refuted`` (refute) -- and an observation has no field in which a caller
  could label it. A hit or a refute needs an exact provider readback, a
  verified current artifact and at least one hashed memory ref; the module
  outcome must be verified and name the receipt's artifact.
- Utility attribution (``utility_attribution`` on the observation) is
  proposal-only and default off: absent, nothing is evaluated
  (``not_requested``); present, it is bound to the trusted facts by
  :mod:`reward_memory._utility`, and any problem with it is ``rejected`` --
  fail-open: the receipt, ``receipt_id`` included, is the same in every case.
- :func:`build_batch` (in :mod:`reward_memory._dogfood_batch`) decides whether a
  bounded Issue Fix pilot may start.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

from reward_memory._dogfood_batch import build_batch, stage4_gate_verified, summarize_control
from reward_memory._utility import (
    application_receipt_id,
    build_utility_observation,
    validate_utility_observation,
)
from reward_memory.errors import RecordValidationError
from reward_memory.records._plain import from_plain
from reward_memory.records.dogfood import (
    DISPOSITION_OF,
    INPUT_SCHEMA,
    DogfoodObservation,
    DogfoodReceipt,
    ModuleOutcome,
    UtilityEvaluation,
    Verification,
    check_domain,
    receipt_id_of,
)

if TYPE_CHECKING:
    from reward_memory.records.utility import UtilityObservation

__all__ = [
    "application_receipt_id",
    "build_batch",
    "build_receipt",
    "build_utility_observation",
    "load_observation",
    "stage4_gate_verified",
    "summarize_control",
    "validate_utility_observation",
]

_ATTRIBUTION_KEYS = frozenset({"context", "proposal", "created_at"})


def _bad(message: str, path: str, code: str = "invalid_value") -> RecordValidationError:
    return RecordValidationError(message, path=path, code=code)


def load_observation(observation: DogfoodObservation | Mapping[str, Any]) -> DogfoodObservation:
    """An observation record from a record or from its JSON mapping (schema-checked, strict)."""
    if isinstance(observation, DogfoodObservation):
        return observation
    if not isinstance(observation, Mapping):
        raise _bad("must be a dogfood observation object", "$", "wrong_type")
    from reward_memory import schemas  # noqa: PLC0415 - the JSON boundary only

    data = dict(observation)
    schemas.validate_definition(data, INPUT_SCHEMA, "Observation")
    return cast("DogfoodObservation", from_plain(DogfoodObservation, data))


def _utility(
    observation: DogfoodObservation,
) -> tuple[UtilityEvaluation, UtilityObservation | None]:
    attribution = observation.utility_attribution
    if attribution is None:
        return UtilityEvaluation(
            status="not_requested", reason_code="utility_attribution_not_requested"
        ), None
    app = observation.application_receipt
    outcome = observation.module_outcome
    try:
        if set(attribution) != _ATTRIBUTION_KEYS:
            raise _bad("must be exactly {context, proposal, created_at}", "$.utility_attribution")
        built = build_utility_observation(
            app,
            {
                "verified": True,
                "outcome_ref": outcome.outcome_ref,
                "artifact_ref": outcome.artifact_ref,
                "outcome_status": outcome.outcome_status,
            },
            attribution["context"],
            attribution["proposal"],
            attribution["created_at"],
        )
    except (ValueError, TypeError):  # RecordValidationError, or a Python caller's odd value
        # Fail-open: a bad proposal is recorded as rejected, never as an error,
        # and never changes the settlement it was about.
        return UtilityEvaluation(
            status="rejected", reason_code="utility_attribution_rejected"
        ), None
    return UtilityEvaluation(status="accepted", reason_code=None), built


def build_receipt(observation: DogfoodObservation | Mapping[str, Any]) -> DogfoodReceipt:
    """Derive the ``reward_memory_dogfood_receipt_v1`` of one observation.

    Raises:
        RecordValidationError: the observation is malformed (unknown or missing
            field, a label where none belongs, unsafe text), its artifact is not
            the application receipt's, its provider-call count is below the
            receipt's, or a hit or refute lacks exact readback, a verified
            current artifact or a hashed memory ref. The field path is named.
    """
    obs = load_observation(observation)
    app = obs.application_receipt
    if app.artifact_ref is None:
        raise _bad(
            "a dogfood receipt needs the artifact the model verified",
            "$.application_receipt.artifact_ref",
        )
    if obs.module_outcome.artifact_ref != app.artifact_ref:
        raise _bad("must be the application receipt's artifact", "$.module_outcome.artifact_ref")
    if obs.cost.provider_call_count < app.provider_call_count:
        raise _bad(
            "is below the application receipt's own provider-call count",
            "$.cost.provider_call_count",
            "contradictory_observation",
        )
    check_domain(
        obs.domain_family,
        obs.domain_id,
        app.surface_id,
        surface_path="$.application_receipt.surface_id",
    )
    disposition = DISPOSITION_OF[app.outcome]
    if disposition != "not_applied":
        for flag in ("result_readback_verified", "current_artifact_verified"):
            if getattr(app, flag) is not True:
                raise _bad(
                    f"a {disposition} disposition needs {flag}", f"$.application_receipt.{flag}"
                )
        if not app.memory_ref_digests:
            raise _bad(
                f"a {disposition} disposition names its memory",
                "$.application_receipt.memory_ref_digests",
            )
        # An exact readback is a provider call: a receipt that claims one without
        # any contradicts itself (reference 11.1: calls > 0).
        if app.provider_call_count < 1:
            raise _bad(
                f"a {disposition} disposition's exact readback takes provider calls",
                "$.application_receipt.provider_call_count",
                "contradictory_observation",
            )
    receipt_ref = application_receipt_id(app)
    evaluation, utility = _utility(obs)
    outcome = obs.module_outcome
    return DogfoodReceipt(
        domain_family=obs.domain_family,
        domain_id=obs.domain_id,
        application_id=app.application_id,
        application_receipt_id=receipt_ref,
        artifact_ref=app.artifact_ref,
        corpus_id=app.corpus_id,
        surface_id=app.surface_id,
        application_outcome=app.outcome,
        application_disposition=disposition,
        module_outcome=ModuleOutcome(
            outcome_ref=outcome.outcome_ref,
            outcome_status=outcome.outcome_status,
            summary=outcome.summary,
        ),
        utility_evaluation=evaluation,
        utility_observation=utility,
        memory_ref_digests=app.memory_ref_digests,
        verification=Verification(
            result_readback_verified=app.result_readback_verified,
            current_artifact_verified=app.current_artifact_verified,
        ),
        cost=obs.cost,
        intervention=obs.intervention,
        bot_feedback=obs.bot_feedback,
        receipt_id=receipt_id_of(
            application_receipt_id=receipt_ref,
            application_outcome=app.outcome,
            application_disposition=disposition,
            outcome_ref=outcome.outcome_ref,
            outcome_status=outcome.outcome_status,
        ),
    )
