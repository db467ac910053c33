"""Stage 4: the evaluation harness and release gate (``reward_memory_evaluation_v0``).

One bounded contract suite over the existing core -- no other evaluator, store,
provider, scheduler or semantic router. :func:`evaluate` runs the eight cases
(:mod:`~reward_memory.evaluation.cases`) on the real candidate, ingest, recall,
application, Issue Fix adapter and route code against any provider, measures
every metric it reports, and decides the release gate
(:mod:`~reward_memory.evaluation.gate`): ``ready_for_bounded_dogfood`` at best,
never production.

Modules: ``fixture`` (neutral identities, shared records, the fixture model),
``counting`` (the provider-side meter), ``context``, ``cases``, ``metrics``,
``gate``, ``runner`` (:func:`evaluate`).
"""

from __future__ import annotations

from reward_memory.evaluation.runner import evaluate
from reward_memory.records.evaluation import CaseResult, Evaluation, ReleaseGate

__all__ = ["CaseResult", "Evaluation", "ReleaseGate", "evaluate"]
