"""Builders for the operator-control tests: an ingested record, its request, its checkpoint.

The record is the one ingest really wrote (read back through the provider), so
every control is tested on what a provider actually holds.
"""

from __future__ import annotations

from typing import Any

import attrs
from tests._ingest_support import (
    NOW,
    OBSERVED,
    PROJECT,
    SOFT_SURFACE,
    WORKSPACE,
    ingest_hard,
    soft_binding,
    soft_corpus,
    soft_event_data,
    soft_policy,
)

from reward_memory._operator_provider import locate
from reward_memory.candidates import propose, review
from reward_memory.ingestion import _event_proposal, ingest
from reward_memory.records.active import ActiveRecord
from reward_memory.records.candidate import UNVERIFIED_CHECKPOINT, ReviewDecision
from reward_memory.records.corpus import CorpusDeclaration
from reward_memory.records.operator import (
    OperatorAction,
    OperatorCheckpoint,
    OperatorControlRequest,
)
from reward_memory.records.recall import (
    FreshnessContext,
    ProviderBinding,
    ReadAuthorityCheckpoint,
    RecallQuery,
    RecallRequest,
)
from reward_memory.records.review import CandidateReview

OWNER = "repository:example:maintainers"
RETIREMENT = "repository:example:retirement-board"
OPERATOR = "operator:alice"
SOURCE = "operator-source:example"


def corpus(**changes: Any) -> CorpusDeclaration:
    base = soft_corpus()
    maintenance = attrs.evolve(base.maintenance, retirement_authority=RETIREMENT)
    return attrs.evolve(base, maintenance=maintenance, **changes)


def binding(provider_id: str = "memory") -> ProviderBinding:
    return soft_binding(provider_id=provider_id)


def ingest_soft(provider: Any, summary: str = "Lead the review summary with the risk.") -> Any:
    return ingest(
        soft_event_data(summary),
        adapter="scoped_feedback",
        corpus=corpus(provider_id=provider.provider_id),
        standing_policy=soft_policy(),
        binding=soft_binding(provider_id=provider.provider_id),
        observed_at=OBSERVED,
        provider=provider,
        execute=True,
        now=NOW,
    )


def stored_record(provider: Any, receipt: Any) -> ActiveRecord:
    """The active record the ingest receipt names, read back from the provider."""
    found, _ = locate(
        provider,
        binding(provider.provider_id).provider_scope,
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


def accepted_review(
    summary: str = "Lead the review summary with the risk.", *, expires_at: str | None = None
) -> CandidateReview:
    """The accepted review ingest activates (the same candidate, reviewed the same way)."""
    _, proposal = _event_proposal("scoped_feedback", soft_event_data(summary))
    if expires_at is not None:
        proposal = attrs.evolve(proposal, expires_at=expires_at)
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


def checkpoint(for_action: OperatorAction, **changes: Any) -> OperatorCheckpoint:
    """The checkpoint that fits ``for_action`` on the soft corpus (``changes`` break it)."""
    base = OperatorCheckpoint(
        verified=True,
        operator_ref=OPERATOR,
        authority_ref=RETIREMENT if for_action == "retire" else OWNER,
        source_ref=SOURCE,
        corpus_id="review_preferences",
        project_ref=PROJECT,
        action=for_action,
    )
    return attrs.evolve(base, **changes)


def request(
    record: ActiveRecord, action: OperatorAction, *, provider_id: str = "memory", **changes: Any
) -> OperatorControlRequest:
    fields: dict[str, Any] = {
        "control_ref": f"control:test:{action}",
        "action": action,
        "record": record,
        "corpus": corpus(provider_id=provider_id),
        "operator_checkpoint": checkpoint(action),
        "reasoning_summary": "Current source truth supersedes this record.",
    }
    if action == "edit":
        fields["edited_content_summary"] = "Lead the review summary with the main risk, then tests."
        fields["accepted_review"] = accepted_review()
    fields.update(changes)
    return OperatorControlRequest(**fields)


def recall_soft(provider: Any, query: str = "review summary risk") -> Any:
    """One business recall of the soft corpus through the real guarded recall."""
    from reward_memory.guarded_recall import recall

    request_ = RecallRequest(
        mode="function_boundary",
        surface_id=SOFT_SURFACE,
        workspace_ref=WORKSPACE,
        project_ref=PROJECT,
        queries=(RecallQuery(query=query, query_summary="Recall review-summary preferences."),),
        limit=8,
        observed_at="2026-11-02T09:00:00Z",
        conflict_state="clear",
        freshness_context=FreshnessContext(source_truth_current=True, age_seconds=0),
    )
    read = ReadAuthorityCheckpoint(
        verified=True,
        corpus_id="review_preferences",
        workspace_ref=WORKSPACE,
        project_ref=PROJECT,
        surface_id=SOFT_SURFACE,
        read_authority="authority_scoped",
        source_ref="repository:authority-map",
    )
    return recall(
        request_,
        corpus=corpus(provider_id=provider.provider_id),
        checkpoint=read,
        binding=binding(provider.provider_id),
        provider=provider,
        now=NOW,
    )


__all__ = [
    "NOW",
    "accepted_review",
    "binding",
    "checkpoint",
    "corpus",
    "ingest_hard",
    "ingest_soft",
    "recall_soft",
    "request",
    "stored_record",
]
