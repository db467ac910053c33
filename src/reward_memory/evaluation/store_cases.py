"""The cases over stored records: restart survival, and supersede/revoke rejection.

Both seed the store the way its corpus owner would (ingest, or the owner's own
write of a record whose lifecycle changed) inside :meth:`Context.seeding`, then
recall through the real guarded recall. The lifecycle-changed records are fixture
constants (:func:`lifecycle_seeds`: the real propose, accept and activate at the
observation time, built once per process); their writes and the recalls run in
every evaluation.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

import attrs

from reward_memory._frozen import frozen
from reward_memory.activation import activate, activation_ref_of
from reward_memory.adapters.issue_fix import issue_fix_proposal
from reward_memory.candidates import propose, review
from reward_memory.digests import canonical_json
from reward_memory.evaluation import fixture as fx
from reward_memory.evaluation.context import Check
from reward_memory.grammars import parse_timestamp
from reward_memory.ingestion import ingest
from reward_memory.records._plain import to_plain
from reward_memory.records.envelope import Revocation, Supersession

if TYPE_CHECKING:
    from reward_memory.evaluation.context import Context
    from reward_memory.guarded_recall import RecallSession
    from reward_memory.records.active import ActiveRecord

__all__ = [
    "compact_restart_survival",
    "lifecycle_seeds",
    "recall_lifecycle",
    "store_seed",
    "supersede_revoke_rejection",
]


def compact_restart_survival(ctx: Context) -> Check:
    """An ingested record survives a real restart and is recalled exactly, compactly."""
    check = Check()
    f = ctx.fixture
    with ctx.seeding():
        before = ctx.provider.meters["fixture"].write_bytes
        receipt = ingest(
            f.event,
            adapter="issue_fix",
            corpus=f.corpus,
            standing_policy=f.policy,
            binding=f.binding,
            provider=ctx.provider,
            authority=f.authority,
            observed_at=f.observed_at,
            execute=True,
            now=ctx.now,
        )
        written = ctx.provider.meters["fixture"].write_bytes - before
        restarted = ctx.restart()
    calls_before = ctx.provider.meters["case"].calls
    session = ctx.recall(
        f.observed.request,
        corpus=f.corpus,
        checkpoint=f.checkpoint,
        binding=f.binding,
    )
    calls = ctx.provider.meters["case"].calls - calls_before
    packet = session.packet
    items = session.items
    check.that("seed_activated", receipt.status == "activated")
    check.that("restarted_on_a_new_provider_object", restarted)
    check.that("recall_completed", packet.status == "completed")
    check.that("readback_verified", packet.result_readback_verified)
    check.that("one_result", packet.result_count == 1 and len(items) == 1)
    check.that(
        "same_record_after_restart",
        bool(items) and items[0].record.activation_ref == receipt.activation_ref,
    )
    check.that("provider_counted_every_call", calls == packet.provider_call_count and calls > 0)
    check.that("record_is_compact", 0 < written <= 4096)
    check.false_application(any(item.candidate_ref != receipt.candidate_ref for item in items))
    check.evidence = {
        "seed_status": receipt.status,
        "serialized_bytes": written,
        "restarted": restarted,
        "recall_status": packet.status,
        "readback_verified": packet.result_readback_verified,
        "result_count": packet.result_count,
        "provider_call_count": calls,
    }
    return check


@frozen(kw_only=True)
class LifecycleSeeds:
    """What the lifecycle case seeds: the fixture candidate activated in the lifecycle
    corpus, and its superseded and revoked copies, as the corpus owner's write bytes."""

    active_ref: str
    active: str
    superseded: str
    revoked: str
    # Copies of the active record that belong elsewhere (another project, workspace,
    # module surface or corpus), written into the same provider scope: a shared store
    # holds them, and only the item filter keeps them out of a recall.
    foreign: tuple[tuple[str, str], ...] = ()
    # A record that supersedes the active one (an edit's replacement, as its owner wrote it).
    successor_ref: str = ""
    successor: str = ""


# Fixture constants, built on first use: the records are a function of the observation
# time alone (every clock below is that time), so one process builds them once. What
# the case measures -- the writes into the run's own namespace and the recalls -- runs
# every time.
_SEEDS: dict[str, LifecycleSeeds] = {}


def lifecycle_seeds(observed_at: str) -> LifecycleSeeds:
    """The lifecycle records observed at ``observed_at`` (kept for the fixture time)."""
    seeds = _SEEDS.get(observed_at)
    if seeds is None:
        seeds = _build_seeds(observed_at)
        if observed_at == fx.OBSERVED_AT:  # the other times are rare: a clock before it
            _SEEDS[observed_at] = seeds
    return seeds


def _build_seeds(observed_at: str) -> LifecycleSeeds:
    """Propose, accept and activate the fixture candidate; relabel its copies."""
    checkpoint = fx.AUTHORITY_CHECKPOINT
    moment = parse_timestamp(observed_at)
    proposal = issue_fix_proposal(fx.EVENT, observed_at=observed_at)
    packet = propose(proposal, checkpoint, now=moment)
    record = activate(
        review(packet, fx.ACCEPT, checkpoint=checkpoint, now=moment),
        fx.LIFECYCLE_CORPUS,
        checkpoint=checkpoint,
        now=moment,
    )
    successor = review(packet, fx.EDIT, checkpoint=checkpoint, now=moment).record.candidate_ref
    superseded = _relabelled(
        record,
        lifecycle_state="superseded",
        supersession=Supersession(superseded_by_ref=successor),
    )
    revoked = _relabelled(
        record,
        lifecycle_state="revoked",
        revocation=Revocation(
            revoked_by_ref=fx.OWNER,
            revoked_at=observed_at,
            reason="Revoked by the corpus owner.",
        ),
    )
    scope = record.scope
    foreign = (
        ("other-project", {"scope": attrs.evolve(scope, project_ref=fx.OTHER_PROJECT)}),
        ("other-workspace", {"scope": attrs.evolve(scope, workspace_ref=fx.OTHER_WORKSPACE)}),
        ("other-surface", {"scope": attrs.evolve(scope, surface_ids=(fx.OTHER_SURFACE,))}),
        ("other-corpus", {"corpus_id": fx.SIBLING_CORPUS_ID}),
    )
    replacement = _relabelled(
        record,
        candidate_ref=successor,
        record_ref="",
        supersession=Supersession(supersedes_refs=(record.candidate_ref,)),
    )
    return LifecycleSeeds(
        active_ref=record.activation_ref,
        active=_written(record),
        superseded=_written(superseded),
        revoked=_written(revoked),
        successor_ref=replacement.activation_ref,
        successor=_written(replacement),
        foreign=tuple(
            (name, _written(_elsewhere(record, name, changes))) for name, changes in foreign
        ),
    )


def _elsewhere(record: ActiveRecord, name: str, changes: dict[str, Any]) -> ActiveRecord:
    """The record as another identity would hold it: its own candidate (so its own
    record ref), the same content -- the search finds it as it finds the original."""
    digest = hashlib.sha256(f"{record.candidate_ref}/{name}".encode()).hexdigest()[:20]
    return _relabelled(record, candidate_ref=f"candidate:{digest}", record_ref="", **changes)


def _written(record: ActiveRecord) -> str:
    """What the corpus owner writes for ``record``: its canonical JSON."""
    return canonical_json(to_plain(record)).decode("utf-8")


def _relabelled(record: ActiveRecord, **changes: Any) -> ActiveRecord:
    changed = attrs.evolve(record, activation_ref="activation:pending", **changes)
    return attrs.evolve(changed, activation_ref=activation_ref_of(changed))


def supersede_revoke_rejection(ctx: Context) -> Check:
    """A superseded and a revoked copy of a record are never recalled (its active copy is)."""
    check = Check()
    seeds = lifecycle_seeds(ctx.fixture.observed_at)
    with ctx.seeding():
        store_seed(ctx, "superseded", seeds.superseded)
        store_seed(ctx, "revoked", seeds.revoked)
    # Every record of the scope in one result (the fixture's limit is 3; the isolation
    # case left four records of other identities here): no limit hides one.
    packet = recall_lifecycle(ctx, limit=8).packet
    # The control: the same record, still active, beside them is recalled -- so the
    # copies were refused for their lifecycle, not because the scope or bytes were bad.
    with ctx.seeding():
        store_seed(ctx, "active", seeds.active)
    control = recall_lifecycle(ctx, limit=8)
    recalled = [item.record.activation_ref for item in control.items]
    # The active record and the record that supersedes it, side by side: only the latter.
    with ctx.seeding():
        store_seed(ctx, "successor", seeds.successor)
    replaced = recall_lifecycle(ctx, limit=8)
    after_edit = [item.record.activation_ref for item in replaced.items]
    check.that("recall_empty", packet.status == "empty")
    check.that("no_result", packet.result_count == 0)
    check.that("nothing_read_back_as_usable", not packet.result_readback_verified)
    check.that("provider_was_asked", packet.provider_call_count > 0)
    check.that("active_copy_recalled", control.packet.status == "completed")
    check.that("only_the_active_copy", recalled == [seeds.active_ref])
    check.that("superseded_by_a_returned_record_dropped", after_edit == [seeds.successor_ref])
    check.false_application(packet.result_count)
    check.false_application(len(recalled) > 1)
    check.false_application(seeds.active_ref in after_edit)
    check.evidence = {
        "recall_status": packet.status,
        "accepted_result_count": packet.result_count,
        "stored_states": ["revoked", "superseded"],
        "control_status": control.packet.status,
        "control_result_count": control.packet.result_count,
        "superseded_pair_result_count": replaced.packet.result_count,
    }
    return check


def store_seed(ctx: Context, name: str, content: str) -> str:
    """The corpus owner's write of one record into the lifecycle corpus; its ref."""
    binding = ctx.fixture.lifecycle_binding
    written = ctx.provider.write(
        scope=binding.provider_scope,
        key=f"stage4-{name}.json",
        content=content,
        timeout=binding.timeout_seconds,
    )
    return written.ref


def recall_lifecycle(ctx: Context, *, limit: int | None = None) -> RecallSession:
    f = ctx.fixture
    request = f.observed.request
    return ctx.recall(
        request if limit is None else attrs.evolve(request, limit=limit),
        corpus=f.lifecycle_corpus,
        checkpoint=fx.LIFECYCLE_CHECKPOINT,
        binding=f.lifecycle_binding,
    )
