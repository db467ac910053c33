"""Per-call medians of executed ingest: event -> guard -> activate -> write -> exact readback.

    .venv/bin/python benchmarks/bench_ingest.py [--calls N]

Each timed call ingests a *fresh* Issue Fix hard-policy event (a unique summary, so
nothing is cached from a previous call: a new candidate, a new record, a new target,
a new readback to parse), with the checkpoint answered by an :class:`AuthorityMap`,
through the whole loop: adapter, propose, standing-policy guard, review, activate,
provider write, exact read, one verification recall, the receipt. The events are
built (typed) before the clock starts; the store grows by one record per call.

Rows (medians; ``wall`` is ``time.perf_counter``, ``cpu`` the calling thread's
``time.thread_time_ns``, which a busy shared machine disturbs less; SQLite's
``fsync`` waits are wall time only):

- ``fresh event, memory`` / ``fresh event, sqlite``: the cold path, per call,
  from a typed event.
- ``fresh event as JSON, memory``: the same from the JSON-ready dict a module
  passes (the event is typed at the boundary, in the timed call).
- ``replay, memory`` / ``replay, sqlite``: the same event again (``deduplicated``:
  the write is ``unchanged``), i.e. the warm path.
- ``dry run (planned)``: no provider call.
- with ``--stages``: where one fresh memory ingest spends its time, on a new
  store. ``stage: <name>`` is the median per call of the time inside one of the
  disjoint stages (the library seams the loop runs, and each provider
  operation); ``stage: rest of the library`` is what the call spends outside
  all of them (the receipt, the loop's own checks, the clocks themselves).
  Wall time (``perf_counter_ns``): the thread's CPU clock is a system call
  here, about 1 us, which would bill the stages for their own clocks.

Nothing is cached across calls that a later call could reuse: every fresh event
is a new candidate, record, target and readback, with its own first-observation
time (the ingest loop hands the record it just wrote to its own verification
recall, which is not a cache: the content is this call's). What is reused is
the *setup*, as in a module's experiment: one corpus, standing policy, binding
and authority map, so the per-setup values (the policy digest, the policy/corpus
reasons, the verification request's template and read checkpoint, the
authority map's checkpoint for the one maintainer's claim) are built once.

Targets on the reference 2-core machine: <= 60 us (memory), <= 250 us (sqlite,
crash-safe: the default ``synchronous=normal`` in WAL mode survives a crash of the
writing process, which is what an activated receipt promises).
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
from _util import report

from reward_memory import wire
from reward_memory.adapters.issue_fix import verified_contributor_event
from reward_memory.authority import AuthorityMap
from reward_memory.digests import short_digest
from reward_memory.ingestion import ingest
from reward_memory.providers.discovery import get_provider
from reward_memory.records.authority import AuthorityGrant, AuthorityMapFile
from reward_memory.records.corpus import (
    CorpusDeclaration,
    CorpusFreshness,
    CorpusLifecycle,
    CorpusMaintenance,
    CorpusPrivacy,
    CorpusRetrieval,
    CorpusScope,
)
from reward_memory.records.recall import ProviderBinding
from reward_memory.records.standing_policy import PolicyScope, StandingPolicy

if TYPE_CHECKING:
    from collections.abc import Callable

NOW = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
OBSERVED = "2026-11-01T12:00:00Z"
SCOPE_REF = "repository:example/reward-memory/issue-fix-policies"
PROJECT = "repository:example"
SURFACE = "issue_fix.patch_planning"


def corpus(provider_id: str) -> CorpusDeclaration:
    return CorpusDeclaration(
        corpus_id="issue_fix_policies",
        class_id="hard_policy",
        provider_id=provider_id,
        owner_ref="repository:example:maintainers",
        source_of_truth="verified_contributor_corrections",
        read_authority="authority_scoped",
        write_authority="authorized_policy_source",
        scope=CorpusScope(
            workspace_ref="workspace:example", project_ref=PROJECT, surface_ids=(SURFACE,)
        ),
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


POLICY = StandingPolicy(
    policy_id="policy:issue-fix-scope",
    owner_ref="repository:example:maintainers",
    reviewer_ref="reviewer:issue-fix-maintainers",
    authority_source_ref="repository:authority-map",
    enabled=True,
    auto_activate=True,
    scope=PolicyScope(
        workspace_ref="workspace:example", project_ref=PROJECT, surface_ids=(SURFACE,)
    ),
    allowed_target_classes=("hard_policy",),
    allowed_source_kinds=("maintainer_correction",),
    allowed_actor_roles=("verified_repository_core_contributor",),
    allowed_action_scopes=("issue_fix:scope_selection",),
    raw_content_captured=False,
)
AUTHORITY = AuthorityMap(
    AuthorityMapFile(
        source_ref="repository:authority-map",
        grants=(
            AuthorityGrant(
                actor_ref="github:user:maintainer",
                actor_role="verified_repository_core_contributor",
                project_refs=(PROJECT,),
                action_scopes=("issue_fix:scope_selection",),
            ),
        ),
    )
)


def events(count: int, salt: str) -> list[Any]:
    base = verified_contributor_event()
    return [
        attrs.evolve(
            base,
            content_summary=f"Keep focused fixes within module {salt}{i} unless evidence {i} asks.",
        )
        for i in range(count)
    ]


def observations(count: int, *, fresh: bool = True) -> list[str]:
    """A first-observation time per event: its own (fresh), or the one a replay reuses."""
    if not fresh:
        return [OBSERVED] * count
    start = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)
    return [
        (start + timedelta(seconds=i, microseconds=next(_TICKS))).isoformat() for i in range(count)
    ]


_TICKS = itertools.count(1)


def run(
    provider: Any,
    provider_id: str,
    items: list[Any],
    *,
    execute: bool = True,
    fresh: bool = True,
    each: Callable[[float], None] | None = None,
) -> tuple[list[float], list[float]]:
    """Ingest every item; (wall, cpu) seconds per call. ``each(wall)`` runs after each call."""
    declared = corpus(provider_id)
    binding = ProviderBinding(
        corpus_id="issue_fix_policies",
        provider_id=provider_id,
        namespace="reward_memory",
        scope_ref=SCOPE_REF,
    )
    samples = []
    cpu = []
    expected = "activated" if execute else "planned"
    for event, observed_at in zip(items, observations(len(items), fresh=fresh), strict=True):
        start = time.perf_counter()
        start_cpu = time.thread_time_ns()
        receipt = ingest(
            event,
            adapter="issue_fix",
            corpus=declared,
            standing_policy=POLICY,
            binding=binding,
            provider=provider,
            authority=AUTHORITY,
            observed_at=observed_at,
            execute=execute,
            now=NOW,
        )
        cpu.append((time.thread_time_ns() - start_cpu) / 1e9)
        samples.append(time.perf_counter() - start)
        if receipt.status != expected:
            raise SystemExit(f"unexpected status {receipt.status}: {receipt.reason_codes}")
        if each is not None:
            each(samples[-1])
    return samples, cpu


# The disjoint stages of one executed ingest: (module, function) pairs looked up at
# call time by the ingest loop, so wrapping the module attribute times each call.
_STAGES: tuple[tuple[str, str], ...] = (
    ("reward_memory.ingestion", "_event_proposal"),
    ("reward_memory.ingestion", "_ask_authority"),
    ("reward_memory.ingestion", "propose"),
    ("reward_memory.ingestion", "standing_policy_reasons"),
    ("reward_memory.ingestion", "_activate"),
    ("reward_memory.ingestion", "canonical_text"),
    ("reward_memory._ingest_provider", "verification_request"),
    ("reward_memory.guarded_recall", "build_recall_request"),
    ("reward_memory._recall.execution", "execute"),
)
_PROVIDER_CALLS: tuple[str, ...] = ("write", "read_key", "read", "search")


def stage_rows(calls: int) -> list[dict[str, Any]]:
    """Medians of the time inside each stage of a fresh memory ingest (see the docs)."""
    import importlib

    spent: dict[str, int] = {}
    inside_execute = [False]

    def clocked(name: str, function: Any, *, provider: bool = False) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter_ns()
            try:
                return function(*args, **kwargs)
            finally:
                took = time.perf_counter_ns() - start
                spent[name] = spent.get(name, 0) + took
                if provider and inside_execute[0]:  # billed to the provider, not to execute
                    key = "recall execute (library part)"
                    spent[key] = spent.get(key, 0) - took

        return call

    originals = []
    for module_name, attribute in _STAGES:
        module = importlib.import_module(module_name)
        original = getattr(module, attribute)
        originals.append((module, attribute, original))
        if attribute == "execute":
            timed_execute = clocked("recall execute (library part)", original)

            def execute(*args: Any, _timed: Any = timed_execute, **kwargs: Any) -> Any:
                inside_execute[0] = True
                try:
                    return _timed(*args, **kwargs)
                finally:
                    inside_execute[0] = False

            setattr(module, attribute, execute)
        else:
            setattr(module, attribute, clocked(attribute, original))
    provider = get_provider("memory://")
    for operation in _PROVIDER_CALLS:
        setattr(
            provider,
            operation,
            clocked(f"provider {operation}", getattr(provider, operation), provider=True),
        )
    per_stage: dict[str, list[float]] = {}

    def settle(wall: float) -> None:  # after each call: its stages, then a clean slate
        for name, took in spent.items():
            per_stage.setdefault(name, []).append(took / 1e9)
        per_stage.setdefault("rest of the library", []).append(wall - sum(spent.values()) / 1e9)
        spent.clear()

    try:
        run(provider, "memory", events(200, "stages-warm"))
        spent.clear()
        totals, _ = run(provider, "memory", events(calls, "stages"), each=settle)
    finally:
        for module, attribute, original in originals:
            setattr(module, attribute, original)
    rows = [{"what": "stage: the whole call (clocked)", "value": median_us(totals), "unit": "us"}]
    for name, samples in sorted(per_stage.items(), key=lambda item: -statistics.median(item[1])):
        rows.append({"what": f"stage: {name}", "value": median_us(samples), "unit": "us"})
    return rows


def median_us(samples: list[float]) -> float:
    return statistics.median(samples) * 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument(
        "--stages", action="store_true", help="also time each stage of a fresh memory ingest"
    )
    args = parser.parse_args()
    rows = []

    def add(what: str, timed: tuple[list[float], list[float]]) -> None:
        wall, cpu = timed
        rows.append({"what": what, "value": median_us(wall), "unit": "us"})
        rows.append({"what": f"{what} (cpu)", "value": median_us(cpu), "unit": "us"})

    with tempfile.TemporaryDirectory() as tmp:
        for provider_id, url in (
            ("memory", "memory://"),
            ("sqlite", f"sqlite:///{Path(tmp) / 'bench.db'}"),
        ):
            provider = get_provider(url)
            run(provider, provider_id, events(200, "warm"))  # warm the code paths, not the data
            add(f"fresh event, {provider_id}", run(provider, provider_id, events(args.calls, "f")))
            if provider_id == "memory":
                as_json = [wire.dump(event) for event in events(args.calls, "json")]
                add("fresh event as JSON, memory", run(provider, provider_id, as_json))
            again = events(1, "replay")[0]
            run(provider, provider_id, [again], fresh=False)  # stored once; then replayed
            replay = run(provider, provider_id, [again] * args.calls, fresh=False)
            add(f"replay, {provider_id}", replay)
            provider.close()
    add("dry run (planned)", run(None, "memory", events(args.calls, "dry"), execute=False))
    if args.stages:
        rows.extend(stage_rows(args.calls))
    return report(
        "ingest",
        rows,
        targets={"fresh event, memory": 60.0, "fresh event, sqlite": 250.0},
    )


if __name__ == "__main__":
    raise SystemExit(main())
