"""Packets the library builds without re-validation still satisfy every public check.

Recall and apply assemble their packets through trusted constructors
(:func:`reward_memory.records._memo.trusted`) from parts that were checked
already. These tests rebuild every such packet, in every status and outcome,
through its public (validating) constructor and require the same record; they
also pin the memos (per corpus object, per binding) and the in-memory
provider's index and call log against plain reference implementations.
"""

from __future__ import annotations

import random
from typing import Any

import attrs
import pytest

from _recall_support import (
    NOW,
    OTHER_SURFACE,
    active_record,
    binding,
    checkpoint,
    corpus,
    request,
    scope_of,
    store,
)
from reward_memory.application import apply
from reward_memory.errors import RecordValidationError
from reward_memory.guarded_recall import RecallSession, build_recall_request, execute_recall, recall
from reward_memory.guards.recall import binding_reasons, request_reasons
from reward_memory.providers.spi import ProviderScope
from reward_memory.records import _memo
from reward_memory.records.application import ApplicationReceipt, ApplicationResult
from reward_memory.records.corpus import CorpusLifecycle
from reward_memory.records.recall import (
    NormalizedRecallRequest,
    QueryEvidence,
    RecallGuard,
    RecallPacket,
    RecallQuery,
    RecallRequestPacket,
)
from reward_memory.testing import InMemoryProvider, ProviderCall

_PUBLIC = (
    RecallPacket,
    RecallRequestPacket,
    RecallGuard,
    NormalizedRecallRequest,
    QueryEvidence,
    ApplicationReceipt,
    ApplicationResult,
)


def _revalidate(record: Any) -> None:
    """Rebuild ``record`` (and its nested library-built records) through the public constructor."""
    if not attrs.has(type(record)):
        return
    values = {field.name: getattr(record, field.name) for field in attrs.fields(type(record))}
    for value in values.values():
        for part in value if isinstance(value, tuple) else (value,):
            if type(part) in _PUBLIC:
                _revalidate(part)
    if type(record) in _PUBLIC:
        assert type(record)(**values) == record


def _sessions() -> dict[str, RecallSession]:
    provider = InMemoryProvider()
    for i in range(3):
        store(provider, active_record(i))
    asked = request(mode="bounded_agentic_search", queries=[
        RecallQuery(query="reviewer summary tone", query_summary="summary tone"),
        RecallQuery(query="preference number", query_summary="preference"),
    ])  # fmt: skip
    run = {"corpus": corpus(), "checkpoint": checkpoint(), "binding": binding(), "now": NOW}
    sessions = {
        "completed": recall(asked, provider=provider, **run),
        "empty": recall(
            request(queries=[RecallQuery(query="zebra", query_summary="z")]),
            provider=provider,
            **run,
        ),
        "guard_blocked": recall(request(conflict_state="open"), provider=provider, **run),
    }
    with provider.set_faults(unavailable=True):
        sessions["provider_unavailable"] = recall(asked, provider=provider, **run)
    ticks = iter([0.0, 0.0, 99.0])  # the deadline runs out before the first read
    sessions["deadline_exceeded"] = recall(
        asked, provider=provider, clock=lambda: next(ticks), **run
    )
    packet = build_recall_request(asked, corpus=corpus(), checkpoint=checkpoint())
    sessions["reblocked"] = execute_recall(
        packet, binding=binding(corpus_id="other_corpus"), provider=provider, now=NOW
    )
    return sessions


@pytest.mark.parametrize(
    "status",
    [
        "completed",
        "empty",
        "guard_blocked",
        "provider_unavailable",
        "reblocked",
        "deadline_exceeded",
    ],
)
def test_every_recall_packet_passes_the_public_constructor(status: str) -> None:
    session = _sessions()[status]
    aliases = {"reblocked": "guard_blocked", "deadline_exceeded": "provider_unavailable"}
    assert session.status == aliases.get(status, status)
    if status == "deadline_exceeded":
        assert session.packet.reason_code == "recall_deadline_exceeded"
    _revalidate(session.packet)
    _revalidate(session.request_packet)


def _decision(outcome: str, base: Any, items: Any) -> dict[str, Any]:
    return {
        "outcome": outcome,
        "output": "changed" if outcome == "applied" else base,
        "memory_refs": [items[0].memory_ref, items[-1].provider_ref]
        if outcome != "ignored"
        else [],
        "reasoning_summary": "  The recalled   preference fits. ",
        "current_artifact_verified": outcome == "applied",
    }


@pytest.mark.parametrize(
    ("status", "outcome", "callback"),
    [
        ("completed", "applied", "decide"),
        ("completed", "ignored", "decide"),
        ("completed", "refuted", "decide"),
        ("completed", "failed", "raise"),
        ("completed", "failed", "invalid"),
        ("completed", "available_not_applied", None),
        ("empty", "not_available", "decide"),
        ("guard_blocked", "not_available", "decide"),
        ("provider_unavailable", "not_available", None),
    ],
)
def test_every_application_passes_the_public_constructor(
    status: str, outcome: str, callback: str | None
) -> None:
    session = _sessions()[status]

    def model(base: Any, items: Any) -> Any:
        if callback == "raise":
            raise RuntimeError("model down")
        if callback == "invalid":
            return {"outcome": "applied"}
        return _decision(outcome, base, items)

    result = apply(
        "base",
        session,
        application_id="application:x",
        artifact_ref="artifact:x",
        apply_memory=model if callback else None,
    )
    assert result.status == outcome
    _revalidate(result)
    if outcome == "applied":
        assert len(result.receipt.memory_ref_digests) == 2  # sorted, distinct
        assert result.receipt.reasoning_summary == "The recalled preference fits."


def test_a_hand_built_session_with_a_foreign_packet_is_validated() -> None:
    session = _sessions()["completed"]
    fields = {f.name: getattr(session.packet, f.name) for f in attrs.fields(RecallPacket)}
    odd = type("OddPacket", (), {**fields, "corpus_id": "Not A Corpus Id"})()
    with pytest.raises(TypeError):
        RecallSession(packet=odd, items=session.items, request_packet=session.request_packet)


# -- the trusted constructor itself -------------------------------------------------------


@attrs.frozen(kw_only=True)
class _Sample:
    name: str = attrs.field(validator=attrs.validators.instance_of(str))
    items: tuple[int, ...] = attrs.field(factory=tuple)
    flag: bool = True

    def __attrs_post_init__(self) -> None:
        if self.name == "bad":
            raise ValueError(self.name)


def test_trusted_sets_every_field_and_defaults_like_the_public_constructor() -> None:
    make = _memo.trusted(_Sample)
    built = make(name="x")
    assert built == _Sample(name="x")
    assert hash(built) == hash(_Sample(name="x"))
    assert repr(built) == repr(_Sample(name="x"))
    assert make(name="x", items=(1,), flag=False) == _Sample(name="x", items=(1,), flag=False)
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        built.name = "y"  # type: ignore[misc]
    with pytest.raises(TypeError):
        make()  # a required field stays required
    with pytest.raises(TypeError):
        make(name="x", unknown=1)


def test_trusted_refuses_records_it_cannot_build_exactly() -> None:
    @attrs.frozen(cache_hash=True)
    class Hashed:
        value: int

    @attrs.frozen
    class SelfDefault:
        value: int = attrs.field(default=attrs.Factory(lambda self: 1, takes_self=True))

    for cls in (Hashed, SelfDefault):
        with pytest.raises(TypeError):
            _memo.trusted(cls)


def test_trusted_takes_the_public_keyword_of_a_private_field() -> None:
    @attrs.frozen(kw_only=True)
    class Private:
        _value: int = 3

    assert _memo.trusted(Private)(value=5) == Private(value=5)
    assert _memo.trusted(Private)() == Private()


def test_trusted_skips_checks_so_only_checked_parts_may_go_in() -> None:
    assert _memo.trusted(_Sample)(name="bad").name == "bad"
    with pytest.raises(ValueError, match="bad"):
        _Sample(name="bad")


def test_public_constructors_still_validate() -> None:
    packet = _sessions()["completed"].packet
    with pytest.raises(RecordValidationError):
        attrs.evolve(packet, result_count=packet.result_count + 1)
    with pytest.raises(RecordValidationError):
        attrs.evolve(packet, provider_id="bad id")


# -- memos keyed by frozen records ---------------------------------------------------------


def test_guard_memos_follow_the_record_not_its_identity_slot() -> None:
    declared = corpus()
    asked, checked = request(), checkpoint()
    assert request_reasons(asked, declared, checked) == ()
    retired = attrs.evolve(
        declared, lifecycle=CorpusLifecycle(state="retired", retirement_reason="done")
    )
    assert request_reasons(asked, retired, checked) == ("corpus_not_active",)
    assert request_reasons(asked, declared, checked) == ()
    bound = binding()
    assert binding_reasons(bound, declared) == ()
    assert binding_reasons(attrs.evolve(bound, provider_id="other"), declared) == (
        "provider_binding_provider_mismatch",
    )
    for _ in range(600):  # past the memo bound: entries are dropped, verdicts unchanged
        fresh = attrs.evolve(declared)
        assert request_reasons(asked, fresh, checked) == ()
        assert binding_reasons(bound, fresh) == ()


def test_item_filter_memo_follows_the_corpus_and_surface() -> None:
    provider = InMemoryProvider()
    store(provider, active_record(0))  # on SURFACE only
    declared = corpus()
    run = {"corpus": declared, "binding": binding(), "provider": provider, "now": NOW}
    assert recall(request(), checkpoint=checkpoint(), **run).status == "completed"
    elsewhere = request(surface_id=OTHER_SURFACE)
    gate = checkpoint(surface_id=OTHER_SURFACE)
    assert recall(elsewhere, checkpoint=gate, **run).status == "empty"
    assert recall(request(), checkpoint=checkpoint(), **run).status == "completed"
    # Same corpus object, expiry still checked against each call's own ``now``.
    expiring = InMemoryProvider()
    store(expiring, active_record(1, expires_at="2026-03-01T12:00:01Z"))
    declared = corpus()
    run = {"corpus": declared, "checkpoint": checkpoint(), "binding": binding()}
    assert recall(request(), provider=expiring, now=NOW, **run).status == "completed"
    later = NOW.replace(second=2)
    assert recall(request(), provider=expiring, now=later, **run).status == "empty"


# -- the in-memory provider against reference implementations -------------------------------


def _reference_search(
    documents: list[tuple[int, str, str]], query: str, limit: int, missed: str | None
) -> list[tuple[str, float]]:
    import re

    wanted = set(re.findall(r"\w+", query.casefold()))
    scored = []
    for sequence, ref, content in documents:
        shared = len(wanted & set(re.findall(r"\w+", content.casefold())))
        if shared and ref != missed:
            scored.append((-shared, sequence, ref))
    return [(ref, float(-negative)) for negative, _, ref in sorted(scored)[:limit]]


@pytest.mark.parametrize("seed", range(12))
def test_search_ranks_exactly_like_a_brute_force_scan(seed: int) -> None:
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(rng.choice([3, 8, 30]))]
    provider = InMemoryProvider()
    scope = ProviderScope(namespace="ns", scope_ref=f"rank-{seed}")
    documents: list[tuple[int, str, str]] = []
    written = rng.choice([8, 40, 300])
    for index in range(written):
        content = " ".join(rng.choices(words, k=rng.randint(1, 6)))
        ref = provider.write(scope=scope, key=f"doc-{index}", content=content).ref
        documents.append((index, ref, content))
    for _ in range(3):  # deletes keep the index exact
        _sequence, ref, _content = documents.pop(rng.randrange(len(documents)))
        provider.delete(scope=scope, ref=ref)
    for _ in range(40):
        query = " ".join(rng.choices([*words, "absent"], k=rng.randint(1, 9)))
        limit = rng.choice([1, 2, 5, 8, 100])
        misses = rng.random() < 0.3
        # search_misses hides the document written last, unless it was deleted since.
        last = documents[-1][1] if documents[-1][0] == written - 1 else None
        with provider.set_faults(search_misses=misses):
            hits = provider.search(scope=scope, query=query, limit=limit).hits
        expected = _reference_search(documents, query, limit, last if misses else None)
        assert [(hit.ref, hit.score) for hit in hits] == expected


def test_call_log_is_exact_and_lazy() -> None:
    provider = InMemoryProvider()
    scope = scope_of(binding())
    ref = provider.write(scope=scope, key="doc-1", content="alpha").ref
    first = provider.calls
    provider.read(scope=scope, ref=ref)
    with pytest.raises(RecordValidationError):
        provider.search(scope="not a scope", query="alpha", limit=1)  # type: ignore[arg-type]
    assert first == (ProviderCall(op="write", scope=scope, target="doc-1"),)
    assert provider.calls == (
        ProviderCall(op="write", scope=scope, target="doc-1"),
        ProviderCall(op="read", scope=scope, target=ref),
        ProviderCall(op="search", scope=None, target="alpha"),
    )
    assert provider.calls[0] is provider.calls[0]  # records are built once
    assert provider.call_count("read") == 1
    provider.reset_calls()
    assert provider.calls == ()
    provider.inventory(scope=scope)
    assert provider.calls == (ProviderCall(op="inventory", scope=scope, target=None),)


def test_clear_forgets_the_hot_scope() -> None:
    provider = InMemoryProvider()
    scope = scope_of(binding())
    ref = provider.write(scope=scope, key="doc-1", content="alpha").ref
    assert provider.read(scope=scope, ref=ref).found
    provider.clear()
    assert not provider.read(scope=scope, ref=ref).found
    assert provider.search(scope=scope, query="alpha", limit=1).hits == ()
    again = provider.write(scope=scope, key="doc-1", content="beta").ref
    assert provider.read(scope=scope, ref=again).content == "beta"
    assert [hit.ref for hit in provider.search(scope=scope, query="beta", limit=1).hits] == [again]
