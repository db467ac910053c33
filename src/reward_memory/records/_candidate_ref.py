"""The candidate's identity: ``candidate_ref`` and the object it hashes.

Kept apart from the records so :mod:`reward_memory.records.candidate` stays one
concept: the ref is computed when a :class:`~reward_memory.records.candidate.Candidate`
is built without one and checked when one is given.
"""

from __future__ import annotations

import hashlib
from json.encoder import encode_basestring
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from reward_memory.records.candidate import (
        Candidate,
        CandidateGuardContext,
        CandidateSource,
    )
    from reward_memory.records.envelope import RecordScope

__all__ = ["candidate_hashed_object", "candidate_ref_of"]


def candidate_ref_of(
    *,
    target_class: str,
    content_summary: str,
    source: CandidateSource,
    scope: RecordScope,
    guard_context: CandidateGuardContext,
    requested_action_scopes: tuple[str, ...],
    expires_at: str | None = None,
    observed_at: str | None = None,
    supersedes_refs: tuple[str, ...] = (),
) -> str:
    """The ``candidate_ref``: ``candidate:`` + 20 hex of sha256 over legacy J1.

    The hashed object is the original's (reference §1.5) -- ``target_class``,
    ``content_summary``, ``source`` (kind, ref, actor, role), ``scope`` (always
    ``revision_ref``; an identity key only when it is set), ``guard_context``,
    ``requested_action_scopes`` -- plus, each only when set, ``expires_at``,
    ``observed_at`` (normalised timestamps) and ``supersedes_refs``: how long
    the record lives, when its evidence was observed, and what it replaces.
    Encoded as ``json.dumps(obj, sort_keys=True)`` (J1: default separators,
    non-ASCII kept). A candidate without those three has the original's ref,
    byte for byte; one with any of them has a ref the original never gave it
    (it ignored them: differs from the original).

    The J1 text is written out directly, keys in sorted order, each string
    through the encoder json itself uses, in one string display: it is the
    per-call path, and this is a third of the cost of building the dict and
    encoding it. ``tests/test_candidates.py``
    proves it equal to :func:`reward_memory.digests.legacy_json` (J1) over
    generated candidates.
    """
    q = encode_basestring
    # One string display per part (no list of fragments to grow and join).
    expires = "" if expires_at is None else f', "expires_at": {q(expires_at)}'
    observed = "" if observed_at is None else f', "observed_at": {q(observed_at)}'
    supersedes = (
        f', "supersedes_refs": [{", ".join(map(q, supersedes_refs))}]' if supersedes_refs else ""
    )
    # The scope's keys, sorted; an identity key only when it is set.
    peer = "" if scope.peer_ref is None else f'"peer_ref": {q(scope.peer_ref)}, '
    revision = "null" if scope.revision_ref is None else q(scope.revision_ref)
    session = "" if scope.session_ref is None else f', "session_ref": {q(scope.session_ref)}'
    user = "" if scope.user_ref is None else f', "user_ref": {q(scope.user_ref)}'
    verified = "true" if guard_context.current_artifact_verified else "false"
    text = (
        f'{{"content_summary": {q(content_summary)}{expires}'
        f', "guard_context": {{"conflict_state": {q(guard_context.conflict_state)}'
        f', "current_artifact_verified": {verified}'
        f', "source_freshness": {q(guard_context.source_freshness)}}}{observed}'
        f', "requested_action_scopes": [{", ".join(map(q, requested_action_scopes))}]'
        f', "scope": {{{peer}"project_ref": {q(scope.project_ref)}, "revision_ref": {revision}'
        f'{session}, "surface_ids": [{", ".join(map(q, scope.surface_ids))}]{user}'
        f', "workspace_ref": {q(scope.workspace_ref)}}}'
        f', "source": {{"actor_ref": {q(source.actor_ref)}, "actor_role": {q(source.actor_role)}'
        f', "source_kind": {q(source.source_kind)}, "source_ref": {q(source.source_ref)}}}'
        f'{supersedes}, "target_class": {q(target_class)}}}'
    )
    return "candidate:" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:20]


def candidate_hashed_object(candidate: Candidate) -> dict[str, Any]:
    """The object ``candidate_ref`` hashes, as data (for inspection and tests)."""
    scope = candidate.scope
    scope_obj: dict[str, Any] = {
        "workspace_ref": scope.workspace_ref,
        "project_ref": scope.project_ref,
        "surface_ids": list(scope.surface_ids),
        "revision_ref": scope.revision_ref,
    }
    for name in ("user_ref", "peer_ref", "session_ref"):
        if getattr(scope, name) is not None:
            scope_obj[name] = getattr(scope, name)
    source, context = candidate.source, candidate.guard_context
    hashed: dict[str, Any] = {
        "target_class": candidate.target_class,
        "content_summary": candidate.content_summary,
        "source": {
            "source_kind": source.source_kind,
            "source_ref": source.source_ref,
            "actor_ref": source.actor_ref,
            "actor_role": source.actor_role,
        },
        "scope": scope_obj,
        "guard_context": {
            "source_freshness": context.source_freshness,
            "conflict_state": context.conflict_state,
            "current_artifact_verified": context.current_artifact_verified,
        },
        "requested_action_scopes": list(candidate.requested_action_scopes),
    }
    lifecycle = candidate.lifecycle
    if lifecycle.expires_at is not None:
        hashed["expires_at"] = lifecycle.expires_at
    if candidate.observed_at is not None:
        hashed["observed_at"] = candidate.observed_at
    if lifecycle.supersedes_refs:
        hashed["supersedes_refs"] = list(lifecycle.supersedes_refs)
    return hashed
