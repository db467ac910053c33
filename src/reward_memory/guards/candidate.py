"""The Stage-2 candidate guard: ordered reason codes, decided from typed records.

Pure functions: no I/O, no provider, and the clock only as the ``now``
argument. The model owns what a candidate *means*; this guard only checks
freshness, conflicts, current-artifact proof, and that no authority is
created or widened. Every reason is collected, in this fixed order
(:data:`reward_memory.records.candidate.REASON_CODES`):

1. ``source_freshness_not_current`` -- ``source_freshness`` is not ``current``
2. ``unresolved_higher_authority_conflict`` -- ``conflict_state`` is not ``clear``
3. ``procedural_experience_current_artifact_unverified``
4. ``advisory_class_requested_action_authority`` -- any class but ``hard_policy``
   asking for action scopes
5. ``hard_policy_missing_action_scope``
6. ``authority_checkpoint_unverified`` -- not verified, or no ``source_ref``
7. ``authority_actor_mismatch``
8. ``authority_actor_role_mismatch``
9. ``actor_role_cannot_derive_hard_policy`` -- the source role is not a verified
   core contributor or project owner/operator
10. ``authority_project_mismatch`` -- checkpoint project is not the scope's project
11. ``requested_action_scope_exceeds_verified_authority`` -- requested scopes
    are not a subset of the checkpoint's
12. ``candidate_expired`` -- ``expires_at`` is not after ``now`` (ours; the
    original never checked expiry when building a candidate)

Codes 5-11 apply to ``hard_policy`` only; 1-11 are the original's, in its order.
The checkpoint is the caller's, from its own authority source: nothing here
derives authority from the candidate's claims. Confidence is never read.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from reward_memory.errors import RecordValidationError
from reward_memory.grammars import parse_timestamp
from reward_memory.records.candidate import HARD_POLICY_ACTOR_ROLES

if TYPE_CHECKING:
    from reward_memory.records.candidate import (
        AuthorityCheckpoint,
        Candidate,
        CandidateGuardContext,
        CandidateSource,
        Proposal,
    )

__all__ = [
    "authority_reasons",
    "candidate_reasons",
    "check_now",
    "proposal_reasons",
]


def check_now(now: datetime) -> datetime:
    """Refuse a naive ``now``: every clock in this library is an aware UTC datetime."""
    if not isinstance(now, datetime) or now.utcoffset() is None:
        raise RecordValidationError(
            "now must be an aware datetime (UTC)", path="now", code="wrong_type"
        )
    return now


def authority_reasons(
    *,
    source: CandidateSource,
    project_ref: str,
    requested_action_scopes: tuple[str, ...],
    checkpoint: AuthorityCheckpoint,
) -> list[str]:
    """Reasons 5-11: does the checkpoint bind this hard-policy candidate's authority?"""
    reasons = []
    if not requested_action_scopes:
        reasons.append("hard_policy_missing_action_scope")
    if not checkpoint.verified or checkpoint.source_ref is None:
        reasons.append("authority_checkpoint_unverified")
    if checkpoint.actor_ref != source.actor_ref:
        reasons.append("authority_actor_mismatch")
    if checkpoint.actor_role != source.actor_role:
        reasons.append("authority_actor_role_mismatch")
    if source.actor_role not in HARD_POLICY_ACTOR_ROLES:
        reasons.append("actor_role_cannot_derive_hard_policy")
    if checkpoint.project_ref != project_ref:
        reasons.append("authority_project_mismatch")
    if not set(requested_action_scopes).issubset(checkpoint.action_scopes):
        reasons.append("requested_action_scope_exceeds_verified_authority")
    return reasons


def _reasons(
    *,
    target_class: str,
    source: CandidateSource,
    project_ref: str,
    guard_context: CandidateGuardContext,
    requested_action_scopes: tuple[str, ...],
    expires_at: str | None,
    checkpoint: AuthorityCheckpoint,
    now: datetime,
) -> tuple[str, ...]:
    reasons = []
    if guard_context.source_freshness != "current":
        reasons.append("source_freshness_not_current")
    if guard_context.conflict_state != "clear":
        reasons.append("unresolved_higher_authority_conflict")
    if target_class == "procedural_experience" and not guard_context.current_artifact_verified:
        reasons.append("procedural_experience_current_artifact_unverified")
    if target_class != "hard_policy":
        if requested_action_scopes:
            reasons.append("advisory_class_requested_action_authority")
    else:
        reasons.extend(
            authority_reasons(
                source=source,
                project_ref=project_ref,
                requested_action_scopes=requested_action_scopes,
                checkpoint=checkpoint,
            )
        )
    if expires_at is not None and parse_timestamp(expires_at, "$.expires_at") <= now:
        reasons.append("candidate_expired")
    return tuple(reasons)


def proposal_reasons(
    proposal: Proposal, checkpoint: AuthorityCheckpoint, *, now: datetime
) -> tuple[str, ...]:
    """Every reason ``proposal`` is blocked under ``checkpoint`` at ``now`` (empty: it passes)."""
    return _reasons(
        target_class=proposal.target_class,
        source=proposal.source,
        project_ref=proposal.scope.project_ref,
        guard_context=proposal.guard_context,
        requested_action_scopes=proposal.requested_action_scopes,
        expires_at=proposal.expires_at,
        checkpoint=checkpoint,
        now=now,
    )


def candidate_reasons(
    candidate: Candidate, checkpoint: AuthorityCheckpoint, *, now: datetime
) -> tuple[str, ...]:
    """The same guard over a candidate record (activation re-runs it before any authority)."""
    return _reasons(
        target_class=candidate.target_class,
        source=candidate.source,
        project_ref=candidate.scope.project_ref,
        guard_context=candidate.guard_context,
        requested_action_scopes=candidate.requested_action_scopes,
        expires_at=candidate.lifecycle.expires_at,
        checkpoint=checkpoint,
        now=now,
    )
