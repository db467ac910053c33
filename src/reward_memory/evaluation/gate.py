"""The release gate: ``ready_for_bounded_dogfood`` only when nothing holds it.

Reason codes, in this fixed order (the gate is ready exactly when there are none):

1. ``case_failed:<case_id>`` for each failed case, in case order;
2. ``nonzero:<metric>`` for each of ``provider_write_count``,
   ``storage_write_bytes``, ``external_write_count``, ``false_application_count``,
   ``maintainer_interruption_count`` and ``user_gate_count`` that is not zero
   (writes of the *evaluated* operations; the fixture's seeding is reported apart);
3. ``provider_failures_observed`` when any provider call, the fixture's included,
   failed (a broken store never passes, even where a case happened not to notice);
4. ``fixture_cleanup_incomplete`` when the evaluation could not delete what it seeded.

A ready gate is a trial-readiness statement for bounded dogfood: it proves the
core contract invariants only; semantic uplift and production rollout stay
``false`` whatever happens.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from reward_memory.records.evaluation import ReleaseGate

if TYPE_CHECKING:
    from collections.abc import Sequence

    from reward_memory.records.evaluation import CaseResult, EvaluationMetrics, FixtureReport

__all__ = ["GATED_METRICS", "release_gate"]

GATED_METRICS: Final = (
    "provider_write_count",
    "storage_write_bytes",
    "external_write_count",
    "false_application_count",
    "maintainer_interruption_count",
    "user_gate_count",
)


def gate_reasons(
    cases: Sequence[CaseResult], metrics: EvaluationMetrics, fixture: FixtureReport
) -> tuple[str, ...]:
    """The ordered reasons that hold the gate (see the module docs)."""
    reasons = [f"case_failed:{case.case_id}" for case in cases if not case.passed]
    reasons.extend(f"nonzero:{name}" for name in GATED_METRICS if getattr(metrics, name))
    if fixture.provider_failure_count:
        reasons.append("provider_failures_observed")
    if not fixture.cleaned_up:
        reasons.append("fixture_cleanup_incomplete")
    return tuple(reasons)


def release_gate(
    cases: Sequence[CaseResult], metrics: EvaluationMetrics, fixture: FixtureReport
) -> ReleaseGate:
    """The ``reward_memory_release_gate_v0`` for one evaluation."""
    reasons = gate_reasons(cases, metrics, fixture)
    return ReleaseGate(
        status="hold" if reasons else "ready_for_bounded_dogfood",
        decision="repair_stage_4" if reasons else "advance_stage_5",
        reason_codes=reasons,
    )
