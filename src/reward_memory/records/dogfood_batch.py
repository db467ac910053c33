"""Stage-5 dogfood batch: :class:`DogfoodBatch` (``reward_memory_dogfood_batch_v1``),
readiness for a bounded Issue Fix pilot; its reasons and metrics are re-derived on
load from its receipts and operator-control summaries."""

from __future__ import annotations

from typing import Final, Literal

import attrs

from reward_memory._frozen import frozen
from reward_memory.records import _fields as f
from reward_memory.records._dogfood_fields import (
    BATCH_SCHEMA,
    CONTROL_ACTIONS,
    DISPOSITIONS,
    MAX_CONTROLS,
    MAX_RECEIPTS,
    READY,
    REQUIRED_CONTROLS,
    ControlAction,
    bad,
    each_of,
    record_of,
    tuple_field,
)
from reward_memory.records.dogfood_receipt import DogfoodReceipt
from reward_memory.records.operator import RECEIPT_STATUSES

# A control's statuses under which it was performed (a dry run's, a completed one's).
_PERFORMED: Final = frozenset({None, "control_ready", "completed"})


def control_counts(status: str | None, verified: bool, wrote: bool, read_back: bool) -> bool:
    """Whether an operator control counts towards readiness: it did not fail (the
    original's receipts carry no status), its authority was verified, and a write it
    performed was read back."""
    return status in _PERFORMED and verified and (read_back or not wrote)


# -- batch ----------------------------------------------------------------------------------


@frozen(kw_only=True)
class ControlSummary:
    """One operator-control receipt as the batch keeps it, and whether it counts."""

    control_ref: str = f.token()
    action: ControlAction = f.enum(*CONTROL_ACTIONS)
    result_state: str = f.enum("candidate", "retired", "revoked", "purged")
    authority_verified: bool = f.strict_bool()
    provider_write_performed: bool = f.strict_bool()
    readback_verified: bool = f.strict_bool()
    counted: bool = f.strict_bool()
    # The control's own status (the original's receipts have none): a control that
    # failed (partial, provider_unavailable, ...) performed nothing, so never counts.
    status: str | None = attrs.field(
        default=None, validator=attrs.validators.optional(attrs.validators.in_(RECEIPT_STATUSES))
    )

    def __attrs_post_init__(self) -> None:
        counts = control_counts(
            self.status,
            self.authority_verified,
            self.provider_write_performed,
            self.readback_verified,
        )
        if self.counted != counts:
            raise bad(
                "counts exactly when the control did not fail, its authority was verified"
                " (and a write was read back)",
                "$.counted",
            )


@frozen(kw_only=True)
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


@frozen(kw_only=True)
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


def _loopx_domain_count(receipts: tuple[DogfoodReceipt, ...]) -> int:
    """How many distinct LoopX domains the batch holds (reference 13.3: distinct
    ``domain_id`` values), not counting a label twice for one surface.

    A domain id is the caller's label; where an application ran is its surface.
    Two labels on one surface are one domain, and one label over two surfaces is
    one too: the count is the smaller of the two.
    """
    loopx = [r for r in receipts if r.domain_family == "loopx"]
    return min(len({r.domain_id for r in loopx}), len({r.surface_id for r in loopx}))


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
    if _loopx_domain_count(receipts) < 2:
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
        loopx_domain_count=_loopx_domain_count(receipts),
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
        # One application is one settlement, whatever its receipt's wording: an
        # edited copy (another reasoning summary) has another receipt id, not another
        # application (nor another domain). An application is its id, artifact,
        # corpus, surface and memory (a default id such as the boundary's repeats).
        (
            "$.receipts",
            "must not double-count an application settlement",
            [
                "\n".join(
                    (
                        r.application_id,
                        r.artifact_ref,
                        r.corpus_id,
                        r.surface_id,
                        *r.memory_ref_digests,
                    )
                )
                for r in receipts
            ],
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
                raise bad(message, f"{path}[{index}]", "duplicate_item")
            seen.add(value)


@frozen(kw_only=True)
class DogfoodBatch:
    """``reward_memory_dogfood_batch_v1``: is a bounded Issue Fix pilot ready to try?

    A trial-readiness statement only: semantic-uplift and production-rollout
    claims stay false. Everything but ``stage4_gate_verified`` is re-derived
    from the receipts and controls when a batch is built or loaded.
    """

    ok: bool = f.strict_bool()
    schema_version: Literal["reward_memory_dogfood_batch_v1"] = f.const(BATCH_SCHEMA)
    status: str = f.enum(READY, "hold")
    reason_codes: tuple[str, ...] = tuple_field()
    stage4_gate_verified: bool = f.strict_bool()
    loopx_domains: tuple[str, ...] = tuple_field()
    application_dispositions: tuple[str, ...] = tuple_field()
    operator_controls: tuple[str, ...] = tuple_field()
    metrics: BatchMetrics = attrs.field(validator=record_of(BatchMetrics))
    receipts: tuple[DogfoodReceipt, ...] = tuple_field(validator=each_of(DogfoodReceipt))
    controls: tuple[ControlSummary, ...] = tuple_field(validator=each_of(ControlSummary))
    boundaries: BatchBoundaries = attrs.field(
        factory=BatchBoundaries, validator=record_of(BatchBoundaries)
    )

    def __attrs_post_init__(self) -> None:
        if not 1 <= len(self.receipts) <= MAX_RECEIPTS:
            raise bad(f"must hold between 1 and {MAX_RECEIPTS} receipts", "$.receipts")
        if len(self.controls) > MAX_CONTROLS:
            raise bad(f"must hold at most {MAX_CONTROLS} operator controls", "$.controls")
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
                raise bad("disagrees with the batch's receipts and controls", f"$.{name}")
        ready = not self.reason_codes
        if self.ok is not ready or (self.status == READY) is not ready:
            raise bad("ok and status follow the reason codes", "$.status")
