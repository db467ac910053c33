"""The standing-policy ingest guard: every reason code, before any provider call.

Contract sentences protected here (seeds, "Minimal ingest loop"; reference §9.2):

- "Out-of-scope, conflicted, stale, raw, or unmodelled input is guard_blocked before
  any provider call."
- "A reward_memory_standing_policy_v0 predeclares the corpus owner, reviewer, authority
  source, exact project/surfaces, one memory class, source kinds, verified actor roles,
  and action scopes."
- "Reasons start as the candidate guard's reason_codes ... The final list is
  de-duplicated and sorted."
- Gap 12: the checkpoint comes from the caller's authority source, never from the event.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import attrs
import pytest

from _ingest_support import (
    ACTOR,
    HARD_SCOPE_REF,
    MAP_REF,
    NOW,
    PROJECT,
    ROLE,
    SCOPE,
    SURFACE,
    authority,
    grant,
    hard_binding,
    hard_corpus,
    hard_event,
    hard_event_data,
    hard_policy,
    ingest_hard,
    ingest_soft,
    soft_binding,
    soft_corpus,
    soft_event_data,
    soft_policy,
)
from reward_memory import schemas, wire
from reward_memory.digests import short_digest
from reward_memory.guards.standing_policy import (
    STANDING_POLICY_REASON_CODES,
    standing_policy_reasons,
)
from reward_memory.records.candidate import AuthorityCheckpoint, CandidateGuardContext
from reward_memory.records.corpus import CorpusFreshness, CorpusLifecycle, CorpusRetrieval
from reward_memory.records.standing_policy import PolicyScope
from reward_memory.testing import InMemoryProvider


class FixedSource:
    """An authority source that answers one fixed checkpoint (a misbehaving caller's source)."""

    def __init__(self, answer: AuthorityCheckpoint | None, source_ref: str = MAP_REF) -> None:
        self.answer = answer
        self.source_ref = source_ref

    def checkpoint_for(self, **_: Any) -> AuthorityCheckpoint | None:
        return self.answer


def _checkpoint(**changes: Any) -> AuthorityCheckpoint:
    base = AuthorityCheckpoint(
        verified=True,
        source_ref=MAP_REF,
        actor_ref=ACTOR,
        actor_role=ROLE,
        project_ref=PROJECT,
        action_scopes=(SCOPE,),
    )
    return attrs.evolve(base, **changes)


def _context(**changes: Any) -> CandidateGuardContext:
    base = CandidateGuardContext(
        source_freshness="current", conflict_state="clear", current_artifact_verified=True
    )
    return attrs.evolve(base, **changes)


def _peer_scope() -> str:
    return "repository:example/peers/alice/reward-memory"


# code -> (route, keyword changes for that route)
CASES: dict[str, tuple[str, dict[str, Any]]] = {
    # the candidate guard's own codes (they start the list)
    "source_freshness_not_current": (
        "hard",
        {"event": hard_event(guard_context=_context(source_freshness="stale"))},
    ),
    "unresolved_higher_authority_conflict": (
        "hard",
        {"event": hard_event(guard_context=_context(conflict_state="unresolved"))},
    ),
    "procedural_experience_current_artifact_unverified": (
        "hard",
        {
            "event": hard_event(
                target_class="procedural_experience",
                requested_action_scopes=(),
                guard_context=_context(current_artifact_verified=False),
            )
        },
    ),
    "advisory_class_requested_action_authority": (
        "soft",
        {"event": soft_event_data(requested_action_scopes=[SCOPE])},
    ),
    "hard_policy_missing_action_scope": (
        "hard",
        {"event": hard_event(requested_action_scopes=())},
    ),
    "authority_checkpoint_unverified": (
        "hard",
        {"authority": FixedSource(_checkpoint(verified=False))},
    ),
    "authority_actor_mismatch": (
        "hard",
        {"authority": FixedSource(_checkpoint(actor_ref="github:user:other"))},
    ),
    "authority_actor_role_mismatch": (
        "hard",
        {"authority": FixedSource(_checkpoint(actor_role="maintainer"))},
    ),
    "actor_role_cannot_derive_hard_policy": (
        "hard",
        {
            "event": hard_event(source=attrs.evolve(hard_event().source, actor_role="maintainer")),
            "authority": authority(grant(actor_role="maintainer")),
        },
    ),
    "authority_project_mismatch": (
        "hard",
        {"authority": FixedSource(_checkpoint(project_ref="repository:other"))},
    ),
    "requested_action_scope_exceeds_verified_authority": (
        "hard",
        {"authority": authority(grant(action_scopes=("issue_fix:other_scope",)))},
    ),
    # ours: the authority source
    "authority_source_missing": ("hard", {"authority": None}),
    "authority_source_refused": ("hard", {"authority": authority(grant(actor_ref="github:x"))}),
    "authority_source_mismatch": ("hard", {"authority": authority(source_ref="other:map")}),
    # the policy against its corpus
    "standing_policy_disabled": ("hard", {"standing_policy": hard_policy(enabled=False)}),
    "standing_policy_requires_manual_review": (
        "hard",
        {"standing_policy": hard_policy(auto_activate=False)},
    ),
    "standing_policy_owner_mismatch": (
        "hard",
        {"standing_policy": hard_policy(owner_ref="owner:someone-else")},
    ),
    "standing_policy_workspace_corpus_mismatch": (
        "hard",
        {"corpus": hard_corpus(scope=attrs.evolve(hard_corpus().scope, workspace_ref="ws:b"))},
    ),
    "standing_policy_project_corpus_mismatch": (
        "hard",
        {"corpus": hard_corpus(scope=attrs.evolve(hard_corpus().scope, project_ref="p:b"))},
    ),
    "standing_policy_surface_exceeds_corpus": (
        "hard",
        {
            "standing_policy": hard_policy(
                scope=PolicyScope(
                    workspace_ref="workspace:example",
                    project_ref=PROJECT,
                    surface_ids=(SURFACE, "issue_fix.other_surface"),
                )
            )
        },
    ),
    "corpus_not_active": (
        "hard",
        {"corpus": hard_corpus(lifecycle=CorpusLifecycle(state="retired", retirement_reason="x"))},
    ),
    "corpus_write_authority_not_durable": (
        "hard",
        {"corpus": hard_corpus(write_authority="read_only")},
    ),
    "corpus_exact_readback_not_required": (
        "hard",
        {
            "corpus": hard_corpus(
                retrieval=CorpusRetrieval(
                    index_required=True, readback_required=False, application_receipt_required=True
                )
            )
        },
    ),
    "standing_policy_class_not_exact_for_corpus": (
        "hard",
        {"standing_policy": hard_policy(allowed_target_classes=("hard_policy", "soft_preference"))},
    ),
    # the candidate against the policy and the corpus
    "candidate_class_corpus_mismatch": ("soft", {"corpus": soft_corpus(class_id="hard_policy")}),
    "candidate_class_not_allowed": (
        "soft",
        {"standing_policy": soft_policy(allowed_target_classes=("procedural_experience",))},
    ),
    "candidate_source_kind_not_allowed": (
        "hard",
        {"standing_policy": hard_policy(allowed_source_kinds=("other_kind",))},
    ),
    "candidate_actor_role_not_allowed": (
        "hard",
        {
            "standing_policy": hard_policy(
                allowed_actor_roles=("verified_project_owner_or_operator",)
            )
        },
    ),
    "candidate_workspace_policy_mismatch": (
        "soft",
        {"event": soft_event_data(workspace_ref="workspace:other")},
    ),
    "candidate_workspace_corpus_mismatch": (
        "soft",
        {"event": soft_event_data(workspace_ref="workspace:other")},
    ),
    "candidate_project_policy_mismatch": (
        "soft",
        {"event": soft_event_data(project_ref="repository:other")},
    ),
    "candidate_project_corpus_mismatch": (
        "soft",
        {"event": soft_event_data(project_ref="repository:other")},
    ),
    "candidate_surface_not_allowed": (
        "soft",
        {"event": soft_event_data(surface_id="reviewer_artifact.other")},
    ),
    "candidate_surface_corpus_mismatch": (
        "soft",
        {"event": soft_event_data(surface_id="reviewer_artifact.other")},
    ),
    "candidate_revision_corpus_mismatch": (
        "hard",
        {
            "corpus": hard_corpus(
                freshness=CorpusFreshness(mode="revision_bound", source_revision="revision:other")
            )
        },
    ),
    "candidate_observed_in_future": ("soft", {"observed_at": "2026-11-02T09:00:01Z"}),
    "candidate_source_age_exceeded": (
        "soft",
        {
            "corpus": soft_corpus(
                freshness=CorpusFreshness(
                    mode="time_bound", source_revision=None, max_age_seconds=3600
                )
            )
        },
    ),
    "candidate_action_scope_not_allowed": (
        "hard",
        {"standing_policy": hard_policy(allowed_action_scopes=("issue_fix:other_scope",))},
    ),
    # the binding: checked before the write
    "provider_binding_corpus_mismatch": ("hard", {"binding": hard_binding(corpus_id="other")}),
    "provider_binding_provider_mismatch": (
        "hard",
        {"binding": hard_binding(provider_id="sqlite")},
    ),
    "provider_binding_scope_digest_mismatch": (
        "hard",
        {"binding": hard_binding(scope_ref="repository:example/elsewhere")},
    ),
    "provider_binding_actor_peer_missing": (
        "hard",
        {
            "binding": hard_binding(scope_ref=_peer_scope()),
            "corpus": hard_corpus(provider_scope_ref_digest=short_digest(_peer_scope())),
        },
    ),
    "provider_binding_actor_peer_mismatch": (
        "hard",
        {
            "binding": hard_binding(scope_ref=_peer_scope(), actor_peer_id="bob"),
            "corpus": hard_corpus(provider_scope_ref_digest=short_digest(_peer_scope())),
        },
    ),
    "provider_binding_actor_peer_unscoped": (
        "hard",
        {"binding": hard_binding(actor_peer_id="alice")},
    ),
    "provider_binding_scope_ref_ambiguous": (
        "hard",
        {"binding": hard_binding(scope_ref=HARD_SCOPE_REF + "//other")},
    ),
    # raw or unmodelled events
    "event_raw_content_refused": ("hard", {"event": hard_event_data(raw_content_captured=True)}),
    "event_not_modelled": ("hard", {"event": hard_event_data(comment_body="the whole thread")}),
    "event_unsafe_text": (
        "hard",
        {"event": hard_event_data(content_summary="use password=hunter2hunter2 to deploy")},
    ),
}

# Identity codes: one scoped-feedback identity the corpus and the policy do not name.
for _name in ("user_ref", "peer_ref", "session_ref"):
    CASES[f"candidate_{_name}_policy_mismatch"] = (
        "soft",
        {"event": soft_event_data(**{_name: f"{_name[:-4]}:bob"})},
    )
    CASES[f"candidate_{_name}_corpus_mismatch"] = CASES[f"candidate_{_name}_policy_mismatch"]
    CASES[f"standing_policy_{_name}_corpus_mismatch"] = (
        "soft",
        {
            "standing_policy": soft_policy(
                scope=attrs.evolve(soft_policy().scope, **{_name: f"{_name[:-4]}:bob"})
            )
        },
    )

# Codes that no event can reach through ingest, proven on the guard function below.
DIRECT_ONLY = frozenset(
    {
        "candidate_expired",  # events carry no expiry
        "candidate_guard_not_passed",  # a failing candidate guard always names a reason
        "candidate_surface_count_not_one",  # an event names exactly one surface
        "provider_binding_peer_scope_mismatch",  # needs a peer-scoped corpus; direct below
    }
)


def _run(route: str, changes: dict[str, Any]) -> tuple[Any, InMemoryProvider]:
    provider = InMemoryProvider()
    changes = dict(changes)
    event = changes.pop("event", None)
    run = ingest_hard if route == "hard" else ingest_soft
    return run(event, provider=provider, **changes), provider


@pytest.mark.parametrize("code", sorted(CASES))
def test_each_reason_blocks_before_any_provider_call(code: str) -> None:
    route, changes = CASES[code]
    receipt, provider = _run(route, changes)
    assert receipt.status == "guard_blocked"
    assert code in receipt.guard.reason_codes
    assert receipt.reason_codes == receipt.guard.reason_codes
    assert list(receipt.guard.reason_codes) == sorted(set(receipt.guard.reason_codes))
    assert provider.call_count() == 0
    assert receipt.provider_call_count == 0
    assert not receipt.memory_available_for_recall
    assert not receipt.exact_readback_verified
    assert receipt.write is None
    assert receipt.activation_ref is None
    assert schemas.validate(wire.dump(receipt)) == "reward_memory_ingest_receipt_v0"
    assert wire.load(wire.dump(receipt)) == receipt  # the validating constructor agrees


def test_every_code_of_the_vocabulary_is_covered() -> None:
    assert set(CASES) | DIRECT_ONLY == set(STANDING_POLICY_REASON_CODES)


def test_both_routes_pass_with_no_reasons() -> None:
    for run in (ingest_hard, ingest_soft):
        receipt = run(provider=InMemoryProvider())
        assert receipt.guard.passed
        assert receipt.guard.reason_codes == ()
        assert receipt.status == "activated"


def test_a_raw_event_has_no_candidate_and_no_provider_call() -> None:
    receipt, provider = _run("hard", CASES["event_raw_content_refused"][1])
    assert receipt.candidate_ref is None
    assert receipt.surface_ids == ()
    assert receipt.guard.reason_codes == ("event_raw_content_refused",)
    assert provider.call_count() == 0


def test_authority_is_never_taken_from_the_event() -> None:
    """Gap 12: the event claims the verified role; without the source nothing activates."""
    receipt = ingest_hard(provider=InMemoryProvider(), authority=None)
    assert receipt.status == "guard_blocked"
    assert "authority_source_missing" in receipt.guard.reason_codes
    assert "authority_checkpoint_unverified" in receipt.guard.reason_codes


def test_an_advisory_event_never_asks_the_authority_source() -> None:
    class Counting(FixedSource):
        asked = 0

        def checkpoint_for(self, **_: Any) -> AuthorityCheckpoint | None:
            Counting.asked += 1
            return None

    receipt = ingest_soft(provider=InMemoryProvider(), authority=Counting(None))
    assert receipt.status == "activated"
    assert Counting.asked == 0


def test_a_raising_or_lying_authority_source_is_a_refusal() -> None:
    class Raising(FixedSource):
        def checkpoint_for(self, **_: Any) -> AuthorityCheckpoint | None:
            raise RuntimeError("the directory is down")

    for source in (Raising(None), FixedSource({"verified": True})):  # type: ignore[arg-type]
        receipt = ingest_hard(provider=InMemoryProvider(), authority=source)
        assert receipt.status == "guard_blocked"
        assert "authority_source_refused" in receipt.guard.reason_codes


# -- the codes only the guard function can be shown ----------------------------------------


def _guard(**changes: Any) -> tuple[str, ...]:
    from reward_memory.adapters.issue_fix import issue_fix_proposal
    from reward_memory.candidates import propose

    packet = propose(issue_fix_proposal(hard_event()), _checkpoint(), now=NOW)
    arguments: dict[str, Any] = {
        "candidate": packet.candidate,
        "candidate_reasons": packet.guard.reason_codes,
        "candidate_guard_passed": packet.guard.passed,
        "corpus": hard_corpus(),
        "policy": hard_policy(),
        "binding": hard_binding(),
        "authority_source_ref": MAP_REF,
        "checkpoint": _checkpoint(),
    }
    arguments.update(changes)
    return standing_policy_reasons(**arguments)


def test_the_guard_passes_the_fixture() -> None:
    assert _guard() == ()


def test_a_failed_candidate_guard_without_reasons_is_named() -> None:
    assert _guard(candidate_guard_passed=False) == ("candidate_guard_not_passed",)


def test_the_candidate_guards_reasons_start_the_list_sorted() -> None:
    reasons = _guard(
        candidate_reasons=("source_freshness_not_current", "candidate_expired"),
        candidate_guard_passed=False,
        policy=hard_policy(enabled=False),
    )
    assert reasons == (
        "candidate_expired",
        "source_freshness_not_current",
        "standing_policy_disabled",
    )


def test_a_candidate_with_two_surfaces_is_refused() -> None:
    from reward_memory.adapters.issue_fix import issue_fix_proposal
    from reward_memory.candidates import propose

    proposal = issue_fix_proposal(hard_event())
    two = attrs.evolve(
        proposal,
        scope=attrs.evolve(proposal.scope, surface_ids=(SURFACE, "issue_fix.other_surface")),
    )
    packet = propose(two, _checkpoint(), now=NOW)
    reasons = _guard(candidate=packet.candidate)
    assert "candidate_surface_count_not_one" in reasons
    assert "candidate_surface_not_allowed" in reasons


def test_a_peer_scoped_corpus_served_as_another_peer_is_refused() -> None:
    corpus = hard_corpus(scope=attrs.evolve(hard_corpus().scope, peer_ref="peer:alice"))
    reasons = _guard(corpus=corpus, binding=hard_binding(actor_peer_id="bob"))
    assert "provider_binding_peer_scope_mismatch" in reasons


def test_the_guard_is_pure() -> None:
    """Same inputs, same answer: no clock, no provider, no state."""
    assert _guard(policy=hard_policy(enabled=False)) == _guard(policy=hard_policy(enabled=False))


def test_a_document_scope_ref_is_a_programmer_error() -> None:
    from reward_memory.errors import RecordValidationError

    with pytest.raises(RecordValidationError) as info:
        ingest_hard(binding=hard_binding(scope_ref=HARD_SCOPE_REF + "/policy.json"))
    assert info.value.path == "binding.scope_ref"


def test_soft_binding_and_corpus_fit() -> None:
    assert soft_binding().corpus_id == soft_corpus().corpus_id
    assert isinstance(NOW, datetime)


def test_a_setup_reused_call_after_call_is_guarded_by_its_own_values() -> None:
    """The policy/corpus/binding reasons are reused only for the very same records."""
    corpus, policy, binding = hard_corpus(), hard_policy(), hard_binding()
    same = {"corpus": corpus, "standing_policy": policy, "binding": binding}
    assert ingest_hard(**same).status == "planned"
    assert ingest_hard(**same).status == "planned"
    disabled = attrs.evolve(policy, enabled=False)
    blocked = ingest_hard(corpus=corpus, standing_policy=disabled, binding=binding)
    assert blocked.status == "guard_blocked"
    assert "standing_policy_disabled" in blocked.guard.reason_codes
    other = attrs.evolve(binding, corpus_id="another_corpus")
    blocked = ingest_hard(corpus=corpus, standing_policy=policy, binding=other)
    assert "provider_binding_corpus_mismatch" in blocked.guard.reason_codes
    assert ingest_hard(**same).status == "planned"


@pytest.mark.parametrize(
    ("changes", "path"),
    [
        ({"comment_body": "the whole thread"}, "$.comment_body"),
        ({"raw_content_captured": True}, "$.raw_content_captured"),
        ({"content_summary": "use password=hunter2hunter2 to deploy"}, "$.content_summary"),
    ],
)
def test_a_refused_event_names_the_field_never_its_value(
    changes: dict[str, Any], path: str
) -> None:
    """Gap 8: the field's path is named; the seeds: the event is guard_blocked (no error)."""
    receipt, provider = _run("hard", {"event": hard_event_data(**changes)})
    assert receipt.status == "guard_blocked"
    assert receipt.guard.field_path == path
    dumped = json.dumps(wire.dump(receipt))
    assert "hunter2" not in dumped
    assert "the whole thread" not in dumped
    schemas.validate(wire.dump(receipt))
    assert provider.call_count() == 0


def test_a_nested_unknown_field_is_named_by_its_full_path() -> None:
    event = hard_event_data()
    event["source"] = {**event["source"], "extra": 1}
    receipt, _ = _run("hard", {"event": event})
    assert receipt.guard.field_path == "$.source.extra"


def test_a_passing_guard_carries_no_field_path() -> None:
    receipt, _ = _run("hard", {})
    assert receipt.guard.field_path is None
    assert "field_path" not in wire.dump(receipt)["guard"]


# -- what recall would never return is never written (the probe: "committed_pending") ---------


def _archive_corpus(revision: str) -> Any:
    return soft_corpus(
        freshness=CorpusFreshness(
            mode="session_archive_bound", source_revision=revision, max_age_seconds=None
        )
    )


def test_an_archive_bound_corpus_refuses_an_event_of_another_revision() -> None:
    receipt, provider = _run(
        "soft",
        {
            "event": soft_event_data(revision_ref="revision:abc123"),
            "corpus": _archive_corpus("revision:def456"),
        },
    )
    assert (receipt.status, receipt.reason_codes) == (
        "guard_blocked",
        ("candidate_revision_corpus_mismatch",),
    )
    assert provider.call_count() == 0


@pytest.mark.parametrize("revision", ["revision:def456", None])
def test_an_archive_bound_corpus_takes_its_own_revision_and_recalls_it(
    revision: str | None,
) -> None:
    event = soft_event_data(**({"revision_ref": revision} if revision else {}))
    receipt, _ = _run("soft", {"event": event, "corpus": _archive_corpus("revision:def456")})
    assert receipt.status == "activated", receipt.reason_codes


@pytest.mark.parametrize(
    ("observed_at", "status"),
    [("2026-11-02T08:30:00Z", "activated"), ("2026-11-02T07:59:59Z", "guard_blocked")],
)
def test_a_time_bound_corpus_takes_only_what_is_young_enough_to_recall(
    observed_at: str, status: str
) -> None:
    corpus = soft_corpus(
        freshness=CorpusFreshness(mode="time_bound", source_revision=None, max_age_seconds=3600)
    )
    receipt, _ = _run("soft", {"corpus": corpus, "observed_at": observed_at})
    assert receipt.status == status, receipt.reason_codes


def test_an_over_long_list_is_refused_at_once() -> None:
    """jsonschema looked every item up through its $ref before it said 'too long':
    200,000 action scopes (the schema allows 12) took seconds."""
    import time

    started = time.perf_counter()
    receipt, provider = _run(
        "soft", {"event": soft_event_data(requested_action_scopes=["a"] * 200_000)}
    )
    assert time.perf_counter() - started < 1.0
    assert receipt.status == "guard_blocked"
    assert receipt.guard.field_path == "$.requested_action_scopes"
    assert provider.call_count() == 0


def test_a_replay_without_a_time_never_adopts_a_record_recall_no_longer_returns() -> None:
    """The adopted first observation is held to the corpus's clock too: a time-bound record
    past its age is a conflict on replay, never 'index pending' (it would never show)."""
    from datetime import timedelta

    from _ingest_support import NOW

    corpus = soft_corpus(
        freshness=CorpusFreshness(mode="time_bound", source_revision=None, max_age_seconds=3600)
    )
    provider = InMemoryProvider()
    first = ingest_soft(provider=provider, corpus=corpus, observed_at=None, now=NOW)
    assert first.status == "activated"
    later = NOW + timedelta(seconds=3601)
    replay = ingest_soft(provider=provider, corpus=corpus, observed_at=None, now=later)
    assert (replay.status, replay.reason_codes) == (
        "conflict",
        ("provider_target_content_conflict",),
    )
