"""Stage-5 dogfood records: the observation, the receipt, the batch, the CLI input.

- :class:`DogfoodObservation` -- what a caller supplies: a compact real-module
  outcome whose ``artifact_ref`` matches a Stage-3 application receipt, its costs
  and interventions. It carries no disposition: that is derived (never a label).
- :class:`DogfoodReceipt` (``reward_memory_dogfood_receipt_v1``) -- the derived
  disposition (``applied`` / ``not_applied`` / ``refuted``, the seeds' hit / miss
  / refute), hashed memory refs, the compact outcome summary, latency, tokens,
  provider calls and interventions. Never raw content, never new authority. Its
  validators re-derive everything a receipt claims, ``receipt_id`` included, so a
  receipt loaded back from data is re-validated in full.
- :class:`DogfoodBatch` (``reward_memory_dogfood_batch_v1``) -- readiness for a
  bounded Issue Fix pilot; its reasons and metrics are re-derived on load.
- :class:`DogfoodInput` (``reward_memory_dogfood_input_v1``) -- the
  ``dogfood-evaluate`` input file.

The utility-observation record lives in :mod:`reward_memory.records.utility`.
"""

from __future__ import annotations

import re
from typing import Any, Final, Literal, get_args

import attrs

from reward_memory.digests import make_ref
from reward_memory.errors import RecordValidationError
from reward_memory.grammars import check_digest
from reward_memory.records import _fields as f
from reward_memory.records.application import ApplicationReceipt
from reward_memory.records.utility import UtilityObservation

__all__ = [
    "BATCH_SCHEMA",
    "CONTROL_ACTIONS",
    "DISPOSITIONS",
    "DISPOSITION_OF",
    "INPUT_SCHEMA",
    "READY",
    "RECEIPT_SCHEMA",
    "REQUIRED_CONTROLS",
    "BatchBoundaries",
    "BatchMetrics",
    "BotFeedback",
    "ControlSummary",
    "DogfoodBatch",
    "DogfoodCost",
    "DogfoodInput",
    "DogfoodObservation",
    "DogfoodReceipt",
    "Intervention",
    "ModuleOutcome",
    "ObservedOutcome",
    "UtilityEvaluation",
    "Verification",
    "batch_metrics",
    "check_domain",
    "check_unique",
    "readiness_reasons",
    "receipt_id_of",
]

RECEIPT_SCHEMA: Final = "reward_memory_dogfood_receipt_v1"
BATCH_SCHEMA: Final = "reward_memory_dogfood_batch_v1"
INPUT_SCHEMA: Final = "reward_memory_dogfood_input_v1"
READY: Final = "ready_for_bounded_issue_fix_pilot"
ISSUE_FIX_SURFACE: Final = "issue_fix.patch_planning"
MAX_RECEIPTS: Final = 24
MAX_CONTROLS: Final = 8
MAX_DIGESTS: Final = 16
_MAX_COUNT: Final = 1_000_000_000

DomainFamily = Literal["issue_fix", "loopx"]
DOMAIN_FAMILIES: Final[tuple[DomainFamily, ...]] = get_args(DomainFamily)
Disposition = Literal["applied", "not_applied", "refuted"]
DISPOSITIONS: Final[tuple[Disposition, ...]] = get_args(Disposition)
# The application outcome decides; every outcome the model did not own is a miss.
DISPOSITION_OF: Final[dict[str, Disposition]] = {
    "applied": "applied",
    "refuted": "refuted",
    "ignored": "not_applied",
    "failed": "not_applied",
    "not_available": "not_applied",
    "available_not_applied": "not_applied",
}
_MODEL_OUTCOMES: Final = frozenset({"applied", "ignored", "refuted"})
ControlAction = Literal["edit", "retire", "revoke", "purge"]
CONTROL_ACTIONS: Final[tuple[ControlAction, ...]] = get_args(ControlAction)
REQUIRED_CONTROLS: Final = ("edit", "retire")
UtilityStatus = Literal["not_requested", "accepted", "rejected"]
UTILITY_REASONS: Final[dict[str, str | None]] = {
    "not_requested": "utility_attribution_not_requested",
    "accepted": None,
    "rejected": "utility_attribution_rejected",
}


def _bad(message: str, path: str, code: str = "invalid_value") -> RecordValidationError:
    return RecordValidationError(message, path=path, code=code)


def _to_tuple(value: Any, field: attrs.Attribute[Any]) -> tuple[Any, ...]:
    if not isinstance(value, list | tuple):
        raise _bad("must be a list", f"$.{field.name}", "wrong_type")
    return tuple(value)


def _tuple_field(**kwargs: Any) -> Any:
    """A field holding a list, kept as a tuple (a string or a mapping is refused)."""
    return attrs.field(converter=attrs.Converter(_to_tuple, takes_field=True), **kwargs)


def _a(cls: type[Any], *, optional: bool = False) -> Any:
    """A validator: the field holds a ``cls`` record (Python callers build these too)."""

    def validate(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
        if not (isinstance(value, cls) or (optional and value is None)):
            raise _bad(f"must be a {cls.__name__} record", f"$.{attribute.name}", "wrong_type")

    return validate


def _each(cls: type[Any]) -> Any:
    """A validator: every item of the tuple is a ``cls`` record."""

    def validate(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
        for index, item in enumerate(value):
            if not isinstance(item, cls):
                raise _bad(
                    f"must be a {cls.__name__} record", f"$.{attribute.name}[{index}]", "wrong_type"
                )

    return validate


def _counted(low: int, high: int) -> Any:
    """A validator: the tuple holds ``low``-``high`` items (the schema's minItems/maxItems)."""

    def validate(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
        if not low <= len(value) <= high:
            raise _bad(f"holds {low}-{high} items", f"$.{attribute.name}", "invalid_value")

    return validate


def _digest_list(value: Any) -> tuple[str, ...]:
    path = "$.memory_ref_digests"
    if not isinstance(value, list | tuple):
        raise _bad("must be a list", path, "wrong_type")
    items = tuple(value)
    if len(items) > MAX_DIGESTS:
        raise _bad(f"must hold at most {MAX_DIGESTS} digests", path)
    for index, item in enumerate(items):
        check_digest(item, f"{path}[{index}]")
    if list(items) != sorted(set(items)):
        raise _bad("must be sorted and free of duplicates", path)
    return items


def check_domain(
    family: str, domain_id: str, surface_id: str, *, surface_path: str = "$.surface_id"
) -> None:
    """The domain id is in its family, and the family fits the application's surface."""
    if not (domain_id.startswith(f"{family}.") and len(domain_id) > len(family) + 1):
        raise _bad(f"must start with {family}. (the domain family)", "$.domain_id")
    # An Issue Fix result is one on Issue Fix's fixed surface, and a LoopX domain
    # result is not an Issue Fix one relabelled: the family is checked, not trusted.
    if family == "issue_fix" and surface_id != ISSUE_FIX_SURFACE:
        raise _bad(f"an issue_fix result is on {ISSUE_FIX_SURFACE}", surface_path)
    if family == "loopx" and surface_id.startswith("issue_fix."):
        raise _bad("a loopx domain result is not on an issue_fix surface", surface_path)


# -- observation input --------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class ObservedOutcome:
    """The caller's verified real-module outcome (input side)."""

    artifact_ref: str = f.token()
    outcome_verified: Literal[True] = f.const(True)
    outcome_ref: str = f.token()
    outcome_status: str = f.token()
    summary: str = f.text(360)


@attrs.frozen(kw_only=True)
class DogfoodCost:
    """What the application cost: wall latency, model tokens, provider calls."""

    latency_ms: int = f.integer(maximum=_MAX_COUNT)
    model_tokens: int = f.integer(maximum=_MAX_COUNT)
    provider_call_count: int = f.integer(maximum=_MAX_COUNT)


@attrs.frozen(kw_only=True)
class Intervention:
    """Maintainer interventions: a count, and a compact summary exactly when there were any."""

    count: int = f.integer(maximum=_MAX_COUNT)
    summary: str | None = f.optional_text(240)

    def __attrs_post_init__(self) -> None:
        if self.count > 0 and self.summary is None:
            raise _bad("an intervention count above 0 needs a summary", "$.summary")
        if self.count == 0 and self.summary is not None:
            raise _bad("no intervention, no summary", "$.summary")


@attrs.frozen(kw_only=True)
class BotFeedback:
    """Optional compact bot feedback (default: not captured)."""

    captured: bool = f.strict_bool(default=False)
    summary: str | None = f.optional_text(240)

    def __attrs_post_init__(self) -> None:
        if self.captured and self.summary is None:
            raise _bad("captured bot feedback needs a summary", "$.summary")
        if not self.captured and self.summary is not None:
            raise _bad("feedback not captured, no summary", "$.summary")


@attrs.frozen(kw_only=True)
class DogfoodObservation:
    """One compact real-module observation over a Stage-3 application receipt.

    ``utility_attribution`` is an optional post-outcome evaluator proposal
    (``{context, proposal, created_at}``); it is checked by the receipt builder
    and any problem with it is a ``rejected`` utility evaluation, never an error.
    """

    raw_content_captured: Literal[False] = f.const(False)
    domain_family: DomainFamily = f.enum(*DOMAIN_FAMILIES)
    domain_id: str = f.token()
    application_receipt: ApplicationReceipt = attrs.field(validator=_a(ApplicationReceipt))
    module_outcome: ObservedOutcome = attrs.field(validator=_a(ObservedOutcome))
    cost: DogfoodCost = attrs.field(validator=_a(DogfoodCost))
    intervention: Intervention = attrs.field(validator=_a(Intervention))
    bot_feedback: BotFeedback = attrs.field(factory=BotFeedback, validator=_a(BotFeedback))
    utility_attribution: dict[str, Any] | None = None


# -- receipt --------------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class ModuleOutcome:
    """The verified module outcome as the receipt keeps it (compact; no artifact copy)."""

    verified: Literal[True] = f.const(True)
    outcome_ref: str = f.token()
    outcome_status: str = f.token()
    summary: str = f.text(360)


@attrs.frozen(kw_only=True)
class Verification:
    """The two verifications a hit or a refute needs."""

    result_readback_verified: bool = f.strict_bool()
    current_artifact_verified: bool = f.strict_bool()


@attrs.frozen(kw_only=True)
class UtilityEvaluation:
    """Whether a utility attribution was requested, and whether it was accepted."""

    status: UtilityStatus = f.enum(*UTILITY_REASONS)
    reason_code: str | None = None

    def __attrs_post_init__(self) -> None:
        if self.reason_code != UTILITY_REASONS[self.status]:
            raise _bad(
                f"must be {UTILITY_REASONS[self.status]} when {self.status}", "$.reason_code"
            )


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
        raise _bad("must be rma_ and 64 lower-case hex", f"$.{attribute.name}", "invalid_format")


@attrs.frozen(kw_only=True)
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
    module_outcome: ModuleOutcome = attrs.field(validator=_a(ModuleOutcome))
    utility_evaluation: UtilityEvaluation = attrs.field(validator=_a(UtilityEvaluation))
    utility_observation: UtilityObservation | None = attrs.field(
        default=None, validator=_a(UtilityObservation, optional=True)
    )
    memory_ref_digests: tuple[str, ...] = attrs.field(converter=_digest_list)
    verification: Verification = attrs.field(validator=_a(Verification))
    cost: DogfoodCost = attrs.field(validator=_a(DogfoodCost))
    intervention: Intervention = attrs.field(validator=_a(Intervention))
    bot_feedback: BotFeedback = attrs.field(validator=_a(BotFeedback))
    receipt_id: str = f.token()
    grants_new_action_authority: Literal[False] = f.const(False)
    raw_content_captured: Literal[False] = f.const(False)
    external_writes_performed: Literal[False] = f.const(False)

    def __attrs_post_init__(self) -> None:
        check_domain(self.domain_family, self.domain_id, self.surface_id)
        if self.application_disposition != DISPOSITION_OF[self.application_outcome]:
            raise _bad(
                f"must be {DISPOSITION_OF[self.application_outcome]} for a "
                f"{self.application_outcome} application",
                "$.application_disposition",
            )
        if self.application_disposition != "not_applied":
            if not self.verification.result_readback_verified:
                raise _bad(
                    f"an {self.application_disposition} receipt needs an exact readback",
                    "$.verification.result_readback_verified",
                )
            if not self.verification.current_artifact_verified:
                raise _bad(
                    f"an {self.application_disposition} receipt needs a verified current artifact",
                    "$.verification.current_artifact_verified",
                )
            if not self.memory_ref_digests:
                raise _bad(
                    f"an {self.application_disposition} receipt names the memory it settled",
                    "$.memory_ref_digests",
                )
        if self.application_outcome not in _MODEL_OUTCOMES and self.memory_ref_digests:
            raise _bad(
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
            raise _bad("does not match the receipt's settlement identity", "$.receipt_id")

    def _check_utility(self) -> None:
        observation = self.utility_observation
        accepted = self.utility_evaluation.status == "accepted"
        if accepted != (observation is not None):
            raise _bad(
                "an observation is present exactly when the evaluation is accepted",
                "$.utility_observation",
            )
        if observation is None:
            return
        path = "$.utility_observation"
        if observation.application_receipt_id != self.application_receipt_id:
            raise _bad("names another application receipt", f"{path}.application_receipt_id")
        if observation.outcome_ref != self.module_outcome.outcome_ref:
            raise _bad("names another outcome", f"{path}.outcome_ref")
        if (observation.scope.corpus_id, observation.scope.surface_id) != (
            self.corpus_id,
            self.surface_id,
        ):
            raise _bad("names another corpus or surface", f"{path}.scope")
        digests = observation.memory_ref_digests
        if observation.attribution_level == "item":
            if digests[0] not in self.memory_ref_digests:
                raise _bad(
                    "names a memory this receipt did not settle", f"{path}.memory_ref_digests"
                )
        elif digests != self.memory_ref_digests:
            raise _bad(
                "set-level credit covers the receipt's whole set", f"{path}.memory_ref_digests"
            )


# -- batch ----------------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class ControlSummary:
    """One operator-control receipt as the batch keeps it, and whether it counts."""

    control_ref: str = f.token()
    action: ControlAction = f.enum(*CONTROL_ACTIONS)
    result_state: str = f.enum("candidate", "retired", "revoked", "purged")
    authority_verified: bool = f.strict_bool()
    provider_write_performed: bool = f.strict_bool()
    readback_verified: bool = f.strict_bool()
    counted: bool = f.strict_bool()

    def __attrs_post_init__(self) -> None:
        counts = self.authority_verified and (
            self.readback_verified or not self.provider_write_performed
        )
        if self.counted != counts:
            raise _bad(
                "counts exactly when authority was verified (and a write was read back)",
                "$.counted",
            )


@attrs.frozen(kw_only=True)
class BatchMetrics:
    """Counts and totals over a batch (re-derived from its receipts and controls on load)."""

    receipt_count: int = f.integer()
    issue_fix_receipt_count: int = f.integer()
    loopx_domain_count: int = f.integer()
    applied_count: int = f.integer()
    not_applied_count: int = f.integer()
    refuted_count: int = f.integer()
    utility_observation_count: int = f.integer()
    utility_helpful_count: int = f.integer()
    utility_harmful_count: int = f.integer()
    utility_neutral_count: int = f.integer()
    utility_unknown_count: int = f.integer()
    utility_rejected_count: int = f.integer()
    utility_not_requested_count: int = f.integer()
    latency_ms: int = f.integer()
    model_tokens: int = f.integer()
    provider_call_count: int = f.integer()
    intervention_count: int = f.integer()
    bot_feedback_count: int = f.integer()
    operator_control_count: int = f.integer()
    counted_operator_control_count: int = f.integer()


@attrs.frozen(kw_only=True)
class BatchBoundaries:
    """What a ready batch still does not claim or do."""

    semantic_uplift_claim_allowed: Literal[False] = f.const(False)
    production_rollout_allowed: Literal[False] = f.const(False)
    automatic_recall_enabled: Literal[False] = f.const(False)
    new_store_provider_or_scheduler_added: Literal[False] = f.const(False)
    operator_write_performed: Literal[False] = f.const(False)
    raw_content_captured: Literal[False] = f.const(False)


def _loopx_domains(receipts: tuple[DogfoodReceipt, ...]) -> tuple[str, ...]:
    return tuple(sorted({r.domain_id for r in receipts if r.domain_family == "loopx"}))


def _counted_actions(controls: tuple[ControlSummary, ...]) -> tuple[str, ...]:
    return tuple(sorted({c.action for c in controls if c.counted}))


def readiness_reasons(
    stage4_gate_verified: bool,
    receipts: tuple[DogfoodReceipt, ...],
    controls: tuple[ControlSummary, ...],
) -> tuple[str, ...]:
    """The ordered reasons a batch is not ready (empty: ready). Utility labels never count."""
    reasons: list[str] = []
    if not stage4_gate_verified:
        reasons.append("stage4_release_gate_not_ready")
    if not any(r.domain_family == "issue_fix" for r in receipts):
        reasons.append("issue_fix_outcome_missing")
    if len(_loopx_domains(receipts)) < 2:
        reasons.append("two_loopx_domains_required")
    present = {r.application_disposition for r in receipts}
    reasons.extend(
        f"application_disposition_missing:{d}" for d in sorted(DISPOSITIONS) if d not in present
    )
    counted = set(_counted_actions(controls))
    reasons.extend(f"operator_control_missing:{a}" for a in REQUIRED_CONTROLS if a not in counted)
    return tuple(reasons)


def batch_metrics(
    receipts: tuple[DogfoodReceipt, ...], controls: tuple[ControlSummary, ...]
) -> BatchMetrics:
    """The batch's counts and totals."""
    labels = [r.utility_observation.utility_label for r in receipts if r.utility_observation]
    statuses = [r.utility_evaluation.status for r in receipts]
    dispositions = [r.application_disposition for r in receipts]
    return BatchMetrics(
        receipt_count=len(receipts),
        issue_fix_receipt_count=sum(r.domain_family == "issue_fix" for r in receipts),
        loopx_domain_count=len(_loopx_domains(receipts)),
        applied_count=dispositions.count("applied"),
        not_applied_count=dispositions.count("not_applied"),
        refuted_count=dispositions.count("refuted"),
        utility_observation_count=len(labels),
        utility_helpful_count=labels.count("helpful"),
        utility_harmful_count=labels.count("harmful"),
        utility_neutral_count=labels.count("neutral"),
        utility_unknown_count=labels.count("unknown"),
        utility_rejected_count=statuses.count("rejected"),
        utility_not_requested_count=statuses.count("not_requested"),
        latency_ms=sum(r.cost.latency_ms for r in receipts),
        model_tokens=sum(r.cost.model_tokens for r in receipts),
        provider_call_count=sum(r.cost.provider_call_count for r in receipts),
        intervention_count=sum(r.intervention.count for r in receipts),
        bot_feedback_count=sum(r.bot_feedback.captured for r in receipts),
        operator_control_count=len(controls),
        counted_operator_control_count=sum(c.counted for c in controls),
    )


def check_unique(
    receipts: tuple[DogfoodReceipt, ...],
    controls: tuple[ControlSummary, ...],
    *,
    controls_path: str = "$.controls",
) -> None:
    """Refuse a batch that would count one settlement or one control twice."""
    checks: tuple[tuple[str, str, list[str]], ...] = (
        ("$.receipts", "must not double-count a receipt", [r.receipt_id for r in receipts]),
        (
            "$.receipts",
            "must not double-count an application settlement",
            [r.application_receipt_id for r in receipts],
        ),
        (
            controls_path,
            "must not double-count an operator control",
            [c.control_ref for c in controls],
        ),
    )
    for path, message, values in checks:
        seen: set[str] = set()
        for index, value in enumerate(values):
            if value in seen:
                raise _bad(message, f"{path}[{index}]", "duplicate_item")
            seen.add(value)


@attrs.frozen(kw_only=True)
class DogfoodBatch:
    """``reward_memory_dogfood_batch_v1``: is a bounded Issue Fix pilot ready to try?

    A trial-readiness statement only: semantic-uplift and production-rollout
    claims stay false. Everything but ``stage4_gate_verified`` is re-derived
    from the receipts and controls when a batch is built or loaded.
    """

    ok: bool = f.strict_bool()
    schema_version: Literal["reward_memory_dogfood_batch_v1"] = f.const(BATCH_SCHEMA)
    status: str = f.enum(READY, "hold")
    reason_codes: tuple[str, ...] = _tuple_field()
    stage4_gate_verified: bool = f.strict_bool()
    loopx_domains: tuple[str, ...] = _tuple_field()
    application_dispositions: tuple[str, ...] = _tuple_field()
    operator_controls: tuple[str, ...] = _tuple_field()
    metrics: BatchMetrics = attrs.field(validator=_a(BatchMetrics))
    receipts: tuple[DogfoodReceipt, ...] = _tuple_field(validator=_each(DogfoodReceipt))
    controls: tuple[ControlSummary, ...] = _tuple_field(validator=_each(ControlSummary))
    boundaries: BatchBoundaries = attrs.field(
        factory=BatchBoundaries, validator=_a(BatchBoundaries)
    )

    def __attrs_post_init__(self) -> None:
        if not 1 <= len(self.receipts) <= MAX_RECEIPTS:
            raise _bad(f"must hold between 1 and {MAX_RECEIPTS} receipts", "$.receipts")
        if len(self.controls) > MAX_CONTROLS:
            raise _bad(f"must hold at most {MAX_CONTROLS} operator controls", "$.controls")
        check_unique(self.receipts, self.controls)
        derived = {
            "reason_codes": readiness_reasons(
                self.stage4_gate_verified, self.receipts, self.controls
            ),
            "loopx_domains": _loopx_domains(self.receipts),
            "application_dispositions": tuple(
                sorted({r.application_disposition for r in self.receipts})
            ),
            "operator_controls": _counted_actions(self.controls),
            "metrics": batch_metrics(self.receipts, self.controls),
        }
        for name, value in derived.items():
            if getattr(self, name) != value:
                raise _bad("disagrees with the batch's receipts and controls", f"$.{name}")
        ready = not self.reason_codes
        if self.ok is not ready or (self.status == READY) is not ready:
            raise _bad("ok and status follow the reason codes", "$.status")


@attrs.frozen(kw_only=True)
class DogfoodInput:
    """``reward_memory_dogfood_input_v1``: the ``dogfood-evaluate`` input file.

    ``operator_controls`` are ``reward_memory_operator_control_receipt_v0``
    mappings and ``evaluation`` a ``reward_memory_evaluation_v0`` mapping; both
    are checked by :func:`reward_memory.dogfood.build_batch`. Without an
    evaluation the CLI runs the Stage-4 suite afresh.
    """

    schema_version: Literal["reward_memory_dogfood_input_v1"] = f.const(INPUT_SCHEMA)
    observations: tuple[DogfoodObservation, ...] = _tuple_field(
        validator=[_counted(1, 24), _each(DogfoodObservation)]
    )
    operator_controls: tuple[dict[str, Any], ...] = _tuple_field(
        factory=tuple, validator=_counted(0, 8)
    )
    evaluation: dict[str, Any] | None = None
