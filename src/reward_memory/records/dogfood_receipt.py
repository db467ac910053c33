"""Stage-5 dogfood observation (input side) and receipt records.

- :class:`DogfoodObservation` -- what a caller supplies: a compact real-module
  outcome whose ``artifact_ref`` matches a Stage-3 application receipt, its costs
  and interventions. It carries no disposition: that is derived (never a label).
- :class:`DogfoodReceipt` (``reward_memory_dogfood_receipt_v1``) -- the derived
  disposition (``applied`` / ``not_applied`` / ``refuted``, the seeds' hit / miss
  / refute), hashed memory refs, the compact outcome summary, latency, tokens,
  provider calls and interventions. Never raw content, never new authority. Its
  validators re-derive everything a receipt claims, ``receipt_id`` included, so a
  receipt loaded back from data is re-validated in full.
"""

from __future__ import annotations

import re
from typing import Any, Final, Literal

import attrs

from reward_memory._frozen import frozen
from reward_memory.digests import make_ref
from reward_memory.records import _fields as f
from reward_memory.records._dogfood_fields import (
    DISPOSITION_OF,
    DISPOSITIONS,
    DOMAIN_FAMILIES,
    MAX_COUNT,
    MODEL_OUTCOMES,
    RECEIPT_SCHEMA,
    UTILITY_REASONS,
    Disposition,
    DomainFamily,
    UtilityStatus,
    bad,
    check_domain,
    digest_list,
    record_of,
)
from reward_memory.records.application import ApplicationReceipt
from reward_memory.records.utility import UtilityObservation

# -- observation input --------------------------------------------------------------------


@frozen(kw_only=True)
class ObservedOutcome:
    """The caller's verified real-module outcome (input side)."""

    artifact_ref: str = f.token()
    outcome_verified: Literal[True] = f.const(True)
    outcome_ref: str = f.token()
    outcome_status: str = f.token()
    summary: str = f.text(360)


@frozen(kw_only=True)
class DogfoodCost:
    """What the application cost: wall latency, model tokens, provider calls."""

    latency_ms: int = f.integer(maximum=MAX_COUNT)
    model_tokens: int = f.integer(maximum=MAX_COUNT)
    provider_call_count: int = f.integer(maximum=MAX_COUNT)


@frozen(kw_only=True)
class Intervention:
    """Maintainer interventions: a count, and a compact summary exactly when there were any."""

    count: int = f.integer(maximum=MAX_COUNT)
    summary: str | None = f.optional_text(240)

    def __attrs_post_init__(self) -> None:
        if self.count > 0 and self.summary is None:
            raise bad("an intervention count above 0 needs a summary", "$.summary")
        if self.count == 0 and self.summary is not None:
            raise bad("no intervention, no summary", "$.summary")


@frozen(kw_only=True)
class BotFeedback:
    """Optional compact bot feedback (default: not captured)."""

    captured: bool = f.strict_bool(default=False)
    summary: str | None = f.optional_text(240)

    def __attrs_post_init__(self) -> None:
        if self.captured and self.summary is None:
            raise bad("captured bot feedback needs a summary", "$.summary")
        if not self.captured and self.summary is not None:
            raise bad("feedback not captured, no summary", "$.summary")


@frozen(kw_only=True)
class DogfoodObservation:
    """One compact real-module observation over a Stage-3 application receipt.

    ``utility_attribution`` is an optional post-outcome evaluator proposal
    (``{context, proposal, created_at}``); it is checked by the receipt builder
    and any problem with it is a ``rejected`` utility evaluation, never an error.
    """

    raw_content_captured: Literal[False] = f.const(False)
    domain_family: DomainFamily = f.enum(*DOMAIN_FAMILIES)
    domain_id: str = f.token()
    application_receipt: ApplicationReceipt = attrs.field(validator=record_of(ApplicationReceipt))
    module_outcome: ObservedOutcome = attrs.field(validator=record_of(ObservedOutcome))
    cost: DogfoodCost = attrs.field(validator=record_of(DogfoodCost))
    intervention: Intervention = attrs.field(validator=record_of(Intervention))
    bot_feedback: BotFeedback = attrs.field(factory=BotFeedback, validator=record_of(BotFeedback))
    utility_attribution: dict[str, Any] | None = None


# -- receipt --------------------------------------------------------------------------------


@frozen(kw_only=True)
class ModuleOutcome:
    """The verified module outcome as the receipt keeps it (compact; no artifact copy)."""

    verified: Literal[True] = f.const(True)
    outcome_ref: str = f.token()
    outcome_status: str = f.token()
    summary: str = f.text(360)


@frozen(kw_only=True)
class Verification:
    """The two verifications a hit or a refute needs."""

    result_readback_verified: bool = f.strict_bool()
    current_artifact_verified: bool = f.strict_bool()


@frozen(kw_only=True)
class UtilityEvaluation:
    """Whether a utility attribution was requested, and whether it was accepted."""

    status: UtilityStatus = f.enum(*UTILITY_REASONS)
    reason_code: str | None = None

    def __attrs_post_init__(self) -> None:
        if self.reason_code != UTILITY_REASONS[self.status]:
            raise bad(f"must be {UTILITY_REASONS[self.status]} when {self.status}", "$.reason_code")


def receipt_id_of(
    *,
    application_receipt_id: str,
    application_outcome: str,
    application_disposition: str,
    outcome_ref: str,
    outcome_status: str,
) -> str:
    """``dogfood:`` + 20 hex over the settlement identity (domain, costs and utility excluded)."""
    return make_ref(
        "dogfood",
        {
            "schema_version": RECEIPT_SCHEMA,
            "application_receipt_id": application_receipt_id,
            "application_outcome": application_outcome,
            "application_disposition": application_disposition,
            "module_outcome_ref": outcome_ref,
            "module_outcome_status": outcome_status,
        },
    )


_RECEIPT_ID: Final = re.compile(r"rma_[0-9a-f]{64}")


def _application_receipt_id(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if not isinstance(value, str) or _RECEIPT_ID.fullmatch(value) is None:
        raise bad("must be rma_ and 64 lower-case hex", f"$.{attribute.name}", "invalid_format")


@frozen(kw_only=True)
class DogfoodReceipt:
    """``reward_memory_dogfood_receipt_v1``: one settled application, derived and compact."""

    ok: Literal[True] = f.const(True)
    schema_version: Literal["reward_memory_dogfood_receipt_v1"] = f.const(RECEIPT_SCHEMA)
    domain_family: DomainFamily = f.enum(*DOMAIN_FAMILIES)
    domain_id: str = f.token()
    application_id: str = f.token()
    application_receipt_id: str = attrs.field(validator=_application_receipt_id)
    artifact_ref: str = f.token()
    corpus_id: str = f.corpus_id()
    surface_id: str = f.surface_id()
    application_outcome: str = f.enum(*DISPOSITION_OF)
    application_disposition: Disposition = f.enum(*DISPOSITIONS)
    module_outcome: ModuleOutcome = attrs.field(validator=record_of(ModuleOutcome))
    utility_evaluation: UtilityEvaluation = attrs.field(validator=record_of(UtilityEvaluation))
    utility_observation: UtilityObservation | None = attrs.field(
        default=None, validator=record_of(UtilityObservation, optional=True)
    )
    memory_ref_digests: tuple[str, ...] = attrs.field(converter=digest_list)
    verification: Verification = attrs.field(validator=record_of(Verification))
    cost: DogfoodCost = attrs.field(validator=record_of(DogfoodCost))
    intervention: Intervention = attrs.field(validator=record_of(Intervention))
    bot_feedback: BotFeedback = attrs.field(validator=record_of(BotFeedback))
    receipt_id: str = f.token()
    grants_new_action_authority: Literal[False] = f.const(False)
    raw_content_captured: Literal[False] = f.const(False)
    external_writes_performed: Literal[False] = f.const(False)

    def __attrs_post_init__(self) -> None:
        check_domain(self.domain_family, self.domain_id, self.surface_id)
        if self.application_disposition != DISPOSITION_OF[self.application_outcome]:
            raise bad(
                f"must be {DISPOSITION_OF[self.application_outcome]} for a "
                f"{self.application_outcome} application",
                "$.application_disposition",
            )
        if self.application_disposition != "not_applied":
            if not self.verification.result_readback_verified:
                raise bad(
                    f"an {self.application_disposition} receipt needs an exact readback",
                    "$.verification.result_readback_verified",
                )
            if not self.verification.current_artifact_verified:
                raise bad(
                    f"an {self.application_disposition} receipt needs a verified current artifact",
                    "$.verification.current_artifact_verified",
                )
            if not self.memory_ref_digests:
                raise bad(
                    f"an {self.application_disposition} receipt names the memory it settled",
                    "$.memory_ref_digests",
                )
        if self.application_outcome not in MODEL_OUTCOMES and self.memory_ref_digests:
            raise bad(
                f"a {self.application_outcome} receipt carries no memory refs",
                "$.memory_ref_digests",
            )
        self._check_utility()
        expected = receipt_id_of(
            application_receipt_id=self.application_receipt_id,
            application_outcome=self.application_outcome,
            application_disposition=self.application_disposition,
            outcome_ref=self.module_outcome.outcome_ref,
            outcome_status=self.module_outcome.outcome_status,
        )
        if self.receipt_id != expected:
            raise bad("does not match the receipt's settlement identity", "$.receipt_id")

    def _check_utility(self) -> None:
        observation = self.utility_observation
        accepted = self.utility_evaluation.status == "accepted"
        if accepted != (observation is not None):
            raise bad(
                "an observation is present exactly when the evaluation is accepted",
                "$.utility_observation",
            )
        if observation is None:
            return
        path = "$.utility_observation"
        if observation.application_receipt_id != self.application_receipt_id:
            raise bad("names another application receipt", f"{path}.application_receipt_id")
        if observation.outcome_ref != self.module_outcome.outcome_ref:
            raise bad("names another outcome", f"{path}.outcome_ref")
        if (observation.scope.corpus_id, observation.scope.surface_id) != (
            self.corpus_id,
            self.surface_id,
        ):
            raise bad("names another corpus or surface", f"{path}.scope")
        digests = observation.memory_ref_digests
        if observation.attribution_level == "item":
            if digests[0] not in self.memory_ref_digests:
                raise bad(
                    "names a memory this receipt did not settle", f"{path}.memory_ref_digests"
                )
        elif digests != self.memory_ref_digests:
            raise bad(
                "set-level credit covers the receipt's whole set", f"{path}.memory_ref_digests"
            )
