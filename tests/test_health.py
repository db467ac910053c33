"""Stage-1 corpus health: observation, contradictions, the 13-rule precedence, the packet."""

from __future__ import annotations

import copy
from typing import Any

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from reward_memory import schemas, wire
from reward_memory.errors import RecordValidationError
from reward_memory.health import (
    HEALTH_CASES,
    classify_health,
    classify_request,
    health_case,
)
from reward_memory.records._plain import to_plain as as_plain
from reward_memory.records.corpus import (
    CorpusDeclaration,
    CorpusFreshness,
    CorpusLifecycle,
    CorpusRetrieval,
)
from reward_memory.records.health import (
    CorpusHealth,
    FreshnessCheck,
    HealthObservation,
    HealthPipeline,
    HealthRequest,
    ScopeCheck,
)
from reward_memory.registry import reference_corpus

PIPELINE_FIELDS = [
    "provider_available",
    "corpus_present",
    "record_count",
    "index_required",
    "index_present",
    "retrieval_query_succeeded",
    "result_readback_verified",
    "memory_applied_with_receipt",
]
BASE: dict[str, Any] = {
    "requested_project_ref": "project:exact",
    "requested_surface": "issue_fix.routing",
    "current_source_revision": "revision:observed",
    "freshness_window_satisfied": True,
    "provider_available": True,
    "corpus_present": True,
    "record_count": 1,
    "index_present": True,
    "retrieval_query_succeeded": True,
    "result_readback_verified": True,
    "memory_applied_with_receipt": False,
}


def _corpus(**changes: Any) -> CorpusDeclaration:
    return attrs.evolve(reference_corpus("distilled_experiences"), **changes)


def _observation(**changes: Any) -> HealthObservation:
    return HealthObservation(**(BASE | changes))


def _classify(corpus: CorpusDeclaration | None = None, **changes: Any) -> CorpusHealth:
    return classify_health(corpus or _corpus(), _observation(**changes))


# -- the ten fixture cases ---------------------------------------------------------------


@pytest.mark.parametrize("name", HEALTH_CASES)
def test_each_case_yields_its_own_state(name: str) -> None:
    health = classify_request(health_case(name))
    assert health.health_state == name.replace("-", "_")
    assert health.corpus_id == "distilled_experiences"
    assert health.class_id == "procedural_experience"
    assert len(health.reason_codes) == 1
    assert health.memory_patch_authority is False
    assert health.external_write_authorized is False
    assert health.raw_memory_captured is False
    assert health.may_apply_memory is (name in {"retrieval-verified", "applied-verified"})
    packet = as_plain(health)
    assert schemas.validate(packet) == "reward_memory_corpus_health_v0"
    assert list(packet["pipeline"]) == PIPELINE_FIELDS
    assert wire.dump(health) == packet
    assert wire.load(packet, CorpusHealth) == health


def test_there_are_ten_distinct_cases() -> None:
    states = {classify_request(health_case(name)).health_state for name in HEALTH_CASES}
    assert len(HEALTH_CASES) == len(states) == 10


def test_wrong_project_packet_is_complete() -> None:
    packet = as_plain(classify_request(health_case("wrong-project")))
    assert packet == {
        "ok": True,
        "schema_version": "reward_memory_corpus_health_v0",
        "corpus_id": "distilled_experiences",
        "class_id": "procedural_experience",
        "health_state": "wrong_project",
        "reason_codes": ["requested_project_outside_corpus_scope"],
        "scope_check": {"project_matches": False, "surface_matches": True},
        "freshness_check": {
            "lifecycle_state": "active",
            "source_revision_matches": True,
            "freshness_window_satisfied": True,
        },
        "pipeline": {
            "provider_available": True,
            "corpus_present": True,
            "record_count": 1,
            "index_required": True,
            "index_present": True,
            "retrieval_query_succeeded": True,
            "result_readback_verified": True,
            "memory_applied_with_receipt": False,
        },
        "may_apply_memory": False,
        "memory_patch_authority": False,
        "external_write_authorized": False,
        "raw_memory_captured": False,
    }


def test_fixture_requests_validate_and_round_trip() -> None:
    for name in HEALTH_CASES:
        request = health_case(name)
        packet = as_plain(request)
        assert schemas.validate(packet) == "reward_memory_corpus_health_request_v0"
        assert wire.load(packet, HealthRequest) == request


@pytest.mark.parametrize("name", ["wrong_project", "WRONG-PROJECT", "", "healthy", None])
def test_unknown_case_is_refused(name: Any) -> None:
    with pytest.raises(RecordValidationError, match="unknown reward-memory health case"):
        health_case(name)


# -- every precedence rule and reason code -------------------------------------------------

SUPERSEDED = CorpusLifecycle(state="superseded", superseded_by="newer_experiences")
RETIRED = CorpusLifecycle(state="retired", retirement_reason="owner_request")
NO_READBACK = CorpusRetrieval(
    index_required=True, readback_required=False, application_receipt_required=False
)
NO_INDEX = CorpusRetrieval(
    index_required=False, readback_required=True, application_receipt_required=True
)
TIME_BOUND = CorpusFreshness(mode="time_bound", max_age_seconds=3600)
# An unreachable provider reports nothing later in the pipeline.
PROVIDER_DOWN: dict[str, Any] = {
    "provider_available": False,
    "corpus_present": False,
    "record_count": 0,
    "index_present": False,
    "retrieval_query_succeeded": False,
    "result_readback_verified": False,
}
# No record: nothing can have been read back.
EMPTY: dict[str, Any] = {"record_count": 0, "result_readback_verified": False}

RULES: list[tuple[str, dict[str, Any], dict[str, Any], str, str]] = [
    ("1", {}, {"requested_project_ref": "project:other"},
     "wrong_project", "requested_project_outside_corpus_scope"),
    ("1-beats-all", {"lifecycle": RETIRED},
     {"requested_project_ref": "project:other", "requested_surface": "other.surface",
      "provider_available": False, "corpus_present": False, "record_count": 0,
      "index_present": False, "retrieval_query_succeeded": False,
      "result_readback_verified": False},
     "wrong_project", "requested_project_outside_corpus_scope"),
    ("2", {}, {"requested_surface": "content_ops.draft"},
     "wrong_surface", "requested_surface_outside_corpus_scope"),
    ("2-beats-3", {}, {"requested_surface": "content_ops.draft", **PROVIDER_DOWN},
     "wrong_surface", "requested_surface_outside_corpus_scope"),
    ("3", {}, PROVIDER_DOWN, "unavailable", "provider_unavailable"),
    ("3-beats-4", {"lifecycle": RETIRED}, PROVIDER_DOWN, "unavailable", "provider_unavailable"),
    ("4", {}, {"corpus_present": False, "record_count": 0, "retrieval_query_succeeded": False,
               "result_readback_verified": False},
     "unavailable", "corpus_missing"),
    ("4-index-is-not-content", {}, {"corpus_present": False, "record_count": 0,
                                    "index_present": True, "retrieval_query_succeeded": False,
                                    "result_readback_verified": False},
     "unavailable", "corpus_missing"),
    ("5", {}, EMPTY, "empty", "corpus_present_without_records"),
    ("5-beats-6", {"lifecycle": RETIRED}, EMPTY, "empty", "corpus_present_without_records"),
    ("5-after-a-query-that-ran", {}, {**EMPTY, "retrieval_query_succeeded": True},
     "empty", "corpus_present_without_records"),
    ("6-superseded", {"lifecycle": SUPERSEDED}, {}, "stale", "lifecycle_superseded"),
    ("6-retired", {"lifecycle": RETIRED}, {}, "stale", "lifecycle_retired"),
    ("6-beats-7", {"lifecycle": RETIRED}, {"current_source_revision": "revision:newer"},
     "stale", "lifecycle_retired"),
    ("7-mismatch", {}, {"current_source_revision": "revision:newer"},
     "stale", "source_revision_mismatch_or_unverified"),
    ("7-absent", {}, {"current_source_revision": None},
     "stale", "source_revision_mismatch_or_unverified"),
    ("7-beats-8", {}, {"current_source_revision": None, "freshness_window_satisfied": False},
     "stale", "source_revision_mismatch_or_unverified"),
    ("7-skipped-without-declared-revision", {"freshness": TIME_BOUND},
     {"current_source_revision": None}, "retrieval_verified", "verified_result_not_yet_applied"),
    ("8", {}, {"freshness_window_satisfied": False}, "stale", "freshness_window_unsatisfied"),
    ("8-time-bound", {"freshness": TIME_BOUND}, {"freshness_window_satisfied": False},
     "stale", "freshness_window_unsatisfied"),
    ("9", {}, {"index_present": False, "retrieval_query_succeeded": False,
               "result_readback_verified": False},
     "index_unavailable", "required_index_missing"),
    ("9-beats-10-even-when-retrieval-worked", {}, {"index_present": False},
     "index_unavailable", "required_index_missing"),
    ("9-skipped-when-not-required", {"retrieval": NO_INDEX}, {"index_present": False},
     "retrieval_verified", "verified_result_not_yet_applied"),
    ("10", {}, {"retrieval_query_succeeded": False, "result_readback_verified": False},
     "retrieval_failed", "retrieval_query_failed_or_not_run"),
    ("11", {}, {"result_readback_verified": False},
     "readback_unverified", "retrieval_result_not_read_back"),
    ("11-skipped-when-not-required", {"retrieval": NO_READBACK},
     {"result_readback_verified": False},
     "retrieval_verified", "verified_result_not_yet_applied"),
    ("12", {}, {"memory_applied_with_receipt": True},
     "applied_verified", "verified_result_has_application_receipt"),
    ("13", {}, {}, "retrieval_verified", "verified_result_not_yet_applied"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("corpus_changes", "observed", "state", "reason"),
    [rule[1:] for rule in RULES],
    ids=[rule[0] for rule in RULES],
)
def test_precedence_rule(
    corpus_changes: dict[str, Any], observed: dict[str, Any], state: str, reason: str
) -> None:
    health = _classify(_corpus(**corpus_changes), **observed)
    assert (health.health_state, health.reason_codes) == (state, (reason,))
    assert health.memory_patch_authority is False
    assert health.external_write_authorized is False
    schemas.validate(as_plain(health))


def test_every_reason_code_is_reachable() -> None:
    from reward_memory.records.health import REASON_CODES

    reached = {rule[4] for rule in RULES}
    assert reached == {code for codes in REASON_CODES.values() for code in codes}
    assert len(reached) == 14


def test_checks_are_echoed_not_collapsed() -> None:
    health = _classify(
        corpus_present=False,
        record_count=0,
        index_present=True,
        retrieval_query_succeeded=False,
        result_readback_verified=False,
        current_source_revision="revision:newer",
        freshness_window_satisfied=False,
    )
    assert health.scope_check == ScopeCheck(project_matches=True, surface_matches=True)
    assert health.freshness_check == FreshnessCheck(
        lifecycle_state="active", source_revision_matches=False, freshness_window_satisfied=False
    )
    assert health.pipeline == HealthPipeline(
        provider_available=True,
        corpus_present=False,
        record_count=0,
        index_required=True,
        index_present=True,
        retrieval_query_succeeded=False,
        result_readback_verified=False,
        memory_applied_with_receipt=False,
    )


def test_requested_overrides() -> None:
    health = classify_health(_corpus(), _observation(), requested_project_ref="project:other")
    assert health.health_state == "wrong_project"
    health = classify_health(_corpus(), _observation(), requested_surface="issue_fix.diagnosis")
    assert health.health_state == "wrong_surface"
    with pytest.raises(RecordValidationError) as info:
        classify_health(_corpus(), _observation(), requested_surface="not a surface")
    assert info.value.path == "$.requested_surface"


def test_health_never_grants_authority_even_when_applied() -> None:
    health = _classify(memory_applied_with_receipt=True)
    assert health.health_state == "applied_verified"
    assert health.may_apply_memory is True
    assert (health.memory_patch_authority, health.external_write_authorized) == (False, False)
    with pytest.raises(RecordValidationError):
        attrs.evolve(health, memory_patch_authority=True)  # type: ignore[arg-type]
    with pytest.raises(RecordValidationError):
        attrs.evolve(health, external_write_authorized=True)  # type: ignore[arg-type]


# -- contradictory observations --------------------------------------------------------------

CONTRADICTIONS: list[tuple[dict[str, Any], str]] = [
    ({"corpus_present": False, "retrieval_query_succeeded": False,
      "result_readback_verified": False}, "record_count"),
    # "provider unavailable" with anything later (an unreachable provider has no inventory)
    ({"provider_available": False}, "corpus_present"),
    ({"provider_available": False, "corpus_present": False, "record_count": 0},
     "index_present"),
    ({**PROVIDER_DOWN, "retrieval_query_succeeded": True}, "retrieval_query_succeeded"),
    # a verified readback (or an application) of a corpus with no record
    ({"record_count": 0}, "result_readback_verified"),
    ({"record_count": 0, "memory_applied_with_receipt": True}, "result_readback_verified"),
    ({"record_count": 1, "record_expires_at": ["2026-01-01T00:00:00Z"] * 2},
     "record_expires_at"),
    ({"corpus_present": False, "record_count": 0}, "retrieval_query_succeeded"),
    ({"retrieval_query_succeeded": False}, "result_readback_verified"),
    ({"result_readback_verified": False, "memory_applied_with_receipt": True},
     "memory_applied_with_receipt"),
    ({"retrieval_query_succeeded": False, "result_readback_verified": False,
      "memory_applied_with_receipt": True}, "memory_applied_with_receipt"),
]  # fmt: skip


@pytest.mark.parametrize(("changes", "field"), CONTRADICTIONS)
def test_contradictory_observation_is_refused(changes: dict[str, Any], field: str) -> None:
    with pytest.raises(RecordValidationError) as info:
        _observation(**changes)
    assert (info.value.code, info.value.path) == ("contradictory_observation", f"$.{field}")


@pytest.mark.parametrize(("changes", "field"), CONTRADICTIONS)
def test_contradictory_request_names_the_nested_path(changes: dict[str, Any], field: str) -> None:
    packet = as_plain(health_case("retrieval-verified"))
    packet["observation"].update(changes)
    with pytest.raises(RecordValidationError) as info:
        wire.load(packet, HealthRequest)
    assert (info.value.code, info.value.path) == (
        "contradictory_observation",
        f"$.observation.{field}",
    )


def test_empty_after_a_successful_query_is_not_a_contradiction() -> None:
    """A query may run over an empty corpus; an index may outlive its content."""
    assert _observation(**EMPTY).retrieval_query_succeeded is True
    assert _observation(
        corpus_present=False, record_count=0, index_present=True,
        retrieval_query_succeeded=False, result_readback_verified=False,
    ).index_present is True  # fmt: skip


@pytest.mark.parametrize(
    ("field", "value", "code"),
    [
        ("provider_available", 1, "wrong_type"),
        ("corpus_present", "true", "wrong_type"),
        ("record_count", True, "wrong_type"),
        ("record_count", -1, "invalid_value"),
        ("record_count", 1.0, "wrong_type"),
        ("requested_surface", "routing", "invalid_format"),
        ("requested_project_ref", "", "invalid_format"),
    ],
)
def test_observation_types_are_strict(field: str, value: Any, code: str) -> None:
    with pytest.raises(RecordValidationError) as info:
        _observation(**{field: value})
    assert (info.value.code, info.value.path) == (code, f"$.{field}")


@pytest.mark.parametrize(
    ("where", "path"),
    [
        ((), "$.surprise"),
        (("observation",), "$.observation.surprise"),
        (("corpus",), "$.corpus.surprise"),
        (("corpus", "scope"), "$.corpus.scope.surprise"),
        (("corpus", "lifecycle"), "$.corpus.lifecycle.surprise"),
        (("corpus", "retrieval"), "$.corpus.retrieval.surprise"),
        (("corpus", "maintenance"), "$.corpus.maintenance.surprise"),
    ],
)
def test_request_rejects_unknown_fields(where: tuple[str, ...], path: str) -> None:
    packet = as_plain(health_case("empty"))
    node: Any = packet
    for step in where:
        node = node[step]
    node["surprise"] = "raw chat transcript"
    with pytest.raises(RecordValidationError) as info:
        wire.load(packet)
    assert (info.value.code, info.value.path) == ("unknown_field", path)


def test_request_schema_version_is_required() -> None:
    packet = as_plain(health_case("empty"))
    del packet["schema_version"]
    with pytest.raises(RecordValidationError) as info:
        wire.load(packet)
    assert info.value.code == "schema_version_missing"


def test_health_packet_invariants() -> None:
    health = _classify()
    with pytest.raises(RecordValidationError) as info:
        attrs.evolve(health, reason_codes=("corpus_missing",))
    assert info.value.path == "$.reason_codes[0]"
    with pytest.raises(RecordValidationError):
        attrs.evolve(health, reason_codes=("verified_result_not_yet_applied", "corpus_missing"))
    with pytest.raises(RecordValidationError) as info:
        attrs.evolve(health, may_apply_memory=False)
    assert info.value.path == "$.may_apply_memory"
    tampered = as_plain(health)
    tampered["health_state"] = "applied_verified"
    with pytest.raises(RecordValidationError):
        wire.load(copy.deepcopy(tampered))


# -- property: consistent observations follow the precedence exactly ---------------------------


@st.composite
def _scenarios(draw: st.DrawFn) -> tuple[CorpusDeclaration, HealthObservation]:
    lifecycle = draw(st.sampled_from([CorpusLifecycle(state="active"), SUPERSEDED, RETIRED]))
    freshness = draw(
        st.sampled_from(
            [
                CorpusFreshness(mode="revision_bound", source_revision="revision:observed"),
                CorpusFreshness(mode="source_truth_bound"),
                TIME_BOUND,
            ]
        )
    )
    retrieval = CorpusRetrieval(
        index_required=draw(st.booleans()),
        readback_required=draw(st.booleans()),
        application_receipt_required=draw(st.booleans()),
    )
    corpus = _corpus(lifecycle=lifecycle, freshness=freshness, retrieval=retrieval)
    provider = draw(st.booleans())
    present = provider and draw(st.booleans())
    count = draw(st.integers(0, 3)) if present else 0
    retrieved = provider and present and draw(st.booleans())
    read_back = retrieved and count > 0 and draw(st.booleans())
    observation = HealthObservation(
        requested_project_ref=draw(st.sampled_from(["project:exact", "project:other"])),
        requested_surface=draw(st.sampled_from(["issue_fix.routing", "content_ops.draft"])),
        current_source_revision=draw(
            st.sampled_from([None, "revision:observed", "revision:newer"])
        ),
        freshness_window_satisfied=draw(st.booleans()),
        provider_available=provider,
        corpus_present=present,
        record_count=count,
        index_present=provider and draw(st.booleans()),
        retrieval_query_succeeded=retrieved,
        result_readback_verified=read_back,
        memory_applied_with_receipt=read_back and draw(st.booleans()),
    )
    return corpus, observation


def _expected(corpus: CorpusDeclaration, obs: HealthObservation) -> tuple[str, str]:
    """Reference §4's table, restated as data: the first true condition wins."""
    declared = corpus.freshness.source_revision
    table = [
        (obs.requested_project_ref != "project:exact", "wrong_project",
         "requested_project_outside_corpus_scope"),
        (obs.requested_surface != "issue_fix.routing", "wrong_surface",
         "requested_surface_outside_corpus_scope"),
        (not obs.provider_available, "unavailable", "provider_unavailable"),
        (not obs.corpus_present, "unavailable", "corpus_missing"),
        (obs.record_count == 0, "empty", "corpus_present_without_records"),
        (corpus.lifecycle.state == "superseded", "stale", "lifecycle_superseded"),
        (corpus.lifecycle.state == "retired", "stale", "lifecycle_retired"),
        (declared is not None and obs.current_source_revision != declared, "stale",
         "source_revision_mismatch_or_unverified"),
        (not obs.freshness_window_satisfied, "stale", "freshness_window_unsatisfied"),
        (corpus.retrieval.index_required and not obs.index_present, "index_unavailable",
         "required_index_missing"),
        (not obs.retrieval_query_succeeded, "retrieval_failed",
         "retrieval_query_failed_or_not_run"),
        (corpus.retrieval.readback_required and not obs.result_readback_verified,
         "readback_unverified", "retrieval_result_not_read_back"),
        (obs.memory_applied_with_receipt, "applied_verified",
         "verified_result_has_application_receipt"),
        (True, "retrieval_verified", "verified_result_not_yet_applied"),
    ]  # fmt: skip
    return next((state, reason) for hit, state, reason in table if hit)


@given(_scenarios())
def test_classifier_matches_the_restated_precedence(
    scenario: tuple[CorpusDeclaration, HealthObservation],
) -> None:
    corpus, observation = scenario
    health = classify_health(corpus, observation)
    assert (health.health_state, health.reason_codes[0]) == _expected(corpus, observation)
    assert health.memory_patch_authority is False
    assert health.external_write_authorized is False
    assert health.raw_memory_captured is False
    # Eligible for advisory use only where recall would serve the memory.
    assert health.may_apply_memory is (
        health.health_state in {"retrieval_verified", "applied_verified"}
        and corpus.class_id not in {"run_bound_reward", "working_context"}
        and observation.result_readback_verified
    )
    # Every pipeline observation is echoed unchanged.
    assert health.pipeline.record_count == observation.record_count
    assert health.pipeline.index_present == observation.index_present
    assert health.pipeline.index_required == corpus.retrieval.index_required
    assert health.pipeline.memory_applied_with_receipt == observation.memory_applied_with_receipt


@given(
    st.fixed_dictionaries(
        {
            "provider_available": st.booleans(),
            "corpus_present": st.booleans(),
            "record_count": st.integers(0, 2),
            "index_present": st.booleans(),
            "retrieval_query_succeeded": st.booleans(),
            "result_readback_verified": st.booleans(),
            "memory_applied_with_receipt": st.booleans(),
        }
    )
)
def test_observation_is_accepted_exactly_when_consistent(flags: dict[str, Any]) -> None:
    later = ("corpus_present", "record_count", "index_present", "retrieval_query_succeeded")
    consistent = (
        (flags["provider_available"] or not any(flags[name] for name in later))
        and not (flags["record_count"] > 0 and not flags["corpus_present"])
        and not (
            flags["retrieval_query_succeeded"]
            and not (flags["provider_available"] and flags["corpus_present"])
        )
        and not (flags["result_readback_verified"] and not flags["retrieval_query_succeeded"])
        and not (flags["result_readback_verified"] and flags["record_count"] == 0)
        and not (flags["memory_applied_with_receipt"] and not flags["result_readback_verified"])
    )
    if consistent:
        assert _observation(**flags).record_count == flags["record_count"]
    else:
        with pytest.raises(RecordValidationError) as info:
            _observation(**flags)
        assert info.value.code == "contradictory_observation"


@pytest.mark.parametrize(
    ("call", "path"),
    [
        (lambda c, o: classify_health(wire.dump(c), o), "$.corpus"),
        (lambda c, o: classify_health(c, wire.dump(o)), "$.observation"),
        (lambda c, o: classify_request({"corpus": c, "observation": o}), "$"),
    ],
)
def test_a_mapping_where_a_record_belongs_is_a_typed_error(call: Any, path: str) -> None:
    request = health_case("retrieval-verified")
    with pytest.raises(RecordValidationError) as caught:
        call(request.corpus, request.observation)
    assert (caught.value.path, caught.value.code) == (path, "wrong_type")


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("privacy", {"visibility": "public_safe", "raw_content_in_registry": True}),
        ("lifecycle", {"state": "active"}),
        ("scope", None),
        ("freshness", "source_truth_bound"),
    ],
)
def test_a_declarations_nested_blocks_must_be_records(field: str, value: Any) -> None:
    """A dict privacy block saying raw content is in the registry passed every rule."""
    from reward_memory.registry import reference_corpus

    with pytest.raises(RecordValidationError) as caught:
        attrs.evolve(reference_corpus("distilled_experiences"), **{field: value})
    assert (caught.value.path, caught.value.code) == (f"$.{field}", "wrong_type")


def test_a_registrys_nested_blocks_must_be_records() -> None:
    from reward_memory.registry import build_registry, reference_registry

    for field in ("maintenance_contract", "provider_alignment", "class_coverage"):
        with pytest.raises(RecordValidationError) as caught:
            attrs.evolve(reference_registry(), **{field: {"write_rule": "anyone_may_write"}})
        assert caught.value.path == f"$.{field}"
    with pytest.raises(RecordValidationError) as caught:
        build_registry(None)  # type: ignore[arg-type]
    assert (caught.value.path, caught.value.code) == ("$.corpora", "wrong_type")
