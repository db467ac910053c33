"""Stage-3 recall execution on real providers: item filter, limits, expiry, fail open."""

from __future__ import annotations

import asyncio
import copy
import json
import pickle
import re
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from _recall_support import (
    CORPUS_ID,
    NOW,
    OTHER_SURFACE,
    PROJECT,
    SURFACE,
    WORKSPACE,
    active_record,
    binding,
    checkpoint,
    content_of,
    corpus,
    request,
    store,
    tampered,
    validate_packet,
)
from reward_memory import wire
from reward_memory.digests import sha256_hex
from reward_memory.errors import ProviderUnavailable, RecordValidationError
from reward_memory.guarded_recall import (
    DEFAULT_SETUP_HINTS,
    RecallSession,
    arecall,
    build_recall_request,
    execute_recall,
    provider_ref,
    recall,
)
from reward_memory.providers.spi import ReadResult, SearchResult
from reward_memory.records.corpus import CorpusFreshness, CorpusPrivacy, CorpusScope
from reward_memory.records.recall import RecallQuery, SetupHints
from reward_memory.testing import InMemoryProvider

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from reward_memory.providers.spi import Provider

PROVIDERS = ["memory", "sqlite"]


def open_provider(kind: str, tmp_path: Path) -> Provider:
    if kind == "memory":
        return InMemoryProvider()
    from reward_memory.providers.discovery import get_provider

    return get_provider("sqlite://" + (tmp_path / "recall.db").as_posix())


@pytest.fixture(params=PROVIDERS)
def provider(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Provider]:
    opened = open_provider(request.param, tmp_path)
    try:
        yield opened
    finally:
        opened.close()


def run(provider: Provider, *, now: datetime = NOW, **overrides: Any) -> RecallSession:
    return recall(
        overrides.pop("asked", request()),
        corpus=overrides.pop("declared", corpus()),
        checkpoint=overrides.pop("checked", checkpoint()),
        binding=overrides.pop("bound", binding()),
        provider=provider,
        now=now,
    )


# -- completed / empty -----------------------------------------------------------------------------


def test_completed_recall_reads_back_exact_items(provider: Provider) -> None:
    refs = [store(provider, active_record(i)) for i in range(3)]
    session = run(provider)
    packet = session.packet
    assert packet.status == "completed"
    assert packet.reason_code is None
    assert packet.reason_codes == ()
    assert packet.setup_hints is None
    assert packet.result_count == 3
    assert packet.result_readback_verified is True
    assert packet.provider_call_count == 1 + 3
    assert {item.memory_ref for item in session.items} == set(refs)
    for item, result in zip(session.items, packet.results, strict=True):
        assert result.memory_ref == provider_ref(
            binding().provider_id, binding().namespace, item.memory_ref
        )
        assert re.fullmatch(r"provider-[0-9a-f]{20}", result.memory_ref)
        assert result.candidate_ref == item.candidate_ref
        assert result.target_class == "soft_preference"
        assert result.content_exposed is True
        assert result.content_summary == item.content_summary
        assert item.authority_level == "advisory"
        assert item.legacy is False
        assert item.record.corpus_id == CORPUS_ID
    data = validate_packet(packet)
    assert data["schema_version"] == "reward_memory_recall_v0"
    assert data["fail_open"] is True
    assert data["provider_failure_is_user_gate"] is False


def test_content_digest_is_canonical_text_sha256(provider: Provider) -> None:
    record = active_record(1)
    store(provider, content_of(record) + "\r\n")
    (item,) = run(provider).items
    assert item.content_digest == sha256_hex(content_of(record))


def test_an_item_is_read_only_and_its_repr_hides_the_raw_ref_and_summary(
    provider: Provider,
) -> None:
    """Items are transient and in process only: nothing rebinds them, repr shows no raw ref
    or private summary, and the lazily computed digest is the same on every read."""
    store(provider, active_record(1))
    (item,) = run(provider).items
    with pytest.raises(AttributeError):
        item.memory_ref = "elsewhere"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del item.record
    assert item.memory_ref not in repr(item)
    assert item.content_summary not in repr(item)
    assert item.provider_ref in repr(item)
    assert item.content_digest == item.content_digest == sha256_hex(content_of(active_record(1)))
    assert copy.copy(item) is item
    assert copy.deepcopy(item) is item
    again = pickle.loads(pickle.dumps(item))
    assert (again.memory_ref, again.content_digest, again.record) == (
        item.memory_ref,
        item.content_digest,
        item.record,
    )


def test_public_packet_never_carries_raw_query_or_raw_refs(provider: Provider) -> None:
    refs = [store(provider, active_record(i)) for i in range(2)]
    asked = request(
        queries=(
            RecallQuery(query="reviewer summary tone secretive wording", query_summary="tone"),
        )
    )
    session = run(provider, asked=asked)
    text = json.dumps(wire.dump(session.packet))
    assert "secretive wording" not in text
    for ref in refs:
        assert ref not in text
    assert wire.dump(session.packet)["query_evidence"] == [
        {
            "query_digest": sha256_hex("reviewer summary tone secretive wording")[:16],
            "query_summary": "tone",
            "exact_query_exposed": False,
        }
    ]


@pytest.mark.parametrize("visibility", ["private", "workspace"])
def test_summaries_are_hidden_unless_public_safe(provider: Provider, visibility: Any) -> None:
    store(provider, active_record(1))
    declared = corpus(privacy=CorpusPrivacy(visibility=visibility, raw_content_in_registry=False))
    session = run(provider, declared=declared)
    (result,) = session.packet.results
    assert result.content_summary is None
    assert result.content_exposed is False
    # ... but the transient item still carries it, in process.
    assert session.items[0].content_summary.startswith("Reviewer summary tone")
    text = json.dumps(validate_packet(session.packet))
    assert "preference number" not in text


@pytest.mark.parametrize("record_visibility", ["private", "workspace"])
def test_a_private_record_is_never_public_even_from_a_public_safe_corpus(
    provider: Provider, record_visibility: str
) -> None:
    """Issue item 3: "a private record's summary never appears in a public packet, even from
    a public_safe corpus" (a workspace record is not public either)."""
    store(provider, active_record(1, visibility=record_visibility, summary="Private tone rule."))
    store(provider, active_record(2, summary="Public tone rule for reviewer summary."))
    session = run(provider)  # corpus() is public_safe
    exposed = {r.candidate_ref: r.content_exposed for r in session.packet.results}
    assert exposed == {"candidate:" + "0" * 19 + "1": False, "candidate:" + "0" * 19 + "2": True}
    text = json.dumps(validate_packet(session.packet))
    assert "Private tone rule" not in text
    assert "Public tone rule" in text
    # The model still gets both, in process.
    assert {item.content_summary for item in session.items} == {
        "Private tone rule.",
        "Public tone rule for reviewer summary.",
    }


@given(
    corpus_visibility=st.sampled_from(["private", "workspace", "public_safe"]),
    record_visibility=st.sampled_from(["private", "workspace", "public_safe"]),
)
def test_a_summary_is_public_only_when_corpus_and_record_both_allow_it(
    corpus_visibility: str, record_visibility: str
) -> None:
    """Invariant: ``content_exposed`` (and a summary in the packet) iff both are public_safe."""
    memory = InMemoryProvider()
    store(memory, active_record(1, visibility=record_visibility))
    declared = corpus(
        privacy=CorpusPrivacy(visibility=corpus_visibility, raw_content_in_registry=False)
    )
    (result,) = run(memory, declared=declared).packet.results
    both = corpus_visibility == record_visibility == "public_safe"
    assert result.content_exposed is both
    assert (result.content_summary is not None) is both


def test_empty_recall(provider: Provider) -> None:
    session = run(provider)
    packet = session.packet
    assert packet.status == "empty"
    assert packet.reason_code == "no_active_exact_corpus_results"
    assert packet.result_count == 0
    assert packet.result_readback_verified is False
    assert packet.provider_call_count == 1
    assert session.items == ()
    validate_packet(packet)


# -- the item filter -------------------------------------------------------------------------------


REJECTED: list[tuple[str, Any]] = [
    ("other_corpus", active_record(1, corpus_id="another_corpus")),
    ("other_class", active_record(1, class_id="procedural_experience")),
    ("other_workspace", active_record(1, workspace_ref="workspace:other")),
    ("other_project", active_record(1, project_ref="project:beta")),
    ("identity_not_in_corpus", active_record(1, user_ref="user:alice")),
    ("surface_not_requested", active_record(1, surfaces=(OTHER_SURFACE,))),
    ("surface_outside_corpus", active_record(1, surfaces=(SURFACE, "elsewhere.surface"))),
    ("revoked", active_record(1, revoked=True)),
    ("superseded", active_record(1, superseded=True)),
    (
        "expired_state",
        active_record(1, lifecycle_state="expired", expires_at="2026-01-01T00:00:00Z"),
    ),
    ("retired", active_record(1, lifecycle_state="retired", retired_reason="obsolete")),
    # An active record that also carries a retirement is invalid (never "half-retired").
    ("active_with_retired_reason", tampered(active_record(1), ("expiry", "retired_reason"), "x")),
    ("candidate_state", active_record(1, lifecycle_state="candidate")),
    ("expired_at_now", active_record(1, expires_at="2026-03-01T12:00:00Z")),
    ("expired_before_now", active_record(1, expires_at="2026-02-28T00:00:00+00:00")),
    ("not_json", "this is not JSON at all reviewer summary tone"),
    ("json_array", json.dumps(["reviewer", "summary", "tone"])),
    (
        "unknown_schema",
        json.dumps(
            {"schema_version": "reward_memory_active_record_v9", "q": "reviewer summary tone"}
        ),
    ),
    (
        "v1_unknown_field",
        json.dumps({**wire.dump(active_record(1)), "comment_body": "reviewer summary tone"}),
    ),
    (
        "v1_missing_field",
        json.dumps({k: v for k, v in wire.dump(active_record(1)).items() if k != "review"}),
    ),
    (
        "v1_wrong_type",
        json.dumps({**wire.dump(active_record(1)), "scope": "reviewer summary tone"}),
    ),
    (
        "v1_unsafe_summary",
        json.dumps(
            {
                **wire.dump(active_record(1)),
                "content_summary": "reviewer summary tone token=abcdef1234567890xyz",
            }
        ),
    ),
    (
        "v1_surfaces_as_object",
        json.dumps(
            {
                **wire.dump(active_record(1)),
                "scope": {**wire.dump(active_record(1))["scope"], "surface_ids": {SURFACE: 1}},
            }
        ),
    ),
]


@pytest.mark.parametrize(("name", "record"), REJECTED, ids=[name for name, _ in REJECTED])
def test_item_filter_skips_what_does_not_fit(provider: Provider, name: str, record: Any) -> None:
    del name
    store(provider, record)
    good = store(provider, active_record(2))
    session = run(provider)
    assert session.status == "completed"
    assert [item.memory_ref for item in session.items] == [good]
    # Skipped items are not errors, but every read is counted.
    assert session.packet.provider_call_count == 1 + 2


def test_revision_bound_corpus_accepts_only_its_revision(provider: Provider) -> None:
    from reward_memory.records.recall import FreshnessContext

    declared = corpus(freshness=CorpusFreshness(mode="revision_bound", source_revision="rev:1"))
    asked = request(
        revision_ref="rev:1",
        freshness_context=FreshnessContext(source_truth_current=True, source_revision="rev:1"),
    )
    store(provider, active_record(1, revision_ref="rev:0"))
    good = store(provider, active_record(2, revision_ref="rev:1"))
    session = run(provider, declared=declared, asked=asked)
    assert [item.memory_ref for item in session.items] == [good]


def test_identity_scoped_corpus_needs_identical_identities(provider: Provider) -> None:
    scope = CorpusScope(
        workspace_ref=WORKSPACE, project_ref=PROJECT, surface_ids=(SURFACE,), user_ref="user:alice"
    )
    declared = corpus(scope=scope)
    store(provider, active_record(1))  # no user: does not fit a user-scoped corpus
    store(provider, active_record(2, user_ref="user:bob"))
    good = store(provider, active_record(3, user_ref="user:alice"))
    session = run(
        provider,
        declared=declared,
        asked=request(user_ref="user:alice"),
        checked=checkpoint(user_ref="user:alice"),
    )
    assert [item.memory_ref for item in session.items] == [good]


def test_legacy_v0_records_are_read_as_advisory(provider: Provider) -> None:
    legacy: dict[str, Any] = {
        "schema_version": "reward_memory_active_record_v0",
        "activation_ref": "activation:0123456789abcdef0123",
        "activated_at": "2026-01-01T00:00:00Z",
        "corpus_id": CORPUS_ID,
        "candidate_ref": "candidate:legacy",
        "target_class": "soft_preference",
        "content_summary": "Legacy reviewer summary tone preference.",
        "scope": {
            "workspace_ref": WORKSPACE,
            "project_ref": PROJECT,
            "surface_ids": [SURFACE],
            "revision_ref": None,
        },
        "source": {"source_kind": "x", "source_ref": "y", "actor_ref": "z", "actor_role": "w"},
        "review": {"reviewer_ref": "r", "review_ref": "rr", "reasoning_summary": "ok"},
        "activation_lineage": {"effective_decision": "accept", "guard_passed": True},
        "lifecycle": {"state": "active", "expires_at": "2026-06-01T00:00:00Z"},
        "privacy": {"raw_content_captured": False},
        "provider_write_performed": False,
        "external_writes_performed": False,
    }
    ref = store(provider, json.dumps(legacy))
    expired = {
        **legacy,
        "candidate_ref": "candidate:old",
        "lifecycle": {"state": "active", "expires_at": "2026-02-01T00:00:00Z"},
    }
    store(provider, json.dumps(expired))
    naive = {
        **legacy,
        "candidate_ref": "candidate:naive",
        "lifecycle": {"state": "active", "expires_at": "2026-06-01T00:00:00"},
    }
    store(provider, json.dumps(naive))
    odd_scope = {
        **legacy,
        "candidate_ref": "candidate:odd",
        "scope": {**legacy["scope"], "tenant": "x"},
    }
    store(provider, json.dumps(odd_scope))
    retired = {**legacy, "candidate_ref": "candidate:retired", "lifecycle": {"state": "retired"}}
    store(provider, json.dumps(retired))
    session = run(provider)
    (item,) = session.items
    assert item.memory_ref == ref
    assert item.legacy is True
    assert item.authority_level == "advisory"
    assert item.candidate_ref == "candidate:legacy"


def test_a_legacy_hard_policy_is_passed_over(provider: Provider) -> None:
    """A v0 record names no checkpoint and no actor: as a hard policy it would reach the
    model past the standing policy and the authority source (it was recalled, advisory)."""
    declared = corpus(class_id="hard_policy")
    legacy: dict[str, Any] = {
        "schema_version": "reward_memory_active_record_v0",
        "corpus_id": CORPUS_ID,
        "candidate_ref": "candidate:legacy-hard",
        "target_class": "hard_policy",
        "content_summary": "Legacy reviewer summary tone hard rule.",
        "scope": {"workspace_ref": WORKSPACE, "project_ref": PROJECT, "surface_ids": [SURFACE]},
        "lifecycle": {"state": "active"},
    }
    store(provider, json.dumps(legacy))
    hard = store(provider, active_record(5, class_id="hard_policy"))
    session = run(provider, declared=declared)
    levels = {item.memory_ref: item.authority_level for item in session.items}
    assert levels == {hard: "constraint"}


# -- limits, dedupe, query modes -------------------------------------------------------------------


def test_limit_stops_reads(provider: Provider) -> None:
    for i in range(6):
        store(provider, active_record(i))
    session = run(provider, asked=request(limit=2))
    assert session.packet.result_count == 2
    assert session.packet.provider_call_count == 1 + 2


def test_bounded_agentic_search_dedupes_and_keeps_going_after_empty(provider: Provider) -> None:
    refs = [store(provider, active_record(i)) for i in range(3)]
    asked = request(
        mode="bounded_agentic_search",
        queries=(
            RecallQuery(query="nothingmatchesthisword", query_summary="miss"),
            RecallQuery(query="reviewer summary tone", query_summary="tone"),
            RecallQuery(query="summary tone preference", query_summary="tone again"),
        ),
    )
    session = run(provider, asked=asked)
    assert session.status == "completed"
    assert sorted(item.memory_ref for item in session.items) == sorted(refs)
    assert len({item.memory_ref for item in session.items}) == 3
    # three searches, three distinct reads (the third query's hits were seen already)
    assert session.packet.provider_call_count == 3 + 3
    assert len(session.packet.query_evidence) == 3


@given(
    copies=st.lists(st.integers(0, 3), min_size=1, max_size=8),
    pretty=st.lists(st.booleans(), min_size=8, max_size=8),
)
def test_one_record_under_several_refs_reaches_the_model_once(
    copies: list[int], pretty: list[bool]
) -> None:
    """Issue item 11: "one record stored under several refs (dedupe: the model sees each
    record once)" -- also when a copy is written with other whitespace or key order."""
    memory = InMemoryProvider()
    for key, (index, indent) in enumerate(zip(copies, pretty, strict=False)):
        data = wire.dump(active_record(index))
        text = json.dumps(data, indent=2) if indent else json.dumps(data, sort_keys=True)
        store(memory, text, key=f"copy-{key}")
    session = run(memory, asked=request(limit=8))
    candidates = [item.candidate_ref for item in session.items]
    assert len(candidates) == len(set(candidates)) == len(set(copies))


def test_bounded_search_stops_querying_at_the_limit(provider: Provider) -> None:
    for i in range(4):
        store(provider, active_record(i))
    asked = request(
        mode="bounded_agentic_search",
        limit=2,
        queries=(
            RecallQuery(query="reviewer summary tone", query_summary="a"),
            RecallQuery(query="summary tone preference", query_summary="b"),
        ),
    )
    session = run(provider, asked=asked)
    assert session.packet.result_count == 2
    assert session.packet.provider_call_count == 1 + 2


# -- time ------------------------------------------------------------------------------------------


def test_expiry_uses_the_injected_clock(provider: Provider) -> None:
    ref = store(provider, active_record(1, expires_at="2026-03-01T13:00:00Z"))
    assert [i.memory_ref for i in run(provider, now=NOW).items] == [ref]
    assert run(provider, now=NOW + timedelta(minutes=59)).status == "completed"
    assert run(provider, now=NOW + timedelta(hours=1)).status == "empty"
    assert run(provider, now=NOW + timedelta(days=30)).status == "empty"
    # Another offset, same instant.
    eastern = datetime(2026, 3, 1, 8, 30, tzinfo=UTC).astimezone()
    assert run(provider, now=eastern).status == "completed"


def test_default_clock_is_now(provider: Provider) -> None:
    store(provider, active_record(1, expires_at="2020-01-01T00:00:00Z"))
    fresh = store(provider, active_record(2, expires_at="2999-01-01T00:00:00Z"))
    session = recall(
        request(), corpus=corpus(), checkpoint=checkpoint(), binding=binding(), provider=provider
    )
    assert [item.memory_ref for item in session.items] == [fresh]


@pytest.mark.parametrize("now", [datetime(2026, 3, 1, 12, 0), "2026-03-01T12:00:00Z", 0])
def test_now_must_be_aware(now: Any) -> None:
    with pytest.raises(RecordValidationError) as info:
        run(InMemoryProvider(), now=now)
    assert info.value.path == "$.now"


# -- fail open -------------------------------------------------------------------------------------


def _assert_unavailable(session: RecallSession, reason: str) -> None:
    packet = session.packet
    assert packet.status == "provider_unavailable"
    assert packet.reason_code == reason
    assert packet.result_count == 0
    assert packet.results == ()
    assert session.items == ()
    assert packet.setup_hints is not None
    assert packet.provider_failure_is_user_gate is False
    validate_packet(packet)


@pytest.mark.parametrize(
    ("faults", "reason"),
    [
        ({"unavailable": True}, "provider_unavailable"),
        ({"times_out": True}, "provider_timeout"),
    ],
)
def test_fault_switches_fail_open(faults: dict[str, Any], reason: str) -> None:
    provider = InMemoryProvider()
    store(provider, active_record(1))
    with provider.set_faults(**faults):
        session = run(provider)
    _assert_unavailable(session, reason)
    assert session.packet.provider_call_count == 1
    assert session.packet.setup_hints == DEFAULT_SETUP_HINTS


def test_slow_provider_times_out_and_fails_open() -> None:
    provider = InMemoryProvider()
    store(provider, active_record(1))
    with provider.set_faults(slow_seconds=1.5):
        session = run(provider, bound=binding(timeout_seconds=1))
    _assert_unavailable(session, "provider_timeout")


def test_slow_but_in_time_is_fine() -> None:
    provider = InMemoryProvider()
    store(provider, active_record(1))
    with provider.set_faults(slow_seconds=0.01):
        assert run(provider).status == "completed"


def test_corrupt_readback_is_skipped_not_an_error() -> None:
    provider = InMemoryProvider()
    store(provider, active_record(1))
    with provider.set_faults(corrupt_readback=True):
        session = run(provider)
    assert session.status == "empty"
    assert session.packet.provider_call_count == 2


def test_search_misses_only_loses_the_unindexed_record() -> None:
    provider = InMemoryProvider()
    first = store(provider, active_record(1))
    store(provider, active_record(2))
    with provider.set_faults(search_misses=True):
        session = run(provider)
    assert [item.memory_ref for item in session.items] == [first]


def test_closed_provider_fails_open() -> None:
    provider = InMemoryProvider()
    provider.close()
    _assert_unavailable(run(provider), "provider_unavailable")


class FailingAfter(InMemoryProvider):
    """A real in-memory provider whose ``n``-th search or read raises ``error``."""

    def __init__(self, n: int, error: BaseException) -> None:
        super().__init__()
        self.n = n
        self.error = error
        self.seen = 0

    def _tick(self) -> None:
        self.seen += 1
        if self.seen == self.n:
            raise self.error

    def search(self, **kwargs: Any) -> SearchResult:
        self._tick()
        return super().search(**kwargs)

    def read(self, **kwargs: Any) -> ReadResult:
        self._tick()
        return super().read(**kwargs)


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        (
            ProviderUnavailable("gone", reason_code="provider_index_unavailable"),
            "provider_index_unavailable",
        ),
        (ProviderUnavailable("gone", reason_code="not a token!"), "provider_unavailable"),
        (RuntimeError("boom"), "provider_execution_failed"),
        (KeyError("x"), "provider_execution_failed"),
        (RecordValidationError("bad ref"), "provider_execution_failed"),
    ],
)
def test_failure_mid_recall_discards_what_was_gathered(error: BaseException, reason: str) -> None:
    # search ok, read ok, search #2 fails: the first query's result is discarded.
    provider = FailingAfter(3, error)
    store(provider, active_record(1))
    asked = request(
        mode="bounded_agentic_search",
        queries=(
            RecallQuery(query="reviewer summary tone", query_summary="a"),
            RecallQuery(query="preference number", query_summary="b"),
        ),
    )
    session = run(provider, asked=asked)
    _assert_unavailable(session, reason)
    assert session.packet.provider_call_count == 3


def test_failure_on_read_counts_the_attempt() -> None:
    provider = FailingAfter(2, ProviderUnavailable("gone"))
    store(provider, active_record(1))
    session = run(provider)
    _assert_unavailable(session, "provider_unavailable")
    assert session.packet.provider_call_count == 2


class Misbehaving(InMemoryProvider):
    """Answers with the wrong shapes: a non-result, or a read of another ref."""

    def __init__(self, mode: str) -> None:
        super().__init__()
        self.mode = mode

    def search(self, **kwargs: Any) -> Any:
        if self.mode == "search_returns_none":
            return None
        return super().search(**kwargs)

    def read(self, **kwargs: Any) -> Any:
        result = super().read(**kwargs)
        if self.mode == "read_other_ref":
            return ReadResult(ref="memory:other", found=True, content=result.content)
        if self.mode == "read_bytes":
            return ReadResult(ref=result.ref, found=True, content=b"{}")  # type: ignore[arg-type]
        return result


def test_malformed_search_answer_fails_open() -> None:
    provider = Misbehaving("search_returns_none")
    _assert_unavailable(run(provider), "provider_answer_malformed")


@pytest.mark.parametrize("mode", ["read_other_ref", "read_bytes"])
def test_unexpected_readback_is_skipped(mode: str) -> None:
    provider = Misbehaving(mode)
    store(provider, active_record(1))
    assert run(provider).status == "empty"


def test_setup_hints_come_from_the_binding() -> None:
    provider = InMemoryProvider(unavailable=True)
    hints = SetupHints(install="pip install reward-memory", configure="set the provider URL")
    session = run(provider, bound=binding(setup_hints=hints))
    assert session.packet.setup_hints == hints


# -- sessions, the two-step API, asyncio -----------------------------------------------------------


def test_session_is_never_serialised(provider: Provider) -> None:
    store(provider, active_record(1))
    session = run(provider)
    with pytest.raises(TypeError):
        pickle.dumps(session)
    assert "Reviewer summary" not in repr(session)
    assert "Reviewer summary" not in repr(session.items[0])
    assert session.request_packet.status == "ready"


def test_two_step_build_then_execute(provider: Provider) -> None:
    ref = store(provider, active_record(1))
    packet = build_recall_request(request(), corpus=corpus(), checkpoint=checkpoint())
    validate_packet(packet)
    session = execute_recall(packet, binding=binding(), provider=provider, now=NOW)
    assert [item.memory_ref for item in session.items] == [ref]


def test_arecall_matches_recall(provider: Provider) -> None:
    ref = store(provider, active_record(1))

    async def main() -> RecallSession:
        return await arecall(
            request(),
            corpus=corpus(),
            checkpoint=checkpoint(),
            binding=binding(),
            provider=provider,
            now=NOW,
        )

    session = asyncio.run(main())
    assert [item.memory_ref for item in session.items] == [ref]
    assert wire.dump(session.packet) == wire.dump(run(provider).packet)


def test_arecall_blocked_and_unavailable_never_raise() -> None:
    provider = InMemoryProvider(unavailable=True)

    async def main() -> tuple[RecallSession, RecallSession]:
        blocked = await arecall(
            request(conflict_state="unresolved"),
            corpus=corpus(),
            checkpoint=checkpoint(),
            binding=binding(),
            provider=provider,
            now=NOW,
        )
        down = await arecall(
            request(),
            corpus=corpus(),
            checkpoint=checkpoint(),
            binding=binding(),
            provider=provider,
            now=NOW,
        )
        return blocked, down

    blocked, down = asyncio.run(main())
    assert blocked.status == "guard_blocked"
    assert down.status == "provider_unavailable"
    assert provider.call_count() == 1


def test_repeated_recall_is_deterministic(provider: Provider) -> None:
    for i in range(3):
        store(provider, active_record(i))
    first = wire.dump(run(provider).packet)
    assert all(wire.dump(run(provider).packet) == first for _ in range(3))


# -- the public packet's own invariants (held on load too) -----------------------------------------


def _loaded(provider: Provider, **changes: Any) -> Any:
    store(provider, active_record(1))
    data = wire.dump(run(provider).packet)
    data.update(changes)
    return wire.load(data)


@pytest.mark.parametrize(
    "changes",
    [
        {"result_count": 2},
        {"result_readback_verified": False},
        {"status": "empty"},
        {"status": "guard_blocked"},
        {"reason_code": "provider_unavailable"},
        {"reason_codes": ["unresolved_conflict"]},
        {"setup_hints": {"install": "x", "configure": None}},
        {"fail_open": False},
        {"raw_provider_payload_captured": True},
        {"provider_call_count": -1},
        {
            "results": [
                {
                    "memory_ref": "memory:raw-ref",
                    "candidate_ref": "c",
                    "target_class": "soft_preference",
                    "content_summary": None,
                    "content_exposed": False,
                }
            ]
        },
    ],
)
def test_recall_packet_invariants_hold_on_load(changes: dict[str, Any]) -> None:
    with pytest.raises(RecordValidationError):
        _loaded(InMemoryProvider(), **changes)


def test_recall_packet_loads_back() -> None:
    packet = _loaded(InMemoryProvider())
    assert packet.status == "completed"


def test_recall_packet_checks_python_callers_too() -> None:
    from reward_memory.records.recall import RecallPacket

    provider = InMemoryProvider()
    store(provider, active_record(1))
    packet = run(provider).packet
    fields = {field.name: getattr(packet, field.name) for field in attrs.fields(RecallPacket)}
    for name, bad in [
        ("corpus_id", "Not A Corpus"),
        ("surface_id", "nosurface"),
        ("provider_id", "/home/alice/x"),
        ("mode", "scan"),
        ("status", "done"),
        ("result_count", True),
        ("automatic_recall", 0),
        ("reason_codes", ["x"]),
        ("query_evidence", [1]),
        ("setup_hints", {"install": "x"}),
    ]:
        with pytest.raises(RecordValidationError) as info:
            RecallPacket(**{**fields, name: bad})
        assert info.value.path.startswith(f"$.{name}")


@pytest.mark.parametrize("wrong", [None, "sqlite:///tmp/x.db", b"memory://"])
def test_a_missing_provider_is_a_programmer_error(wrong: object) -> None:
    """A URL string where the provider object belongs is the caller's mistake, not an
    outage (an object without operations is a provider failing: it fails open)."""
    with pytest.raises(RecordValidationError) as info:
        run(wrong)  # type: ignore[arg-type]
    assert info.value.path == "$.provider"
    with pytest.raises(RecordValidationError) as info:
        recall(
            request(), corpus=corpus(), checkpoint=checkpoint(), binding=binding(), provider=wrong
        )  # type: ignore[arg-type]
    assert info.value.path == "$.provider"
