"""propose(): the golden candidate_ref, every guard reason code, strictness, time, JSON path."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _stage2 import (
    ACTOR,
    GOLDEN_REF,
    NOW,
    PROJECT,
    ROLE,
    SCOPE_SELECTION,
    advisory,
    checkpoint,
    context,
    decision,
    proposal,
    reasoning,
    scope,
    source,
)
from reward_memory import schemas, wire
from reward_memory.candidates import propose
from reward_memory.digests import legacy_json
from reward_memory.errors import RecordValidationError
from reward_memory.grammars import normalize_timestamp
from reward_memory.records.candidate import (
    REASON_CODES,
    AuthorityCheckpoint,
    Candidate,
    CandidateGuard,
    CandidatePacket,
    CandidateReasoning,
    candidate_hashed_object,
    candidate_ref_of,
    to_plain,
)

_ROOT = Path(__file__).resolve().parents[1]

# -- golden value and identity --------------------------------------------------------------


def test_golden_candidate_ref() -> None:
    packet = propose(proposal(), checkpoint(), now=NOW)
    assert packet.status == "review_ready"
    assert packet.candidate.candidate_ref == GOLDEN_REF


def test_golden_ref_is_legacy_j1_of_exactly_the_reference_object() -> None:
    hashed = {
        "target_class": "hard_policy",
        "content_summary": (
            "Keep focused fixes within the affected module unless broader evidence is present."
        ),
        "source": {
            "source_kind": "maintainer_correction",
            "source_ref": "github:example/repository#42:comment:1",
            "actor_ref": ACTOR,
            "actor_role": ROLE,
        },
        "scope": {
            "workspace_ref": "workspace:example",
            "project_ref": PROJECT,
            "surface_ids": ["issue_fix.patch_planning"],
            "revision_ref": "revision:abc123",
        },
        "guard_context": {
            "source_freshness": "current",
            "conflict_state": "clear",
            "current_artifact_verified": True,
        },
        "requested_action_scopes": [SCOPE_SELECTION],
    }
    digest = hashlib.sha256(legacy_json(hashed, "J1").encode("utf-8")).hexdigest()
    assert f"candidate:{digest[:20]}" == GOLDEN_REF
    assert candidate_hashed_object(propose(proposal(), now=NOW).candidate) == hashed


_TOKEN = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._:#-]{0,20}", fullmatch=True)
_TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp", "Zs")), min_size=1
).map(lambda text: text[:60])


@settings(max_examples=300)
@given(
    summary=_TEXT,
    refs=st.tuples(_TOKEN, _TOKEN, _TOKEN, _TOKEN, _TOKEN),
    identities=st.tuples(*(st.none() | _TOKEN for _ in range(4))),
    scopes=st.lists(_TOKEN, max_size=4, unique=True),
    verified=st.booleans(),
)
def test_candidate_ref_equals_legacy_j1_for_generated_candidates(
    summary: str,
    refs: tuple[str, ...],
    identities: tuple[str | None, ...],
    scopes: list[str],
    verified: bool,
) -> None:
    # The hand-written J1 text must be byte-identical to json.dumps(sort_keys=True).
    from reward_memory.text import find_unsafe

    if any(find_unsafe(value) for value in (summary, *refs, *scopes, *filter(None, identities))):
        return
    item = proposal(
        target_class="soft_preference",
        content_summary=summary,
        source=source(source_kind=refs[0], source_ref=refs[1], actor_ref=refs[2]),
        scope=scope(
            workspace_ref=refs[3],
            project_ref=refs[4],
            revision_ref=identities[0],
            user_ref=identities[1],
            peer_ref=identities[2],
            session_ref=identities[3],
        ),
        guard_context=context(current_artifact_verified=verified),
        requested_action_scopes=tuple(scopes),
    )
    candidate = propose(item, now=NOW).candidate
    expected = hashlib.sha256(
        legacy_json(candidate_hashed_object(candidate), "J1").encode("utf-8")
    ).hexdigest()
    assert candidate.candidate_ref == f"candidate:{expected[:20]}"


def test_reasoning_does_not_change_the_ref() -> None:
    """Reference §9.4: events differing only in reasoning are one candidate (it is the
    model's assessment of the evidence, never the claim; confidence never raises authority)."""
    base = propose(proposal(), checkpoint(), now=NOW).candidate.candidate_ref
    variants = [
        proposal(reasoning=reasoning(summary="Other words.", confidence="low")),
        proposal(reasoning=reasoning(confidence_basis="A different basis entirely.")),
    ]
    for variant in variants:
        assert propose(variant, checkpoint(), now=NOW).candidate.candidate_ref == base


def test_expiry_and_observation_change_the_ref() -> None:
    """Item 12: the ref covers how long the record lives and when its evidence was seen."""
    refs = {
        propose(variant, checkpoint(), now=NOW).candidate.candidate_ref
        for variant in (
            proposal(),
            proposal(expires_at="2030-01-01T00:00:00Z"),
            proposal(expires_at="2031-01-01T00:00:00Z"),
            proposal(observed_at="2026-01-01T00:00:00Z"),
            proposal(expires_at="2030-01-01T00:00:00Z", observed_at="2026-01-01T00:00:00Z"),
        )
    }
    assert len(refs) == 5
    assert GOLDEN_REF in refs  # the fixture without either keeps the original's ref


@pytest.mark.parametrize(
    "changed",
    [
        {"guard_context": context(conflict_state="unresolved")},
        {"requested_action_scopes": (SCOPE_SELECTION, "issue_fix:validation")},
        {"scope": scope(user_ref="user:alice")},
        {"scope": scope(revision_ref=None)},
        {"content_summary": "Another compact summary."},
        {"source": source(actor_role="reviewer")},
    ],
)
def test_hashed_fields_change_the_ref(changed: dict[str, Any]) -> None:
    assert propose(proposal(**changed), now=NOW).candidate.candidate_ref != GOLDEN_REF


def test_long_summaries_are_rejected_not_truncated() -> None:
    head = "x" * 499
    with pytest.raises(RecordValidationError) as info:
        proposal(content_summary=head + "ab")
    assert (info.value.code, info.value.path) == ("text_too_long", "$.content_summary")
    assert propose(proposal(content_summary=head + "a"), now=NOW).candidate.content_summary == (
        head + "a"
    )


def test_whitespace_is_compacted_before_hashing() -> None:
    spaced = proposal(
        content_summary="  Keep focused fixes within the affected module\n unless "
        "broader evidence   is present. "
    )
    assert propose(spaced, checkpoint(), now=NOW).candidate.candidate_ref == GOLDEN_REF


# -- the guard: each reason alone, all together, in order -----------------------------------

_ALONE: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "source_freshness_not_current": ({"guard_context": context(source_freshness="stale")}, {}),
    "unresolved_higher_authority_conflict": (
        {"guard_context": context(conflict_state="unresolved")},
        {},
    ),
    "procedural_experience_current_artifact_unverified": (
        {
            "target_class": "procedural_experience",
            "requested_action_scopes": (),
            "guard_context": context(current_artifact_verified=False),
        },
        {},
    ),
    "advisory_class_requested_action_authority": ({"target_class": "soft_preference"}, {}),
    "hard_policy_missing_action_scope": ({"requested_action_scopes": ()}, {}),
    "authority_checkpoint_unverified": ({}, {"verified": False}),
    "authority_actor_mismatch": ({}, {"actor_ref": "github:user:someone-else"}),
    "authority_actor_role_mismatch": ({}, {"actor_role": "verified_project_owner_or_operator"}),
    "actor_role_cannot_derive_hard_policy": (
        {"source": source(actor_role="reviewer")},
        {"actor_role": "reviewer"},
    ),
    "authority_project_mismatch": ({}, {"project_ref": "repository:other"}),
    "requested_action_scope_exceeds_verified_authority": (
        {"requested_action_scopes": (SCOPE_SELECTION, "issue_fix:publish")},
        {},
    ),
    "candidate_expired": ({"expires_at": "2026-03-01T12:00:00Z"}, {}),
}


def test_the_order_is_the_reference_order_plus_expiry_last() -> None:
    assert REASON_CODES[:11] == (
        "source_freshness_not_current",
        "unresolved_higher_authority_conflict",
        "procedural_experience_current_artifact_unverified",
        "advisory_class_requested_action_authority",
        "hard_policy_missing_action_scope",
        "authority_checkpoint_unverified",
        "authority_actor_mismatch",
        "authority_actor_role_mismatch",
        "actor_role_cannot_derive_hard_policy",
        "authority_project_mismatch",
        "requested_action_scope_exceeds_verified_authority",
    )
    assert REASON_CODES[-1] == "candidate_expired"
    assert set(_ALONE) == set(REASON_CODES)


@pytest.mark.parametrize("code", REASON_CODES)
def test_each_reason_code_alone(code: str) -> None:
    changes, checkpoint_changes = _ALONE[code]
    packet = propose(proposal(**changes), checkpoint(**checkpoint_changes), now=NOW)
    assert packet.guard.reason_codes == (code,)
    assert packet.status == "guard_blocked"
    assert packet.guard.passed is False
    # Blocked, and still returned whole for inspection.
    assert packet.candidate.candidate_ref.startswith("candidate:")
    schemas.validate(to_plain(packet))


def test_all_hard_policy_reasons_together_in_order() -> None:
    item = proposal(
        guard_context=context(source_freshness="unknown", conflict_state="unresolved"),
        source=source(actor_role="reviewer"),
        requested_action_scopes=("issue_fix:publish",),
        expires_at="2020-01-01T00:00:00+00:00",
    )
    gate = AuthorityCheckpoint(
        verified=True,
        source_ref=None,
        actor_ref="user:x",
        actor_role="verified_repository_core_contributor",
        project_ref="repository:other",
        action_scopes=(),
    )
    reasons = propose(item, gate, now=NOW).guard.reason_codes
    assert reasons == tuple(code for code in REASON_CODES if code not in _CLASS_EXCLUSIVE)


# Codes that cannot co-occur with the hard-policy set: two are for other classes, and a
# hard policy without scopes cannot request more than its checkpoint holds.
_CLASS_EXCLUSIVE = (
    "procedural_experience_current_artifact_unverified",
    "advisory_class_requested_action_authority",
    "hard_policy_missing_action_scope",
)


def test_all_hard_policy_reasons_with_no_scope_requested() -> None:
    item = proposal(
        guard_context=context(source_freshness="stale", conflict_state="unresolved"),
        source=source(actor_role="reviewer"),
        requested_action_scopes=(),
        expires_at="2026-03-01T11:59:59Z",
    )
    reasons = propose(item, None, now=NOW).guard.reason_codes
    assert reasons == (
        "source_freshness_not_current",
        "unresolved_higher_authority_conflict",
        "hard_policy_missing_action_scope",
        "authority_checkpoint_unverified",
        "authority_actor_mismatch",
        "authority_actor_role_mismatch",
        "actor_role_cannot_derive_hard_policy",
        "authority_project_mismatch",
        "candidate_expired",
    )


def test_all_procedural_reasons_together_in_order() -> None:
    item = advisory(
        "procedural_experience",
        guard_context=context(
            source_freshness="stale", conflict_state="unresolved", current_artifact_verified=False
        ),
        requested_action_scopes=("issue_fix:scope_selection",),
        expires_at="2000-01-01T00:00:00Z",
    )
    assert propose(item, checkpoint(), now=NOW).guard.reason_codes == (
        "source_freshness_not_current",
        "unresolved_higher_authority_conflict",
        "procedural_experience_current_artifact_unverified",
        "advisory_class_requested_action_authority",
        "candidate_expired",
    )


def test_advisory_classes_ignore_the_checkpoint_but_never_gain_scopes() -> None:
    for target_class in ("soft_preference", "procedural_experience"):
        assert propose(advisory(target_class), None, now=NOW).status == "review_ready"
        blocked = propose(
            advisory(target_class, requested_action_scopes=("x:y",)),
            checkpoint(action_scopes=("x:y",)),
            now=NOW,
        )
        assert blocked.guard.reason_codes == ("advisory_class_requested_action_authority",)


def test_hard_policy_without_a_checkpoint_is_blocked() -> None:
    # The checkpoint is never derived from the proposal's own claims.
    packet = propose(proposal(), now=NOW)
    assert packet.status == "guard_blocked"
    assert packet.authority_checkpoint == AuthorityCheckpoint(verified=False)
    assert "authority_checkpoint_unverified" in packet.guard.reason_codes


def test_a_subset_of_the_checkpoint_scopes_passes() -> None:
    gate = checkpoint(action_scopes=(SCOPE_SELECTION, "issue_fix:validation", "z:z"))
    assert propose(proposal(), gate, now=NOW).status == "review_ready"


def test_confidence_never_changes_the_guard() -> None:
    outcomes = {
        propose(proposal(reasoning=reasoning(confidence=level)), checkpoint(), now=NOW).guard
        for level in ("low", "medium", "high")
    }
    assert len(outcomes) == 1


# -- time ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expires_at", "blocked"),
    [
        ("2026-03-01T12:00:00Z", True),  # equal to now: not after now
        ("2026-03-01T13:00:00+01:00", True),  # the same instant, another offset
        ("2026-03-01T11:00:00Z", True),
        ("2026-03-01T12:00:01Z", False),
        ("2026-03-01T12:00:00-00:30", False),
    ],
)
def test_expiry_is_compared_as_an_instant(expires_at: str, blocked: bool) -> None:
    packet = propose(proposal(expires_at=expires_at), checkpoint(), now=NOW)
    assert ("candidate_expired" in packet.guard.reason_codes) is blocked
    # Stored in the one UTC spelling (item 12): the instant is kept, not the offset.
    assert packet.candidate.lifecycle.expires_at == normalize_timestamp(expires_at)


def test_default_now_is_the_current_time() -> None:
    soon = (datetime.now(NOW.tzinfo) + timedelta(hours=1)).isoformat()
    assert propose(proposal(expires_at=soon), checkpoint()).status == "review_ready"
    past = (datetime.now(NOW.tzinfo) - timedelta(seconds=1)).isoformat()
    assert propose(proposal(expires_at=past), checkpoint()).guard.reason_codes == (
        "candidate_expired",
    )


def test_a_naive_now_is_refused() -> None:
    with pytest.raises(RecordValidationError) as info:
        propose(proposal(), checkpoint(), now=datetime(2026, 1, 1))
    assert info.value.path == "now"


# -- structural rejection --------------------------------------------------------------------


def test_raw_content_must_be_false_and_is_checked_first() -> None:
    with pytest.raises(RecordValidationError) as info:
        proposal(raw_content_captured=True, content_summary="x" * 900)
    assert (info.value.code, info.value.path) == ("raw_content_captured", "$.raw_content_captured")
    for value in (0, "false", None):
        with pytest.raises(RecordValidationError) as info:
            proposal(raw_content_captured=value)
        assert info.value.path == "$.raw_content_captured"


@pytest.mark.parametrize("target_class", ["working_context", "run_bound_reward", "nope"])
def test_only_durable_reusable_classes_are_targets(target_class: str) -> None:
    with pytest.raises(RecordValidationError) as info:
        proposal(target_class=target_class)
    assert info.value.path == "$.target_class"


@pytest.mark.parametrize(
    ("build", "path"),
    [
        (lambda: proposal(content_summary="send it to /home/alice/notes.txt"), "$.content_summary"),
        (
            lambda: proposal(content_summary="token=ghp_abcdefghijklmnopqrstuvwxyz0123"),
            "$.content_summary",
        ),
        (lambda: source(source_ref="see /Users/bob/private"), "$.source_ref"),
        (lambda: source(actor_ref="x:/home/u/y"), "$.actor_ref"),
        (lambda: reasoning(confidence_basis="api_key=abcd1234efgh"), "$.confidence_basis"),
        (lambda: checkpoint(source_ref="file:///etc/passwd"), "$.source_ref"),
    ],
)
def test_unsafe_text_and_identifiers_are_refused(build: Any, path: str) -> None:
    with pytest.raises(RecordValidationError) as info:
        build()
    assert info.value.path == path
    assert "ghp_" not in info.value.message
    assert "/home" not in info.value.message


def test_action_scope_lists_are_sorted_bounded_and_unique() -> None:
    assert proposal(requested_action_scopes=["b:b", "a:a"]).requested_action_scopes == (
        "a:a",
        "b:b",
    )
    with pytest.raises(RecordValidationError) as info:
        proposal(requested_action_scopes=("a:a", "a:a"))
    assert (info.value.code, info.value.path) == ("duplicate_item", "$.requested_action_scopes[1]")
    with pytest.raises(RecordValidationError) as info:
        proposal(requested_action_scopes=tuple(f"s:{i}" for i in range(13)))
    assert info.value.path == "$.requested_action_scopes"
    with pytest.raises(RecordValidationError):
        checkpoint(action_scopes="a:a")


def test_lone_surrogates_are_refused() -> None:
    with pytest.raises(RecordValidationError) as info:
        proposal(content_summary="broken \ud800 text")
    assert (info.value.code, info.value.path) == ("unsafe_character", "$.content_summary")
    plain = to_plain(proposal())
    plain["source"]["source_ref"] = json.loads('"ref \\udc00"')
    with pytest.raises(RecordValidationError) as info:
        propose(plain, now=NOW)
    assert info.value.path == "$.source.source_ref"
    assert propose(proposal(content_summary="Unicode ✓ is fine"), now=NOW).candidate


def test_sets_and_iterators_are_not_lists() -> None:
    for value in ({"a:a"}, iter(["a:a"]), "a:a"):
        with pytest.raises(RecordValidationError) as info:
            proposal(requested_action_scopes=value)
        assert info.value.code == "wrong_type"


def test_confidence_always_names_a_basis() -> None:
    """Seeds: confidence has "a required basis". The original's reasoning is {summary,
    confidence}: such input is read (interop), and the record names a fixed basis saying
    none was stated -- a blank one is refused."""
    from reward_memory.records._candidate_inputs import UNSTATED_BASIS

    assert CandidateReasoning(summary="s", confidence="high").confidence_basis == UNSTATED_BASIS
    with pytest.raises(RecordValidationError) as info:
        reasoning(confidence_basis="   ")
    assert info.value.path == "$.confidence_basis"


def test_nested_records_must_be_records() -> None:
    with pytest.raises(RecordValidationError) as info:
        proposal(source={"source_kind": "x"})
    assert (info.value.code, info.value.path) == ("wrong_type", "$.source")


def test_checkpoint_booleans_are_strict() -> None:
    with pytest.raises(RecordValidationError):
        checkpoint(verified=1)


# -- records: invariants, round trips, schema -----------------------------------------------


def test_the_packet_round_trips_and_validates() -> None:
    packet = propose(proposal(expires_at="2030-01-01T00:00:00Z"), checkpoint(), now=NOW)
    plain = to_plain(packet)
    assert plain == wire.dump(packet)
    assert schemas.validate(plain) == "reward_memory_candidate_v0"
    assert wire.load(plain, type(packet)) == packet
    assert plain["available_review_decisions"] == ["accept", "edit", "no_write", "reject", "retire"]
    assert plain["candidate"]["lifecycle"] == {
        "state": "candidate",
        "supersedes_refs": [],
        "expires_at": "2030-01-01T00:00:00Z",
    }
    assert "observed_at" not in plain["candidate"]
    for flag in (
        "candidate_persisted",
        "provider_write_performed",
        "external_writes_performed",
        "raw_content_captured",
    ):
        assert plain[flag] is False
    assert plain["guard"]["rule"].startswith("model_proposes_meaning")


def test_a_tampered_candidate_ref_does_not_load() -> None:
    plain = to_plain(propose(proposal(), checkpoint(), now=NOW))
    plain["candidate"]["content_summary"] = "Something the reviewer never saw."
    with pytest.raises(RecordValidationError) as info:
        wire.load(plain)
    assert info.value.code == "digest_mismatch"


def test_guard_and_status_must_agree() -> None:
    with pytest.raises(RecordValidationError):
        CandidateGuard(passed=True, reason_codes=("candidate_expired",))
    with pytest.raises(RecordValidationError):
        CandidateGuard(passed=False, reason_codes=("candidate_expired", "authority_actor_mismatch"))
    with pytest.raises(RecordValidationError):
        CandidateGuard(passed=False, reason_codes=("not_a_code",))
    packet = propose(proposal(), checkpoint(), now=NOW)
    with pytest.raises(RecordValidationError):
        attrs.evolve(packet, status="guard_blocked")
    candidate: Candidate = packet.candidate
    with pytest.raises(RecordValidationError):
        attrs.evolve(candidate, candidate_ref="candidate:00000000000000000000")
    assert (
        candidate_ref_of(
            target_class=candidate.target_class,
            content_summary=candidate.content_summary,
            source=candidate.source,
            scope=candidate.scope,
            guard_context=candidate.guard_context,
            requested_action_scopes=candidate.requested_action_scopes,
        )
        == GOLDEN_REF
    )


# -- the JSON path ---------------------------------------------------------------------------


def _plain_proposal() -> dict[str, Any]:
    plain: dict[str, Any] = to_plain(proposal())
    return plain


def test_a_dict_proposal_is_validated_then_gives_the_same_packet() -> None:
    packet = propose(_plain_proposal(), to_plain(checkpoint()), now=NOW)
    assert isinstance(packet, CandidatePacket)
    assert packet == propose(proposal(), checkpoint(), now=NOW)


@pytest.mark.parametrize(
    ("mutate", "code", "path"),
    [
        (lambda d: d.update(comment_body="raw"), "unknown_field", "$.comment_body"),
        (lambda d: d["source"].update(raw="raw"), "unknown_field", "$.source.raw"),
        (lambda d: d["reasoning"].pop("confidence"), "missing_field", "$.reasoning.confidence"),
        (lambda d: d.update(raw_content_captured=True), "invalid_value", "$.raw_content_captured"),
        (lambda d: d.update(content_summary="x" * 501), "text_too_long", "$.content_summary"),
        (
            lambda d: d["guard_context"].update(current_artifact_verified="true"),
            "wrong_type",
            "$.guard_context.current_artifact_verified",
        ),
        (lambda d: d.pop("schema_version"), "schema_version_missing", "$.schema_version"),
        (
            lambda d: d["scope"].update(surface_ids=["Not.A.Surface"]),
            "invalid_format",
            "$.scope.surface_ids[0]",
        ),
        (
            lambda d: d.update(content_summary="look in /home/alice/x"),
            "unsafe_text",
            "$.content_summary",
        ),
        (
            lambda d: d["scope"].update(user_ref="ghp_abcdefghijklmnopqrstuvwxyz0123"),
            "unsafe_text",
            "$.scope.user_ref",
        ),
    ],
)
def test_dict_input_errors_name_the_field(mutate: Any, code: str, path: str) -> None:
    plain = _plain_proposal()
    mutate(plain)
    with pytest.raises(RecordValidationError) as info:
        propose(plain, checkpoint(), now=NOW)
    assert (info.value.code, info.value.path) == (code, path)


def test_a_dict_checkpoint_is_strict_too() -> None:
    plain = to_plain(checkpoint())
    plain["granted_by"] = "someone"
    with pytest.raises(RecordValidationError) as info:
        propose(proposal(), plain, now=NOW)
    # Named under its argument: not mistaken for a proposal field of the same name.
    assert info.value.path == "checkpoint.granted_by"
    plain = to_plain(checkpoint())
    plain["verified"] = "yes"
    with pytest.raises(RecordValidationError) as info:
        propose(proposal(), plain, now=NOW)
    assert info.value.path == "checkpoint.verified"
    with pytest.raises(RecordValidationError):
        propose(proposal(), "verified", now=NOW)  # type: ignore[arg-type]


def test_the_wrong_packet_is_refused() -> None:
    with pytest.raises(RecordValidationError) as info:
        propose(to_plain(checkpoint()), now=NOW)
    assert info.value.code == "schema_version_unsupported"


def test_the_typed_path_touches_neither_jsonschema_nor_cattrs() -> None:
    code = (
        "import sys; sys.path.insert(0, 'tests')\n"
        "from _stage2 import proposal, checkpoint\n"
        "from reward_memory.candidates import propose, review\n"
        "from _stage2 import decision\n"
        "packet = propose(proposal(), checkpoint())\n"
        "review(review(packet, decision('accept')), decision('retire'))\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('jsonschema', 'cattrs')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=_ROOT
    )
    assert json.loads(out.stdout.replace("'", '"')) == []


# -- propose and review packets are the validating constructors' ------------------------------
#
# propose() and review() set their packets without re-running the validators:
# every row of the decision table, blocked or passing, fresh or reviewed again,
# must be a packet the validating constructors build identically.


@settings(max_examples=300, deadline=None)
@given(
    freshness=st.sampled_from(["current", "stale", "unknown"]),
    conflict=st.sampled_from(["clear", "unresolved"]),
    verified_artifact=st.booleans(),
    target_class=st.sampled_from(["hard_policy", "soft_preference", "procedural_experience"]),
    scopes=st.sampled_from([(), ("issue_fix:scope_selection",), ("issue_fix:other",)]),
    expires_at=st.sampled_from([None, "2030-01-01T00:00:00Z", "2026-02-01T00:00:00Z"]),
    verified=st.booleans(),
    decisions=st.lists(
        st.sampled_from(["accept", "edit", "reject", "retire", "no_write"]), min_size=1, max_size=3
    ),
    with_checkpoint=st.booleans(),
)
def test_every_packet_is_the_validating_constructors_packet(
    freshness: str,
    conflict: str,
    verified_artifact: bool,
    target_class: str,
    scopes: tuple[str, ...],
    expires_at: str | None,
    verified: bool,
    decisions: list[str],
    with_checkpoint: bool,
) -> None:
    item = proposal(
        target_class=target_class,
        requested_action_scopes=scopes,
        expires_at=expires_at,
        guard_context=context(
            source_freshness=freshness,
            conflict_state=conflict,
            current_artifact_verified=verified_artifact,
        ),
    )
    gate = checkpoint(verified=verified)
    packet: Any = propose(item, gate, now=NOW)
    assert attrs.evolve(packet) == packet
    assert wire.load(wire.dump(packet)) == packet
    for kind in decisions:
        reviewed = _reviewed(packet, kind, gate if with_checkpoint else None)
        if isinstance(reviewed, str):
            assert reviewed == "invalid_state"  # a decision the record's state does not take
            continue
        packet = reviewed
        assert attrs.evolve(packet) == packet
        assert attrs.evolve(packet.review) == packet.review
        assert wire.load(wire.dump(packet)) == packet


def _reviewed(packet: Any, kind: str, gate: Any) -> Any:
    from reward_memory.candidates import review

    try:
        return review(packet, decision(kind), checkpoint=gate, now=NOW)
    except RecordValidationError as exc:
        return exc.code


_ANY_TEXT = st.text(max_size=12)  # quotes, backslashes, controls, non-ASCII, surrogates
_MAYBE = st.none() | _ANY_TEXT


@settings(max_examples=400)
@given(
    texts=st.tuples(*(_ANY_TEXT for _ in range(10))),
    identities=st.tuples(*(_MAYBE for _ in range(6))),
    lists=st.tuples(*(st.lists(_ANY_TEXT, max_size=3) for _ in range(3))),
    verified=st.booleans(),
)
def test_the_written_ref_text_is_legacy_j1_with_every_optional_part(
    texts: tuple[str, ...],
    identities: tuple[str | None, ...],
    lists: tuple[list[str], ...],
    verified: bool,
) -> None:
    """candidate_ref_of writes json.dumps(sort_keys=True) itself (reference §1.5): the same
    bytes with and without expiry, observation time, supersedes refs and each identity key."""
    from types import SimpleNamespace

    summary, kind, ref, actor, role, workspace, project, freshness, conflict, target = texts
    revision, user, peer, session, expires, observed = identities
    actions, surfaces, supersedes = lists
    scope_obj: dict[str, Any] = {
        "workspace_ref": workspace,
        "project_ref": project,
        "surface_ids": surfaces,
        "revision_ref": revision,
    }
    for name, value in (("user_ref", user), ("peer_ref", peer), ("session_ref", session)):
        if value is not None:
            scope_obj[name] = value
    hashed: dict[str, Any] = {
        "target_class": target,
        "content_summary": summary,
        "source": {"source_kind": kind, "source_ref": ref, "actor_ref": actor, "actor_role": role},
        "scope": scope_obj,
        "guard_context": {
            "source_freshness": freshness,
            "conflict_state": conflict,
            "current_artifact_verified": verified,
        },
        "requested_action_scopes": actions,
    }
    for name, value in (("expires_at", expires), ("observed_at", observed)):
        if value is not None:
            hashed[name] = value
    if supersedes:
        hashed["supersedes_refs"] = supersedes
    try:
        expected: object = (
            "candidate:"
            + hashlib.sha256(legacy_json(hashed, "J1").encode("utf-8")).hexdigest()[:20]
        )
    except UnicodeEncodeError:
        expected = UnicodeEncodeError
    try:
        written: object = candidate_ref_of(
            target_class=target,
            content_summary=summary,
            source=SimpleNamespace(
                source_kind=kind, source_ref=ref, actor_ref=actor, actor_role=role
            ),
            scope=SimpleNamespace(
                workspace_ref=workspace,
                project_ref=project,
                surface_ids=tuple(surfaces),
                revision_ref=revision,
                user_ref=user,
                peer_ref=peer,
                session_ref=session,
            ),
            guard_context=SimpleNamespace(
                source_freshness=freshness,
                conflict_state=conflict,
                current_artifact_verified=verified,
            ),
            requested_action_scopes=tuple(actions),
            expires_at=expires,
            observed_at=observed,
            supersedes_refs=tuple(supersedes),
        )
    except UnicodeEncodeError:
        written = UnicodeEncodeError
    assert written == expected
