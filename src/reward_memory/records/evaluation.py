"""Stage-4 records: one evaluation case, the metrics, the release gate, the evaluation packet.

``reward_memory_evaluation_v0`` follows the original's vocabulary (reference
§12) with every metric *measured* (gap 7): per-case latency (``time.perf_counter``,
float milliseconds), public evidence bytes, model tokens and calls (what the
application callback reported), provider calls and writes (counted by a proxy
around the provider), false applications, maintainer interruptions and user
gates, and external writes (evaluated operations whose own packet reports one).
Writes made to seed the fixture are reported apart (``fixture``), never
mixed with the writes of the evaluated operations, which the gate counts.

Invariants held here: ``ok`` equals ``status == "passed"``; a passed evaluation
has an open gate and every case passed; a gate is ``ready_for_bounded_dogfood``
(decision ``advance_stage_5``) exactly when it has no reason codes; the claim
flags (semantic uplift, production rollout) are constant ``false``; the metrics
are the sums of the cases.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Final, Literal

import attrs

from reward_memory._frozen import frozen
from reward_memory.errors import RecordValidationError
from reward_memory.grammars import check_token
from reward_memory.records import _fields as f

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = [
    "CASE_IDS",
    "EVALUATION_SCHEMA",
    "GATE_SCHEMA",
    "CaseResult",
    "Evaluation",
    "EvaluationBoundaries",
    "EvaluationDimensions",
    "EvaluationMetrics",
    "FixtureReport",
    "ReleaseGate",
]

EVALUATION_SCHEMA: Final = "reward_memory_evaluation_v0"
GATE_SCHEMA: Final = "reward_memory_release_gate_v0"
# The eight contract cases, in their fixed order (reference §12.2).
CASE_IDS: Final = (
    "compact_restart_survival",
    "project_module_scope_isolation",
    "supersede_revoke_rejection",
    "stale_source_rejection",
    "multi_person_authority_conditions",
    "gate_non_override",
    "candidate_ranking_influence",
    "large_edge_case_patch_protection",
)
CaseId = Literal[
    "compact_restart_survival",
    "project_module_scope_isolation",
    "supersede_revoke_rejection",
    "stale_source_rejection",
    "multi_person_authority_conditions",
    "gate_non_override",
    "candidate_ranking_influence",
    "large_edge_case_patch_protection",
]
_MAX_EVIDENCE_ITEMS: Final = 16


def _count(**kwargs: Any) -> Any:
    return f.integer(minimum=0, **kwargs)


def _milliseconds(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value < 0
    ):
        raise RecordValidationError(
            "must be a finite, non-negative number of milliseconds",
            path=f"$.{attribute.name}",
            code="invalid_value",
        )


def _as_float(value: Any) -> Any:
    return float(value) if type(value) is int else value


def _evidence_value(value: Any, path: str) -> None:
    if value is None or type(value) in (bool, int):
        return
    if type(value) is str:
        check_token(value, path)
        return
    if type(value) is list:
        if len(value) > _MAX_EVIDENCE_ITEMS:
            raise RecordValidationError(
                f"must hold at most {_MAX_EVIDENCE_ITEMS} items", path=path, code="invalid_value"
            )
        for index, item in enumerate(value):
            if type(item) is not str:
                raise RecordValidationError(
                    "must be a token", path=f"{path}[{index}]", code="wrong_type"
                )
            check_token(item, f"{path}[{index}]")
        return
    raise RecordValidationError(
        "must be a boolean, an integer, a token, null or a list of tokens",
        path=path,
        code="wrong_type",
    )


def _evidence(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    path = f"$.{attribute.name}"
    if type(value) is not dict:
        raise RecordValidationError("must be an object", path=path, code="wrong_type")
    if len(value) > _MAX_EVIDENCE_ITEMS:
        raise RecordValidationError(
            f"must hold at most {_MAX_EVIDENCE_ITEMS} entries", path=path, code="invalid_value"
        )
    for key, item in value.items():
        if type(key) is not str or not key.isidentifier() or not key.islower():
            raise RecordValidationError(
                "keys are lower-case identifiers", path=path, code="invalid_value"
            )
        _evidence_value(item, f"{path}.{key}")


@frozen(kw_only=True)
class CaseResult:
    """One contract case: whether it passed, what it measured, its public-safe evidence.

    ``failure_kind`` is ``None`` for a pass, ``assertion_failed`` when an assertion
    failed (named in ``failed_assertions``), or the class name of an exception the
    case raised. ``evidence`` holds only booleans, counts, tokens (statuses, reason
    codes, case refs) and lists of tokens: never content, scope refs or paths.
    """

    case_id: CaseId = f.enum(*CASE_IDS)
    passed: bool = f.strict_bool()
    assertion_count: int = _count()
    failed_assertions: tuple[str, ...] = f.token_list(max_items=32, keep_order=True)
    failure_kind: str | None = f.optional_token()
    latency_ms: float = attrs.field(converter=_as_float, validator=_milliseconds)
    public_evidence_bytes: int = _count()
    model_call_count: int = _count()
    model_tokens: int = _count()
    provider_call_count: int = _count()
    provider_write_count: int = _count()
    storage_write_bytes: int = _count()
    external_write_count: int = _count()
    fixture_write_count: int = _count()
    false_application_count: int = _count()
    maintainer_interruption_count: int = _count()
    user_gate_count: int = _count()
    evidence: dict[str, Any] = attrs.field(factory=dict, validator=_evidence)

    def __attrs_post_init__(self) -> None:
        if self.passed is not (self.failure_kind is None):
            raise RecordValidationError(
                "is null exactly when the case passed", path="$.failure_kind", code="invalid_value"
            )
        if self.passed and self.failed_assertions:
            raise RecordValidationError(
                "must be empty for a passed case", path="$.failed_assertions", code="invalid_value"
            )


def _case_tuple(value: Iterable[CaseResult]) -> tuple[CaseResult, ...]:
    return value if type(value) is tuple else tuple(value)


@frozen(kw_only=True)
class EvaluationMetrics:
    """Sums over the cases (``latency_ms`` is the sum of the per-case latencies)."""

    case_count: int = _count()
    passed_case_count: int = _count()
    failed_case_count: int = _count()
    assertion_count: int = _count()
    latency_ms: float = attrs.field(converter=_as_float, validator=_milliseconds)
    public_evidence_bytes: int = _count()
    model_call_count: int = _count()
    model_tokens: int = _count()
    provider_call_count: int = _count()
    provider_write_count: int = _count()
    storage_write_bytes: int = _count()
    external_write_count: int = _count()
    fixture_write_count: int = _count()
    false_application_count: int = _count()
    maintainer_interruption_count: int = _count()
    user_gate_count: int = _count()


@frozen(kw_only=True)
class TaskOutcome:
    """Case counts and assertions."""

    case_count: int = _count()
    passed_case_count: int = _count()
    failed_case_count: int = _count()
    assertion_count: int = _count()


@frozen(kw_only=True)
class UserExperience:
    """Interruptions and user gates."""

    maintainer_interruption_count: int = _count()
    user_gate_count: int = _count()


@frozen(kw_only=True)
class PerformanceAndCost:
    """Latency, model use, evidence size and provider traffic of the evaluated operations."""

    latency_ms: float = attrs.field(converter=_as_float, validator=_milliseconds)
    model_call_count: int = _count()
    model_tokens: int = _count()
    public_evidence_bytes: int = _count()
    provider_call_count: int = _count()
    provider_write_count: int = _count()
    storage_write_bytes: int = _count()
    external_write_count: int = _count()


@frozen(kw_only=True)
class ApplicationQuality:
    """False applications."""

    false_application_count: int = _count()


@frozen(kw_only=True)
class EvaluationDimensions:
    """The metrics regrouped (reference §12.3)."""

    task_outcome: TaskOutcome
    user_experience: UserExperience
    performance_and_cost: PerformanceAndCost
    application_quality: ApplicationQuality


@frozen(kw_only=True)
class FixtureReport:
    """What seeding the fixture cost, apart from the evaluated operations.

    The store is seeded by the corpus owner's real write path (ingest, and
    direct owner writes of lifecycle-changed records), in a namespace dedicated to
    the run; everything seeded is deleted again at the end (``cleaned_up``).
    ``restart_count`` counts the provider objects replaced by a new one over the
    same store.
    """

    seed_write_count: int = _count()
    seed_write_bytes: int = _count()
    seed_provider_call_count: int = _count()
    cleanup_delete_count: int = _count()
    cleaned_up: bool = f.strict_bool()
    restart_count: int = _count()
    provider_failure_count: int = _count()


@frozen(kw_only=True)
class ReleaseGate:
    """``reward_memory_release_gate_v0``: ready for bounded dogfood, or hold. Never production."""

    schema_version: Literal["reward_memory_release_gate_v0"] = f.const(GATE_SCHEMA)
    status: Literal["ready_for_bounded_dogfood", "hold"] = f.enum(
        "ready_for_bounded_dogfood", "hold"
    )
    decision: Literal["advance_stage_5", "repair_stage_4"] = f.enum(
        "advance_stage_5", "repair_stage_4"
    )
    reason_codes: tuple[str, ...] = f.token_list(max_items=32, keep_order=True)
    claim_scope: Literal["core_contract_invariants_only"] = f.const("core_contract_invariants_only")
    semantic_uplift_claim_allowed: Literal[False] = f.const(False)
    production_rollout_allowed: Literal[False] = f.const(False)

    def __attrs_post_init__(self) -> None:
        ready = not self.reason_codes
        if (self.status == "ready_for_bounded_dogfood") is not ready:
            raise RecordValidationError(
                "is ready_for_bounded_dogfood exactly when there are no reason codes",
                path="$.status",
                code="invalid_value",
            )
        if (self.decision == "advance_stage_5") is not ready:
            raise RecordValidationError(
                "is advance_stage_5 exactly when the gate is ready",
                path="$.decision",
                code="invalid_value",
            )


@frozen(kw_only=True)
class EvaluationBoundaries:
    """What the evaluated operations did not do (the write flags follow the measured counts)."""

    provider_writes_performed: bool = f.strict_bool()
    external_writes_performed: bool = f.strict_bool()
    raw_memory_captured: Literal[False] = f.const(False)
    model_reasoning_replaced: Literal[False] = f.const(False)
    new_store_provider_or_scheduler_added: Literal[False] = f.const(False)


@frozen(kw_only=True)
class Evaluation:
    """``reward_memory_evaluation_v0``: the Stage-4 contract suite over the real core."""

    ok: bool = f.strict_bool()
    schema_version: Literal["reward_memory_evaluation_v0"] = f.const(EVALUATION_SCHEMA)
    status: Literal["passed", "failed"] = f.enum("passed", "failed")
    suite: Literal["stage4_provider_neutral_contract"] = f.const("stage4_provider_neutral_contract")
    runner: Literal["reward_memory_evaluation"] = f.const("reward_memory_evaluation")
    executes_real_core: Literal[True] = f.const(True)
    uses_surrogate_evaluator: Literal[False] = f.const(False)
    provider_id: str = f.token()
    cases: tuple[CaseResult, ...] = attrs.field(converter=_case_tuple)
    metrics: EvaluationMetrics
    dimensions: EvaluationDimensions
    fixture: FixtureReport
    release_gate: ReleaseGate
    boundaries: EvaluationBoundaries

    def __attrs_post_init__(self) -> None:
        if self.ok is not (self.status == "passed"):
            raise RecordValidationError(
                "is true exactly when the status is passed", path="$.ok", code="invalid_value"
            )
        passed = self.release_gate.status == "ready_for_bounded_dogfood"
        if (self.status == "passed") is not passed:
            raise RecordValidationError(
                "is passed exactly when the release gate is ready",
                path="$.status",
                code="invalid_value",
            )
        if passed and not all(case.passed for case in self.cases):
            raise RecordValidationError(
                "a passed evaluation has only passed cases", path="$.cases", code="invalid_value"
            )
        if self.metrics.case_count != len(self.cases):
            raise RecordValidationError(
                "counts the cases", path="$.metrics.case_count", code="invalid_value"
            )
        self._check_derived()

    def _check_derived(self) -> None:
        """Every figure the cases decide is the one they give: a packet edited to open the
        gate (a case's count zeroed but not the sum, a sum zeroed, the dimensions or the
        write flags changed, the cases reordered) is refused, not believed."""
        from reward_memory.evaluation.gate import gate_reasons  # noqa: PLC0415 - a cycle
        from reward_memory.evaluation.metrics import dimensions_of, metrics_of  # noqa: PLC0415

        if tuple(case.case_id for case in self.cases) != CASE_IDS:
            raise RecordValidationError(
                "holds each contract case once, in the contract's order",
                path="$.cases",
                code="invalid_value",
            )
        metrics = metrics_of(self.cases)
        for name in attrs.fields_dict(EvaluationMetrics):
            if getattr(self.metrics, name) != getattr(metrics, name):
                raise RecordValidationError(
                    "is the sum over the cases", path=f"$.metrics.{name}", code="invalid_value"
                )
        if self.dimensions != dimensions_of(self.metrics):
            raise RecordValidationError(
                "regroups the metrics", path="$.dimensions", code="invalid_value"
            )
        boundaries = self.boundaries
        if boundaries.provider_writes_performed is not (self.metrics.provider_write_count > 0):
            raise RecordValidationError(
                "follows the measured provider writes",
                path="$.boundaries.provider_writes_performed",
                code="invalid_value",
            )
        if boundaries.external_writes_performed is not (self.metrics.external_write_count > 0):
            raise RecordValidationError(
                "follows the measured external writes",
                path="$.boundaries.external_writes_performed",
                code="invalid_value",
            )
        if self.release_gate.reason_codes != gate_reasons(self.cases, self.metrics, self.fixture):
            raise RecordValidationError(
                "are the reasons the cases, the metrics and the fixture give",
                path="$.release_gate.reason_codes",
                code="invalid_value",
            )
