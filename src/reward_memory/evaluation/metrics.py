"""Per-case measurement, the metric sums and their dimensions."""

from __future__ import annotations

from typing import TYPE_CHECKING

from reward_memory.records.evaluation import (
    ApplicationQuality,
    EvaluationDimensions,
    EvaluationMetrics,
    PerformanceAndCost,
    TaskOutcome,
    UserExperience,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from reward_memory.records.evaluation import CaseResult

__all__ = ["dimensions_of", "metrics_of"]


def metrics_of(cases: Sequence[CaseResult]) -> EvaluationMetrics:
    """The sums over ``cases``."""
    passed = sum(1 for case in cases if case.passed)
    return EvaluationMetrics(
        case_count=len(cases),
        passed_case_count=passed,
        failed_case_count=len(cases) - passed,
        assertion_count=sum(case.assertion_count for case in cases),
        latency_ms=round(sum(case.latency_ms for case in cases), 3),
        public_evidence_bytes=sum(case.public_evidence_bytes for case in cases),
        model_call_count=sum(case.model_call_count for case in cases),
        model_tokens=sum(case.model_tokens for case in cases),
        provider_call_count=sum(case.provider_call_count for case in cases),
        provider_write_count=sum(case.provider_write_count for case in cases),
        storage_write_bytes=sum(case.storage_write_bytes for case in cases),
        external_write_count=sum(case.external_write_count for case in cases),
        fixture_write_count=sum(case.fixture_write_count for case in cases),
        false_application_count=sum(case.false_application_count for case in cases),
        maintainer_interruption_count=sum(case.maintainer_interruption_count for case in cases),
        user_gate_count=sum(case.user_gate_count for case in cases),
    )


def dimensions_of(metrics: EvaluationMetrics) -> EvaluationDimensions:
    """The metrics regrouped as task outcome, user experience, performance/cost, quality."""
    return EvaluationDimensions(
        task_outcome=TaskOutcome(
            case_count=metrics.case_count,
            passed_case_count=metrics.passed_case_count,
            failed_case_count=metrics.failed_case_count,
            assertion_count=metrics.assertion_count,
        ),
        user_experience=UserExperience(
            maintainer_interruption_count=metrics.maintainer_interruption_count,
            user_gate_count=metrics.user_gate_count,
        ),
        performance_and_cost=PerformanceAndCost(
            latency_ms=metrics.latency_ms,
            model_call_count=metrics.model_call_count,
            model_tokens=metrics.model_tokens,
            public_evidence_bytes=metrics.public_evidence_bytes,
            provider_call_count=metrics.provider_call_count,
            provider_write_count=metrics.provider_write_count,
            storage_write_bytes=metrics.storage_write_bytes,
            external_write_count=metrics.external_write_count,
        ),
        application_quality=ApplicationQuality(
            false_application_count=metrics.false_application_count
        ),
    )
