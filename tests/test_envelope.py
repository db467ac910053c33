"""The Stage-0 durable envelope: every field named, authority bounded by class alone."""

from __future__ import annotations

from typing import Any

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from reward_memory import wire
from reward_memory.errors import RecordValidationError
from reward_memory.records.envelope import (
    AUTHORITY_BY_CLASS,
    CLASS_IDS,
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

SOURCE = RecordSource(
    source_kind="maintainer_correction",
    source_ref="github:example/repository#42:comment:1",
    actor_ref="github:user:maintainer",
    actor_role="verified_repository_core_contributor",
    observed_at="2026-11-01T12:00:00Z",
)
SCOPE = RecordScope(
    workspace_ref="workspace:example",
    project_ref="repository:example",
    surface_ids=("issue_fix.patch_planning",),
    revision_ref="revision:abc123",
)
PRIVACY = Privacy(visibility="private", retention_class="durable_until_revoked")


def envelope(**changes: Any) -> DurableEnvelope:
    base: dict[str, Any] = {
        "class_id": "hard_policy",
        "source": SOURCE,
        "scope": SCOPE,
        "authority": RecordAuthority(
            level="constraint",
            action_scopes=("issue_fix:scope_selection",),
            checkpoint_ref="repository:authority-map",
        ),
        "confidence": Confidence(level="high", basis="verified maintainer correction"),
        "lifecycle_state": "active",
        "privacy": PRIVACY,
    }
    base.update(changes)
    return DurableEnvelope(**base)


def test_every_required_field_is_named() -> None:
    names = [field.name for field in attrs.fields(DurableEnvelope)]
    assert names[1:] == [
        "class_id",
        "source",
        "scope",
        "authority",
        "confidence",
        "lifecycle_state",
        "supersession",
        "revocation",
        "expiry",
        "privacy",
    ]


def test_round_trip_through_the_wire() -> None:
    record = envelope()
    data = wire.dump(record)
    assert data["privacy"]["raw_content_captured"] is False
    assert wire.load(data) == record


@pytest.mark.parametrize(
    ("class_id", "level"),
    [
        ("soft_preference", "constraint"),
        ("soft_preference", "veto"),
        ("procedural_experience", "veto"),
        ("run_bound_reward", "advisory"),
        ("working_context", "constraint"),
        ("hard_policy", "advisory"),
    ],
)
def test_authority_level_is_bounded_by_class(class_id: str, level: str) -> None:
    scopes = ("a:b",) if level in ("constraint", "veto") else ()
    authority = RecordAuthority(level=level, action_scopes=scopes, checkpoint_ref="auth:x")  # type: ignore[arg-type]
    with pytest.raises(RecordValidationError) as info:
        envelope(
            class_id=class_id, authority=authority, expiry=Expiry(expires_at="2027-01-01T00:00:00Z")
        )
    assert info.value.path == "$.authority.level"
    assert info.value.code == "authority_widened"


def test_advisory_authority_cannot_carry_action_scopes() -> None:
    with pytest.raises(RecordValidationError) as info:
        RecordAuthority(level="advisory", action_scopes=("repo:write",))
    assert (info.value.code, info.value.path) == ("authority_widened", "$.action_scopes")


def test_action_authority_needs_scopes_and_a_checkpoint() -> None:
    with pytest.raises(RecordValidationError, match="at least one action scope"):
        RecordAuthority(level="veto", checkpoint_ref="auth:x")
    with pytest.raises(RecordValidationError) as info:
        RecordAuthority(level="constraint", action_scopes=("a:b",))
    assert info.value.path == "$.checkpoint_ref"


@pytest.mark.parametrize(
    ("changes", "path"),
    [
        ({"lifecycle_state": "revoked"}, "$.revocation.revoked_by_ref"),
        (
            {"revocation": Revocation(revoked_by_ref="control:revoke:1")},
            "$.revocation.revoked_by_ref",
        ),
        ({"lifecycle_state": "superseded"}, "$.supersession.superseded_by_ref"),
        ({"lifecycle_state": "expired"}, "$.expiry.expires_at"),
        ({"lifecycle_state": "retired"}, "$.expiry.retired_reason"),
    ],
)
def test_lifecycle_state_agrees_with_its_references(changes: dict[str, Any], path: str) -> None:
    with pytest.raises(RecordValidationError) as info:
        envelope(**changes)
    assert info.value.path == path
    assert info.value.code == "inconsistent_lifecycle"


def test_consistent_lifecycles_are_accepted() -> None:
    envelope(
        lifecycle_state="revoked",
        revocation=Revocation(revoked_by_ref="control:r:1", revoked_at="2026-01-01T00:00:00Z"),
    )
    envelope(
        lifecycle_state="superseded", supersession=Supersession(superseded_by_ref="candidate:x")
    )
    envelope(lifecycle_state="expired", expiry=Expiry(expires_at="2026-01-01T00:00:00Z"))
    envelope(lifecycle_state="retired", expiry=Expiry(retired_reason="reviewed_retirement"))


def test_working_context_expires_or_is_revision_bound() -> None:
    advisory = RecordAuthority(level="advisory")
    unbound = attrs.evolve(SCOPE, revision_ref=None)
    with pytest.raises(RecordValidationError) as info:
        envelope(class_id="working_context", authority=advisory, scope=unbound)
    assert info.value.path == "$.expiry.expires_at"
    envelope(class_id="working_context", authority=advisory)  # revision-bound
    envelope(
        class_id="working_context",
        authority=advisory,
        scope=unbound,
        expiry=Expiry(expires_at="2026-11-01T13:00:00Z"),
    )


def test_raw_content_can_never_be_captured() -> None:
    with pytest.raises(RecordValidationError) as info:
        Privacy(visibility="private", retention_class="ephemeral", raw_content_captured=True)  # type: ignore[arg-type]
    assert info.value.path == "$.raw_content_captured"


def test_wire_rejects_unknown_nested_fields_naming_the_path() -> None:
    data = wire.dump(envelope())
    data["source"]["comment_body"] = "raw text"
    with pytest.raises(RecordValidationError) as info:
        wire.load(data)
    assert (info.value.code, info.value.path) == ("unknown_field", "$.source.comment_body")


def test_wire_names_nested_validator_failures() -> None:
    data = wire.dump(envelope())
    data["scope"]["project_ref"] = "see /home/alice/repo"
    with pytest.raises(RecordValidationError) as info:
        wire.load(data)
    assert info.value.path == "$.scope.project_ref"
    assert "/home/alice" not in str(info.value)


def test_structure_names_record_invariant_failures() -> None:
    # Schema-valid but violating a cross-field rule: the record says where.
    data = wire.dump(envelope())
    data["authority"] = {
        "level": "advisory",
        "action_scopes": ["repo:write"],
        "checkpoint_ref": None,
    }
    with pytest.raises(RecordValidationError) as info:
        wire.load(data)
    assert info.value.path == "$.authority.action_scopes"


levels = st.sampled_from(["low", "medium", "high"])
authority_levels = st.sampled_from(["evidence", "advisory", "constraint", "veto"])


@given(
    class_id=st.sampled_from(CLASS_IDS),
    level=authority_levels,
    confidence=levels,
    other_confidence=levels,
)
def test_confidence_never_changes_what_authority_is_allowed(
    class_id: str, level: str, confidence: str, other_confidence: str
) -> None:
    """Authority is decided by class alone: the same request is accepted or refused
    whatever the confidence, and an accepted one never exceeds its class's ceiling."""
    scopes = ("a:b",) if level in ("constraint", "veto") else ()
    authority = RecordAuthority(level=level, action_scopes=scopes, checkpoint_ref="auth:x")  # type: ignore[arg-type]

    def attempt(conf: str) -> bool:
        try:
            record = envelope(
                class_id=class_id,
                authority=authority,
                confidence=Confidence(level=conf, basis="basis"),  # type: ignore[arg-type]
                expiry=Expiry(expires_at="2027-01-01T00:00:00Z"),
            )
        except RecordValidationError:
            return False
        assert record.authority.level in AUTHORITY_BY_CLASS[class_id]
        if class_id != "hard_policy":
            assert record.authority.action_scopes == ()
        return True

    assert attempt(confidence) == attempt(other_confidence)


# -- time: one stored spelling per instant (issue item 12) ----------------------------------


def test_envelope_timestamps_are_stored_in_one_utc_spelling() -> None:
    """Every timestamp is normalised before it is stored or hashed: source time,
    revocation time and expiry alike, so two spellings are one envelope, one wire form."""
    spelled = envelope(
        lifecycle_state="revoked",
        source=attrs.evolve(SOURCE, observed_at="2026-11-01T13:00:00+01:00"),
        revocation=Revocation(
            revoked_by_ref="operator:x", revoked_at="2026-11-02T00:00:00.000-05:00", reason="Wrong."
        ),
        expiry=Expiry(expires_at="2027-01-01T00:00Z"),
    )
    plain = wire.dump(spelled)
    assert plain["source"]["observed_at"] == "2026-11-01T12:00:00Z"
    assert plain["revocation"]["revoked_at"] == "2026-11-02T05:00:00Z"
    assert plain["expiry"]["expires_at"] == "2027-01-01T00:00:00Z"
    assert wire.load(plain, DurableEnvelope) == spelled
    canonical = envelope(
        lifecycle_state="revoked",
        revocation=Revocation(
            revoked_by_ref="operator:x", revoked_at="2026-11-02T05:00:00Z", reason="Wrong."
        ),
        expiry=Expiry(expires_at="2027-01-01T00:00:00Z"),
    )
    assert spelled == canonical


@pytest.mark.parametrize("value", ["2026-11-01T12:00:00", "2026-11-31T12:00:00Z", 0])
def test_envelope_timestamps_refuse_naive_or_invalid_values(value: Any) -> None:
    with pytest.raises(RecordValidationError) as info:
        Revocation(revoked_by_ref="operator:x", revoked_at=value)
    assert (info.value.path, info.value.code) == ("$.revoked_at", "invalid_format")
