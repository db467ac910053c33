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
