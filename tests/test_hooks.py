"""Runtime hooks (issue 8 item 7; reference §10.5-10.6 with gap 6 fixed)."""

from __future__ import annotations

from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _experiment_support import PLANNING
from _hooks_support import (
    NOW,
    OBSERVED,
    A,
    B,
    C,
    applying,
    authority,
    context,
    hard_event,
    read_checkpoint,
    runtime,
    seeded,
)
from reward_memory import schemas, wire
from reward_memory.hooks import RecallContext, automatic_ingest, automatic_recall
from reward_memory.testing import InMemoryProvider


def _recall(rt: Any, provider: Any, **changes: Any) -> Any:
    arguments: dict[str, Any] = {
        "queries": ["scope selection"],
        "base_output": {"plan": 1},
        "checkpoints": read_checkpoint,
        "context": context(),
        "application_id": "app-1",
        "apply_memory": applying,
        "provider": provider,
        "now": NOW,
        "authority": authority(),  # vouches for the ingested hard-policy records
    }
    arguments.update(changes)
    outcome = automatic_recall(rt, PLANNING, **arguments)
    data = wire.dump(outcome.packet)
    schemas.validate(data, "reward_memory_automatic_recall_hook_v0")
    assert wire.load(data) == outcome.packet
    return outcome


def test_walk_passes_a_blocked_and_an_unavailable_corpus_to_a_later_hit() -> None:
    """'Automatic recall walks a surface's corpora in configured order, passes over
    blocked or unavailable ones, stops at the first exact-readback hit.'"""
    rt = runtime()
    good = seeded(rt)
    broken = InMemoryProvider()
    broken.set_faults(unavailable=True)
    untouched = InMemoryProvider()
    outcome = _recall(
        rt,
        {A: untouched, B: broken, C: good},
        checkpoints=lambda route: None if route.corpus_id == A else read_checkpoint(route),
    )
    assert [p.status for p in outcome.packet.recall_attempts] == [
        "guard_blocked",
        "provider_unavailable",
        "completed",
    ]
    assert outcome.status == "applied"
    assert outcome.output == {"plan": 1, "memory": True}
    assert outcome.packet.hit_corpus_id == C
    assert untouched.calls == ()  # blocked: zero provider calls
    telemetry = outcome.packet.telemetry
    assert telemetry.configured_corpus_count == telemetry.attempted_corpus_count == 3
    assert telemetry.result_readback_verified is True
    assert 0 < telemetry.provider_call_count <= telemetry.provider_call_cap
    assert outcome.packet.application is not None
    assert outcome.packet.application.outcome == "applied"


def test_walk_stops_at_the_first_hit() -> None:
    rt = runtime(ingest_corpus=A)
    first = seeded(rt)
    later = InMemoryProvider()
    outcome = _recall(rt, {A: first, B: later, C: later})
    assert outcome.status == "applied"
    assert outcome.packet.telemetry.attempted_corpus_count == 1
    assert later.calls == ()


def test_no_hit_with_an_unavailable_corpus_is_provider_unavailable_and_keeps_the_base() -> None:
    rt = runtime()
    broken = InMemoryProvider()
    broken.set_faults(unavailable=True)
    base = {"plan": 1}
    outcome = _recall(rt, broken, base_output=base)
    assert outcome.status == "provider_unavailable"
    assert outcome.output is base
    assert outcome.packet.fail_open_preserved_base is True


def test_no_hit_at_all_is_not_available() -> None:
    outcome = _recall(runtime(), InMemoryProvider())
    assert outcome.status == "not_available"
    assert [p.status for p in outcome.packet.recall_attempts] == ["empty"] * 3


def test_every_corpus_blocked_is_not_available_with_zero_calls() -> None:
    provider = InMemoryProvider()
    outcome = _recall(runtime(), provider, checkpoints={})
    assert outcome.status == "not_available"
    assert outcome.packet.reason_code == "every_corpus_guard_blocked"
    assert provider.calls == ()


def test_a_hit_without_a_callback_is_available_not_applied() -> None:
    rt = runtime()
    outcome = _recall(rt, seeded(rt), apply_memory=None)
    assert outcome.status == "available_not_applied"


def test_a_failing_callback_is_failed_and_keeps_the_base() -> None:
    rt = runtime()

    def broken(base: Any, items: Any) -> Any:
        raise RuntimeError("model down")

    base = {"plan": 1}
    outcome = _recall(rt, seeded(rt), apply_memory=broken, base_output=base)
    assert outcome.status == "failed"
    assert outcome.output is base


@pytest.mark.parametrize(
    "queries",
    [["one", "two"], [], "scope selection", None, [42]],
    ids=["over_cap", "none", "string", "null", "not_a_query"],
)
def test_the_query_cap_is_guard_rejected_with_zero_calls(queries: Any) -> None:
    """'respects the query cap' (function_boundary: exactly one query)."""
    provider = InMemoryProvider()
    outcome = _recall(runtime(), provider, queries=queries)
    assert outcome.status == "guard_rejected"
    assert outcome.packet.reason_code == "surface_profile_or_query_invalid"
    assert provider.calls == ()


def test_an_unconfigured_surface_is_guard_rejected() -> None:
    provider = InMemoryProvider()
    outcome = automatic_recall(
        runtime(),
        "other.surface",
        queries=["q"],
        base_output=1,
        checkpoints={},
        context=context(),
        application_id="app-1",
        provider=provider,
        now=NOW,
    )
    assert outcome.status == "guard_rejected"
    assert provider.calls == ()


def test_an_invalid_context_is_guard_rejected() -> None:
    provider = InMemoryProvider()
    outcome = _recall(runtime(), provider, context={"workspace_ref": "x"})
    assert outcome.status == "guard_rejected"
    assert outcome.packet.reason_code == "exact_corpus_request_invalid"
    assert provider.calls == ()


@pytest.mark.parametrize("agent", ["agent:patcher", "agent:stranger"])
def test_disabled_makes_zero_provider_calls(agent: str) -> None:
    """'Both run only when their flag is on and the agent is allowlisted; otherwise
    disabled with zero provider calls.'"""
    rt = runtime(agent, recall=agent == "agent:stranger", ingest=agent == "agent:stranger")
    provider = InMemoryProvider()
    assert _recall(rt, provider).status == "disabled"
    hook = automatic_ingest(
        rt,
        PLANNING,
        hard_event(),
        authority=authority(),
        observed_at=OBSERVED,
        execute=True,
        provider=provider,
        now=NOW,
    )
    assert hook.status == "disabled"
    assert hook.receipt is None
    assert provider.calls == ()


def _ingest(rt: Any, provider: Any, event: Any = None, **changes: Any) -> Any:
    arguments: dict[str, Any] = {
        "authority": authority(),
        "observed_at": OBSERVED,
        "execute": True,
        "provider": provider,
        "now": NOW,
    }
    arguments.update(changes)
    hook = automatic_ingest(rt, PLANNING, hard_event() if event is None else event, **arguments)
    data = wire.dump(hook)
    schemas.validate(data, "reward_memory_automatic_ingest_hook_v0")
    assert wire.load(data) == hook
    return hook


def test_ingest_hook_activates_then_replays_deduplicated() -> None:
    rt = runtime()
    provider = InMemoryProvider()
    first = _ingest(rt, provider)
    assert first.status == "activated"
    assert first.telemetry.provider_sync_count == 1
    assert first.telemetry.exact_readback_verified is True
    assert first.external_writes_performed is True
    again = _ingest(rt, provider)
    assert again.status == "activated"
    assert again.telemetry.deduplicated is True
    assert again.external_writes_performed is False


def test_ingest_hook_dry_run_is_planned_with_zero_calls() -> None:
    provider = InMemoryProvider()
    hook = _ingest(runtime(), provider, execute=False)
    assert hook.status == "planned"
    assert hook.telemetry.provider_sync_count == 0
    assert provider.calls == ()


def test_ingest_hook_refuses_an_event_for_another_surface() -> None:
    provider = InMemoryProvider()
    event = hard_event(surface_id="other.surface")
    hook = _ingest(runtime(), provider, event)
    assert hook.status == "guard_rejected"
    assert hook.reason_code == "compact_actor_scoped_event_required"
    assert provider.calls == ()


def test_ingest_hook_raw_event_is_guard_blocked_before_any_call() -> None:
    from _ingest_support import hard_event_data

    provider = InMemoryProvider()
    hook = _ingest(runtime(), provider, hard_event_data(raw_content_captured=True))
    assert hook.status == "guard_blocked"
    assert provider.calls == ()


def test_ingest_hook_unavailable_provider_fails_open() -> None:
    provider = InMemoryProvider()
    provider.set_faults(unavailable=True)
    hook = _ingest(runtime(), provider)
    assert hook.status == "provider_unavailable"
    assert hook.telemetry.provider_available is False


def test_ingest_hook_without_a_provider_fails_open() -> None:
    hook = _ingest(runtime(), None)
    assert hook.status == "provider_unavailable"


def test_ingest_hook_without_authority_is_guard_blocked() -> None:
    hook = _ingest(runtime(), InMemoryProvider(), authority=None)
    assert hook.status == "guard_blocked"


@pytest.mark.parametrize("outcome", ["ignored", "refuted"])
def test_ignored_and_refuted_keep_the_base(outcome: str) -> None:
    rt = runtime()

    def decide(base: Any, items: Any) -> dict[str, Any]:
        return {
            "outcome": outcome,
            "output": base,
            "memory_refs": [items[0].memory_ref],
            "reasoning_summary": "The plan already covers this correction.",
            "current_artifact_verified": True,
        }

    base = {"plan": 1}
    result = _recall(rt, seeded(rt), apply_memory=decide, base_output=base)
    assert result.status == outcome
    assert result.output is base
    assert result.receipt is not None
    assert result.receipt.outcome == outcome


def test_a_search_that_misses_is_no_exact_readback_hit() -> None:
    rt = runtime()
    provider = seeded(rt)
    provider.set_faults(search_misses=True)
    result = _recall(rt, provider)
    assert result.status == "not_available"
    assert result.packet.reason_code == "no_exact_readback_hit"


def test_a_corpus_whose_recall_raises_is_passed_over(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fault injection: nothing a corpus's recall does escapes the walk."""
    from reward_memory import guarded_recall

    def explode(*_: Any, **__: Any) -> Any:
        raise RuntimeError("injected")

    monkeypatch.setattr(guarded_recall, "recall", explode)
    base = {"plan": 1}
    result = _recall(runtime(), InMemoryProvider(), base_output=base)
    assert result.status == "not_available"
    assert result.packet.reason_code == "no_corpus_recall_completed"
    assert result.packet.telemetry.attempted_corpus_count == 0
    assert result.output is base


def test_disabled_reason_codes() -> None:
    off = runtime(recall=False, ingest=False)
    assert _recall(off, InMemoryProvider()).packet.reason_code == "automatic_recall_disabled"
    assert _ingest(off, InMemoryProvider()).reason_code == "automatic_ingest_disabled"
    stranger = runtime("agent:stranger")
    assert _recall(stranger, InMemoryProvider()).packet.reason_code == "agent_not_allowlisted"
    assert _ingest(stranger, InMemoryProvider()).reason_code == "agent_not_allowlisted"


@pytest.mark.parametrize(
    ("faults", "status"),
    [
        ({"corrupt_readback": True}, "readback_unverified"),
        ({"search_misses": True}, "committed_pending"),
        ({"times_out": True}, "provider_unavailable"),
    ],
)
def test_ingest_hook_fail_open_statuses(faults: dict[str, bool], status: str) -> None:
    provider = InMemoryProvider()
    provider.set_faults(**faults)
    hook = _ingest(runtime(), provider)
    assert hook.status == status
    assert hook.telemetry.exact_readback_verified is False
    assert hook.telemetry.provider_available is (status == "readback_unverified")


def test_ingest_hook_retry_with_another_observed_at_is_a_conflict() -> None:
    rt = runtime()
    provider = InMemoryProvider()
    assert _ingest(rt, provider).status == "activated"
    hook = _ingest(rt, provider, observed_at="2026-11-01T13:00:00Z")
    assert hook.status == "conflict"
    assert hook.telemetry.deduplicated is False


def test_ingest_hook_a_bad_observation_time_is_the_callers_error() -> None:
    """DESIGN §4: the caller's own argument raises, naming it (it used to come back as a
    rejected event, which blames the event or the policy)."""
    from reward_memory.errors import RecordValidationError

    provider = InMemoryProvider()
    with pytest.raises(RecordValidationError) as caught:
        _ingest(runtime(), provider, observed_at="yesterday")
    assert caught.value.path == "observed_at"
    assert provider.calls == ()


def test_ingest_hook_an_unconfigured_surface_is_guard_rejected() -> None:
    from reward_memory.hooks import run_ingest

    provider = InMemoryProvider()
    hook = run_ingest(
        runtime(),
        None,
        hard_event(surface_id="other.surface"),
        trigger="explicit",
        authority=authority(),
        observed_at=OBSERVED,
        execute=True,
        provider=provider,
        now=NOW,
    )
    assert hook.status == "guard_rejected"
    assert hook.reason_code == "surface_not_configured"
    assert provider.calls == ()


def test_hook_packets_hold_their_invariants() -> None:
    from reward_memory.errors import RecordValidationError
    from reward_memory.records.hooks import (
        IngestHookPacket,
        RecallHookPacket,
        RecallHookTelemetry,
    )

    with pytest.raises(RecordValidationError):
        RecallHookPacket(
            surface_id=PLANNING,
            trigger="automatic",
            status="applied",
            automatic_recall=True,
            fail_open_preserved_base=True,
        )
    with pytest.raises(RecordValidationError):
        RecallHookPacket(
            surface_id=PLANNING,
            trigger="automatic",
            status="disabled",
            automatic_recall=False,
            fail_open_preserved_base=True,
            telemetry=RecallHookTelemetry(provider_call_count=1, provider_call_cap=2),
        )
    with pytest.raises(RecordValidationError):
        RecallHookTelemetry(provider_call_count=3, provider_call_cap=2)
    with pytest.raises(RecordValidationError):
        RecallHookTelemetry(attempted_corpus_count=1, configured_corpus_count=0)
    with pytest.raises(RecordValidationError):
        IngestHookPacket(trigger="explicit", status="activated", automatic_ingest=False)


_SEEDED: dict[str, InMemoryProvider] = {}


def _seeded_for(corpus_id: str) -> InMemoryProvider:
    if corpus_id not in _SEEDED:
        _SEEDED[corpus_id] = seeded(runtime(ingest_corpus=corpus_id))
    return _SEEDED[corpus_id]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from(["blocked", "unavailable", "empty", "hit"]), min_size=3, max_size=3)
)
def test_the_walk_applies_the_first_hit_in_configured_order(states: list[str]) -> None:
    """Whatever blocks or fails before it, the first hit in configured order is applied,
    no later corpus is asked, and without a hit the base output stands."""
    corpora = [A, B, C]
    providers: dict[str, InMemoryProvider] = {}
    for corpus_id, state in zip(corpora, states, strict=True):
        if state == "hit":
            providers[corpus_id] = _seeded_for(corpus_id)
        else:
            providers[corpus_id] = InMemoryProvider()
            if state == "unavailable":
                providers[corpus_id].set_faults(unavailable=True)
    before = {corpus_id: len(p.calls) for corpus_id, p in providers.items()}
    blocked = {c for c, s in zip(corpora, states, strict=True) if s == "blocked"}
    base = {"plan": 1}
    result = _recall(
        runtime(),
        providers,
        base_output=base,
        checkpoints=lambda route: None if route.corpus_id in blocked else read_checkpoint(route),
    )
    first = states.index("hit") if "hit" in states else None
    if first is None:
        expected = "provider_unavailable" if "unavailable" in states else "not_available"
        assert result.status == expected
        assert result.output is base
        assert result.packet.telemetry.attempted_corpus_count == 3
    else:
        assert result.status == "applied"
        assert result.packet.hit_corpus_id == corpora[first]
        assert result.packet.telemetry.attempted_corpus_count == first + 1
        for later in corpora[first + 1 :]:
            assert len(providers[later].calls) == before[later]
    for corpus_id in blocked:
        assert len(providers[corpus_id].calls) == before[corpus_id]
    telemetry = result.packet.telemetry
    assert telemetry.provider_call_count <= telemetry.provider_call_cap


def test_the_context_may_be_given_field_by_field_as_in_the_reference() -> None:
    from _experiment_support import PROJECT, WORKSPACE

    rt = runtime()
    provider = seeded(rt)
    fields: dict[str, Any] = {
        "workspace_ref": WORKSPACE,
        "project_ref": PROJECT,
        "observed_at": "2026-11-02T09:00:00Z",
        "freshness_context": {"source_truth_current": True, "age_seconds": 0},
    }
    assert _recall(rt, provider, context=None, **fields).status == "applied"
    calls = len(provider.calls)
    stale = {**fields, "freshness_context": {"source_truth_current": "yes"}}
    result = _recall(rt, provider, context=None, **stale)
    assert result.status == "guard_rejected"
    assert result.packet.reason_code == "exact_corpus_request_invalid"
    assert len(provider.calls) == calls


def test_a_conflicted_context_blocks_every_corpus() -> None:
    from _experiment_support import PROJECT, WORKSPACE

    rt = runtime()
    provider = seeded(rt)
    calls = len(provider.calls)
    conflicted = RecallContext.current(workspace_ref=WORKSPACE, project_ref=PROJECT, now=NOW)
    conflicted = attrs.evolve(conflicted, conflict_state="conflicted")
    result = _recall(rt, provider, context=conflicted)
    assert result.status == "not_available"
    assert result.packet.reason_code == "every_corpus_guard_blocked"
    assert len(provider.calls) == calls


def test_without_an_authority_source_no_recalled_record_acts() -> None:
    """DESIGN.md §2: the standing policy narrows what an authority source's checkpoint may
    activate, it never substitutes for one: with no source, nothing vouches for a
    hard-policy record, and the walk passes over it (base output kept)."""
    rt = runtime()
    provider = seeded(rt)
    vouched = _recall(rt, provider)
    assert vouched.status == "applied"
    alone = _recall(rt, provider, authority=None)
    assert alone.status != "applied"
    assert alone.output == {"plan": 1}
