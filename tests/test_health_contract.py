"""Corpus health at ``now``, in agreement with recall, refusing contradictions everywhere.

Contract: DESIGN §6 "Every function that looks at time takes ``now=`` (an aware
UTC datetime) ... Expired, superseded, revoked and retired material never
reaches a model, in recall, hooks, health or evaluation alike"; issue item 4
"expired records do not count as present and fresh; a class that recall
refuses is never reported as eligible for use"; issue item 7 and the registry
seed "Contradictory observations fail validation: application requires
readback, readback requires retrieval, and retrieval requires an available
present corpus"; the health-state table ("empty: the corpus exists ... but
contains no records", "retrieval_verified: a current in-scope result was read
back").
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from reward_memory import schemas, wire
from reward_memory.errors import RecordValidationError
from reward_memory.guards.recall import NON_RECALL_CLASSES
from reward_memory.health import classify_health, classify_request, health_case
from reward_memory.records._plain import from_plain, to_plain
from reward_memory.records.corpus import (
    CorpusDeclaration,
    CorpusFreshness,
    CorpusLifecycle,
    CorpusRetrieval,
)
from reward_memory.records.envelope import CLASS_IDS
from reward_memory.records.health import (
    HEALTH_STATES,
    REASON_CODES,
    CorpusHealth,
    HealthObservation,
    HealthRequest,
)
from reward_memory.records.health import NON_RECALL_CLASSES as HEALTH_NON_RECALL
from reward_memory.registry import reference_corpus

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
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
TIME_BOUND = CorpusFreshness(mode="time_bound", max_age_seconds=3600)


def _at(delta: timedelta) -> str:
    return (NOW + delta).isoformat().replace("+00:00", "Z")


def _corpus(**changes: Any) -> CorpusDeclaration:
    return attrs.evolve(reference_corpus("distilled_experiences"), **changes)


def _observation(**changes: Any) -> HealthObservation:
    values = BASE | changes
    return HealthObservation(**{k: v for k, v in values.items() if v is not ...})


def _classify(corpus: CorpusDeclaration | None = None, **changes: Any) -> CorpusHealth:
    return classify_health(corpus or _corpus(), _observation(**changes), now=NOW)


# -- now= ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "now", [datetime(2026, 3, 1, 12, 0), "2026-03-01T12:00:00Z", 1_770_000_000, True]
)
def test_now_must_be_an_aware_datetime(now: Any) -> None:
    """ "takes now= (an aware UTC datetime)": anything else is a typed error."""
    with pytest.raises(RecordValidationError) as info:
        classify_health(_corpus(), _observation(), now=now)
    assert (info.value.path, info.value.code) == ("$.now", "wrong_type")
    with pytest.raises(RecordValidationError):
        classify_request(health_case("retrieval-verified"), now=now)


def test_now_defaults_to_the_current_time() -> None:
    past, future = "2000-01-01T00:00:00Z", "2999-01-01T00:00:00Z"
    health = classify_health(_corpus(), _observation(record_count=2, record_expires_at=[past]))
    assert health.pipeline.record_count == 1
    health = classify_health(_corpus(), _observation(record_expires_at=[future]))
    assert health.pipeline.record_count == 1


def test_an_offset_now_is_the_same_instant() -> None:
    eastern = NOW.astimezone(timezone(timedelta(hours=-5)))
    observation = _observation(record_count=2, record_expires_at=[_at(timedelta(0))])
    utc = classify_health(_corpus(), observation, now=NOW)
    assert classify_health(_corpus(), observation, now=eastern) == utc


def test_the_request_may_carry_now_and_the_argument_wins() -> None:
    request = attrs.evolve(
        health_case("retrieval-verified"),
        observation=_observation(record_count=1, record_expires_at=[_at(timedelta(hours=1))]),
        now=_at(timedelta(0)),
    )
    assert classify_request(request).health_state == "retrieval_verified"
    later = NOW + timedelta(hours=2)
    assert classify_request(request, now=later).health_state == "empty"
    packet = to_plain(request)
    assert schemas.validate(packet) == "reward_memory_corpus_health_request_v0"
    assert wire.load(packet, HealthRequest) == request


# -- expired records are not present and fresh ---------------------------------------------------


def test_expired_records_do_not_count() -> None:
    """ "expired records do not count as present and fresh" (at now, not at observation)."""
    health = _classify(
        record_count=3,
        record_expires_at=[_at(-timedelta(minutes=1)), _at(timedelta(minutes=1))],
    )
    assert health.pipeline.record_count == 2
    assert health.health_state == "retrieval_verified"
    assert health.may_apply_memory is True


def test_expiry_at_now_is_expired_as_in_recall() -> None:
    """Recall serves an item only while ``now < expires_at``; health agrees at the boundary."""
    health = _classify(record_expires_at=[_at(timedelta(0))], memory_applied_with_receipt=True)
    assert health.pipeline.record_count == 0
    assert health.health_state == "empty"


def test_a_corpus_whose_records_all_expired_is_empty_and_not_eligible() -> None:
    """Readback and application of material recall would now refuse no longer stand."""
    health = _classify(
        record_count=2,
        record_expires_at=[_at(-timedelta(days=1)), _at(-timedelta(seconds=1))],
        memory_applied_with_receipt=True,
    )
    assert (health.health_state, health.reason_codes) == (
        "empty",
        ("corpus_present_without_records",),
    )
    assert health.pipeline.record_count == 0
    assert health.pipeline.result_readback_verified is False
    assert health.pipeline.memory_applied_with_receipt is False
    assert health.may_apply_memory is False
    assert wire.load(wire.dump(health), CorpusHealth) == health


@pytest.mark.parametrize(
    ("value", "path", "code"),
    [
        ("2026-03-01T12:00:00Z", "$.record_expires_at", "wrong_type"),
        (["2026-03-01T12:00:00"], "$.record_expires_at[0]", "invalid_format"),
        (["soon"], "$.record_expires_at[0]", "invalid_format"),
        ([1], "$.record_expires_at[0]", "invalid_format"),
    ],
)
def test_record_expiries_are_timestamps(value: Any, path: str, code: str) -> None:
    with pytest.raises(RecordValidationError) as info:
        _observation(record_expires_at=value)
    assert (info.value.path, info.value.code) == (path, code)


# -- the freshness window at now ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("age", "verdict", "satisfied"),
    [
        (timedelta(minutes=10), ..., True),
        (timedelta(seconds=3600), ..., True),
        (timedelta(seconds=3601), ..., False),
        (timedelta(hours=5), True, False),  # a caller's "true" never outweighs the clock
        (timedelta(minutes=1), False, False),  # a caller's "false" is never overridden
        (-timedelta(minutes=1), ..., False),  # observed after now: no evidence of currency
    ],
)
def test_the_window_is_judged_at_now(age: timedelta, verdict: Any, satisfied: bool) -> None:
    """Recall's guard refuses a time-bound source older than max_age_seconds; health agrees."""
    health = _classify(
        _corpus(freshness=TIME_BOUND),
        current_source_revision=None,
        freshness_window_satisfied=verdict,
        source_observed_at=_at(-age),
    )
    assert health.freshness_check.freshness_window_satisfied is satisfied
    assert health.health_state == ("retrieval_verified" if satisfied else "stale")
    if not satisfied:
        assert health.reason_codes == ("freshness_window_unsatisfied",)
    assert health.may_apply_memory is satisfied


def test_a_corpus_without_a_max_age_has_no_window_to_miss() -> None:
    health = _classify(freshness_window_satisfied=..., source_observed_at=_at(-timedelta(days=9)))
    assert health.freshness_check.freshness_window_satisfied is True


def test_freshness_evidence_is_required() -> None:
    with pytest.raises(RecordValidationError) as info:
        _observation(freshness_window_satisfied=...)
    assert (info.value.path, info.value.code) == ("$.freshness_window_satisfied", "missing_field")
    with pytest.raises(RecordValidationError) as info:
        _observation(freshness_window_satisfied=1)
    assert info.value.code == "wrong_type"


def test_old_requests_stay_valid_and_new_fields_are_omitted_when_absent() -> None:
    request = health_case("retrieval-verified")
    observation = to_plain(request)["observation"]
    assert "source_observed_at" not in observation
    assert "record_expires_at" not in observation
    assert observation["freshness_window_satisfied"] is True


# -- eligibility agrees with recall -------------------------------------------------------------


def test_the_refused_classes_are_recalls_own() -> None:
    assert HEALTH_NON_RECALL == NON_RECALL_CLASSES


@pytest.mark.parametrize("class_id", CLASS_IDS)
@pytest.mark.parametrize("applied", [False, True])
def test_a_class_recall_refuses_is_never_eligible(class_id: str, applied: bool) -> None:
    """ "a class that recall refuses is never reported as eligible for use"."""
    health = _classify(_corpus(class_id=class_id), memory_applied_with_receipt=applied)
    assert health.health_state == ("applied_verified" if applied else "retrieval_verified")
    assert health.may_apply_memory is (class_id not in NON_RECALL_CLASSES)
    assert wire.load(wire.dump(health), CorpusHealth) == health
    if class_id not in NON_RECALL_CLASSES:
        forged = wire.dump(health) | {"class_id": sorted(NON_RECALL_CLASSES)[0]}
        with pytest.raises(RecordValidationError) as info:
            wire.load(forged)
        assert (info.value.code, info.value.path) == (
            "contradictory_observation",
            "$.may_apply_memory",
        )


@pytest.mark.parametrize("name", ["run_reward_overlays", "session_working_memory"])
def test_reference_corpora_recall_refuses_are_never_eligible(name: str) -> None:
    corpus = reference_corpus(name)
    observation = _observation(
        requested_project_ref=corpus.scope.project_ref,
        requested_surface=corpus.scope.surface_ids[0],
        current_source_revision=corpus.freshness.source_revision,
        memory_applied_with_receipt=True,
    )
    health = classify_health(corpus, observation, now=NOW)
    assert health.health_state == "applied_verified"
    assert health.may_apply_memory is False


def test_memory_never_read_back_is_not_eligible() -> None:
    """Recall never serves what it did not read back, even where readback is not required."""
    corpus = _corpus(
        retrieval=CorpusRetrieval(
            index_required=True, readback_required=False, application_receipt_required=False
        )
    )
    health = _classify(corpus, result_readback_verified=False)
    assert health.health_state == "retrieval_verified"  # reference §4 precedence, unchanged
    assert health.may_apply_memory is False
    assert wire.load(wire.dump(health), CorpusHealth) == health


@settings(max_examples=25)
@given(st.lists(st.none() | st.integers(-3, 3), min_size=1, max_size=6))
def test_health_counts_exactly_what_recall_would_serve(offsets: list[int | None]) -> None:
    """Health and recall judge expiry alike at the same ``now``: the present-and-fresh
    count is the number of items recall serves, and eligibility follows it."""
    import _recall_support as rs
    from reward_memory.guarded_recall import recall
    from reward_memory.testing import InMemoryProvider

    provider = InMemoryProvider()
    expiries = [None if m is None else _at(timedelta(minutes=m)) for m in offsets]
    for index, expires_at in enumerate(expiries):
        rs.store(provider, rs.active_record(index, expires_at=expires_at))
    session = recall(
        rs.request(limit=8),
        corpus=rs.corpus(),
        checkpoint=rs.checkpoint(),
        binding=rs.binding(),
        provider=provider,
        now=NOW,
    )
    inventory = provider.inventory(scope=rs.scope_of(rs.binding()))
    observation = HealthObservation(
        requested_project_ref=rs.PROJECT,
        requested_surface=rs.SURFACE,
        freshness_window_satisfied=True,
        provider_available=inventory.available,
        corpus_present=inventory.corpus_present,
        record_count=inventory.record_count,
        record_expires_at=tuple(e for e in expiries if e is not None),
        index_present=inventory.index_present,
        retrieval_query_succeeded=True,
        result_readback_verified=True,
        memory_applied_with_receipt=False,
    )
    health = classify_health(rs.corpus(), observation, now=NOW)
    assert health.pipeline.record_count == len(session.items)
    assert health.may_apply_memory is bool(session.items)
    assert health.health_state == ("retrieval_verified" if session.items else "empty")


@pytest.mark.parametrize("lifecycle", ["superseded", "retired"])
def test_an_inactive_corpus_is_never_eligible(lifecycle: str) -> None:
    state = CorpusLifecycle(
        state=lifecycle,  # type: ignore[arg-type]
        superseded_by="newer" if lifecycle == "superseded" else None,
        retirement_reason="owner" if lifecycle == "retired" else None,
    )
    health = _classify(_corpus(lifecycle=state), memory_applied_with_receipt=True)
    assert health.health_state == "stale"
    assert health.may_apply_memory is False


# -- a loaded packet may not contradict itself ---------------------------------------------------


def _packet(**changes: Any) -> dict[str, Any]:
    packet: dict[str, Any] = wire.dump(_classify(**changes))
    return packet


@pytest.mark.parametrize(
    ("base", "edit", "path"),
    [
        ({}, {"health_state": "applied_verified",
              "reason_codes": ["verified_result_has_application_receipt"]}, "$.health_state"),
        ({}, {"health_state": "empty", "reason_codes": ["corpus_present_without_records"]},
         "$.health_state"),
        ({"memory_applied_with_receipt": True},
         {"pipeline.memory_applied_with_receipt": False}, "$.health_state"),
        ({}, {"pipeline.result_readback_verified": False}, "$.may_apply_memory"),
        ({"record_count": 0, "result_readback_verified": False},
         {"pipeline.record_count": 3}, "$.health_state"),
        ({}, {"pipeline.record_count": 0}, "$.pipeline.result_readback_verified"),
        ({}, {"pipeline.provider_available": False}, "$.pipeline.corpus_present"),
        ({}, {"pipeline.corpus_present": False}, "$.pipeline.record_count"),
        ({"memory_applied_with_receipt": True}, {"pipeline.result_readback_verified": False},
         "$.pipeline.memory_applied_with_receipt"),
        ({}, {"scope_check.project_matches": False}, "$.health_state"),
        ({}, {"freshness_check.freshness_window_satisfied": False}, "$.health_state"),
        ({"current_source_revision": "revision:newer"},
         {"reason_codes": ["freshness_window_unsatisfied"]}, "$.reason_codes[0]"),
        ({}, {"may_apply_memory": False}, "$.may_apply_memory"),
        ({"record_count": 0, "result_readback_verified": False},
         {"may_apply_memory": True}, "$.may_apply_memory"),
    ],
)  # fmt: skip
def test_a_self_contradicting_packet_is_refused_on_load(
    base: dict[str, Any], edit: dict[str, Any], path: str
) -> None:
    packet = _packet(**base)
    assert wire.load(packet) is not None
    for dotted, value in edit.items():
        node = packet
        *parents, leaf = dotted.split(".")
        for parent in parents:
            node = node[parent]
        node[leaf] = value
    with pytest.raises(RecordValidationError) as info:
        wire.load(packet)
    assert (info.value.code, info.value.path) == ("contradictory_observation", path)
    with pytest.raises(RecordValidationError) as info:
        from_plain(CorpusHealth, packet)  # the constructor refuses it too
    assert info.value.code == "contradictory_observation"


def test_the_cli_judges_at_now(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``health-check --now`` makes a check reproducible; a bad one is exit 2, no traceback."""
    from reward_memory.cli import main

    request = attrs.evolve(
        health_case("retrieval-verified"),
        observation=_observation(record_expires_at=[_at(timedelta(hours=1))]),
    )
    path = tmp_path / "request.json"
    path.write_text(json.dumps(to_plain(request)), encoding="utf-8")
    argv = ["health-check", "--input", str(path), "--format", "json", "--now"]
    assert main([*argv, _at(timedelta(0))]) == 0
    assert json.loads(capsys.readouterr().out)["health_state"] == "retrieval_verified"
    assert main([*argv, _at(timedelta(hours=1))]) == 0
    assert json.loads(capsys.readouterr().out)["health_state"] == "empty"
    assert main(["health-check", "--case", "empty", "--now", _at(timedelta(0))]) == 0
    capsys.readouterr()
    assert main([*argv, "yesterday"]) == 2
    error = json.loads(capsys.readouterr().out)
    assert (error["error_code"], error["field_path"]) == ("invalid_format", "--now")


# -- properties ---------------------------------------------------------------------------------


@st.composite
def _scenarios(draw: st.DrawFn) -> tuple[CorpusDeclaration, HealthObservation]:
    """Any corpus shape, and any observation the records accept (contradictions filtered)."""
    lifecycle = draw(
        st.sampled_from(
            [
                CorpusLifecycle(state="active"),
                CorpusLifecycle(state="superseded", superseded_by="newer"),
                CorpusLifecycle(state="retired", retirement_reason="owner"),
            ]
        )
    )
    freshness = draw(
        st.sampled_from(
            [
                CorpusFreshness(mode="revision_bound", source_revision="revision:observed"),
                CorpusFreshness(mode="source_truth_bound"),
                TIME_BOUND,
            ]
        )
    )
    corpus = _corpus(
        class_id=draw(st.sampled_from(CLASS_IDS)),
        lifecycle=lifecycle,
        freshness=freshness,
        retrieval=CorpusRetrieval(
            index_required=draw(st.booleans()),
            readback_required=draw(st.booleans()),
            application_receipt_required=draw(st.booleans()),
        ),
    )
    offsets = st.integers(-7200, 7200).map(lambda s: _at(timedelta(seconds=s)))
    # Consistent by construction, stage by stage (the seed's "requires" chain).
    provider = draw(st.booleans())
    present = provider and draw(st.booleans())
    count = draw(st.integers(1, 3)) if present and draw(st.booleans()) else 0
    retrieved = present and draw(st.booleans())
    read_back = retrieved and count > 0 and draw(st.booleans())
    verdict = draw(st.sampled_from([None, True, False]))
    observed = draw(offsets if verdict is None else st.none() | offsets)
    observation = HealthObservation(
        requested_project_ref=draw(st.sampled_from(["project:exact", "project:other"])),
        requested_surface=draw(st.sampled_from(["issue_fix.routing", "content_ops.draft"])),
        current_source_revision=draw(
            st.sampled_from([None, "revision:observed", "revision:newer"])
        ),
        freshness_window_satisfied=verdict,
        source_observed_at=observed,
        provider_available=provider,
        corpus_present=present,
        record_count=count,
        record_expires_at=draw(st.none() | st.lists(offsets, max_size=count).map(tuple)),
        index_present=provider and draw(st.booleans()),
        retrieval_query_succeeded=retrieved,
        result_readback_verified=read_back,
        memory_applied_with_receipt=read_back and draw(st.booleans()),
    )
    return corpus, observation


@given(_scenarios())
def test_every_accepted_observation_gives_a_packet_that_round_trips(
    scenario: tuple[CorpusDeclaration, HealthObservation],
) -> None:
    corpus, observation = scenario
    health = classify_health(corpus, observation, now=NOW)
    data = wire.dump(health)
    assert schemas.validate(data) == "reward_memory_corpus_health_v0"
    assert wire.load(data, CorpusHealth) == health
    flags: tuple[bool, ...] = (health.memory_patch_authority, health.external_write_authorized)
    assert flags == (False, False)
    if health.may_apply_memory:
        assert corpus.class_id not in NON_RECALL_CLASSES
        assert corpus.lifecycle.state == "active"
        assert health.pipeline.result_readback_verified is True
        assert health.pipeline.record_count > 0


def _ambiguous(state: str, other: str, data: dict[str, Any]) -> bool:
    """Retrieval without readback: readback_unverified or retrieval_verified, depending on
    the corpus's readback_required, which the packet does not carry."""
    pipe = data["pipeline"]
    return (
        {state, other} == {"readback_unverified", "retrieval_verified"}
        and pipe["retrieval_query_succeeded"]
        and not pipe["result_readback_verified"]
    )


@given(_scenarios(), st.sampled_from(HEALTH_STATES), st.data())
def test_a_packet_whose_state_is_changed_is_refused(
    scenario: tuple[CorpusDeclaration, HealthObservation], other: str, data: st.DataObject
) -> None:
    corpus, observation = scenario
    packet = wire.dump(classify_health(corpus, observation, now=NOW))
    state, reason = packet["health_state"], packet["reason_codes"][0]
    new_reason = data.draw(st.sampled_from(REASON_CODES[other]))
    assume((other, new_reason) != (state, reason))
    assume(not _ambiguous(state, other, packet))
    tampered = json.loads(json.dumps(packet))
    tampered["health_state"] = other
    tampered["reason_codes"] = [new_reason]
    for may_apply in (False, True):
        tampered["may_apply_memory"] = may_apply
        with pytest.raises(RecordValidationError):
            wire.load(tampered)
