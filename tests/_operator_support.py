"""Builders for the operator-control tests: an ingested record, its request, its checkpoint.

The record is the one ingest really wrote (read back through the provider), so
every control is tested on what a provider actually holds.
"""

from __future__ import annotations

from typing import Any

import attrs

from reward_memory._operator_provider import locate
from reward_memory.candidates import propose, review
from reward_memory.ingestion import _event_proposal
from reward_memory.records.active import ActiveRecord
from reward_memory.records.candidate import UNVERIFIED_CHECKPOINT, ReviewDecision
from reward_memory.records.corpus import CorpusDeclaration
from reward_memory.records.operator import OperatorAction, OperatorCheckpoint, OperatorControlRequest
from reward_memory.records.review import CandidateReview
from tests._ingest_support import (
    NOW,
    OBSERVED,
    PROJECT,
    ingest_hard,
    soft_binding,
    soft_corpus,
    soft_event_data,
    soft_policy,
)
from reward_memory.ingestion import ingest

OWNER = "repository:example:maintainers"
RETIREMENT = "repository:example:retirement-board"
OPERATOR = "operator:alice"
SOURCE = "operator-source:example"


def corpus(**changes: Any) -> CorpusDeclaration:
    base = soft_corpus()
    maintenance = attrs.evolve(base.maintenance, retirement_authority=RETIREMENT)
    return attrs.evolve(base, maintenance=maintenance, **changes)


def ingest_soft(provider: Any, summary: str = "Lead the review summary with the risk.") -> Any:
    return ingest(
        soft_event_data(summary),
        adapter="scoped_feedback",
        corpus=corpus(),
        standing_policy=soft_policy(),
        binding=soft_binding(provider_id=provider.provider_id),
        observed_at=OBSERVED,
        provider=provider,
        execute=True,
        now=NOW,
    )


def stored_record(provider: Any, receipt: Any) -> ActiveRecord:
    """The active record the ingest receipt names, read back from the provider."""
    binding = soft_binding(provider_id=provider.provider_id)
    found, _ = locate(
        provider,
        binding.provider_scope,
        record_ref=receipt.record_ref,
        candidate_ref=receipt.candidate_ref,
        timeout=5.0,
    )
    records = [item for item in found if item.kind == "record"]
    assert len(records) == 1
    from reward_memory._recall.readback import parse

    parsed = parse(records[0].content)
    assert parsed is not None
    assert isinstance(parsed.record, ActiveRecord)
    return parsed.record


def accepted_review(summary: str = "Lead the review summary with the risk.") -> CandidateReview:
    """The accepted review ingest activates (the same candidate, reviewed the same way)."""
    proposal = _event_proposal("scoped_feedback", soft_event_data(summary))
    packet = propose(proposal, UNVERIFIED_CHECKPOINT, now=NOW)
    return review(
        packet,
        ReviewDecision(
            decision="accept",
            reviewer_ref="reviewer:issue-fix-maintainers",
            review_ref="review:test",
            reasoning_summary="Accepted in review.",
        ),
        now=NOW,
    )


def checkpoint(action: OperatorAction, **changes: Any) -> OperatorCheckpoint:
    base = OperatorCheckpoint(
        verified=True,
        operator_ref=OPERATOR,
        authority_ref=RETIREMENT if action == "retire" else OWNER,
        source_ref=SOURCE,
        corpus_id="review_preferences",
        project_ref=PROJECT,
        action=action,
    )
    return attrs.evolve(base, **changes)


def request(
    record: ActiveRecord, action: OperatorAction, **changes: Any
) -> OperatorControlRequest:
    fields: dict[str, Any] = {
        "control_ref": f"control:test:{action}",
        "action": action,
        "record": record,
        "corpus": corpus(),
        "operator_checkpoint": checkpoint(action),
        "reasoning_summary": "Current source truth supersedes this record.",
    }
    if action == "edit":
        fields["edited_content_summary"] = "Lead the review summary with the main risk, then tests."
        fields["accepted_review"] = accepted_review()
    fields.update(changes)
    return OperatorControlRequest(**fields)


__all__ = [
    "NOW",
    "accepted_review",
    "checkpoint",
    "corpus",
    "ingest_hard",
    "ingest_soft",
    "request",
    "stored_record",
]
