"""The Issue Fix and scoped-feedback adapters: field mapping only, strict field sets."""

from __future__ import annotations

import copy
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _stage2 import GOLDEN_REF, NOW, checkpoint, context, reasoning, source
from reward_memory import schemas, wire
from reward_memory.adapters.issue_fix import (
    IssueFixCandidateAdapter,
    IssueFixEvent,
    build_issue_fix_candidate,
    issue_fix_event,
    issue_fix_proposal,
    verified_contributor_candidate,
    verified_contributor_checkpoint,
    verified_contributor_event,
)
from reward_memory.adapters.scoped_feedback import (
    ScopedFeedbackCandidateAdapter,
    ScopedFeedbackEvent,
    build_scoped_feedback_candidate,
    scoped_feedback_event,
    scoped_feedback_proposal,
)
from reward_memory.candidates import propose
from reward_memory.errors import RecordValidationError
from reward_memory.records._plain import to_plain
from reward_memory.records.candidate import Proposal
from reward_memory.records.envelope import RecordScope


def _valid(packet: Any) -> dict[str, Any]:
    plain: dict[str, Any] = to_plain(packet)
    assert plain == wire.dump(packet)
    schemas.validate(plain)
    assert wire.load(plain, type(packet)) == packet
    return plain


# -- Issue Fix --------------------------------------------------------------------------------


def test_the_verified_contributor_fixture_is_review_ready_with_the_golden_ref() -> None:
    adapter = verified_contributor_candidate(now=NOW)
    plain = _valid(adapter)
    assert plain["schema_version"] == "issue_fix_reward_memory_candidate_adapter_v0"
    assert plain["issue_ref"] == "github:example/repository#42"
    assert plain["surface_id"] == "issue_fix.patch_planning"
    assert plain["adapter_role"] == "field_mapping_only_shared_core_owns_semantics_and_lifecycle"
    assert plain["fresh_execution_context_source"] == "existing_loopx_control_plane"
    assert (
        plain["provider_write_performed"],
        plain["external_writes_performed"],
        plain["raw_content_captured"],
    ) == (False, False, False)
    shared = adapter.shared_candidate
    assert shared.status == "review_ready"
    assert shared.candidate.candidate_ref == GOLDEN_REF
    assert shared.authority_checkpoint == verified_contributor_checkpoint()


def test_issue_fix_mapping() -> None:
    event = verified_contributor_event()
    item = issue_fix_proposal(event, observed_at="2026-02-01T00:00:00Z")
    assert item.scope.project_ref == event.repository_ref
    assert item.scope.workspace_ref == event.workspace_ref
    assert item.scope.surface_ids == (event.surface_id,)
    assert item.scope.revision_ref == event.revision_ref
    assert (item.scope.user_ref, item.scope.peer_ref, item.scope.session_ref) == (None, None, None)
    assert item.source == event.source
    assert item.reasoning == event.reasoning
    assert item.requested_action_scopes == event.requested_action_scopes
    assert item.observed_at == "2026-02-01T00:00:00Z"
    assert propose(item, verified_contributor_checkpoint(), now=NOW).candidate.observed_at == (
        "2026-02-01T00:00:00Z"
    )


def test_the_adapter_never_derives_a_checkpoint_from_the_event() -> None:
    adapter = build_issue_fix_candidate(verified_contributor_event(), now=NOW)
    assert adapter.shared_candidate.status == "guard_blocked"
    assert "authority_checkpoint_unverified" in adapter.shared_candidate.guard.reason_codes


def _issue_fix_plain() -> dict[str, Any]:
    plain: dict[str, Any] = to_plain(verified_contributor_event())
    return plain


def test_a_dict_event_maps_the_same() -> None:
    adapter = build_issue_fix_candidate(
        _issue_fix_plain(), to_plain(verified_contributor_checkpoint()), now=NOW
    )
    assert adapter == verified_contributor_candidate(now=NOW)
    assert issue_fix_event(_issue_fix_plain()) == verified_contributor_event()


_STRICT: list[tuple[Any, str, str]] = [
    (lambda d: d.update(comment_body="raw"), "unknown_field", "$.comment_body"),
    (lambda d: d.update(raw_comment="raw"), "unknown_field", "$.raw_comment"),
    (lambda d: d["source"].update(raw="raw"), "unknown_field", "$.source.raw"),
    (lambda d: d["reasoning"].update(transcript="x"), "unknown_field", "$.reasoning.transcript"),
    (
        lambda d: d["guard_context"].update(tool_log="x"),
        "unknown_field",
        "$.guard_context.tool_log",
    ),
    (lambda d: d.update(raw_content_captured=True), "invalid_value", "$.raw_content_captured"),
    (lambda d: d.pop("raw_content_captured"), "missing_field", "$.raw_content_captured"),
    (lambda d: d["reasoning"].pop("confidence"), "missing_field", "$.reasoning.confidence"),
    (lambda d: d.update(content_summary="y" * 501), "text_too_long", "$.content_summary"),
    (lambda d: d.update(target_class="working_context"), "invalid_value", "$.target_class"),
    (lambda d: d.update(surface_id="patch_planning"), "invalid_format", "$.surface_id"),
    (lambda d: d.update(requested_action_scopes="a:b"), "wrong_type", "$.requested_action_scopes"),
    (
        lambda d: d["source"].update(source_ref="from /home/alice/inbox"),
        "unsafe_text",
        "$.source.source_ref",
    ),
]


@pytest.mark.parametrize(("mutate", "code", "path"), _STRICT)
def test_issue_fix_events_are_strict(mutate: Any, code: str, path: str) -> None:
    plain = _issue_fix_plain()
    mutate(plain)
    with pytest.raises(RecordValidationError) as info:
        build_issue_fix_candidate(plain, verified_contributor_checkpoint(), now=NOW)
    assert (info.value.code, info.value.path) == (code, path)


def test_issue_fix_issue_ref_is_compact_text() -> None:
    plain = _issue_fix_plain()
    plain["issue_ref"] = "i" * 161
    with pytest.raises(RecordValidationError) as info:
        issue_fix_event(plain)
    assert (info.value.code, info.value.path) == ("text_too_long", "$.issue_ref")


def test_issue_fix_schema_version_must_match() -> None:
    plain = _issue_fix_plain()
    plain["schema_version"] = "scoped_feedback_reward_memory_event_v0"
    with pytest.raises(RecordValidationError):
        issue_fix_event(plain)
    with pytest.raises(RecordValidationError):
        issue_fix_event("event")  # type: ignore[arg-type]


def test_typed_events_refuse_unknown_fields() -> None:
    fields = to_plain(verified_contributor_event())
    with pytest.raises(TypeError, match="comment_body"):
        IssueFixEvent(**{**fields, "comment_body": "raw"})
    with pytest.raises(RecordValidationError):
        IssueFixEvent(**{**fields, "source": fields["source"]})


# -- scoped feedback --------------------------------------------------------------------------


def _feedback(**overrides: Any) -> ScopedFeedbackEvent:
    values: dict[str, Any] = {
        "raw_content_captured": False,
        "feedback_ref": "feedback:semantic-preference:7",
        "workspace_ref": "workspace:example",
        "project_ref": "project:semantic",
        "user_ref": "user:alice",
        "peer_ref": "peer:assistant",
        "session_ref": None,
        "surface_id": "semantic_preference.rewrite",
        "revision_ref": None,
        "target_class": "soft_preference",
        "content_summary": "Prefer plain wording over jargon in rewrites.",
        "source": source(
            source_kind="explicit_feedback",
            source_ref="feedback:7",
            actor_ref="user:alice",
            actor_role="end_user",
        ),
        "reasoning": reasoning(confidence="medium", confidence_basis="Two explicit requests."),
        "guard_context": context(),
    }
    values.update(overrides)
    return ScopedFeedbackEvent(**values)


def test_scoped_feedback_maps_every_scope_field() -> None:
    event = _feedback()
    item = scoped_feedback_proposal(event)
    assert item.scope.workspace_ref == "workspace:example"
    assert item.scope.project_ref == "project:semantic"
    assert item.scope.surface_ids == ("semantic_preference.rewrite",)
    assert (item.scope.user_ref, item.scope.peer_ref, item.scope.session_ref) == (
        "user:alice",
        "peer:assistant",
        None,
    )
    assert item.scope.revision_ref is None
    adapter = build_scoped_feedback_candidate(event, now=NOW)
    plain = _valid(adapter)
    assert isinstance(adapter, ScopedFeedbackCandidateAdapter)
    assert plain["schema_version"] == "scoped_feedback_reward_memory_candidate_adapter_v0"
    assert plain["feedback_ref"] == "feedback:semantic-preference:7"
    assert plain["adapter_role"] == "strict_field_mapping_only_shared_core_owns_lifecycle"
    assert "issue_ref" not in plain
    assert adapter.shared_candidate.status == "review_ready"


def test_identity_fields_are_part_of_the_candidate_identity() -> None:
    alice = build_scoped_feedback_candidate(_feedback(), now=NOW).shared_candidate
    bob = build_scoped_feedback_candidate(_feedback(user_ref="user:bob"), now=NOW).shared_candidate
    assert alice.candidate.candidate_ref != bob.candidate.candidate_ref


def test_scoped_feedback_hard_policy_needs_the_callers_checkpoint() -> None:
    event = _feedback(
        target_class="hard_policy",
        requested_action_scopes=("semantic:rewrite",),
        source=source(actor_ref="user:owner", actor_role="verified_project_owner_or_operator"),
    )
    assert build_scoped_feedback_candidate(event, now=NOW).shared_candidate.status == (
        "guard_blocked"
    )
    gate = checkpoint(
        actor_ref="user:owner",
        actor_role="verified_project_owner_or_operator",
        project_ref="project:semantic",
        action_scopes=("semantic:rewrite",),
    )
    assert build_scoped_feedback_candidate(event, gate, now=NOW).shared_candidate.status == (
        "review_ready"
    )


@pytest.mark.parametrize(("mutate", "code", "path"), _STRICT[:9])
def test_scoped_feedback_events_are_strict(mutate: Any, code: str, path: str) -> None:
    plain: dict[str, Any] = to_plain(_feedback())
    assert build_scoped_feedback_candidate(copy.deepcopy(plain), now=NOW).shared_candidate
    mutate(plain)
    with pytest.raises(RecordValidationError) as info:
        build_scoped_feedback_candidate(plain, now=NOW)
    assert (info.value.code, info.value.path) == (code, path)


def test_scoped_feedback_dict_path_and_wrong_types() -> None:
    plain = to_plain(_feedback())
    assert scoped_feedback_event(plain) == _feedback()
    plain["feedback_body"] = "raw"
    with pytest.raises(RecordValidationError) as info:
        scoped_feedback_event(plain)
    assert info.value.path == "$.feedback_body"
    with pytest.raises(RecordValidationError):
        scoped_feedback_event(42)  # type: ignore[arg-type]


def test_an_issue_fix_event_is_not_a_scoped_feedback_event() -> None:
    with pytest.raises(RecordValidationError):
        scoped_feedback_event(_issue_fix_plain())
    assert not isinstance(verified_contributor_candidate(now=NOW), ScopedFeedbackCandidateAdapter)
    assert isinstance(verified_contributor_candidate(now=NOW), IssueFixCandidateAdapter)


# -- the derived proposal is the validated proposal -------------------------------------------
#
# An adapter sets the proposal of an exact-type event without re-running the
# validators (adapters/_proposal.py). Over every event shape -- summaries with
# any character (lone surrogates included), identities, classes, scopes,
# observation times -- it must give the proposal, or the error, the validating
# constructors give.

_ANY_TEXT = st.text(
    alphabet=st.characters(min_codepoint=1, max_codepoint=0x10FFFF), min_size=1, max_size=40
) | st.sampled_from(["\ud800", "fine \udfff text", "Keep it\u2028short", "  padded  "])


def _outcome(make: Any) -> Any:
    try:
        return make()
    except RecordValidationError as exc:
        return (exc.code, exc.path)


@settings(max_examples=300, deadline=None)
@given(
    summary=_ANY_TEXT,
    target_class=st.sampled_from(["hard_policy", "soft_preference", "procedural_experience"]),
    scopes=st.lists(
        st.sampled_from(["issue_fix:scope_selection", "b:c", "a:z"]), unique=True, max_size=3
    ),
    revision=st.sampled_from([None, "revision:abc123"]),
    user=st.sampled_from([None, "user:one"]),
    observed_at=st.sampled_from([None, "2026-02-01T00:00:00+00:00", "2026-02-01T00:00:00Z"]),
    scoped=st.booleans(),
)
def test_the_derived_proposal_is_the_validated_proposal(
    summary: str,
    target_class: str,
    scopes: list[str],
    revision: str | None,
    user: str | None,
    observed_at: str | None,
    scoped: bool,
) -> None:
    from reward_memory.adapters._proposal import validated_proposal

    try:
        if scoped:
            event: Any = _feedback(
                content_summary=summary,
                target_class=target_class,
                requested_action_scopes=tuple(scopes),
                revision_ref=revision,
                user_ref=user,
            )
        else:
            event = attrs.evolve(
                verified_contributor_event(),
                content_summary=summary,
                target_class=target_class,
                requested_action_scopes=tuple(scopes),
                revision_ref=revision,
            )
    except RecordValidationError:
        return  # not an event: no proposal to compare
    mapped = scoped_feedback_proposal if scoped else issue_fix_proposal
    scope = {
        "workspace_ref": event.workspace_ref,
        "project_ref": event.project_ref if scoped else event.repository_ref,
        "surface_ids": (event.surface_id,),
        "revision_ref": event.revision_ref,
        "user_ref": event.user_ref if scoped else None,
        "peer_ref": event.peer_ref if scoped else None,
        "session_ref": event.session_ref if scoped else None,
    }
    derived = _outcome(lambda: mapped(event, observed_at=observed_at))
    validated = _outcome(lambda: validated_proposal(event, scope, observed_at=observed_at))
    assert derived == validated
    if isinstance(derived, Proposal):
        assert type(derived.scope) is RecordScope
        assert attrs.evolve(derived) == derived  # every field passes the constructors


def test_an_event_written_as_the_originals_is_ingested_with_a_stated_lack_of_basis(
    tmp_path: Any,
) -> None:
    """Reference 5.4: the original's events carry ``reasoning{summary, confidence}``. One
    written exactly so is activated (packets interoperate, DESIGN.md §5), and the stored
    record still names its confidence basis -- that none was stated."""
    import json

    from _experiment_support import EXAMPLE_EXPERIMENT, open_example
    from reward_memory import wire
    from reward_memory.records._candidate_inputs import UNSTATED_BASIS
    from reward_memory.testing import InMemoryProvider

    event = json.loads((EXAMPLE_EXPERIMENT / "event.json").read_text("utf-8"))
    del event["reasoning"]["confidence_basis"]
    provider = InMemoryProvider()
    with open_example(tmp_path, provider) as memory:
        hook = memory.ingest(event, observed_at="2026-11-01T12:00:00Z", execute=True)
        assert hook.status == "activated"
        scope = memory.runtime.surface("issue_fix.patch_planning").ingest.binding.provider_scope
    (hit,) = provider.search(scope=scope, query="focused fixes", limit=5).hits
    record = wire.load(json.loads(provider.read(scope=scope, ref=hit.ref).content or ""))
    assert record.confidence.basis == UNSTATED_BASIS
