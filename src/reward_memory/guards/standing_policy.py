"""The standing-policy ingest guard (reference §9.2): pure, de-duplicated, sorted reason codes.

One approval of an exact boundary: an ingested candidate activates under a
standing policy only when the policy, the corpus, the candidate, the provider
binding and the caller's authority source all agree. Reasons start as the
candidate guard's own reason codes (``candidate_guard_not_passed`` when it
failed without any); then every check below that applies adds its code. The
final list is de-duplicated and **sorted** (as the original's), so it is one
fixed order whatever the checks' order; :data:`STANDING_POLICY_REASON_CODES`
is the vocabulary.

The original's checks (policy, corpus, candidate; see the table in reference
§9.2) and ours:

- ``authority_source_missing`` -- a ``hard_policy`` candidate and no authority
  source was given (authority never comes from the event);
- ``authority_source_refused`` -- the authority source answered nothing for
  the actor, role and project the event claims;
- ``authority_source_mismatch`` -- the source's ref (or the checkpoint's) is
  not the policy's ``authority_source_ref``;
- the provider binding's own reasons (``provider_binding_*``, from
  :func:`reward_memory.guards.recall.binding_reasons`): a binding that does not
  belong to the corpus blocks before any provider write.

No semantic routing: nothing here reads the summary or the reasoning.
"""

from __future__ import annotations

import operator
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Final

from reward_memory.guards.recall import binding_reasons

if TYPE_CHECKING:
    from reward_memory.records.candidate import AuthorityCheckpoint, Candidate
    from reward_memory.records.corpus import CorpusDeclaration
    from reward_memory.records.recall import ProviderBinding
    from reward_memory.records.standing_policy import StandingPolicy

__all__ = [
    "EVENT_REASON_CODES",
    "GUARD_RULE",
    "IDENTITY_FIELDS",
    "OUR_REASON_CODES",
    "STANDING_POLICY_REASON_CODES",
    "freshness_reasons",
    "standing_policy_reasons",
]

GUARD_RULE: Final = "standing_policy_checks_exact_owner_class_source_actor_scope_and_authority_without_semantic_routing"  # noqa: E501
IDENTITY_FIELDS: Final = ("user_ref", "peer_ref", "session_ref")
_NOT_DURABLE: Final = frozenset({"read_only", "ephemeral_runtime"})

# The original's codes (reference §9.2), sorted.
_ORIGINAL: Final = (
    "candidate_action_scope_not_allowed",
    "candidate_actor_role_not_allowed",
    "candidate_class_corpus_mismatch",
    "candidate_class_not_allowed",
    "candidate_guard_not_passed",
    "candidate_peer_ref_corpus_mismatch",
    "candidate_peer_ref_policy_mismatch",
    "candidate_project_corpus_mismatch",
    "candidate_project_policy_mismatch",
    "candidate_revision_corpus_mismatch",
    "candidate_session_ref_corpus_mismatch",
    "candidate_session_ref_policy_mismatch",
    "candidate_source_kind_not_allowed",
    "candidate_surface_corpus_mismatch",
    "candidate_surface_count_not_one",
    "candidate_surface_not_allowed",
    "candidate_user_ref_corpus_mismatch",
    "candidate_user_ref_policy_mismatch",
    "candidate_workspace_corpus_mismatch",
    "candidate_workspace_policy_mismatch",
    "corpus_exact_readback_not_required",
    "corpus_not_active",
    "corpus_write_authority_not_durable",
    "standing_policy_class_not_exact_for_corpus",
    "standing_policy_disabled",
    "standing_policy_owner_mismatch",
    "standing_policy_peer_ref_corpus_mismatch",
    "standing_policy_project_corpus_mismatch",
    "standing_policy_requires_manual_review",
    "standing_policy_session_ref_corpus_mismatch",
    "standing_policy_surface_exceeds_corpus",
    "standing_policy_user_ref_corpus_mismatch",
    "standing_policy_workspace_corpus_mismatch",
)
# Ours: the authority source (gap 12), the binding, and the corpus's freshness at the
# event's first observation (a record recall would never return is not written), checked
# before any write.
OUR_REASON_CODES: Final = (
    "authority_source_mismatch",
    "authority_source_missing",
    "authority_source_refused",
    "candidate_observed_in_future",
    "candidate_source_age_exceeded",
    "provider_binding_actor_peer_mismatch",
    "provider_binding_actor_peer_missing",
    "provider_binding_actor_peer_unscoped",
    "provider_binding_corpus_mismatch",
    "provider_binding_peer_scope_mismatch",
    "provider_binding_provider_mismatch",
    "provider_binding_scope_digest_mismatch",
    "provider_binding_scope_ref_ambiguous",
)
# Ours: the event itself is refused (raw or unmodelled input is data, not an error).
EVENT_REASON_CODES: Final = (
    "event_not_modelled",
    "event_raw_content_refused",
    "event_unsafe_text",
)


def _vocabulary() -> tuple[str, ...]:
    from reward_memory.records.candidate import REASON_CODES  # noqa: PLC0415

    return tuple(sorted({*_ORIGINAL, *OUR_REASON_CODES, *EVENT_REASON_CODES, *REASON_CODES}))


# Every code the ingest guard may report (the candidate guard's included), sorted.
STANDING_POLICY_REASON_CODES: Final = _vocabulary()


def freshness_reasons(
    corpus: CorpusDeclaration, observed: datetime, now: datetime
) -> tuple[str, ...]:
    """What the corpus's clock says of an event first observed at ``observed``, at ``now``.

    Recall returns a record only once it was observed and, in a time-bound corpus, while
    it is no older than ``max_age_seconds``: a record it would never return is refused
    here, before any write (else ingest would write it and report the index pending).
    """
    if observed > now:
        return ("candidate_observed_in_future",)
    freshness = corpus.freshness
    age = freshness.max_age_seconds
    if (
        freshness.mode == "time_bound"
        and age is not None
        and now - observed > timedelta(seconds=age)
    ):
        return ("candidate_source_age_exceeded",)
    return ()


def standing_policy_reasons(
    *,
    candidate: Candidate,
    candidate_reasons: tuple[str, ...],
    candidate_guard_passed: bool,
    corpus: CorpusDeclaration,
    policy: StandingPolicy,
    binding: ProviderBinding,
    authority_source_ref: str | None,
    checkpoint: AuthorityCheckpoint | None,
) -> tuple[str, ...]:
    """Every reason the standing policy refuses ``candidate`` (empty: it may activate).

    Args:
        candidate: the proposed candidate (its guard already ran).
        candidate_reasons: the candidate guard's reason codes, re-derived by the caller.
        candidate_guard_passed: whether that guard passed (a failure without a
            reason adds ``candidate_guard_not_passed``).
        corpus, policy, binding: the declared corpus, its standing policy, where it lives.
        authority_source_ref: the ref of the caller's authority source, ``None``
            when no source was given.
        checkpoint: what the source answered for the event's claims (``None``:
            refused, or not asked because the class needs no authority).
    """
    reasons = set(candidate_reasons)
    if not candidate_guard_passed and not candidate_reasons:
        reasons.add("candidate_guard_not_passed")
    target = candidate.target_class
    if target == "hard_policy":
        if authority_source_ref is None:
            reasons.add("authority_source_missing")
        elif checkpoint is None:
            reasons.add("authority_source_refused")
    if authority_source_ref is not None and authority_source_ref != policy.authority_source_ref:
        reasons.add("authority_source_mismatch")
    if checkpoint is not None and checkpoint.source_ref != policy.authority_source_ref:
        reasons.add("authority_source_mismatch")
    reasons.update(_setup_reasons(policy, corpus, binding))
    _candidate_fit_reasons(candidate, policy, corpus, reasons)
    return tuple(sorted(reasons))


# The reasons that depend on the policy, corpus and binding alone (pure functions
# of those immutable records), for the last setup seen -- held here, so their ids
# stay theirs: an experiment ingests many events under one setup.
_LAST_SETUP: list[tuple[object, object, object, frozenset[str]]] = []


def _setup_reasons(
    policy: StandingPolicy, corpus: CorpusDeclaration, binding: ProviderBinding
) -> frozenset[str]:
    last = _LAST_SETUP[0] if _LAST_SETUP else None
    if last is not None and last[0] is policy and last[1] is corpus and last[2] is binding:
        return last[3]
    found: set[str] = set()
    _policy_corpus_reasons(policy, corpus, found)
    found.update(binding_reasons(binding, corpus))
    frozen = frozenset(found)
    _LAST_SETUP[:] = [(policy, corpus, binding, frozen)]
    return frozen


def _policy_corpus_reasons(
    policy: StandingPolicy, corpus: CorpusDeclaration, reasons: set[str]
) -> None:
    """The policy against its corpus: enabled, automatic, same owner and exact boundary."""
    cscope, pscope = corpus.scope, policy.scope
    if not policy.enabled:
        reasons.add("standing_policy_disabled")
    if not policy.auto_activate:
        reasons.add("standing_policy_requires_manual_review")
    if policy.owner_ref != corpus.owner_ref:
        reasons.add("standing_policy_owner_mismatch")
    _scope_reasons(pscope, cscope, "standing_policy_{}_corpus_mismatch", reasons)
    if not set(pscope.surface_ids).issubset(cscope.surface_ids):
        reasons.add("standing_policy_surface_exceeds_corpus")
    if corpus.lifecycle.state != "active":
        reasons.add("corpus_not_active")
    if corpus.write_authority in _NOT_DURABLE:
        reasons.add("corpus_write_authority_not_durable")
    if not corpus.retrieval.readback_required:
        reasons.add("corpus_exact_readback_not_required")


# (scope field, the word its reason code uses), reference §9.2.
_SCOPE_CODES: Final = (
    ("workspace_ref", "workspace"),
    ("project_ref", "project"),
    *((name, name) for name in IDENTITY_FIELDS),
)


_SCOPE_VALUES: Final = operator.attrgetter(*(field for field, _ in _SCOPE_CODES))


def _scope_reasons(inner: Any, outer: Any, code: str, reasons: set[str]) -> None:
    """``code`` (a ``{}`` template) for each of workspace, project and identity that differs."""
    if _SCOPE_VALUES(inner) == _SCOPE_VALUES(outer):
        return  # the usual case, compared in one step
    for field, word in _SCOPE_CODES:
        if getattr(inner, field) != getattr(outer, field):
            reasons.add(code.format(word))


def _candidate_fit_reasons(
    candidate: Candidate, policy: StandingPolicy, corpus: CorpusDeclaration, reasons: set[str]
) -> None:
    """The candidate against the policy and the corpus: class, source, actor, scope, scopes."""
    scope, cscope, pscope = candidate.scope, corpus.scope, policy.scope
    target = candidate.target_class
    if target != corpus.class_id:
        reasons.add("candidate_class_corpus_mismatch")
    if policy.allowed_target_classes != (corpus.class_id,):
        reasons.add("standing_policy_class_not_exact_for_corpus")
    if target not in policy.allowed_target_classes:
        reasons.add("candidate_class_not_allowed")
    if candidate.source.source_kind not in policy.allowed_source_kinds:
        reasons.add("candidate_source_kind_not_allowed")
    if candidate.source.actor_role not in policy.allowed_actor_roles:
        reasons.add("candidate_actor_role_not_allowed")
    _scope_reasons(scope, pscope, "candidate_{}_policy_mismatch", reasons)
    surfaces = set(scope.surface_ids)
    if len(scope.surface_ids) != 1:
        reasons.add("candidate_surface_count_not_one")
    if not surfaces.issubset(pscope.surface_ids):
        reasons.add("candidate_surface_not_allowed")
    _scope_reasons(scope, cscope, "candidate_{}_corpus_mismatch", reasons)
    if not surfaces.issubset(cscope.surface_ids):
        reasons.add("candidate_surface_corpus_mismatch")
    freshness = corpus.freshness
    if freshness.mode == "revision_bound" and scope.revision_ref != freshness.source_revision:
        reasons.add("candidate_revision_corpus_mismatch")
    if (  # an archive-bound corpus takes events of its own revision (or naming none)
        freshness.mode == "session_archive_bound"
        and scope.revision_ref is not None
        and scope.revision_ref != freshness.source_revision
    ):
        reasons.add("candidate_revision_corpus_mismatch")
    if not set(candidate.requested_action_scopes).issubset(policy.allowed_action_scopes):
        reasons.add("candidate_action_scope_not_allowed")
