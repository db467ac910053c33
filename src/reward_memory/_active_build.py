"""The two builds of the active record :func:`reward_memory.activation.activate` returns.

Split from :mod:`reward_memory.activation` (which owns the preconditions and the
guard): :func:`validated_record` through the validating constructors, and
:func:`derived_record`, which sets the same record from an exact-type,
already-validated review without re-running the validators (see the note
above it). Also the record's derived ``activation_ref``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from reward_memory.digests import make_ref
from reward_memory.records import _memo as m
from reward_memory.records.active import (
    ActivationLineage,
    ActiveRecord,
    ReviewSummary,
    record_ref_of,
)
from reward_memory.records.candidate import (
    AuthorityCheckpoint,
    Candidate,
    CandidateLifecycle,
    CandidateReasoning,
    CandidateSource,
)
from reward_memory.records.envelope import (
    Confidence,
    Expiry,
    Privacy,
    RecordAuthority,
    RecordScope,
    RecordSource,
    RetentionClass,
    Revocation,
    Supersession,
)
from reward_memory.records.review import CandidateReview, CandidateReviewSummary

if TYPE_CHECKING:
    from reward_memory.records.corpus import CorpusDeclaration

__all__ = [
    "ACTIVE_RECORD_SCHEMA",
    "RETENTION_BY_CLASS",
    "activation_ref_of",
    "derivable",
    "derived_record",
    "validated_record",
]

ACTIVE_RECORD_SCHEMA: Final = "reward_memory_active_record_v1"
RETENTION_BY_CLASS: Final[dict[str, RetentionClass]] = {
    "hard_policy": "durable_until_revoked",
    "soft_preference": "durable_until_revoked",
    "procedural_experience": "revision_bound",
}


# A placeholder token: the record is built once, then its activation_ref is set.
_PENDING: Final = "activation:pending"


def activation_ref_of(record: ActiveRecord) -> str:
    """``activation:`` + 20 hex over the canonical JSON of every field but ``activation_ref``.

    The hashed value is the record's wire form minus its own ref, with each
    object written as the array of its values in field order (the field
    order is fixed by ``schema_version``, the first element): the same
    information as the object, at a third of the encoding cost. It is written
    out field by field because a generic walk costs as much as the rest of
    :func:`~reward_memory.activation.activate`; ``tests/test_identity.py``
    holds it equal to the generic walk over
    :func:`~reward_memory.records._plain.to_plain`, so a field added to the
    record is hashed or the test fails.
    """
    s, sc, au, co = record.source, record.scope, record.authority, record.confidence
    su, rv, ex, pr = record.supersession, record.revocation, record.expiry, record.privacy
    rw, li = record.review, record.activation_lineage
    material = [
        record.schema_version,
        record.record_ref,
        record.activated_at,
        record.corpus_id,
        record.candidate_ref,
        record.content_summary,
        record.class_id,
        [s.source_kind, s.source_ref, s.actor_ref, s.actor_role, s.observed_at],
        [
            sc.workspace_ref,
            sc.project_ref,
            sc.surface_ids,
            sc.revision_ref,
            sc.user_ref,
            sc.peer_ref,
            sc.session_ref,
        ],
        [au.level, au.action_scopes, au.checkpoint_ref],
        [co.level, co.basis],
        record.lifecycle_state,
        [su.supersedes_refs, su.superseded_by_ref],
        [rv.revoked_by_ref, rv.revoked_at, rv.reason],
        [ex.expires_at, ex.retired_reason],
        [pr.visibility, pr.retention_class, pr.raw_content_captured],
        [rw.reviewer_ref, rw.review_ref, rw.reasoning_summary],
        [li.effective_decision, li.guard_passed, li.review_ref],
        record.provider_write_performed,
        record.external_writes_performed,
    ]
    return make_ref("activation", material)


def validated_record(
    packet: CandidateReview,
    corpus: CorpusDeclaration,
    authority_source: AuthorityCheckpoint,
    activated_at: str,
) -> ActiveRecord:
    """The active record through the validating constructors (every field checked)."""
    record = packet.record
    if record.target_class == "hard_policy":
        assert authority_source.source_ref is not None
        authority = RecordAuthority(
            level="constraint",
            action_scopes=record.requested_action_scopes,
            checkpoint_ref=authority_source.source_ref,
        )
    else:
        authority = RecordAuthority(level="advisory")
    review_ref = packet.review.review_ref
    source = record.source
    active = ActiveRecord(
        activation_ref=_PENDING,
        activated_at=activated_at,
        corpus_id=corpus.corpus_id,
        candidate_ref=record.candidate_ref,
        content_summary=record.content_summary,
        class_id=record.target_class,
        source=RecordSource(
            source_kind=source.source_kind,
            source_ref=source.source_ref,
            actor_ref=source.actor_ref,
            actor_role=source.actor_role,
            observed_at=record.observed_at or activated_at,
        ),
        scope=record.scope,
        authority=authority,
        confidence=Confidence(
            level=record.reasoning.confidence, basis=record.reasoning.confidence_basis
        ),
        lifecycle_state="active",
        supersession=Supersession(supersedes_refs=record.lifecycle.supersedes_refs),
        expiry=Expiry(expires_at=record.lifecycle.expires_at),
        privacy=Privacy(
            visibility=corpus.privacy.visibility,
            retention_class=RETENTION_BY_CLASS[record.target_class],
        ),
        review=ReviewSummary(
            reviewer_ref=packet.review.reviewer_ref,
            review_ref=review_ref,
            reasoning_summary=packet.review.reasoning_summary,
        ),
        activation_lineage=ActivationLineage(review_ref=review_ref),
    )
    # The record is new and not yet shared: set its one field derived from all
    # the others (a token, like the placeholder) instead of validating it twice.
    object.__setattr__(active, "activation_ref", activation_ref_of(active))
    return active


# -- the derived build ------------------------------------------------------------------------
#
# Every field of the active record is a value an exact-type, already-validated
# record holds under the same grammar (the candidate's tokens, text and
# timestamps; the corpus id and visibility; the checkpoint's source ref; the
# review's refs and summary), a library constant, or derived (activated_at,
# record_ref, activation_ref). The constructors' only other checks are the
# envelope's cross-field rules, which the preconditions of _derivable settle:
# an active, unrevoked, unsuperseded record of a candidate class with the
# authority its class allows. So the record is set without re-running the
# validators; anything else goes through _validated_record.
# ``tests/test_activation.py`` holds the two builds equal over the whole
# activation case space.

_make_record: Final = m.trusted(ActiveRecord)
_make_source: Final = m.trusted(RecordSource)
_make_confidence: Final = m.trusted(Confidence)
_make_authority: Final = m.trusted(RecordAuthority)
_make_review: Final = m.trusted(ReviewSummary)
_make_lineage: Final = m.trusted(ActivationLineage)
_make_supersession: Final = m.trusted(Supersession)
_make_expiry: Final = m.trusted(Expiry)
_ADVISORY: Final = RecordAuthority(level="advisory")
_NO_SUPERSESSION: Final = Supersession()
_NO_EXPIRY: Final = Expiry()
_NO_REVOCATION: Final = Revocation()
_PRIVACY: Final = {
    (visibility, retention): Privacy(visibility=visibility, retention_class=retention)
    for visibility in ("private", "workspace", "public_safe")
    for retention in set(RETENTION_BY_CLASS.values())
}


def derivable(
    packet: CandidateReview, corpus: CorpusDeclaration, checkpoint: AuthorityCheckpoint
) -> bool:
    """Whether every part is an exact-type record, so its values passed their grammars."""
    record = packet.record
    return (
        type(packet) is CandidateReview
        and type(packet.review) is CandidateReviewSummary
        and type(record) is Candidate
        and type(record.source) is CandidateSource
        and type(record.scope) is RecordScope
        and type(record.reasoning) is CandidateReasoning
        and type(record.lifecycle) is CandidateLifecycle
        and record.target_class in RETENTION_BY_CLASS
        and (
            record.target_class != "hard_policy"
            or (
                type(checkpoint) is AuthorityCheckpoint
                and checkpoint.source_ref is not None
                and bool(record.requested_action_scopes)
            )
        )
        and (corpus.privacy.visibility, RETENTION_BY_CLASS[record.target_class]) in _PRIVACY
    )


def derived_record(
    packet: CandidateReview,
    corpus: CorpusDeclaration,
    checkpoint: AuthorityCheckpoint,
    activated_at: str,
) -> ActiveRecord:
    record = packet.record
    source, reasoning, lifecycle, review = (
        record.source,
        record.reasoning,
        record.lifecycle,
        packet.review,
    )
    target_class = record.target_class
    review_ref = review.review_ref
    supersedes = lifecycle.supersedes_refs
    expires_at = lifecycle.expires_at
    active = _make_record(
        record_ref=record_ref_of(corpus.corpus_id, record.candidate_ref),
        activation_ref=_PENDING,
        activated_at=activated_at,
        corpus_id=corpus.corpus_id,
        candidate_ref=record.candidate_ref,
        content_summary=record.content_summary,
        class_id=target_class,
        source=_make_source(
            source_kind=source.source_kind,
            source_ref=source.source_ref,
            actor_ref=source.actor_ref,
            actor_role=source.actor_role,
            observed_at=record.observed_at or activated_at,
        ),
        scope=record.scope,
        authority=(
            _make_authority(
                level="constraint",
                action_scopes=record.requested_action_scopes,
                checkpoint_ref=checkpoint.source_ref,
            )
            if target_class == "hard_policy"
            else _ADVISORY
        ),
        confidence=_make_confidence(level=reasoning.confidence, basis=reasoning.confidence_basis),
        lifecycle_state="active",
        supersession=(
            _make_supersession(supersedes_refs=supersedes) if supersedes else _NO_SUPERSESSION
        ),
        revocation=_NO_REVOCATION,
        expiry=_NO_EXPIRY if expires_at is None else _make_expiry(expires_at=expires_at),
        privacy=_PRIVACY[corpus.privacy.visibility, RETENTION_BY_CLASS[target_class]],
        review=_make_review(
            reviewer_ref=review.reviewer_ref,
            review_ref=review_ref,
            reasoning_summary=review.reasoning_summary,
        ),
        activation_lineage=_make_lineage(review_ref=review_ref),
    )
    object.__setattr__(active, "activation_ref", activation_ref_of(active))
    return active
