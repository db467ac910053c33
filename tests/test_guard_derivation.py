"""A guard verdict is never read from data (DESIGN.md §4; issue "guards are derived, never read").

"A packet that arrives as data (built by a caller, loaded from JSON, replayed by a
hook) is re-guarded by the seam that acts on it; a recorded verdict that disagrees
with the re-derived one blocks." Every test here builds the request packet through
the *public* constructors or :func:`wire.load`, never through the library's own
guard, and checks that no packet whose re-derived guard fails reaches the provider.
"""

from __future__ import annotations

from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _recall_support import (
    NOW,
    SURFACE,
    active_record,
    binding,
    checkpoint,
    corpus,
    request,
    store,
)
from reward_memory import schemas, wire
from reward_memory.digests import short_digest
from reward_memory.errors import RecordValidationError
from reward_memory.guarded_recall import build_recall_request, execute_recall
from reward_memory.guards.recall import RECORDED_MISMATCH, packet_reasons, recall_reasons
from reward_memory.records.corpus import CorpusLifecycle, CorpusScope
from reward_memory.records.recall import (
    GUARD_RULE,
    FreshnessContext,
    NormalizedRecallRequest,
    QueryEvidence,
    RecallGuard,
    RecallQuery,
    RecallRequestPacket,
)
from reward_memory.testing import InMemoryProvider

PASSED = RecallGuard(passed=True, reason_codes=())


def _forged(packet: RecallRequestPacket, **request_changes: Any) -> RecallRequestPacket:
    """The packet as a caller could build it: any content, the verdict claiming "ready"."""
    normalized = attrs.evolve(packet.request, **request_changes) if request_changes else None
    return RecallRequestPacket(
        status="ready",
        corpus=packet.corpus,
        request=normalized or packet.request,
        read_authority_checkpoint=packet.read_authority_checkpoint,
        guard=PASSED,
    )


def _provider_with_record() -> InMemoryProvider:
    provider = InMemoryProvider()
    store(provider, active_record(1))
    provider.reset_calls()
    return provider


# -- a flipped verdict ------------------------------------------------------------------------


def test_a_blocked_packet_with_its_verdict_flipped_never_reaches_the_provider() -> None:
    """The issue's first hole: a blocked packet whose recorded verdict says "ready"."""
    blocked = build_recall_request(
        request(project_ref="project:other"), corpus=corpus(), checkpoint=checkpoint()
    )
    assert blocked.status == "guard_blocked"
    flipped = _forged(blocked)
    provider = _provider_with_record()
    session = execute_recall(flipped, binding=binding(), provider=provider, now=NOW)
    assert session.status == "guard_blocked"
    assert provider.call_count() == 0
    assert session.packet.provider_call_count == 0
    assert session.packet.reason_codes == (
        "project_scope_mismatch",
        "read_authority_project_ref_mismatch",
        RECORDED_MISMATCH,
    )


def test_a_flipped_verdict_loaded_from_json_is_re_derived() -> None:
    blocked = build_recall_request(
        request(conflict_state="unresolved"), corpus=corpus(), checkpoint=checkpoint()
    )
    data = wire.dump(blocked)
    data["status"] = "ready"
    data["guard"] = {**data["guard"], "passed": True, "reason_codes": []}
    loaded = wire.load(data, RecallRequestPacket)
    provider = _provider_with_record()
    session = execute_recall(loaded, binding=binding(), provider=provider, now=NOW)
    assert session.status == "guard_blocked"
    assert "unresolved_conflict" in session.packet.reason_codes
    assert provider.call_count() == 0


def test_a_recorded_block_on_a_now_clean_packet_still_blocks() -> None:
    """A recorded verdict that disagrees blocks in both directions."""
    ready = build_recall_request(request(), corpus=corpus(), checkpoint=checkpoint())
    claimed = attrs.evolve(
        ready,
        status="guard_blocked",
        guard=RecallGuard(passed=False, reason_codes=("unresolved_conflict",)),
    )
    provider = _provider_with_record()
    session = execute_recall(claimed, binding=binding(), provider=provider, now=NOW)
    assert session.status == "guard_blocked"
    assert session.packet.reason_codes == (RECORDED_MISMATCH,)
    assert provider.call_count() == 0


def test_an_honest_ready_packet_runs_and_a_packet_guarded_without_binding_gains_its_reasons() -> (
    None
):
    ready = build_recall_request(request(), corpus=corpus(), checkpoint=checkpoint())
    provider = _provider_with_record()
    assert execute_recall(ready, binding=binding(), provider=provider, now=NOW).status == (
        "completed"
    )
    provider.reset_calls()
    wrong = binding(provider_id="another")
    session = execute_recall(ready, binding=wrong, provider=provider, now=NOW)
    assert session.packet.reason_codes == ("provider_binding_provider_mismatch",)
    assert provider.call_count() == 0


def test_a_packet_without_freshness_observations_proves_no_freshness() -> None:
    """A packet loaded from the original's shape (no freshness_context) fails closed."""
    ready = build_recall_request(request(), corpus=corpus(), checkpoint=checkpoint())
    data = wire.dump(ready)
    del data["request"]["freshness_context"]
    loaded = wire.load(data, RecallRequestPacket)
    assert loaded.request.freshness_context is None
    provider = _provider_with_record()
    session = execute_recall(loaded, binding=binding(), provider=provider, now=NOW)
    assert session.packet.reason_codes == ("source_truth_not_current", RECORDED_MISMATCH)
    assert provider.call_count() == 0


def test_stale_freshness_claimed_fresh_is_re_derived() -> None:
    ready = build_recall_request(request(), corpus=corpus(), checkpoint=checkpoint())
    stale = _forged(ready, freshness_context=FreshnessContext(source_truth_current=False))
    provider = _provider_with_record()
    session = execute_recall(stale, binding=binding(), provider=provider, now=NOW)
    assert "source_truth_not_current" in session.packet.reason_codes
    assert provider.call_count() == 0


# -- mode, query cap and limit are structural ------------------------------------------------


def _three_queries() -> tuple[RecallQuery, ...]:
    return tuple(
        RecallQuery(query=f"tone preference {i}", query_summary=f"tone {i}") for i in range(3)
    )


def _evidence(queries: tuple[RecallQuery, ...]) -> tuple[QueryEvidence, ...]:
    return tuple(
        QueryEvidence(query_digest=short_digest(q.query), query_summary=q.query_summary)
        for q in queries
    )


def test_a_function_boundary_packet_with_three_queries_cannot_be_built() -> None:
    """The issue's second hole: such a packet sent three searches."""
    ready = build_recall_request(request(), corpus=corpus(), checkpoint=checkpoint())
    queries = _three_queries()
    with pytest.raises(RecordValidationError) as caught:
        attrs.evolve(ready.request, queries=queries, query_evidence=_evidence(queries))
    assert caught.value.path == "$.queries"
    data = wire.dump(ready)
    data["request"]["queries"] = [wire.dump(q) for q in queries]
    data["request"]["query_evidence"] = [wire.dump(e) for e in _evidence(queries)]
    with pytest.raises(RecordValidationError):
        wire.load(data, RecallRequestPacket)


def test_a_packet_whose_mode_cap_is_bypassed_still_makes_no_search() -> None:
    """Even a packet object forged past the constructor is re-checked by the seam."""
    ready = build_recall_request(request(), corpus=corpus(), checkpoint=checkpoint())
    queries = _three_queries()
    forged_request = ready.request
    object.__setattr__(forged_request, "queries", queries)
    object.__setattr__(forged_request, "query_evidence", _evidence(queries))
    provider = _provider_with_record()
    session = execute_recall(ready, binding=binding(), provider=provider, now=NOW)
    assert "query_count_outside_mode" in session.packet.reason_codes
    assert provider.call_count() == 0


def test_query_evidence_must_be_the_digest_of_its_query() -> None:
    ready = build_recall_request(request(), corpus=corpus(), checkpoint=checkpoint())
    lie = QueryEvidence(query_digest="0" * 16, query_summary=ready.request.queries[0].query_summary)
    with pytest.raises(RecordValidationError) as caught:
        attrs.evolve(ready.request, query_evidence=(lie,))
    assert caught.value.path == "$.query_evidence[0].query_digest"
    other = QueryEvidence(
        query_digest=short_digest(ready.request.queries[0].query), query_summary="another summary"
    )
    with pytest.raises(RecordValidationError) as caught:
        attrs.evolve(ready.request, query_evidence=(other,))
    assert caught.value.path == "$.query_evidence[0].query_summary"


# -- the invariant, by hypothesis -------------------------------------------------------------

_PEERS = st.sampled_from([None, "alice", "bob"])


def _pick(draw: st.DrawFn, good: Any, bad: list[Any]) -> Any:
    """The matching value most of the time, a mismatching one otherwise (both branches run)."""
    return draw(st.one_of(st.just(good), st.just(good), st.sampled_from(bad)))


@st.composite
def _packets(draw: st.DrawFn) -> tuple[RecallRequestPacket, Any]:
    """A request packet with arbitrary content and an arbitrary recorded verdict."""
    peer = draw(_PEERS)
    peer_ref = None if peer is None else f"peer:{peer}"
    declared = corpus(
        scope=CorpusScope(
            workspace_ref="workspace:main",
            project_ref="project:alpha",
            surface_ids=(SURFACE,),
            peer_ref=peer_ref,
        ),
        lifecycle=_pick(
            draw,
            CorpusLifecycle(state="active"),
            [
                CorpusLifecycle(state="retired", retirement_reason="gone"),
                CorpusLifecycle(state="superseded", superseded_by="newer_policy"),
            ],
        ),
        provider_scope_ref_digest=None,
    )
    asked = request(
        project_ref=_pick(draw, "project:alpha", ["project:beta"]),
        surface_id=_pick(draw, SURFACE, ["other_module.surface"]),
        conflict_state=_pick(draw, "clear", ["unresolved"]),
        peer_ref=_pick(draw, peer_ref, ["peer:alice", "peer:bob", None]),
        freshness_context=FreshnessContext(source_truth_current=_pick(draw, True, [False])),
    )
    checked = checkpoint(
        verified=_pick(draw, True, [False]),
        source_ref=_pick(draw, "authority:reader", [None]),
        peer_ref=_pick(draw, peer_ref, ["peer:alice", "peer:bob", None]),
        read_authority=_pick(draw, "module_scoped", ["actor_scoped"]),
    )
    actor = _pick(draw, peer, ["alice", "bob", None])
    uri_peer = _pick(draw, peer, ["alice", "bob", None])
    bound = binding(
        scope_ref=(
            "viking://resources/reward-memory/review-policy"
            if uri_peer is None
            else f"viking://accounts/a/peers/{uri_peer}/review-policy"
        ),
        actor_peer_id=actor,
    )
    honest = build_recall_request(asked, corpus=declared, checkpoint=checked, binding=bound)
    recorded = _pick(
        draw,
        honest.guard,
        [PASSED, RecallGuard(passed=False, reason_codes=("unresolved_conflict",))],
    )
    packet = RecallRequestPacket(
        status="ready" if recorded.passed else "guard_blocked",
        corpus=declared,
        request=NormalizedRecallRequest.of(asked),
        read_authority_checkpoint=checked,
        guard=recorded,
    )
    if draw(st.booleans()):
        packet = wire.load(wire.dump(packet), RecallRequestPacket)
    return packet, (asked, declared, checked, bound)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_packets())
def test_no_packet_whose_re_derived_guard_fails_ever_reaches_the_provider(
    case: tuple[RecallRequestPacket, Any],
) -> None:
    """Issue: "no packet whose re-derived guard fails may cause a provider call"."""
    packet, (asked, declared, checked, bound) = case
    derived = recall_reasons(asked, declared, checked, bound)
    provider = _provider_with_record()
    session = execute_recall(packet, binding=bound, provider=provider, now=NOW)
    if derived or packet.guard.reason_codes != derived:
        assert session.status == "guard_blocked"
        assert provider.call_count() == 0
        assert set(derived) <= set(session.packet.reason_codes)
    else:
        assert session.status in ("completed", "empty")
        assert packet_reasons(packet, bound) == ()


# -- corpus lifecycle -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("lifecycle", "path"),
    [
        ({"state": "active", "superseded_by": "newer_policy"}, "$.superseded_by"),
        ({"state": "active", "retirement_reason": "gone"}, "$.retirement_reason"),
        (
            {"state": "superseded", "superseded_by": "newer_policy", "retirement_reason": "x"},
            "$.retirement_reason",
        ),
        ({"state": "superseded"}, "$.superseded_by"),
        ({"state": "retired"}, "$.retirement_reason"),
    ],
)
def test_a_corpus_lifecycle_is_consistent_or_refused(lifecycle: dict[str, Any], path: str) -> None:
    """Issue: "an active corpus cannot name a successor or a retirement reason"."""
    with pytest.raises(RecordValidationError) as caught:
        CorpusLifecycle(**lifecycle)
    assert caught.value.path == path
    # The published schema agrees with the record: it refuses the same lifecycle.
    validator = schemas.validator_for("reward_memory_corpus_registry_v0")
    lifecycle_schema = {
        "$ref": "reward_memory_corpus_registry_v0.schema.json#/$defs/CorpusLifecycle"
    }
    lifecycle_validator = validator.evolve(schema=lifecycle_schema)
    assert not lifecycle_validator.is_valid({"supersedes": [], **lifecycle})
    assert lifecycle_validator.is_valid({"state": "active", "supersedes": []})
    assert lifecycle_validator.is_valid(
        {"state": "retired", "retirement_reason": "gone", "superseded_by": "newer_policy"}
    )


@pytest.mark.parametrize(
    "lifecycle",
    [
        CorpusLifecycle(state="retired", retirement_reason="gone", superseded_by="newer_policy"),
        CorpusLifecycle(state="superseded", superseded_by="newer_policy"),
    ],
)
def test_superseded_and_retired_corpora_never_influence_recall(
    lifecycle: CorpusLifecycle,
) -> None:
    """Corpus registry: "superseded and retired corpora ... stop influencing recall"."""
    declared = corpus(lifecycle=lifecycle)
    provider = _provider_with_record()
    packet = build_recall_request(request(), corpus=declared, checkpoint=checkpoint())
    assert packet.guard.reason_codes == ("corpus_not_active",)
    session = execute_recall(_forged(packet), binding=binding(), provider=provider, now=NOW)
    assert session.status == "guard_blocked"
    assert provider.call_count() == 0
    assert GUARD_RULE  # the rule text travels with every verdict
