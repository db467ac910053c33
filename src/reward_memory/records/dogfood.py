"""Stage-5 dogfood records: the observation, the receipt, the batch, the CLI input.

The records live in :mod:`~reward_memory.records.dogfood_receipt` (the observation
and the receipt) and :mod:`~reward_memory.records.dogfood_batch` (the batch and
its readiness), their shared vocabularies in ``_dogfood_fields``; this module keeps
:class:`DogfoodInput` (``reward_memory_dogfood_input_v1``, the ``dogfood-evaluate``
input file) and re-exports the rest under the names it always had.

The utility-observation record lives in :mod:`reward_memory.records.utility`.
"""

from __future__ import annotations

from typing import Any, Literal

from reward_memory._frozen import frozen
from reward_memory.records import _fields as f
from reward_memory.records._dogfood_fields import (
    BATCH_SCHEMA,
    CONTROL_ACTIONS,
    DISPOSITION_OF,
    DISPOSITIONS,
    DOMAIN_FAMILIES,
    INPUT_SCHEMA,
    ISSUE_FIX_SURFACE,
    MAX_CONTROLS,
    MAX_DIGESTS,
    MAX_RECEIPTS,
    READY,
    RECEIPT_SCHEMA,
    REQUIRED_CONTROLS,
    UTILITY_REASONS,
    ControlAction,
    Disposition,
    DomainFamily,
    UtilityStatus,
    check_domain,
    counted_items,
    each_of,
    tuple_field,
)
from reward_memory.records.dogfood_batch import (
    BatchBoundaries,
    BatchMetrics,
    ControlSummary,
    DogfoodBatch,
    batch_metrics,
    check_unique,
    readiness_reasons,
)
from reward_memory.records.dogfood_receipt import (
    BotFeedback,
    DogfoodCost,
    DogfoodObservation,
    DogfoodReceipt,
    Intervention,
    ModuleOutcome,
    ObservedOutcome,
    UtilityEvaluation,
    Verification,
    receipt_id_of,
)

__all__ = [
    "BATCH_SCHEMA",
    "CONTROL_ACTIONS",
    "DISPOSITIONS",
    "DISPOSITION_OF",
    "DOMAIN_FAMILIES",
    "INPUT_SCHEMA",
    "ISSUE_FIX_SURFACE",
    "MAX_CONTROLS",
    "MAX_DIGESTS",
    "MAX_RECEIPTS",
    "READY",
    "RECEIPT_SCHEMA",
    "REQUIRED_CONTROLS",
    "UTILITY_REASONS",
    "BatchBoundaries",
    "BatchMetrics",
    "BotFeedback",
    "ControlAction",
    "ControlSummary",
    "Disposition",
    "DogfoodBatch",
    "DogfoodCost",
    "DogfoodInput",
    "DogfoodObservation",
    "DogfoodReceipt",
    "DomainFamily",
    "Intervention",
    "ModuleOutcome",
    "ObservedOutcome",
    "UtilityEvaluation",
    "UtilityStatus",
    "Verification",
    "batch_metrics",
    "check_domain",
    "check_unique",
    "readiness_reasons",
    "receipt_id_of",
]


@frozen(kw_only=True)
class DogfoodInput:
    """``reward_memory_dogfood_input_v1``: the ``dogfood-evaluate`` input file.

    ``operator_controls`` are ``reward_memory_operator_control_receipt_v0``
    mappings and ``evaluation`` a ``reward_memory_evaluation_v0`` mapping; both
    are checked by :func:`reward_memory.dogfood.build_batch`. The CLI always runs
    the Stage-4 suite afresh; an evaluation here can only close the gate.
    """

    schema_version: Literal["reward_memory_dogfood_input_v1"] = f.const(INPUT_SCHEMA)
    observations: tuple[DogfoodObservation, ...] = tuple_field(
        validator=[counted_items(1, 24), each_of(DogfoodObservation)]
    )
    operator_controls: tuple[dict[str, Any], ...] = tuple_field(
        factory=tuple, validator=counted_items(0, 8)
    )
    evaluation: dict[str, Any] | None = None
