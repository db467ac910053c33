"""The main job, end to end, on the embedded SQLite store.

    python3 dev.py demo                      # the default store location
    python examples/main_job.py --store sqlite:///tmp/demo.db --format json

1. A verified maintainer corrects an over-broad Issue Fix patch. The Issue Fix
   adapter maps the compact event onto a candidate; ``propose`` checks it against
   the caller's own authority checkpoint (never built from the event).
2. ``review`` accepts it and ``activate`` builds the active record (v1, full
   Stage-0 envelope) for the declared corpus.
3. The declared corpus owner writes the record to the SQLite store and reads it
   back exactly. Re-running the job is idempotent: the write reports ``unchanged``.
4. At the ``issue_fix.patch_planning`` boundary, ``recall`` retrieves it under a
   read-authority checkpoint, and the module's model decides to apply it;
   ``apply`` leaves a compact, public-safe application receipt.
5. Corpus health is classified from the store's inventory and the recall.
6. A request for another project is stopped by the guards: zero provider calls.

Only public-safe packets are printed: hashed references, counts and reasons.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime
from typing import Any

from reward_memory import wire
from reward_memory.activation import activate
from reward_memory.adapters.issue_fix import (
    build_issue_fix_candidate,
    verified_contributor_checkpoint,
    verified_contributor_event,
)
from reward_memory.application import apply
from reward_memory.candidates import review
from reward_memory.digests import canonical_json, short_digest
from reward_memory.guarded_recall import recall
from reward_memory.health import classify_health
from reward_memory.providers.discovery import get_provider
from reward_memory.records.candidate import ReviewDecision
from reward_memory.records.corpus import (
    CorpusDeclaration,
    CorpusFreshness,
    CorpusLifecycle,
    CorpusMaintenance,
    CorpusPrivacy,
    CorpusRetrieval,
    CorpusScope,
)
from reward_memory.records.health import HealthObservation
from reward_memory.records.recall import (
    FreshnessContext,
    ProviderBinding,
    ReadAuthorityCheckpoint,
    RecallQuery,
    RecallRequest,
)

WORKSPACE = "workspace:example"
PROJECT = "repository:example"
SURFACE = "issue_fix.patch_planning"
SCOPE_REF = "repository:example/reward-memory/issue-fix-policies"
# When the correction was first observed. Replays reuse it, so a replay is the same
# candidate, the same active record and the same provider target (idempotent).
FIRST_OBSERVED = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)


def declared_corpus() -> CorpusDeclaration:
    """The hard-policy corpus this project declares for Issue Fix patch planning."""
    return CorpusDeclaration(
        corpus_id="issue_fix_policies",
        class_id="hard_policy",
        provider_id="sqlite",
        owner_ref="repository:example:maintainers",
        source_of_truth="verified_contributor_corrections",
        read_authority="authority_scoped",
        write_authority="authorized_policy_source",
        scope=CorpusScope(workspace_ref=WORKSPACE, project_ref=PROJECT, surface_ids=(SURFACE,)),
        freshness=CorpusFreshness(mode="source_truth_bound"),
        lifecycle=CorpusLifecycle(state="active"),
        retrieval=CorpusRetrieval(
            index_required=True, readback_required=True, application_receipt_required=True
        ),
        maintenance=CorpusMaintenance(
            writeback_triggers=("verified_contributor_policy_derived",),
            closure_policy="verified_actor_scope_then_canonical_policy_readback",
            retirement_authority="repository:example:maintainers",
        ),
        privacy=CorpusPrivacy(visibility="private", raw_content_in_registry=False),
        provider_scope_ref_digest=short_digest(SCOPE_REF),
    )


def recall_request(project: str, now: datetime) -> RecallRequest:
    return RecallRequest(
        mode="function_boundary",
        surface_id=SURFACE,
        workspace_ref=WORKSPACE,
        project_ref=project,
        queries=(
            RecallQuery(
                query="keep focused fixes within the affected module",
                query_summary="patch scope policy for this issue",
            ),
        ),
        limit=4,
        observed_at=now.isoformat().replace("+00:00", "Z"),
        conflict_state="clear",
        freshness_context=FreshnessContext(source_truth_current=True),
    )


def narrow_the_plan(base_output: dict[str, Any], items: Any) -> dict[str, Any]:
    """The module's model: it reads the recalled policy and decides to apply it."""
    policy = items[0]
    return {
        "outcome": "applied",
        "output": {**base_output, "files": ["src/parser/module.py"], "scope": "affected_module"},
        "memory_refs": [policy.memory_ref],
        "reasoning_summary": "The maintainer's policy fits: the bug is local to the parser module.",
        "current_artifact_verified": True,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", default="sqlite://", help="provider URL (default: sqlite://)")
    parser.add_argument("--format", choices=("json", "text"), default="text")
    args = parser.parse_args()
    now = datetime.now(UTC)
    corpus = declared_corpus()
    checkpoint = verified_contributor_checkpoint()  # from the caller's authority map

    # 1-2. propose, review, activate
    adapted = build_issue_fix_candidate(
        verified_contributor_event(), checkpoint, now=FIRST_OBSERVED
    )
    candidate = adapted.shared_candidate
    accepted = review(
        candidate,
        ReviewDecision(
            decision="accept",
            reviewer_ref="github:user:maintainer",
            review_ref="review:example:42",
            reasoning_summary="Compact evidence and scope were reviewed.",
        ),
    )
    record = activate(accepted, corpus, checkpoint=checkpoint, now=FIRST_OBSERVED)

    # 3. the declared corpus owner writes and reads back exactly
    provider = get_provider(args.store)
    binding = ProviderBinding(
        corpus_id=corpus.corpus_id,
        provider_id="sqlite",
        namespace="reward_memory",
        scope_ref=SCOPE_REF,
    )
    scope = binding.provider_scope
    content = canonical_json(wire.dump(record)).decode("utf-8")
    # Keyed by the record's stable identity: a replay re-writes the same record.
    written = provider.write(scope=scope, key=record.record_ref, content=content)
    readback = provider.read(scope=scope, ref=written.ref)
    exact = readback.found and readback.content == content

    # 4. guarded recall and application at the module boundary
    read_checkpoint = ReadAuthorityCheckpoint(
        verified=True,
        corpus_id=corpus.corpus_id,
        workspace_ref=WORKSPACE,
        project_ref=PROJECT,
        surface_id=SURFACE,
        read_authority="authority_scoped",
        source_ref="repository:authority-map",
    )
    session = recall(
        recall_request(PROJECT, now),
        corpus=corpus,
        checkpoint=read_checkpoint,
        binding=binding,
        provider=provider,
        now=now,
    )
    base_plan = {"files": ["src/parser/module.py", "src/generic/listing.py"], "scope": "generic"}
    applied = apply(
        base_plan,
        session,
        application_id="application:example:42",
        artifact_ref="revision:abc123",
        apply_memory=narrow_the_plan,
    )

    # 5. corpus health from inventory + what the recall observed
    inventory = provider.inventory(scope=scope)
    health = classify_health(
        corpus,
        HealthObservation(
            requested_project_ref=PROJECT,
            requested_surface=SURFACE,
            freshness_window_satisfied=True,
            provider_available=inventory.available,
            corpus_present=inventory.corpus_present,
            record_count=inventory.record_count,
            index_present=inventory.index_present,
            retrieval_query_succeeded=session.packet.status in ("completed", "empty"),
            result_readback_verified=session.packet.result_readback_verified,
            memory_applied_with_receipt=applied.status == "applied",
        ),
    )

    # 6. the guards stop a request for another project before the provider
    blocked = recall(
        recall_request("repository:other", now),
        corpus=corpus,
        checkpoint=read_checkpoint,
        binding=binding,
        provider=provider,
        now=now,
    )
    provider.close()

    result = {
        "candidate": {
            "status": candidate.status,
            "candidate_ref": candidate.candidate.candidate_ref,
        },
        "review": {"status": accepted.status, "effective_decision": accepted.effective_decision},
        "active_record": {
            "record_ref": record.record_ref,
            "activation_ref": record.activation_ref,
            "authority": wire.dump(record.authority),
        },
        "write": {"status": written.status, "exact_readback": exact},
        "recall": wire.dump(session.packet),
        "application": {"status": applied.status, "receipt": wire.dump(applied.receipt)},
        "health": wire.dump(health),
        "blocked_recall": {
            "status": blocked.packet.status,
            "reason_codes": list(blocked.packet.reason_codes),
            "provider_call_count": blocked.packet.provider_call_count,
        },
    }
    if args.format == "json":
        print(json.dumps(result, indent=2, ensure_ascii=False))
    else:
        print(f"candidate      {candidate.status}  {candidate.candidate.candidate_ref}")
        print(f"review         {accepted.status} ({accepted.effective_decision})")
        print(
            f"activation     {record.record_ref} {record.activation_ref}  "
            f"authority={record.authority.level} "
            f"scopes={list(record.authority.action_scopes)}"
        )
        print(f"owner write    {written.status}, exact readback: {exact}")
        print(
            f"recall         {session.packet.status}, {session.packet.result_count} result(s), "
            f"{session.packet.provider_call_count} provider call(s)"
        )
        print(f"application    {applied.status}: {applied.receipt.reasoning_summary}")
        print(f"health         {health.health_state} ({', '.join(health.reason_codes)})")
        print(
            f"other project  {blocked.packet.status} {list(blocked.packet.reason_codes)}, "
            f"{blocked.packet.provider_call_count} provider calls"
        )
    ok = exact and applied.status == "applied" and blocked.packet.provider_call_count == 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
