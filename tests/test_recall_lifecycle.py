"""Lifecycle across records and corpora (issue item 4).

Contract sentences protected here:

- "A revocation, supersession or retirement is either complete and in force, or
  invalid: no 'half-revoked' record is live."
- "When a returned record supersedes another returned record, the superseded one
  is dropped from the session (and counted)."
- "A time-bound corpus ages its records too: a record older than
  ``max_age_seconds`` at ``now`` is not recalled."
- DESIGN.md §6: "Expired, superseded, revoked and retired material never reaches a model."
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from _recall_support import (
    NOW,
    active_record,
    binding,
    checkpoint,
    corpus,
    request,
    store,
    tampered,
)
from reward_memory.errors import RecordValidationError
from reward_memory.guarded_recall import RecallSession, recall
from reward_memory.records.envelope import (
    LIFECYCLE_STATES,
    Confidence,
    DurableEnvelope,
    Expiry,
    Privacy,
    RecordAuthority,
    RecordScope,
    RecordSource,
    Revocation,
    Supersession,
)
from reward_memory.testing import InMemoryProvider

LIVE = frozenset({"observed", "candidate", "active"})


def _envelope(**changes: Any) -> DurableEnvelope:
    values: dict[str, Any] = {
        "class_id": "soft_preference",
        "source": RecordSource(
            source_kind="maintainer_feedback",
            source_ref="review:1",
            actor_ref="actor:maintainer",
            observed_at="2026-02-01T00:00:00Z",
        ),
        "scope": RecordScope(workspace_ref="w:1", project_ref="p:1", surface_ids=("a.b",)),
        "authority": RecordAuthority(level="advisory"),
        "confidence": Confidence(level="high", basis="explicit review"),
        "lifecycle_state": "active",
        "privacy": Privacy(visibility="workspace", retention_class="durable_until_revoked"),
    }
    values.update(changes)
    return DurableEnvelope(**values)


def _run(provider: InMemoryProvider, **overrides: Any) -> RecallSession:
    return recall(
        overrides.pop("asked", request()),
        corpus=overrides.pop("declared", corpus()),
        checkpoint=checkpoint(),
        binding=binding(),
        provider=provider,
        now=overrides.pop("now", NOW),
    )


# -- no half-revoked, half-superseded or half-retired record --------------------------------------


HALF: list[tuple[str, dict[str, Any], str]] = [
    (
        "revoker_without_time",
        {"lifecycle_state": "revoked", "revocation": Revocation(revoked_by_ref="operator:a")},
        "$.revocation.revoked_at",
    ),
    (
        "time_without_revoker",
        {"revocation": Revocation(revoked_at="2026-02-15T00:00:00Z")},
        "$.revocation.revoked_at",
    ),
    (
        "reason_without_revocation",
        {"revocation": Revocation(reason="withdrawn by the maintainer")},
        "$.revocation.reason",
    ),
    (
        "active_but_revoked",
        {"revocation": Revocation(revoked_by_ref="operator:a", revoked_at="2026-02-15T00:00:00Z")},
        "$.revocation.revoked_by_ref",
    ),
    (
        "active_but_superseded",
        {"supersession": Supersession(superseded_by_ref="candidate:next")},
        "$.supersession.superseded_by_ref",
    ),
    (
        "active_but_retired",
        {"expiry": Expiry(retired_reason="obsolete")},
        "$.expiry.retired_reason",
    ),
    (
        "candidate_but_superseded",
        {
            "lifecycle_state": "candidate",
            "supersession": Supersession(superseded_by_ref="candidate:next"),
        },
        "$.supersession.superseded_by_ref",
    ),
]


@pytest.mark.parametrize(("name", "changes", "path"), HALF, ids=[h[0] for h in HALF])
def test_half_lifecycle_changes_are_invalid(name: str, changes: dict[str, Any], path: str) -> None:
    """No "half-revoked" record: construction raises a typed, located error."""
    del name
    with pytest.raises(RecordValidationError) as info:
        _envelope(**changes)
    assert (info.value.code, info.value.path) == ("inconsistent_lifecycle", path)


def test_complete_changes_are_valid() -> None:
    _envelope(
        lifecycle_state="revoked",
        revocation=Revocation(
            revoked_by_ref="operator:a", revoked_at="2026-02-15T00:00:00Z", reason="withdrawn"
        ),
    )
    # Superseded, then revoked: the revocation is in force, the lineage kept.
    _envelope(
        lifecycle_state="revoked",
        revocation=Revocation(revoked_by_ref="operator:a", revoked_at="2026-02-15T00:00:00Z"),
        supersession=Supersession(superseded_by_ref="candidate:next"),
    )
    _envelope(lifecycle_state="retired", expiry=Expiry(retired_reason="obsolete"))


_MAYBE_TOKEN = st.sampled_from([None, "operator:a"])
_MAYBE_TIME = st.sampled_from([None, "2026-02-15T00:00:00Z"])


@given(
    state=st.sampled_from(LIFECYCLE_STATES),
    revoker=_MAYBE_TOKEN,
    revoked_at=_MAYBE_TIME,
    reason=st.sampled_from([None, "withdrawn"]),
    superseded_by=st.sampled_from([None, "candidate:next"]),
    retired=st.sampled_from([None, "obsolete"]),
    expires=_MAYBE_TIME,
)
def test_every_buildable_envelope_is_complete_and_in_force(
    state: str,
    revoker: str | None,
    revoked_at: str | None,
    reason: str | None,
    superseded_by: str | None,
    retired: str | None,
    expires: str | None,
) -> None:
    """Invariant: whatever builds is either live with no end marker, or carries its marker whole."""
    try:
        built = _envelope(
            lifecycle_state=state,
            revocation=Revocation(revoked_by_ref=revoker, revoked_at=revoked_at, reason=reason),
            supersession=Supersession(superseded_by_ref=superseded_by),
            expiry=Expiry(expires_at=expires, retired_reason=retired),
        )
    except RecordValidationError as exc:
        refused: str | None = exc.code
    else:
        refused = None
    if refused is not None:
        assert refused == "inconsistent_lifecycle"
        return
    revocation = built.revocation
    complete = revocation.revoked_by_ref is not None and revocation.revoked_at is not None
    partial = any(v is not None for v in (revoker, revoked_at, reason))
    assert (built.lifecycle_state == "revoked") == complete
    assert complete or not partial
    if built.lifecycle_state in LIVE:
        assert built.supersession.superseded_by_ref is None
        assert built.expiry.retired_reason is None


HALF_STORED: list[tuple[str, tuple[str, ...], Any]] = [
    ("active_with_revoker", ("revocation", "revoked_by_ref"), "operator:a"),
    ("active_with_revoked_at", ("revocation", "revoked_at"), "2026-02-15T00:00:00Z"),
    ("active_with_superseded_by", ("supersession", "superseded_by_ref"), "candidate:next"),
    ("active_with_retired_reason", ("expiry", "retired_reason"), "obsolete"),
]


@pytest.mark.parametrize(("name", "path", "value"), HALF_STORED, ids=[h[0] for h in HALF_STORED])
def test_a_stored_half_change_is_never_recalled(
    name: str, path: tuple[str, ...], value: Any
) -> None:
    """A record a careless writer left half-revoked is skipped, not recalled as live."""
    del name
    provider = InMemoryProvider()
    store(provider, tampered(active_record(1), path, value))
    session = _run(provider)
    assert session.status == "empty"
    assert session.items == ()


# -- supersession inside one session ---------------------------------------------------------------


def _candidate(index: int) -> str:
    return f"candidate:{index:020x}"


def _activation(index: int) -> str:
    return f"activation:{index:020x}"


@pytest.mark.parametrize("order", ["superseded_first", "superseding_first"])
@pytest.mark.parametrize("by", ["candidate_ref", "activation_ref"])
def test_a_record_superseded_by_another_returned_record_is_dropped(order: str, by: str) -> None:
    """ "When a returned record supersedes another returned record, the superseded one is
    dropped from the session (and counted)" -- whichever came first, by either ref."""
    provider = InMemoryProvider()
    named = _candidate(1) if by == "candidate_ref" else _activation(1)
    old = active_record(1)
    new = active_record(2, supersedes=(named,))
    for record in (old, new) if order == "superseded_first" else (new, old):
        store(provider, record)
    session = _run(provider)
    assert [item.candidate_ref for item in session.items] == [_candidate(2)]
    assert session.superseded_dropped == 1
    assert session.packet.superseded_dropped_count == 1
    assert session.packet.result_count == 1
    assert [r.candidate_ref for r in session.packet.results] == [_candidate(2)]


def test_a_record_superseded_by_its_provider_ref_is_dropped() -> None:
    """The superseded record may also be named by the ref it is stored under."""
    provider = InMemoryProvider()
    old_ref = store(provider, active_record(1))
    store(provider, active_record(2, supersedes=(old_ref,)))
    session = _run(provider)
    assert [item.candidate_ref for item in session.items] == [_candidate(2)]
    assert session.superseded_dropped == 1
    assert session.packet.superseded_dropped_count == 1


def test_superseding_an_unreturned_record_drops_nothing() -> None:
    provider = InMemoryProvider()
    store(provider, active_record(1))
    store(provider, active_record(2, supersedes=(_candidate(9),)))
    session = _run(provider)
    assert {item.candidate_ref for item in session.items} == {_candidate(1), _candidate(2)}
    assert session.superseded_dropped == 0
    assert session.packet.superseded_dropped_count == 0


def test_a_record_naming_itself_is_not_dropped_by_itself() -> None:
    provider = InMemoryProvider()
    store(provider, active_record(1, supersedes=(_candidate(1),)))
    session = _run(provider)
    assert session.status == "completed"
    assert session.superseded_dropped == 0
    assert session.packet.superseded_dropped_count == 0


def test_mutual_supersession_drops_both_and_the_recall_is_empty() -> None:
    provider = InMemoryProvider()
    store(provider, active_record(1, supersedes=(_candidate(2),)))
    store(provider, active_record(2, supersedes=(_candidate(1),)))
    session = _run(provider)
    assert session.status == "empty"
    assert session.items == ()
    assert session.superseded_dropped == 2
    assert session.packet.superseded_dropped_count == 2


@given(
    links=st.lists(
        st.tuples(st.integers(0, 4), st.integers(0, 4)).filter(lambda pair: pair[0] != pair[1]),
        max_size=8,
    ),
    limit=st.integers(1, 8),
)
def test_no_record_superseded_by_another_returned_record_reaches_the_model(
    links: list[tuple[int, int]], limit: int
) -> None:
    """Invariant: no item of a session is superseded by another item of it, and every record
    dropped for that is counted."""
    supersedes: dict[int, set[int]] = {i: set() for i in range(5)}
    for newer, older in links:
        supersedes[newer].add(older)
    provider = InMemoryProvider()
    for index in range(5):
        refs = tuple(_candidate(old) for old in sorted(supersedes[index]))
        store(provider, active_record(index, supersedes=refs))
    session = _run(provider, asked=request(limit=limit))
    kept = {item.candidate_ref for item in session.items}
    for item in session.items:
        assert not item.legacy
        others = kept - {item.candidate_ref}
        assert not others & set(item.record.supersession.supersedes_refs)  # type: ignore[union-attr]
    read_back = session.packet.provider_call_count - 1
    assert len(session.items) + session.superseded_dropped == read_back


# -- a time-bound corpus ages its records ---------------------------------------------------------


def _time_bound(max_age: int = 3600) -> Any:
    from reward_memory.records.corpus import CorpusFreshness

    return corpus(freshness=CorpusFreshness(mode="time_bound", max_age_seconds=max_age))


def _fresh_request(**changes: Any) -> Any:
    from reward_memory.records.recall import FreshnessContext

    context = FreshnessContext(source_truth_current=True, age_seconds=10)
    return request(freshness_context=context, **changes)


# NOW is 2026-03-01T12:00:00Z; max_age 3600 s.
AGES = [
    ("observed_and_activated_recently", "2026-03-01T11:30:00Z", "2026-03-01T11:40:00Z", True),
    ("exactly_max_age", "2026-03-01T11:00:00Z", "2026-03-01T11:00:00Z", True),
    ("one_second_too_old", "2026-03-01T10:59:59Z", "2026-03-01T11:30:00Z", False),
    ("activated_long_ago", "2026-03-01T11:30:00Z", "2026-02-01T00:00:00Z", False),
    ("observed_long_ago", "2026-02-01T00:00:00Z", "2026-03-01T11:30:00Z", False),
    ("born_exactly_now", "2026-03-01T12:00:00Z", "2026-03-01T12:00:00Z", True),
    # Observed and activated after now: not yet observed at now (negative age).
    ("from_after_now", "2026-03-01T13:00:00Z", "2026-03-01T13:00:00Z", False),
]


@pytest.mark.parametrize(
    ("name", "observed", "activated", "recalled"), AGES, ids=[a[0] for a in AGES]
)
def test_a_time_bound_corpus_does_not_recall_records_older_than_max_age(
    name: str, observed: str, activated: str, recalled: bool
) -> None:
    """ "A record older than max_age_seconds at now is not recalled"; its age starts at its
    earliest time (the source observation or the activation, whichever is older)."""
    del name
    provider = InMemoryProvider()
    store(provider, active_record(1, observed_at=observed, activated_at=activated))
    session = _run(provider, declared=_time_bound(), asked=_fresh_request())
    assert (session.status == "completed") is recalled


def test_aging_follows_the_injected_now() -> None:
    provider = InMemoryProvider()
    stamp = "2026-03-01T11:30:00Z"
    store(provider, active_record(1, observed_at=stamp, activated_at=stamp))
    declared = _time_bound(max_age=3600)
    assert _run(provider, declared=declared, asked=_fresh_request()).status == "completed"
    later = NOW.replace(hour=13)
    assert _run(provider, declared=declared, asked=_fresh_request(), now=later).status == "empty"


def test_other_freshness_modes_do_not_age_records() -> None:
    provider = InMemoryProvider()
    old = "2020-01-01T00:00:00Z"
    store(provider, active_record(1, observed_at=old, activated_at=old))
    assert _run(provider).status == "completed"


@pytest.mark.parametrize(
    ("revision", "recalled"),
    [("revision:a", True), (None, True), ("revision:b", False)],
)
def test_an_archive_bound_corpus_recalls_its_own_revision_or_none(
    revision: str | None, recalled: bool
) -> None:
    """As its ingest takes them: a record of another revision is not this corpus's (a
    request for revision:a used to get revision:b's memory)."""
    from reward_memory.records.corpus import CorpusFreshness
    from reward_memory.records.recall import FreshnessContext
    from reward_memory.testing import InMemoryProvider

    archived = corpus(
        freshness=CorpusFreshness(
            mode="session_archive_bound", source_revision="revision:a", max_age_seconds=None
        )
    )
    provider = InMemoryProvider()
    scope = {} if revision is None else {"revision_ref": revision}
    store(provider, active_record(0, **scope))
    asked = request(
        freshness_context=FreshnessContext(source_truth_current=True, source_revision="revision:a")
    )
    session = recall(
        asked, corpus=archived, checkpoint=checkpoint(), binding=binding(), provider=provider,
        now=NOW,
    )  # fmt: skip
    assert (len(session.items) == 1) is recalled, session.packet.status
