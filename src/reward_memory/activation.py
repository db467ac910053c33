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

import operator
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from reward_memory._active_build import (
    RETENTION_BY_CLASS,
    activation_ref_of,
    derivable,
    derived_record,
    validated_record,
)
from reward_memory.errors import RecordValidationError
from reward_memory.grammars import format_utc, utc_now
from reward_memory.guards.candidate import candidate_reasons, check_now
from reward_memory.records.candidate import UNVERIFIED_CHECKPOINT, AuthorityCheckpoint
from reward_memory.records.review import CandidateReview

if TYPE_CHECKING:
    from datetime import datetime

    from reward_memory.records.active import ActiveRecord
    from reward_memory.records.corpus import CorpusDeclaration

__all__ = [
    "RETENTION_BY_CLASS",
    "activate",
    "activate_typed",
    "activation_ref_of",
    "format_timestamp",
]

_IDENTITY_FIELDS: Final = ("user_ref", "peer_ref", "session_ref")
_SCOPE_FIELDS: Final = ("workspace_ref", "project_ref", *_IDENTITY_FIELDS)
_SCOPE_VALUES: Final = operator.attrgetter(*_SCOPE_FIELDS)  # all at once: the usual case


def format_timestamp(moment: datetime) -> str:
    """An aware datetime in the stored spelling: UTC, ``Z``, microseconds only if set."""
    return format_utc(check_now(moment))


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
    if _SCOPE_VALUES(scope) != _SCOPE_VALUES(corpus_scope):
        for name in _SCOPE_FIELDS:  # the first that differs, named
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
    if type(corpus) is CorpusDeclaration and derivable(packet, corpus, authority_source):
        return derived_record(packet, corpus, authority_source, activated_at)
    return validated_record(packet, corpus, authority_source, activated_at)
