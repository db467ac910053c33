"""The Stage-3 recall guard: every reason code, their fixed order, zero provider calls."""

from __future__ import annotations

import hashlib
from typing import Any

import attrs
import pytest

from _recall_support import (
    CORPUS_ID,
    NOW,
    OTHER_SURFACE,
    PROJECT,
    SCOPE_REF,
    SURFACE,
    WORKSPACE,
    binding,
    checkpoint,
    corpus,
    request,
    validate_packet,
)
from reward_memory import wire
from reward_memory.digests import short_digest
from reward_memory.errors import RecordValidationError
from reward_memory.guarded_recall import build_recall_request, execute_recall, recall
from reward_memory.guards.recall import (
    BINDING_REASON_CODES,
    binding_reasons,
    peer_of_scope_ref,
    recall_reasons,
    request_reasons,
)
from reward_memory.records.corpus import CorpusFreshness, CorpusLifecycle, CorpusScope
from reward_memory.records.recall import (
    FreshnessContext,
    ProviderBinding,
    RecallInput,
    RecallQuery,
    RecallRequest,
    SetupHints,
)
from reward_memory.testing import InMemoryProvider

USER = "user:alice"


def _scope(**changes: Any) -> CorpusScope:
    return attrs.evolve(corpus().scope, **changes)


# (id, corpus changes, request changes, checkpoint changes, binding changes, expected reasons)
CASES: list[
    tuple[str, dict[str, Any], dict[str, Any], dict[str, Any], dict[str, Any], tuple[str, ...]]
] = [
    ("ready", {}, {}, {}, {}, ()),
    (
        "class_working_context",
        {"class_id": "working_context"},
        {},
        {},
        {},
        ("corpus_class_not_durable_recall_memory",),
    ),
    (
        "class_run_bound_reward",
        {"class_id": "run_bound_reward"},
        {},
        {},
        {},
        ("corpus_class_not_durable_recall_memory",),
    ),
    (
        "corpus_superseded",
        {"lifecycle": CorpusLifecycle(state="superseded", superseded_by="newer_policy")},
        {},
        {},
        {},
        ("corpus_not_active",),
    ),
    (
        "corpus_retired",
        {"lifecycle": CorpusLifecycle(state="retired", retirement_reason="source_gone")},
        {},
        {},
        {},
        ("corpus_not_active",),
    ),
    (
        "workspace",
        {},
        {"workspace_ref": "workspace:other"},
        {"workspace_ref": "workspace:other"},
        {},
        ("workspace_scope_mismatch",),
    ),
    (
        "project",
        {},
        {"project_ref": "project:beta"},
        {"project_ref": "project:beta"},
        {},
        ("project_scope_mismatch",),
    ),
    (
        "user_ref_differs",
        {"scope": _scope(user_ref=USER)},
        {"user_ref": "user:bob"},
        {"user_ref": USER},
        {},
        ("user_ref_scope_mismatch", "read_authority_user_ref_scope_mismatch"),
    ),
    (
        "user_ref_absent",
        {"scope": _scope(user_ref=USER)},
        {},
        {"user_ref": USER},
        {},
        ("user_ref_scope_mismatch", "read_authority_user_ref_scope_mismatch"),
    ),
    (
        "peer_ref_differs",
        {"scope": _scope(peer_ref="peer:alice")},
        {"peer_ref": "peer:bob"},
        {"peer_ref": "peer:alice"},
        {"actor_peer_id": "peer:alice"},
        ("peer_ref_scope_mismatch", "read_authority_peer_ref_scope_mismatch"),
    ),
    (
        "session_ref_differs",
        {"scope": _scope(session_ref="session:1")},
        {"session_ref": "session:2"},
        {"session_ref": "session:1"},
        {},
        ("session_ref_scope_mismatch", "read_authority_session_ref_scope_mismatch"),
    ),
    (
        "identity_unset_on_corpus_is_ignored",
        {},
        {"user_ref": "user:anyone", "peer_ref": "peer:x", "session_ref": "session:y"},
        {"user_ref": "user:zed", "peer_ref": "peer:q", "session_ref": "session:z"},
        {},
        (),
    ),
    (
        "surface",
        {},
        {"surface_id": "other_module.surface"},
        {"surface_id": "other_module.surface"},
        {},
        ("surface_scope_mismatch",),
    ),
    ("conflict", {}, {"conflict_state": "unresolved"}, {}, {}, ("unresolved_conflict",)),
    (
        "source_truth_not_current",
        {},
        {"freshness_context": FreshnessContext(source_truth_current=False)},
        {},
        {},
        ("source_truth_not_current",),
    ),
    (
        "execution_bound_not_current",
        {"freshness": CorpusFreshness(mode="execution_bound")},
        {"freshness_context": FreshnessContext(source_truth_current=False)},
        {},
        {},
        ("source_truth_not_current",),
    ),
    (
        "time_bound_ignores_source_truth_flag",
        {"freshness": CorpusFreshness(mode="time_bound", max_age_seconds=60)},
        {"freshness_context": FreshnessContext(source_truth_current=False, age_seconds=60)},
        {},
        {},
        (),
    ),
    (
        "session_archive_revision",
        {"freshness": CorpusFreshness(mode="session_archive_bound", source_revision="rev:1")},
        {"freshness_context": FreshnessContext(source_truth_current=True, source_revision="rev:2")},
        {},
        {},
        ("source_revision_mismatch",),
    ),
    (
        "source_age_exceeded",
        {"freshness": CorpusFreshness(mode="time_bound", max_age_seconds=60)},
        {"freshness_context": FreshnessContext(source_truth_current=True, age_seconds=61)},
        {},
        {},
        ("source_age_exceeded",),
    ),
    (
        "source_age_missing",
        {"freshness": CorpusFreshness(mode="time_bound", max_age_seconds=60)},
        {},
        {},
        {},
        ("source_age_exceeded",),
    ),
    (
        "request_revision",
        {"freshness": CorpusFreshness(mode="revision_bound", source_revision="rev:1")},
        {
            "revision_ref": "rev:2",
            "freshness_context": FreshnessContext(
                source_truth_current=True, source_revision="rev:1"
            ),
        },
        {},
        {},
        ("request_revision_mismatch",),
    ),
    (
        "stage4_stale_fixture",
        {"freshness": CorpusFreshness(mode="revision_bound", source_revision="rev:1")},
        {
            "revision_ref": "rev:0",
            "freshness_context": FreshnessContext(
                source_truth_current=True, source_revision="rev:0"
            ),
        },
        {},
        {},
        ("source_revision_mismatch", "request_revision_mismatch"),
    ),
    ("unverified", {}, {}, {"verified": False}, {}, ("read_authority_unverified",)),
    ("source_missing", {}, {}, {"source_ref": None}, {}, ("read_authority_source_missing",)),
    (
        "checkpoint_corpus",
        {},
        {},
        {"corpus_id": "another_corpus"},
        {},
        ("read_authority_corpus_id_mismatch",),
    ),
    (
        "checkpoint_workspace",
        {},
        {},
        {"workspace_ref": "workspace:other"},
        {},
        ("read_authority_workspace_ref_mismatch",),
    ),
    (
        "checkpoint_project",
        {},
        {},
        {"project_ref": "project:beta"},
        {},
        ("read_authority_project_ref_mismatch",),
    ),
    (
        "checkpoint_surface",
        {},
        {},
        {"surface_id": OTHER_SURFACE},
        {},
        ("read_authority_surface_id_mismatch",),
    ),
    (
        "checkpoint_read_authority",
        {},
        {},
        {"read_authority": "actor_scoped"},
        {},
        ("read_authority_read_authority_mismatch",),
    ),
    (
        "checkpoint_user",
        {"scope": _scope(user_ref=USER)},
        {"user_ref": USER},
        {"user_ref": "user:mallory"},
        {},
        ("read_authority_user_ref_mismatch",),
    ),
    (
        "checkpoint_peer_absent",
        {"scope": _scope(peer_ref="peer:alice")},
        {"peer_ref": "peer:alice"},
        {},
        {"actor_peer_id": "peer:alice"},
        ("read_authority_peer_ref_mismatch",),
    ),
    (
        "binding_corpus",
        {},
        {},
        {},
        {"corpus_id": "another_corpus"},
        ("provider_binding_corpus_mismatch",),
    ),
    (
        "binding_provider",
        {},
        {},
        {},
        {"provider_id": "openviking"},
        ("provider_binding_provider_mismatch",),
    ),
    (
        "binding_scope_digest",
        {},
        {},
        {},
        {"scope_ref": "viking://resources/reward-memory/other-policy"},
        ("provider_binding_scope_digest_mismatch",),
    ),
    (
        "binding_peer_missing",
        {"provider_scope_ref_digest": short_digest("viking://accounts/a/peers/alice/policy")},
        {},
        {},
        {"scope_ref": "viking://accounts/a/peers/alice/policy"},
        ("provider_binding_actor_peer_missing",),
    ),
    (
        "binding_peer_mismatch",
        {"provider_scope_ref_digest": short_digest("viking://accounts/a/peers/alice/policy")},
        {},
        {},
        {"scope_ref": "viking://accounts/a/peers/alice/policy", "actor_peer_id": "bob"},
        ("provider_binding_actor_peer_mismatch",),
    ),
    (
        "binding_peer_matches",
        {"provider_scope_ref_digest": short_digest("viking://accounts/a/peers/alice/policy")},
        {},
        {},
        {"scope_ref": "viking://accounts/a/peers/alice/policy", "actor_peer_id": "alice"},
        (),
    ),
    (
        "binding_peer_at_end_of_uri",
        {"provider_scope_ref_digest": None},
        {},
        {},
        {"scope_ref": "viking://accounts/a/peers/alice"},
        ("provider_binding_actor_peer_missing",),
    ),
    (
        "no_declared_digest_no_check",
        {"provider_scope_ref_digest": None},
        {},
        {},
        {"scope_ref": "viking://anything/at/all"},
        (),
    ),
    (
        "full_sha256_digest",
        {"provider_scope_ref_digest": "sha256:" + hashlib.sha256(SCOPE_REF.encode()).hexdigest()},
        {},
        {},
        {},
        (),
    ),
    (
        "full_sha256_digest_mismatch",
        {"provider_scope_ref_digest": "sha256:" + hashlib.sha256(b"other").hexdigest()},
        {},
        {},
        {},
        ("provider_binding_scope_digest_mismatch",),
    ),
    # Identity scope (issue: "a corpus scoped to a user, peer or session binds recall
    # to exactly that identity: a binding (or checkpoint) for another peer is blocked
    # before the provider with a reason code, whatever its URI looks like").
    (
        "peer_corpus_binding_without_actor",
        {"scope": _scope(peer_ref="peer:alice")},
        {"peer_ref": "peer:alice"},
        {"peer_ref": "peer:alice"},
        {},
        ("provider_binding_actor_peer_missing",),
    ),
    (
        "peer_corpus_binding_for_another_peer",
        {"scope": _scope(peer_ref="peer:alice")},
        {"peer_ref": "peer:alice"},
        {"peer_ref": "peer:alice"},
        {"actor_peer_id": "peer:bob"},
        ("provider_binding_peer_scope_mismatch",),
    ),
    (
        "peer_corpus_uri_of_another_peer",
        {"scope": _scope(peer_ref="alice"), "provider_scope_ref_digest": None},
        {"peer_ref": "alice"},
        {"peer_ref": "alice"},
        {"scope_ref": "viking://accounts/a/peers/bob/policy", "actor_peer_id": "alice"},
        ("provider_binding_actor_peer_mismatch", "provider_binding_peer_scope_mismatch"),
    ),
    (
        "actor_peer_nothing_asks_for",
        {},
        {},
        {},
        {"actor_peer_id": "peer:bob"},
        ("provider_binding_actor_peer_unscoped",),
    ),
    (
        "dot_segments_in_scope_ref",
        {"provider_scope_ref_digest": None},
        {},
        {},
        {"scope_ref": "viking://accounts/a/peers/alice/..", "actor_peer_id": "alice"},
        ("provider_binding_scope_ref_ambiguous",),
    ),
    (
        "single_dot_segment_in_scope_ref",
        {"provider_scope_ref_digest": None},
        {},
        {},
        {"scope_ref": "viking://accounts/a/./policy"},
        ("provider_binding_scope_ref_ambiguous",),
    ),
    (
        "two_peer_segments_in_scope_ref",
        {"provider_scope_ref_digest": None},
        {},
        {},
        {"scope_ref": "viking://accounts/a/peers/alice/peers/bob", "actor_peer_id": "alice"},
        ("provider_binding_scope_ref_ambiguous",),
    ),
    (
        "request_names_another_peer_than_the_binding",
        {"provider_scope_ref_digest": None},
        {"peer_ref": "bob"},
        {},
        {"scope_ref": "viking://accounts/a/peers/alice/policy", "actor_peer_id": "alice"},
        ("provider_binding_request_peer_mismatch",),
    ),
    (
        "checkpoint_for_another_peer_than_the_binding",
        {"provider_scope_ref_digest": None},
        {},
        {"peer_ref": "bob"},
        {"scope_ref": "viking://accounts/a/peers/alice/policy", "actor_peer_id": "alice"},
        ("provider_binding_checkpoint_peer_mismatch",),
    ),
]


def _build(
    corpus_changes: dict[str, Any],
    request_changes: dict[str, Any],
    checkpoint_changes: dict[str, Any],
    binding_changes: dict[str, Any],
) -> tuple[Any, RecallRequest, Any, ProviderBinding]:
    return (
        corpus(**corpus_changes),
        request(**request_changes),
        checkpoint(**checkpoint_changes),
        binding(**binding_changes),
    )


@pytest.mark.parametrize(
    ("corpus_changes", "request_changes", "checkpoint_changes", "binding_changes", "expected"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_each_reason_code(
    corpus_changes: dict[str, Any],
    request_changes: dict[str, Any],
    checkpoint_changes: dict[str, Any],
    binding_changes: dict[str, Any],
    expected: tuple[str, ...],
) -> None:
    declared, asked, checked, bound = _build(
        corpus_changes, request_changes, checkpoint_changes, binding_changes
    )
    assert recall_reasons(asked, declared, checked, bound) == expected

    packet = build_recall_request(asked, corpus=declared, checkpoint=checked, binding=bound)
    assert packet.status == ("guard_blocked" if expected else "ready")
    assert packet.guard.reason_codes == expected
    assert packet.guard.passed is (not expected)
    data = validate_packet(packet)
    assert data["provider_call_performed"] is False

    provider = InMemoryProvider()
    session = recall(
        asked, corpus=declared, checkpoint=checked, binding=bound, provider=provider, now=NOW
    )
    if expected:
        assert session.status == "guard_blocked"
        assert session.packet.reason_codes == expected
        assert session.packet.provider_call_count == 0
        assert session.items == ()
        assert provider.call_count() == 0, "a blocked request must not touch the provider"
        validate_packet(session.packet)
    else:
        assert session.status == "empty"
        assert provider.call_count() > 0


def test_every_documented_reason_code_is_exercised_alone() -> None:
    exercised = {code for case in CASES for code in case[-1]}
    documented = {
        "corpus_class_not_durable_recall_memory",
        "corpus_not_active",
        "workspace_scope_mismatch",
        "project_scope_mismatch",
        "user_ref_scope_mismatch",
        "peer_ref_scope_mismatch",
        "session_ref_scope_mismatch",
        "surface_scope_mismatch",
        "unresolved_conflict",
        "source_truth_not_current",
        "source_revision_mismatch",
        "source_age_exceeded",
        "request_revision_mismatch",
        "read_authority_user_ref_scope_mismatch",
        "read_authority_peer_ref_scope_mismatch",
        "read_authority_session_ref_scope_mismatch",
        "read_authority_unverified",
        "read_authority_source_missing",
        "read_authority_corpus_id_mismatch",
        "read_authority_workspace_ref_mismatch",
        "read_authority_project_ref_mismatch",
        "read_authority_surface_id_mismatch",
        "read_authority_read_authority_mismatch",
        "read_authority_user_ref_mismatch",
        "read_authority_peer_ref_mismatch",
        *BINDING_REASON_CODES,
    }
    assert documented <= exercised


def test_reference_combined_example_order() -> None:
    """Wrong project, wrong surface, conflict, stale revision, unverified source-less checkpoint."""
    declared = corpus(freshness=CorpusFreshness(mode="revision_bound", source_revision="rev:1"))
    asked = request(
        project_ref="project:beta",
        surface_id="other_module.surface",
        conflict_state="unresolved",
        revision_ref="rev:0",
        freshness_context=FreshnessContext(source_truth_current=True, source_revision="rev:0"),
    )
    checked = checkpoint(verified=False, source_ref=None)
    assert request_reasons(asked, declared, checked) == (
        "project_scope_mismatch",
        "surface_scope_mismatch",
        "unresolved_conflict",
        "source_revision_mismatch",
        "request_revision_mismatch",
        "read_authority_unverified",
        "read_authority_source_missing",
        "read_authority_project_ref_mismatch",
        "read_authority_surface_id_mismatch",
    )


def test_everything_at_once_keeps_the_fixed_order() -> None:
    declared = corpus(
        class_id="working_context",
        lifecycle=CorpusLifecycle(state="retired", retirement_reason="gone"),
        scope=_scope(user_ref=USER, peer_ref="peer:alice", session_ref="session:1"),
        freshness=CorpusFreshness(mode="revision_bound", source_revision="rev:1"),
    )
    asked = request(
        workspace_ref="workspace:x",
        project_ref="project:x",
        surface_id="x.y",
        conflict_state="unresolved",
        freshness_context=FreshnessContext(source_truth_current=False),
    )
    checked = checkpoint(
        verified=False,
        source_ref=None,
        corpus_id="x",
        read_authority="x",
        user_ref="user:x",
    )
    bound = binding(
        corpus_id="x",
        provider_id="x",
        scope_ref="viking://x/peers/alice/y",
        actor_peer_id="bob",
    )
    reasons = recall_reasons(asked, declared, checked, bound)
    assert reasons == (
        "corpus_class_not_durable_recall_memory",
        "corpus_not_active",
        "workspace_scope_mismatch",
        "project_scope_mismatch",
        "user_ref_scope_mismatch",
        "peer_ref_scope_mismatch",
        "session_ref_scope_mismatch",
        "surface_scope_mismatch",
        "unresolved_conflict",
        "source_revision_mismatch",
        "request_revision_mismatch",
        "read_authority_user_ref_scope_mismatch",
        "read_authority_peer_ref_scope_mismatch",
        "read_authority_session_ref_scope_mismatch",
        "read_authority_unverified",
        "read_authority_source_missing",
        "read_authority_corpus_id_mismatch",
        "read_authority_workspace_ref_mismatch",
        "read_authority_project_ref_mismatch",
        "read_authority_surface_id_mismatch",
        "read_authority_read_authority_mismatch",
        "read_authority_user_ref_mismatch",
        "read_authority_peer_ref_mismatch",
        "read_authority_session_ref_mismatch",
        "provider_binding_corpus_mismatch",
        "provider_binding_provider_mismatch",
        "provider_binding_scope_digest_mismatch",
        "provider_binding_actor_peer_mismatch",
        "provider_binding_peer_scope_mismatch",
    )
    provider = InMemoryProvider()
    session = recall(
        asked, corpus=declared, checkpoint=checked, binding=bound, provider=provider, now=NOW
    )
    assert session.packet.reason_codes == reasons
    assert provider.call_count() == 0


def test_guards_are_pure_and_repeatable() -> None:
    declared, asked, checked, bound = corpus(), request(), checkpoint(), binding()
    first = recall_reasons(asked, declared, checked, bound)
    assert all(recall_reasons(asked, declared, checked, bound) == first for _ in range(3))
    assert binding_reasons(bound, declared) == ()


# -- the peer is explicit, never inferred ---------------------------------------------------


@pytest.mark.parametrize(
    ("scope_ref", "peer"),
    [
        ("viking://accounts/a/peers/alice/policy", "alice"),
        ("viking://accounts/a/peers/alice", "alice"),
        ("viking://accounts/a/peers/", ""),
        ("viking://accounts/a/peer/alice", None),
        ("viking://accounts/a/policy", None),
    ],
)
def test_peer_of_scope_ref(scope_ref: str, peer: str | None) -> None:
    assert peer_of_scope_ref(scope_ref) == peer


def test_empty_peer_segment_never_matches() -> None:
    declared = corpus(provider_scope_ref_digest=None)
    bound = binding(scope_ref="viking://accounts/a/peers//x", actor_peer_id="alice")
    assert binding_reasons(bound, declared) == (
        "provider_binding_actor_peer_mismatch",
        "provider_binding_scope_ref_ambiguous",
    )


def test_provider_scope_carries_only_the_explicit_peer() -> None:
    peer_scope = "viking://accounts/a/peers/alice/policy"
    declared = corpus(provider_scope_ref_digest=short_digest(peer_scope))
    bound = binding(scope_ref=peer_scope, actor_peer_id="alice")
    provider = InMemoryProvider()
    recall(
        request(),
        corpus=declared,
        checkpoint=checkpoint(),
        binding=bound,
        provider=provider,
        now=NOW,
    )
    (call,) = provider.calls
    assert call.op == "search"
    assert call.scope is not None
    assert call.scope.actor_peer_id == "alice"

    # A scope outside /peers/ with no explicit actor: the provider call has no peer at all.
    provider = InMemoryProvider()
    recall(
        request(),
        corpus=corpus(),
        checkpoint=checkpoint(),
        binding=binding(),
        provider=provider,
        now=NOW,
    )
    (call,) = provider.calls
    assert call.scope is not None
    assert call.scope.actor_peer_id is None


def test_execute_checks_a_binding_the_request_packet_never_saw() -> None:
    packet = build_recall_request(request(), corpus=corpus(), checkpoint=checkpoint())
    assert packet.status == "ready"
    provider = InMemoryProvider()
    session = execute_recall(
        packet, binding=binding(provider_id="elsewhere"), provider=provider, now=NOW
    )
    assert session.status == "guard_blocked"
    assert session.packet.reason_codes == ("provider_binding_provider_mismatch",)
    assert provider.call_count() == 0
    # A packet that already names the reason does not repeat it.
    blocked = build_recall_request(
        request(), corpus=corpus(), checkpoint=checkpoint(), binding=binding(provider_id="x")
    )
    again = execute_recall(blocked, binding=binding(provider_id="x"), provider=provider, now=NOW)
    assert again.packet.reason_codes == ("provider_binding_provider_mismatch",)
    assert provider.call_count() == 0


# -- structural rules are errors, not reasons -------------------------------------------------


def _query(index: int = 0) -> RecallQuery:
    return RecallQuery(query=f"reviewer summary tone {index}", query_summary=f"tone {index}")


@pytest.mark.parametrize(
    ("mode", "count", "ok"),
    [
        ("function_boundary", 0, False),
        ("function_boundary", 1, True),
        ("function_boundary", 2, False),
        ("bounded_agentic_search", 0, False),
        ("bounded_agentic_search", 1, True),
        ("bounded_agentic_search", 3, True),
        ("bounded_agentic_search", 4, False),
    ],
)
def test_query_count_per_mode(mode: str, count: int, ok: bool) -> None:
    queries = tuple(_query(i) for i in range(count))
    if ok:
        assert len(request(mode=mode, queries=queries).queries) == count
    else:
        with pytest.raises(RecordValidationError) as info:
            request(mode=mode, queries=queries)
        assert info.value.path == "$.queries"


@pytest.mark.parametrize("limit", [0, 9, -1, True, 2.0, "5"])
def test_limit_out_of_range_is_an_error(limit: object) -> None:
    with pytest.raises(RecordValidationError) as info:
        request(limit=limit)
    assert info.value.path == "$.limit"


@pytest.mark.parametrize("limit", [1, 5, 8])
def test_limit_in_range(limit: int) -> None:
    assert request(limit=limit).limit == limit


def test_limit_defaults_to_five() -> None:
    assert request().limit == 5


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("raw_content_captured", True),
        ("surface_id", "NotASurface"),
        ("observed_at", "2026-03-01T12:00:00"),
        ("conflict_state", "token=abcdefghijklmnop1234"),
        ("workspace_ref", "/home/alice/workspace"),
        ("query_kind", "semantic_router"),
        ("mode", "scan_everything"),
    ],
)
def test_structural_request_errors(field: str, value: object) -> None:
    with pytest.raises(RecordValidationError) as info:
        request(**{field: value})
    assert info.value.path == f"$.{field}"


def test_over_long_query_is_rejected_not_truncated() -> None:
    with pytest.raises(RecordValidationError) as info:
        RecallQuery(query="x" * 501, query_summary="fine")
    assert info.value.code == "text_too_long"


@pytest.mark.parametrize("timeout", [0, 0.5, 121, True, "30"])
def test_binding_timeout_bounds(timeout: object) -> None:
    with pytest.raises(RecordValidationError) as info:
        binding(timeout_seconds=timeout)
    assert info.value.path == "$.timeout_seconds"


def test_binding_defaults_and_unsafe_hints() -> None:
    bound = ProviderBinding(
        corpus_id=CORPUS_ID, provider_id="sqlite", namespace="ns", scope_ref=SCOPE_REF
    )
    assert bound.timeout_seconds == 30
    assert bound.actor_peer_id is None
    assert bound.setup_hints == SetupHints()
    with pytest.raises(RecordValidationError):
        SetupHints(install="export API_KEY=abcd1234efgh")
    with pytest.raises(RecordValidationError):
        SetupHints(configure="edit /home/alice/.config/provider.toml")


def _input_data() -> dict[str, Any]:
    data: dict[str, Any] = wire.dump(
        RecallInput(
            corpus=corpus(),
            request=request(),
            read_authority_checkpoint=checkpoint(),
            provider_binding=binding(),
        )
    )
    return data


@pytest.mark.parametrize(
    ("where", "key", "code"),
    [
        ("read_authority_checkpoint", "corpus_id", "missing_field"),
        ("read_authority_checkpoint", "surface_id", "missing_field"),
        ("read_authority_checkpoint", "verified", "missing_field"),
        ("request", "observed_at", "missing_field"),
        ("request", "freshness_context", "missing_field"),
        ("provider_binding", "scope_ref", "missing_field"),
    ],
)
def test_input_missing_fields_are_errors(where: str, key: str, code: str) -> None:
    data = _input_data()
    del data[where][key]
    with pytest.raises(RecordValidationError) as info:
        wire.load(data)
    assert info.value.code == code
    assert info.value.path == f"$.{where}.{key}"


def test_input_rejects_unknown_fields_everywhere() -> None:
    for where in ("request", "read_authority_checkpoint", "provider_binding"):
        data = _input_data()
        data[where]["comment_body"] = "raw"
        with pytest.raises(RecordValidationError) as info:
            wire.load(data)
        assert info.value.code == "unknown_field"
        assert info.value.path == f"$.{where}.comment_body"


def test_input_query_count_checked_by_schema_and_record() -> None:
    data = _input_data()
    data["request"]["queries"] = data["request"]["queries"] * 2
    with pytest.raises(RecordValidationError):
        wire.load(data)


def test_input_round_trip() -> None:
    data = _input_data()
    loaded = wire.load(data, RecallInput)
    assert loaded.request == request()
    assert loaded.corpus == corpus()
    assert loaded.read_authority_checkpoint == checkpoint()
    assert loaded.provider_binding.scope_ref == SCOPE_REF


def test_request_packet_holds_query_text_but_evidence_is_hashed() -> None:
    packet = build_recall_request(request(), corpus=corpus(), checkpoint=checkpoint())
    (evidence,) = packet.request.query_evidence
    assert evidence.query_digest == hashlib.sha256(b"reviewer summary tone").hexdigest()[:16]
    assert evidence.query_summary == "summary tone"
    assert evidence.exact_query_exposed is False
    assert packet.request.queries[0].query == "reviewer summary tone"
    assert packet.request.user_ref is None
    assert packet.request.workspace_ref == WORKSPACE
    assert packet.request.project_ref == PROJECT
    assert packet.request.surface_id == SURFACE


def test_wrong_argument_types_are_errors() -> None:
    with pytest.raises(RecordValidationError):
        build_recall_request(
            {"mode": "function_boundary"},  # type: ignore[arg-type]
            corpus=corpus(),
            checkpoint=checkpoint(),
        )
    with pytest.raises(RecordValidationError):
        recall(
            request(),
            corpus=corpus(),
            checkpoint=checkpoint(),
            binding={},  # type: ignore[arg-type]
            provider=InMemoryProvider(),
        )
