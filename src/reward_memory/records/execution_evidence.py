"""Execution evidence (``issue_fix_reward_memory_execution_evidence_v0``, reference §11.1).

What a recall packet proves about a provider call, in the original's vocabulary: did the
provider answer, does the query evidence hold, did the readback verify. A claim that
memory was recalled rests on a query, a provider call and an exact readback; a claim
that it was applied also needs a matching verified application receipt. The ingest
receipt carries the evidence of its verification recall (``query_kind:
ingest_verification``, reference §9.5).

Derived, never taken on trust: :func:`evidence_of` computes it from the packet, and the
record refuses a ``verified_result`` or ``unknowns`` its own minimum evidence does not
give. Only the ingest kind is built here (no application receipt takes part in it).
"""

from __future__ import annotations

from typing import Any, Final, Literal, get_args

import attrs

from reward_memory._frozen import frozen
from reward_memory.errors import RecordValidationError
from reward_memory.records import _fields as f
from reward_memory.records import _memo as m
from reward_memory.records.recall import QueryEvidence  # noqa: TC001 - resolved at run time

__all__ = [
    "CLAIM_POLICY",
    "EXECUTION_EVIDENCE_SCHEMA",
    "ExecutionEvidence",
    "MinimumEvidence",
    "evidence_of",
]

EXECUTION_EVIDENCE_SCHEMA: Final = "issue_fix_reward_memory_execution_evidence_v0"
CLAIM_POLICY: Final = (
    "claim_recalled_only_after_query_provider_call_and_exact_readback"
    "_and_claim_applied_only_after_matching_verified_application_receipt"
)
VerifiedResult = Literal[
    "ingest_exact_readback_verified",
    "ingest_provider_called_without_verified_readback",
    "ingest_provider_not_called",
]
_UNKNOWNS: Final = (
    "provider_result_unknown",
    "query_evidence_unknown",
    "exact_recall_readback_unknown",
)


def _evidence_list(value: Any) -> tuple[QueryEvidence, ...]:
    return value if type(value) is tuple else tuple(value)


@frozen(kw_only=True)
class MinimumEvidence:
    """The least a claim rests on: the query evidence, the calls, the readback."""

    query_kind: Literal["ingest_verification"] = f.const("ingest_verification")
    query_evidence: tuple[QueryEvidence, ...] = attrs.field(converter=_evidence_list)
    provider_call_count: int = f.integer(minimum=0)
    exact_readback_verified: bool = f.strict_bool()
    application_receipt: Literal[None] = f.const(None)


def _derived(minimum: MinimumEvidence) -> tuple[VerifiedResult, tuple[str, ...]]:
    """(verified_result, unknowns) of ``minimum`` (reference §11.1, the ingest kind)."""
    calls, exact = minimum.provider_call_count, minimum.exact_readback_verified
    queries = bool(minimum.query_evidence) and all(
        len(entry.query_digest) == 16 and entry.query_summary.strip()
        for entry in minimum.query_evidence
    )
    if calls > 0 and exact and queries:
        result: VerifiedResult = "ingest_exact_readback_verified"
    elif calls > 0:
        result = "ingest_provider_called_without_verified_readback"
    else:
        result = "ingest_provider_not_called"
    held = (calls == 0, not queries, not exact)
    return result, tuple(name for name, unknown in zip(_UNKNOWNS, held, strict=True) if unknown)


@frozen(kw_only=True)
class ExecutionEvidence:
    """``issue_fix_reward_memory_execution_evidence_v0`` (reference §11.1)."""

    schema_version: Literal["issue_fix_reward_memory_execution_evidence_v0"] = f.const(
        EXECUTION_EVIDENCE_SCHEMA
    )
    verified_result: VerifiedResult = f.enum(*get_args(VerifiedResult))
    unknowns: tuple[str, ...] = f.token_list(max_items=4, keep_order=True)
    minimum_evidence: MinimumEvidence
    claim_policy: str = f.const(CLAIM_POLICY)
    raw_content_captured: Literal[False] = f.const(False)

    def __attrs_post_init__(self) -> None:
        result, unknowns = _derived(self.minimum_evidence)
        if self.verified_result != result:
            raise RecordValidationError(
                f"the minimum evidence gives {result}",
                path="$.verified_result",
                code="invalid_value",
            )
        if self.unknowns != unknowns:
            raise RecordValidationError(
                "are what the minimum evidence leaves unknown, in order",
                path="$.unknowns",
                code="invalid_value",
            )


def evidence_of(packet: Any) -> ExecutionEvidence:
    """The evidence of an ingest's verification recall ``packet`` (``None``: none ran).

    ``packet`` is a checked :class:`~reward_memory.records.recall.RecallPacket` (its
    query evidence already records, its count a count): the evidence is made from it
    without re-running the validators, and its verdict is :func:`_derived`'s, so the
    record's invariants hold by construction (``tests/test_ingest_wrapper_fields.py``
    loads it back through the validating constructors).
    """
    minimum = _trusted_minimum(
        query_kind="ingest_verification",
        query_evidence=() if packet is None else tuple(packet.query_evidence),
        provider_call_count=0 if packet is None else packet.provider_call_count,
        exact_readback_verified=packet is not None and packet.result_readback_verified is True,
        application_receipt=None,
    )
    result, unknowns = _derived(minimum)
    return _trusted_evidence(
        schema_version=EXECUTION_EVIDENCE_SCHEMA,
        verified_result=result,
        unknowns=unknowns,
        minimum_evidence=minimum,
        claim_policy=CLAIM_POLICY,
        raw_content_captured=False,
    )


_trusted_minimum: Final = m.trusted(MinimumEvidence)
_trusted_evidence: Final = m.trusted(ExecutionEvidence)
