"""Builders shared by the Stage-3 recall and application tests.

Everything here builds real records (validated on construction) and writes
real active records to real providers; nothing is mocked.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import attrs

from reward_memory import wire
from reward_memory.digests import short_digest
from reward_memory.providers.spi import Provider, ProviderScope
from reward_memory.records.active import ActivationLineage, ActiveRecord, ReviewSummary
from reward_memory.records.corpus import (
    CorpusDeclaration,
    CorpusFreshness,
    CorpusLifecycle,
    CorpusMaintenance,
    CorpusPrivacy,
    CorpusRetrieval,
    CorpusScope,
)
from reward_memory.records.envelope import (
    Confidence,
    Expiry,
    Privacy,
    RecordAuthority,
    RecordScope,
    RecordSource,
    Revocation,
    Supersession,
)
from reward_memory.records.recall import (
    FreshnessContext,
    ProviderBinding,
    ReadAuthorityCheckpoint,
    RecallQuery,
    RecallRequest,
)

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
OBSERVED = "2026-03-01T11:59:00Z"
SURFACE = "reviewer_artifact.summary"
OTHER_SURFACE = "reviewer_notification.before_send"
CORPUS_ID = "review_policy"
PROVIDER_ID = "memory_or_sqlite"
NAMESPACE = "reward_memory"
SCOPE_REF = "viking://resources/reward-memory/review-policy"
WORKSPACE = "workspace:main"
PROJECT = "project:alpha"


def corpus(**changes: Any) -> CorpusDeclaration:
    """A recallable soft-preference corpus (public_safe, source-truth bound)."""
    scope = changes.pop("scope", None)
    freshness = changes.pop("freshness", CorpusFreshness(mode="source_truth_bound"))
    base = CorpusDeclaration(
        corpus_id=CORPUS_ID,
        class_id="soft_preference",
        provider_id=PROVIDER_ID,
        owner_ref="owner:review-team",
        source_of_truth="explicit_reviewed_feedback",
        read_authority="module_scoped",
        write_authority="provider_managed",
        scope=scope
        or CorpusScope(
            workspace_ref=WORKSPACE, project_ref=PROJECT, surface_ids=(SURFACE, OTHER_SURFACE)
        ),
        freshness=freshness,
        lifecycle=CorpusLifecycle(state="active"),
        retrieval=CorpusRetrieval(
            index_required=True, readback_required=True, application_receipt_required=True
        ),
        maintenance=CorpusMaintenance(
            closure_policy="provider_write_index_read_and_scoped_recall",
            retirement_authority="owner:review-team",
        ),
        privacy=CorpusPrivacy(visibility="public_safe", raw_content_in_registry=False),
        provider_scope_ref_digest=short_digest(SCOPE_REF),
    )
    return attrs.evolve(base, **changes)


def request(**changes: Any) -> RecallRequest:
    """A ready function-boundary request for ``SURFACE``."""
    values: dict[str, Any] = {
        "mode": "function_boundary",
        "surface_id": SURFACE,
        "workspace_ref": WORKSPACE,
        "project_ref": PROJECT,
        "queries": (RecallQuery(query="reviewer summary tone", query_summary="summary tone"),),
        "observed_at": OBSERVED,
        "conflict_state": "clear",
        "freshness_context": FreshnessContext(source_truth_current=True),
    }
    values.update(changes)
    return RecallRequest(**values)


def checkpoint(**changes: Any) -> ReadAuthorityCheckpoint:
    """A verified checkpoint matching ``corpus()`` and ``request()``."""
    values: dict[str, Any] = {
        "verified": True,
        "corpus_id": CORPUS_ID,
        "workspace_ref": WORKSPACE,
        "project_ref": PROJECT,
        "surface_id": SURFACE,
        "read_authority": "module_scoped",
        "source_ref": "authority:review-team",
    }
    values.update(changes)
    return ReadAuthorityCheckpoint(**values)


def binding(**changes: Any) -> ProviderBinding:
    """A binding matching ``corpus()``."""
    values: dict[str, Any] = {
        "corpus_id": CORPUS_ID,
        "provider_id": PROVIDER_ID,
        "namespace": NAMESPACE,
        "scope_ref": SCOPE_REF,
        "timeout_seconds": 5,
    }
    values.update(changes)
    return ProviderBinding(**values)


def active_record(
    index: int = 0,
    *,
    summary: str | None = None,
    corpus_id: str = CORPUS_ID,
    class_id: str = "soft_preference",
    surfaces: tuple[str, ...] = (SURFACE,),
    workspace_ref: str = WORKSPACE,
    project_ref: str = PROJECT,
    lifecycle_state: str = "active",
    expires_at: str | None = None,
    revoked: bool = False,
    superseded: bool = False,
    retired_reason: str | None = None,
    visibility: str = "public_safe",
    supersedes: tuple[str, ...] = (),
    observed_at: str = "2026-02-01T00:00:00Z",
    activated_at: str = "2026-02-01T00:00:00Z",
    **scope: Any,
) -> ActiveRecord:
    """An active record v1 (soft preference unless told otherwise)."""
    authority = (
        RecordAuthority(
            level="constraint", action_scopes=("review:tone",), checkpoint_ref="authority:x"
        )
        if class_id == "hard_policy"
        else RecordAuthority(level="evidence" if class_id == "run_bound_reward" else "advisory")
    )
    if revoked:
        lifecycle_state = "revoked"
    if superseded:
        lifecycle_state = "superseded"
    return ActiveRecord(
        activation_ref=f"activation:{index:020x}",
        activated_at=activated_at,
        corpus_id=corpus_id,
        candidate_ref=f"candidate:{index:020x}",
        content_summary=summary or f"Reviewer summary tone preference number {index}.",
        class_id=class_id,  # type: ignore[arg-type]
        source=RecordSource(
            source_kind="maintainer_feedback",
            source_ref=f"review:{index}",
            actor_ref="actor:maintainer",
            actor_role="maintainer",
            observed_at=observed_at,
        ),
        scope=RecordScope(
            workspace_ref=workspace_ref,
            project_ref=project_ref,
            surface_ids=surfaces,
            **scope,
        ),
        authority=authority,
        confidence=Confidence(level="high", basis="explicit maintainer review"),
        lifecycle_state=lifecycle_state,  # type: ignore[arg-type]
        supersession=Supersession(
            supersedes_refs=supersedes,
            superseded_by_ref="candidate:next" if superseded else None,
        ),
        revocation=Revocation(
            revoked_by_ref="operator:alice" if revoked else None,
            revoked_at="2026-02-15T00:00:00Z" if revoked else None,
        ),
        expiry=Expiry(expires_at=expires_at, retired_reason=retired_reason),
        privacy=Privacy(
            visibility=visibility,  # type: ignore[arg-type]
            retention_class="durable_until_revoked",
        ),
        review=ReviewSummary(
            reviewer_ref="reviewer:bob", review_ref=f"review:{index}", reasoning_summary="scoped"
        ),
        activation_lineage=ActivationLineage(review_ref=f"review:{index}"),
    )


def content_of(record: Any) -> str:
    """The JSON text a corpus owner writes for a record."""
    return json.dumps(wire.dump(record), sort_keys=True)


def tampered(record: Any, path: tuple[str, ...], value: Any) -> str:
    """The JSON text of ``record`` with the value at ``path`` replaced (a stored record
    that no valid constructor would build: what a careless or hostile writer leaves)."""
    data = wire.dump(record)
    node = data
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return json.dumps(data, sort_keys=True)


def scope_of(bound: ProviderBinding) -> ProviderScope:
    return ProviderScope(
        namespace=bound.namespace, scope_ref=bound.scope_ref, actor_peer_id=bound.actor_peer_id
    )


def store(
    provider: Provider, record: Any, *, key: str | None = None, bound: ProviderBinding | None = None
) -> str:
    """Write ``record`` (or raw text) into the binding's scope; return the provider ref."""
    bound = bound or binding()
    content = record if isinstance(record, str) else content_of(record)
    if key is None:
        key = f"record-{short_digest(content)}"
    return provider.write(scope=scope_of(bound), key=key, content=content).ref


def validate_packet(packet: Any) -> dict[str, Any]:
    """Dump an emitted record and validate it against its own schema."""
    from reward_memory import schemas

    data: dict[str, Any] = wire.dump(packet)
    json.dumps(data)  # JSON-ready
    schemas.validate(data)
    return data
