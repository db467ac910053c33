"""Activation: an accepted review becomes an active record v1 (the full Stage-0 envelope).

:func:`activate` only *builds* the record; the declared corpus owner persists it
and verifies the readback. Preconditions (reference §6, each a
:class:`~reward_memory.errors.RecordValidationError`):

- the review is an ``accept`` with ``status: active``, the guard passed, and the
  record's lifecycle is ``active``;
- the record's class is the corpus class;
- the record's scope fits the corpus: workspace and project equal, the
  ``user_ref`` / ``peer_ref`` / ``session_ref`` identities equal (absent is
  ``null``), and its surfaces a subset of the corpus surfaces;
- a ``revision_bound`` corpus: the record's ``revision_ref`` is the corpus's
  ``source_revision``;
- ours, beyond the original: the corpus lifecycle is ``active``, and the
  candidate guard is re-run on the record against the caller's checkpoint at
  ``now`` and must pass. So an expired record never activates, and a hard
  policy gains action authority only from the checkpoint passed *here*, never
  from a review packet's claims (a hand-edited ``guard_passed`` buys nothing).

Authority (independent of confidence -- confidence is copied, never read):

- ``hard_policy``: level ``constraint``; ``action_scopes`` = the requested scopes
  (already a subset of the checkpoint's); ``checkpoint_ref`` = the checkpoint's
  ``source_ref``;
- every advisory class: level ``advisory``, no action scopes, no checkpoint.
  (``working_context`` and ``run_bound_reward`` are never candidate targets, so
  they never activate.)

Privacy: visibility from the corpus; ``raw_content_captured`` false; the
retention class by class (:data:`RETENTION_BY_CLASS`):

- ``hard_policy`` and ``soft_preference``: ``durable_until_revoked`` -- durable
  until superseded, revoked, retired or expired;
- ``procedural_experience``: ``revision_bound`` -- revision-stamped, stale when
  the revision diverges.

Identity (issue item 12; see :mod:`reward_memory.records.active`):

- ``record_ref`` names the memory: ``corpus_id`` + ``candidate_ref``. The same
  candidate activated again (another review, another clock) into the same
  corpus is the same record; revoke, purge and explain name it.
- ``activation_ref`` (:func:`activation_ref_of`) names these exact bytes:
  ``make_ref("activation", ...)`` over the canonical JSON of *every other field*
  of the record -- content, class, source (with its observation time), scope,
  authority, confidence, lifecycle, supersession, revocation, expiry, privacy,
  review, lineage, activation time and ``record_ref``. So nothing the record
  says or how long it lives can change without changing it (differs from the
  original's J3 over three keys; a new digest, so the canonical encoding).

Renewal: an expiry is part of the candidate (and so of ``candidate_ref``).
Renewing or shortening it means proposing the candidate again with the new
expiry -- a new candidate_ref, a new record_ref, reviewed and activated like
any other -- never changing a stored record in place (a stored packet whose
expiry was edited no longer matches its ref and fails to load). Retiring or
superseding the old record is a lifecycle step on *its* record_ref.

Time: ``activated_at`` and every timestamp the record copies are stored
normalised (UTC, ``Z``; see :func:`reward_memory.grammars.normalize_timestamp`).
Same inputs, same record, byte for byte.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from reward_memory.digests import make_ref
from reward_memory.errors import RecordValidationError
from reward_memory.grammars import format_utc, utc_now
from reward_memory.guards.candidate import candidate_reasons, check_now
from reward_memory.records import _memo as m
from reward_memory.records.active import (
    ActivationLineage,
    ActiveRecord,
    ReviewSummary,
    record_ref_of,
)
from reward_memory.records.candidate import (
    UNVERIFIED_CHECKPOINT,
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
    from datetime import datetime

    from reward_memory.records.corpus import CorpusDeclaration

__all__ = [
    "RETENTION_BY_CLASS",
    "activate",
    "activate_typed",
    "activation_ref_of",
    "format_timestamp",
]

ACTIVE_RECORD_SCHEMA: Final = "reward_memory_active_record_v1"
RETENTION_BY_CLASS: Final[dict[str, RetentionClass]] = {
    "hard_policy": "durable_until_revoked",
    "soft_preference": "durable_until_revoked",
    "procedural_experience": "revision_bound",
}
_IDENTITY_FIELDS: Final = ("user_ref", "peer_ref", "session_ref")


# A placeholder token: the record is built once, then its activation_ref is set.
_PENDING: Final = "activation:pending"


def format_timestamp(moment: datetime) -> str:
    """An aware datetime in the stored spelling: UTC, ``Z``, microseconds only if set."""
    return format_utc(check_now(moment))


def activation_ref_of(record: ActiveRecord) -> str:
    """``activation:`` + 20 hex over the canonical JSON of every field but ``activation_ref``.

    The hashed value is the record's wire form minus its own ref, with each
    object written as the array of its values in field order (the field
    order is fixed by ``schema_version``, the first element): the same
    information as the object, at a third of the encoding cost. It is written
    out field by field because a generic walk costs as much as the rest of
    :func:`activate`; ``tests/test_identity.py`` holds it equal to the generic
    walk over :func:`~reward_memory.records._plain.to_plain`, so a field added
    to the record is hashed or the test fails.
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


def _fail(message: str, path: str, code: str) -> RecordValidationError:
    return RecordValidationError(message, path=path, code=code)


def _as_review(review_packet: CandidateReview | Mapping[str, Any]) -> CandidateReview:
    if isinstance(review_packet, CandidateReview):
        return review_packet
    if isinstance(review_packet, Mapping):
        from reward_memory.records._plain import load_plain  # noqa: PLC0415

        return load_plain(dict(review_packet), CandidateReview)
    raise _fail("activation takes a reward_memory_candidate_review_v0 packet", "$", "wrong_type")


def _check_fit(packet: CandidateReview, corpus: CorpusDeclaration) -> None:
    if (
        packet.effective_decision != "accept"
        or packet.status != "active"
        or packet.record.lifecycle.state != "active"
    ):
        raise _fail(
            "only an accepted review (status active, record active) activates",
            "$.effective_decision",
            "review_not_accepted",
        )
    if not packet.guard_passed:
        raise _fail("the candidate guard did not pass", "$.guard_passed", "guard_not_passed")
    record = packet.record
    if record.target_class != corpus.class_id:
        raise _fail(
            "the record's class is not the corpus class",
            "$.record.target_class",
            "corpus_class_mismatch",
        )
    if corpus.lifecycle.state != "active":
        raise _fail("the corpus is not active", "corpus.lifecycle.state", "corpus_not_active")
    scope, corpus_scope = record.scope, corpus.scope
    for name in ("workspace_ref", "project_ref", *_IDENTITY_FIELDS):
        if getattr(scope, name) != getattr(corpus_scope, name):
            raise _fail(
                f"the record's {name} is not the corpus's",
                f"$.record.scope.{name}",
                "corpus_scope_mismatch",
            )
    if not set(scope.surface_ids).issubset(corpus_scope.surface_ids):
        raise _fail(
            "the record's surfaces are not all corpus surfaces",
            "$.record.scope.surface_ids",
            "corpus_scope_mismatch",
        )
    freshness = corpus.freshness
    if freshness.mode == "revision_bound" and scope.revision_ref != freshness.source_revision:
        raise _fail(
            "the record's revision is not the revision the corpus is bound to",
            "$.record.scope.revision_ref",
            "corpus_revision_mismatch",
        )


def activate(
    review_packet: CandidateReview | Mapping[str, Any],
    corpus: CorpusDeclaration,
    *,
    checkpoint: AuthorityCheckpoint | Mapping[str, Any] | None,
    now: datetime | None = None,
) -> ActiveRecord:
    """Build the ``reward_memory_active_record_v1`` for an accepted review.

    Args:
        review_packet: an accepted ``reward_memory_candidate_review_v0``.
        corpus: the declared corpus the record is for.
        checkpoint: the caller's independently verified authority (required
            for ``hard_policy``; ``None`` is unverified, enough for advisory
            classes).
        now: the activation time (aware; default UTC now): ``activated_at``,
            and the clock for expiry.

    Raises:
        RecordValidationError: a precondition fails (see the module docs).
    """
    from reward_memory.candidates import as_checkpoint  # noqa: PLC0415 - avoid a cycle
    from reward_memory.records.corpus import CorpusDeclaration  # noqa: PLC0415

    if not isinstance(corpus, CorpusDeclaration):
        raise _fail("the corpus is a CorpusDeclaration", "corpus", "wrong_type")
    packet = _as_review(review_packet)
    authority_source = (
        as_checkpoint(checkpoint) if checkpoint is not None else UNVERIFIED_CHECKPOINT
    )
    moment = utc_now() if now is None else check_now(now)
    return activate_typed(packet, corpus, authority_source, moment, format_timestamp(moment))


def activate_typed(
    packet: CandidateReview,
    corpus: CorpusDeclaration,
    authority_source: AuthorityCheckpoint,
    moment: datetime,
    activated_at: str,
) -> ActiveRecord:
    """:func:`activate` for typed arguments; ``activated_at`` is ``format_timestamp(moment)``.

    For a caller that holds the stored spelling of its clock already (ingest's
    ``observed_at``): the same preconditions, the same guard, the same record.
    """
    from reward_memory.records.corpus import CorpusDeclaration  # noqa: PLC0415

    _check_fit(packet, corpus)
    record = packet.record
    reasons = candidate_reasons(record, authority_source, now=moment)
    if reasons:
        raise _fail(
            "the candidate guard blocks activation: " + ", ".join(reasons),
            "$.record",
            "guard_blocked",
        )
    if type(corpus) is CorpusDeclaration and _derivable(packet, corpus, authority_source):
        return _derived_record(packet, corpus, authority_source, activated_at)
    return _validated_record(packet, corpus, authority_source, activated_at)


def _validated_record(
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


def _derivable(
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


def _derived_record(
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
