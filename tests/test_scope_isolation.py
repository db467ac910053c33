"""Randomised proof: no item is ever recalled outside its exact corpus, project, surface, peer.

One world -- three projects, three surfaces, three peers (none, alice, bob), a
corpus per (project, peer) -- is written into ONE SQLite file and ONE in-memory
provider. Every provider scope also holds mis-filed records (another corpus,
project, workspace, surface or peer written into it). Hypothesis then draws
requests, checkpoints and bindings -- matching, crossed, or with the wrong peer --
and checks every recall on both providers against the exact expected set.
"""

from __future__ import annotations

import itertools
import random
from typing import TYPE_CHECKING, Any

import attrs
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from _recall_support import active_record, checkpoint, content_of, corpus, request, scope_of
from reward_memory.digests import short_digest
from reward_memory.guarded_recall import recall
from reward_memory.records.active import ActiveRecord
from reward_memory.records.corpus import CorpusDeclaration, CorpusScope
from reward_memory.records.recall import ProviderBinding, RecallQuery
from reward_memory.testing import InMemoryProvider

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from reward_memory.providers.spi import Provider

from _recall_support import NOW

WORKSPACE = "workspace:main"
PROJECTS = ("project:alpha", "project:beta", "project:gamma")
SURFACES = ("mod_a.summary", "mod_b.notify", "mod_c.plan")
PEERS = (None, "alice", "bob")
QUERY = RecallQuery(query="isolation probe", query_summary="isolation probe")


@attrs.frozen
class Lane:
    """One corpus, its binding, and the refs of the records that must be recallable per surface."""

    corpus: CorpusDeclaration
    binding: ProviderBinding
    fitting: dict[str, frozenset[str]]  # surface -> candidate refs that fit exactly
    written: frozenset[str]  # every candidate ref written into this lane's provider scope


@attrs.frozen
class World:
    lanes: tuple[Lane, ...]
    memory: InMemoryProvider
    sqlite: Any


def _lane_corpus(
    index: int, project: str, peer: str | None, surfaces: tuple[str, ...]
) -> tuple[CorpusDeclaration, ProviderBinding]:
    corpus_id = f"lane_{index}"
    scope_ref = (
        f"viking://accounts/main/{project}/peers/{peer}/preferences"
        if peer
        else f"viking://accounts/main/{project}/preferences"
    )
    declared = corpus(
        corpus_id=corpus_id,
        scope=CorpusScope(
            workspace_ref=WORKSPACE,
            project_ref=project,
            surface_ids=surfaces,
            peer_ref=f"peer:{peer}" if peer else None,
        ),
        provider_scope_ref_digest=short_digest(scope_ref),
    )
    bound = ProviderBinding(
        corpus_id=corpus_id,
        provider_id=declared.provider_id,
        namespace="reward_memory",
        scope_ref=scope_ref,
        actor_peer_id=peer,
    )
    return declared, bound


def _variants(
    rng: random.Random, declared: CorpusDeclaration, others: list[CorpusDeclaration]
) -> list[tuple[dict[str, Any], bool]]:
    """Record attribute sets for one lane, and whether each fits the lane exactly."""
    own = declared.scope
    peer = own.peer_ref
    identity: dict[str, Any] = {"project_ref": own.project_ref}
    if peer:
        identity["peer_ref"] = peer
    other = rng.choice(others)
    other_project = next(p for p in PROJECTS if p != own.project_ref)
    outside_surfaces = [s for s in SURFACES if s not in own.surface_ids]
    variants: list[tuple[dict[str, Any], bool]] = [
        ({"surfaces": (rng.choice(own.surface_ids),), **identity}, True),
        ({"surfaces": own.surface_ids, **identity}, True),
        ({"surfaces": own.surface_ids, "corpus_id": other.corpus_id, **identity}, False),
        ({"surfaces": own.surface_ids, **identity, "project_ref": other_project}, False),
        ({"surfaces": own.surface_ids, "workspace_ref": "workspace:side", **identity}, False),
        (
            {
                "surfaces": own.surface_ids,
                **identity,
                "peer_ref": "peer:mallory" if peer else "peer:alice",
            },
            False,
        ),
    ]
    if outside_surfaces:
        variants.append(({"surfaces": (outside_surfaces[0],), **identity}, False))
    if len(own.surface_ids) < len(SURFACES):
        variants.append(({"surfaces": (*own.surface_ids, outside_surfaces[0]), **identity}, False))
    return variants


def _write(providers: tuple[Provider, ...], bound: ProviderBinding, record: Any) -> None:
    content = content_of(record)
    for provider in providers:
        provider.write(scope=scope_of(bound), key=f"r-{short_digest(content)}", content=content)


def build_world(sqlite: Provider, seed: int = 20260301) -> World:
    rng = random.Random(seed)
    memory = InMemoryProvider()
    providers = (memory, sqlite)
    plans = []
    for index, (project, peer) in enumerate(itertools.product(PROJECTS, PEERS)):
        surfaces = tuple(sorted(rng.sample(SURFACES, rng.randint(1, 3))))
        plans.append((index, project, peer, surfaces))
    declared_all = [_lane_corpus(*plan) for plan in plans]
    corpora = [declared for declared, _ in declared_all]
    counter = itertools.count(1)
    lanes = []
    for declared, bound in declared_all:
        others = [c for c in corpora if c.corpus_id != declared.corpus_id]
        fitting: dict[str, set[str]] = {surface: set() for surface in SURFACES}
        written: set[str] = set()
        for variant, fits in _variants(rng, declared, others):
            number = next(counter)
            attributes = dict(variant)
            record = active_record(
                number,
                summary=f"Isolation probe record {number}.",
                corpus_id=attributes.pop("corpus_id", declared.corpus_id),
                surfaces=attributes.pop("surfaces"),
                **attributes,
            )
            _write(providers, bound, record)
            written.add(record.candidate_ref)
            if fits:
                for surface in record.scope.surface_ids:
                    fitting[surface].add(record.candidate_ref)
        lanes.append(
            Lane(
                corpus=declared,
                binding=bound,
                fitting={s: frozenset(refs) for s, refs in fitting.items()},
                written=frozenset(written),
            )
        )
    return World(lanes=tuple(lanes), memory=memory, sqlite=sqlite)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    from reward_memory.providers.discovery import get_provider

    path: Path = tmp_path_factory.mktemp("isolation") / "world.db"
    sqlite = get_provider("sqlite://" + path.as_posix())
    try:
        yield build_world(sqlite)
    finally:
        sqlite.close()


def test_every_lane_has_fitting_and_misfiled_records(world: World) -> None:
    for lane in world.lanes:
        fitting = set().union(*lane.fitting.values())
        assert fitting
        assert lane.written - fitting, "each scope also holds records that must never be recalled"


@settings(max_examples=300)
@given(data=st.data())
def test_no_recall_outside_the_exact_scope(world: World, data: st.DataObject) -> None:
    lane = data.draw(st.sampled_from(world.lanes), label="lane")
    # Each draw leans towards the matching value, so exact recalls are common too.
    surface = data.draw(
        st.one_of(st.sampled_from(lane.corpus.scope.surface_ids), st.sampled_from(SURFACES)),
        label="surface",
    )
    binding_lane = data.draw(
        st.one_of(st.just(lane), st.sampled_from(world.lanes)), label="binding lane"
    )
    bound = binding_lane.binding
    peer_choice = data.draw(
        st.one_of(st.just("as bound"), st.sampled_from(["none", "alice", "bob"])), label="peer"
    )
    if peer_choice != "as bound":
        bound = attrs.evolve(bound, actor_peer_id=None if peer_choice == "none" else peer_choice)
    # The binding always names this lane's corpus and provider: only the scope can cross.
    bound = attrs.evolve(bound, corpus_id=lane.corpus.corpus_id)
    request_peer = data.draw(
        st.one_of(
            st.just(lane.corpus.scope.peer_ref), st.sampled_from([None, "peer:alice", "peer:bob"])
        ),
        label="request peer",
    )
    project = data.draw(
        st.one_of(st.just(lane.corpus.scope.project_ref), st.sampled_from(PROJECTS)),
        label="project",
    )
    asked = request(
        surface_id=surface,
        project_ref=project,
        peer_ref=request_peer,
        limit=8,
        queries=(QUERY,),
    )
    checked = checkpoint(
        corpus_id=lane.corpus.corpus_id,
        surface_id=surface,
        project_ref=project,
        peer_ref=lane.corpus.scope.peer_ref,
    )

    exact = (
        surface in lane.corpus.scope.surface_ids
        and project == lane.corpus.scope.project_ref
        # A request identity the corpus does not set is ignored (reference 7.1).
        and (lane.corpus.scope.peer_ref is None or request_peer == lane.corpus.scope.peer_ref)
        and bound.scope_ref == lane.binding.scope_ref
        and bound.actor_peer_id == lane.binding.actor_peer_id
    )
    for provider in (world.memory, world.sqlite):
        before = world.memory.call_count()
        session = recall(
            asked,
            corpus=lane.corpus,
            checkpoint=checked,
            binding=bound,
            provider=provider,
            now=NOW,
        )
        got = {item.candidate_ref for item in session.items}
        event(f"{session.status} (exact={exact})")
        for item in session.items:
            assert isinstance(item.record, ActiveRecord)
            scope = item.record.scope
            assert item.record.corpus_id == lane.corpus.corpus_id
            assert scope.workspace_ref == WORKSPACE
            assert scope.project_ref == lane.corpus.scope.project_ref == project
            assert surface in scope.surface_ids
            assert set(scope.surface_ids) <= set(lane.corpus.scope.surface_ids)
            assert scope.peer_ref == lane.corpus.scope.peer_ref
            assert item.candidate_ref in lane.written, "only from the lane's own provider scope"
        if exact:
            assert session.status == "completed"
            assert got == lane.fitting[surface]
        elif session.status == "guard_blocked":
            assert got == set()
            if provider is world.memory:
                assert world.memory.call_count() == before, "blocked: zero provider calls"
        else:
            # Not blocked yet not exact: only a peer on a non-peer scope can get here, and
            # that scope is a different provider scope holding nothing.
            assert bound.actor_peer_id != lane.binding.actor_peer_id
            assert session.status == "empty"


def test_crossed_bindings_are_blocked_before_the_provider(world: World) -> None:
    for lane, other in itertools.permutations(world.lanes, 2):
        crossed = attrs.evolve(other.binding, corpus_id=lane.corpus.corpus_id)
        before = world.memory.call_count()
        session = recall(
            request(
                surface_id=lane.corpus.scope.surface_ids[0],
                project_ref=lane.corpus.scope.project_ref,
                peer_ref=lane.corpus.scope.peer_ref,
                queries=(QUERY,),
            ),
            corpus=lane.corpus,
            checkpoint=checkpoint(
                corpus_id=lane.corpus.corpus_id,
                surface_id=lane.corpus.scope.surface_ids[0],
                project_ref=lane.corpus.scope.project_ref,
                peer_ref=lane.corpus.scope.peer_ref,
            ),
            binding=crossed,
            provider=world.memory,
            now=NOW,
        )
        assert session.status == "guard_blocked"
        assert "provider_binding_scope_digest_mismatch" in session.packet.reason_codes
        assert world.memory.call_count() == before


def test_memory_and_sqlite_agree(world: World) -> None:
    for lane in world.lanes:
        for surface in lane.corpus.scope.surface_ids:
            results = []
            for provider in (world.memory, world.sqlite):
                session = recall(
                    request(
                        surface_id=surface,
                        project_ref=lane.corpus.scope.project_ref,
                        peer_ref=lane.corpus.scope.peer_ref,
                        queries=(QUERY,),
                        limit=8,
                    ),
                    corpus=lane.corpus,
                    checkpoint=checkpoint(
                        corpus_id=lane.corpus.corpus_id,
                        surface_id=surface,
                        project_ref=lane.corpus.scope.project_ref,
                        peer_ref=lane.corpus.scope.peer_ref,
                    ),
                    binding=lane.binding,
                    provider=provider,
                    now=NOW,
                )
                results.append({r.candidate_ref for r in session.packet.results})
            assert results[0] == results[1] == lane.fitting[surface]
