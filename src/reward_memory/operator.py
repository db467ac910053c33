"""Operator controls: edit, retire, revoke and purge one active record.

::

    request ──operator_reasons (pure, ordered)──▶ guard_blocked (no receipt, zero provider calls)
      ──build──▶ edit: the replacement candidate's review packet (never written here)
               retire / revoke / purge: the record this control writes
      ──dry run──▶ control_ready (zero provider calls)
      ──execute──▶ locate (search + exact read) ──▶ write the control record
               ──▶ delete the record's documents ──▶ exact readback ──▶ receipt

Authority (see :mod:`reward_memory.records.operator` for the table): the
checkpoint must be verified and name *this* corpus, *this* corpus's project and
*this* action, and its ``authority_ref`` must be the one the corpus declares
for the action (the owner for edit, revoke and purge; the retirement authority
for retire). A checkpoint never adds authority: an edit's replacement asks
for exactly the action scopes the replaced candidate asked for and still needs
review and the caller's authority checkpoint to activate; retire, revoke and
purge only ever take authority away.

Provider writes (retire, revoke, purge under ``execute``) go through the SPI
only, so they hold on every provider: the control record (the retired record,
a content-free :class:`~reward_memory.records.operator.RevocationRecord` or
:class:`~reward_memory.records.operator.PurgeTombstone`) is written in the
corpus scope under a key derived from ``record_ref``, then the record's
*closed* marker (:func:`~reward_memory._operator_provider.closed_key`: one key
per record, whatever the action; ingest reads it before every write, so a
replay of the event under *any* standing policy is a ``conflict`` with
``record_closed_by_operator`` and never brings the record back), then every document
that reads back as this record is deleted (revoke and purge: any state;
retire: all but the retired copy; purge: its revocation records too, so the
tombstone is all that is left), then -- when the request names the
standing policy the record was ingested under -- the same control record is
written into the record's ingest slot (so a replay of the event conflicts
instead of writing the record again), then everything is read back. Recall reads
every hit back before using it, so a search index that still lists a deleted
document changes nothing. Provider failures fail open with a status, never an
exception; nothing half-done says ``completed``, and a retry is idempotent (the
control record is found again, deleted documents stay deleted). The lineage
only narrows: after a purge only another purge runs, and a revoked record is
not retired (either would write its content back): ``lineage_conflict``.

An edit writes nothing: the replacement is a ``review_ready`` candidate that
supersedes the record (``supersedes_refs``); reviewing and ingesting it is the
owner's next step, and recall drops the superseded record once both are found.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

import attrs

from reward_memory.digests import make_ref, short_digest
from reward_memory.errors import RecordValidationError
from reward_memory.grammars import format_utc, resolve_now
from reward_memory.records._plain import as_record, to_plain
from reward_memory.records.active import ActiveRecord, record_ref_of
from reward_memory.records.envelope import Expiry
from reward_memory.records.operator import (
    OPERATOR_REASON_CODES,
    OperatorControl,
    OperatorControlReceipt,
    OperatorControlRequest,
    PurgeTombstone,
    RevocationRecord,
)

if TYPE_CHECKING:
    from collections.abc import Mapping
    from datetime import datetime

    from reward_memory.providers.spi import Provider
    from reward_memory.records.corpus import CorpusDeclaration
    from reward_memory.records.operator import NextStep, OperatorAction, ResultState
    from reward_memory.records.recall import ProviderBinding
    from reward_memory.records.review import CandidateReview

__all__ = [
    "RESULT_STATE",
    "RETIRED_REASON",
    "control_key",
    "operator_control",
    "operator_reasons",
    "required_authority",
]

RETIRED_REASON: Final = "operator_retirement"
RESULT_STATE: Final[dict[str, ResultState]] = {
    "edit": "candidate",
    "retire": "retired",
    "revoke": "revoked",
    "purge": "purged",
}
_KEY_KIND: Final = {"retire": "retired", "revoke": "revocation", "purge": "tombstone"}
_ORDER: Final = {code: index for index, code in enumerate(OPERATOR_REASON_CODES)}
_IDENTITY_FIELDS: Final = ("workspace_ref", "project_ref", "user_ref", "peer_ref", "session_ref")


def required_authority(corpus: CorpusDeclaration, action: OperatorAction) -> str:
    """The authority ref the corpus declares for ``action`` (owner, or retirement authority)."""
    if action == "retire":
        return corpus.maintenance.retirement_authority
    return corpus.owner_ref


def control_key(action: OperatorAction, record_ref: str) -> str:
    """The provider key of the record a control writes (one per action and record)."""
    return f"reward-memory-{_KEY_KIND[action]}-{record_ref.removeprefix('record:')}.json"


def _ordered(codes: set[str]) -> tuple[str, ...]:
    return tuple(sorted(codes, key=_ORDER.__getitem__))


def operator_reasons(request: OperatorControlRequest) -> tuple[str, ...]:
    """Why this control may not run, in the fixed order (empty: it may). Pure.

    Checkpoint: verified; the same action, corpus and project (the corpus's
    own project); the authority the corpus declares for the action. Record: of
    this corpus and class, inside its scope. Corpus: not ``read_only``; active
    for an edit. An edit or a retirement needs an active record, and an edit an
    accepted review of that very candidate.
    """
    checkpoint, corpus, record = request.operator_checkpoint, request.corpus, request.record
    action = request.action
    codes: set[str] = set()
    if checkpoint.verified is not True:
        codes.add("operator_checkpoint_unverified")
    if checkpoint.action != action:
        codes.add("operator_checkpoint_action_mismatch")
    if checkpoint.corpus_id != corpus.corpus_id:
        codes.add("operator_checkpoint_corpus_mismatch")
    if checkpoint.project_ref != corpus.scope.project_ref:
        codes.add("operator_checkpoint_project_mismatch")
    if checkpoint.authority_ref != required_authority(corpus, action):
        codes.add("operator_authority_mismatch")
    if record.corpus_id != corpus.corpus_id:
        codes.add("record_corpus_mismatch")
    if record.class_id != corpus.class_id:
        codes.add("record_class_mismatch")
    scope = record.scope
    if any(
        getattr(scope, name) != getattr(corpus.scope, name) for name in _IDENTITY_FIELDS
    ) or not set(scope.surface_ids) <= set(corpus.scope.surface_ids):
        codes.add("record_scope_mismatch")
    if corpus.write_authority == "read_only":
        codes.add("corpus_read_only")
    if action == "edit" and corpus.lifecycle.state != "active":
        codes.add("corpus_not_active")
    if action in ("edit", "retire") and record.lifecycle_state != "active":
        codes.add("record_not_active")
    if action == "edit":
        review = request.accepted_review
        if (
            review is None
            or review.status != "active"
            or review.effective_decision != "accept"
            or review.record.candidate_ref != record.candidate_ref
        ):
            codes.add("accepted_review_mismatch")
    return _ordered(codes)


# -- what each action yields (pure) -------------------------------------------------------


def _replacement(request: OperatorControlRequest, moment: datetime) -> CandidateReview | None:
    """The edit's replacement: a review_ready candidate superseding the record (or None)."""
    from reward_memory.candidates import _CHECKPOINT_REASONS  # noqa: PLC0415 - one rule, one place
    from reward_memory.guards.candidate import candidate_reasons  # noqa: PLC0415
    from reward_memory.records.candidate import (  # noqa: PLC0415
        UNVERIFIED_CHECKPOINT,
        Candidate,
        CandidateLifecycle,
    )
    from reward_memory.records.review import (  # noqa: PLC0415
        CandidateReview,
        CandidateReviewSummary,
    )

    assert request.accepted_review is not None
    assert request.edited_content_summary is not None
    old = request.accepted_review.record
    new = Candidate(
        target_class=old.target_class,
        content_summary=request.edited_content_summary,
        source=old.source,
        scope=old.scope,
        reasoning=old.reasoning,
        guard_context=old.guard_context,
        # Exactly what the replaced candidate asked for: an edit never asks for more.
        requested_action_scopes=old.requested_action_scopes,
        lifecycle=CandidateLifecycle(
            state="candidate",
            supersedes_refs=(request.record.candidate_ref,),
            expires_at=old.expires_at,
        ),
        observed_at=old.observed_at,
    )
    # The review records no checkpoint verdict (as a review packet never does):
    # the replacement's review and activation re-run the guard under the caller's
    # checkpoint, so authority comes from there or not at all.
    free = candidate_reasons(new, UNVERIFIED_CHECKPOINT, now=moment)
    if any(code not in _CHECKPOINT_REASONS for code in free):
        return None
    checkpoint = request.operator_checkpoint
    return CandidateReview(
        status="review_ready",
        requested_decision="edit",
        effective_decision="edit",
        guard_passed=True,
        reason_codes=(),
        review=CandidateReviewSummary(
            reviewer_ref=checkpoint.operator_ref,
            review_ref=request.control_ref,
            reasoning_summary=request.reasoning_summary,
        ),
        record=new,
        persistence_next_step="none",
    )


def _retired(record: ActiveRecord) -> ActiveRecord:
    from reward_memory.activation import activation_ref_of  # noqa: PLC0415

    pending = attrs.evolve(
        record,
        lifecycle_state="retired",
        expiry=Expiry(expires_at=record.expiry.expires_at, retired_reason=RETIRED_REASON),
        activation_ref="activation:pending",
    )
    return attrs.evolve(pending, activation_ref=activation_ref_of(pending))


def _control_record(
    request: OperatorControlRequest, moment: datetime
) -> ActiveRecord | RevocationRecord | PurgeTombstone:
    record, checkpoint = request.record, request.operator_checkpoint
    if request.action == "retire":
        return _retired(record)
    if request.action == "revoke":
        return RevocationRecord(
            record_ref=record.record_ref,
            corpus_id=record.corpus_id,
            candidate_ref=record.candidate_ref,
            activation_ref=record.activation_ref,
            control_ref=request.control_ref,
            revoked_by_ref=checkpoint.operator_ref,
            authority_ref=checkpoint.authority_ref,
            authority_source_ref=checkpoint.source_ref,
            revoked_at=format_utc(moment),
            reasoning_summary=request.reasoning_summary,
        )
    return PurgeTombstone(
        record_ref=record.record_ref,
        corpus_id=record.corpus_id,
        candidate_ref=record.candidate_ref,
        control_ref=request.control_ref,
        purged_by_ref=checkpoint.operator_ref,
        authority_ref=checkpoint.authority_ref,
        authority_source_ref=checkpoint.source_ref,
        purged_at=format_utc(moment),
        reasoning_digest=short_digest(request.reasoning_summary),
    )


def _result_ref(written: ActiveRecord | RevocationRecord | PurgeTombstone) -> str:
    if isinstance(written, ActiveRecord):
        return written.activation_ref
    prefix = "revocation" if isinstance(written, RevocationRecord) else "tombstone"
    return make_ref(prefix, to_plain(written))


def _check_integrity(record: ActiveRecord) -> None:
    """The record is one a corpus owner wrote: its activation_ref hashes every field.

    Loading a record does not re-hash it (recall's hot path relies on exact
    readback instead); a control takes the record from its caller, so it
    checks: an edited field (a summary, an action scope) is refused here.
    """
    from reward_memory.activation import activation_ref_of  # noqa: PLC0415

    if activation_ref_of(record) != record.activation_ref:
        raise RecordValidationError(
            "does not match the record's fields (it is derived from them)",
            path="$.record.activation_ref",
            code="digest_mismatch",
        )


def _as_request(request: OperatorControlRequest | Mapping[str, Any]) -> OperatorControlRequest:
    return as_record(request, OperatorControlRequest, what="the control request")


def operator_control(
    request: OperatorControlRequest | Mapping[str, Any],
    *,
    provider: Provider | None = None,
    binding: ProviderBinding | None = None,
    execute: bool = False,
    now: datetime | None = None,
) -> OperatorControl:
    """Run one operator control (see the module docs).

    Args:
        request: a ``reward_memory_operator_control_request_v0`` (record or mapping).
        provider: the SPI provider holding the corpus (required to execute).
        binding: where the corpus lives in it (required to execute; must be
            the corpus's binding, else ``guard_blocked``).
        execute: perform the corpus owner's write and readback (retire, revoke,
            purge). Default: a dry run (``control_ready``, zero provider calls).
            An edit never writes, executed or not.
        now: the clock (aware; default UTC now): the revocation / purge time.

    Returns the control packet; never raises for anything the provider does.

    Raises:
        RecordValidationError: an invalid request, or execute without a
            provider and a binding (programmer errors).
    """
    from reward_memory.records.recall import ProviderBinding  # noqa: PLC0415

    control = _as_request(request)
    _check_integrity(control.record)
    moment = resolve_now(now)
    if execute is not True and execute is not False:
        raise RecordValidationError("execute must be a boolean", path="execute", code="wrong_type")
    writes = execute and control.action != "edit"
    if writes and (provider is None or binding is None):
        raise RecordValidationError(
            "execute needs a provider and its binding",
            path="provider" if provider is None else "binding",
            code="missing_field",
        )
    if binding is not None and not isinstance(binding, ProviderBinding):
        raise RecordValidationError("must be a ProviderBinding", path="binding", code="wrong_type")
    codes = set(operator_reasons(control))
    if writes:
        from reward_memory.guards.recall import binding_reasons  # noqa: PLC0415

        assert binding is not None
        codes.update(binding_reasons(binding, control.corpus))
    # The provider object is the store the binding names (another provider would answer
    # for records it does not hold).
    if (
        provider is not None
        and binding is not None
        and getattr(provider, "provider_id", None) != binding.provider_id
    ):
        codes.add("provider_binding_provider_mismatch")
    if codes:
        return _blocked(control, codes)
    decision = None
    if control.action == "edit":
        looked = 0
        if provider is not None and binding is not None:
            closed, looked = _edit_lineage(control, provider, binding)
            if closed is not None:
                return closed
        decision = _replacement(control, moment)
        if decision is None:
            return _blocked(control, {"replacement_candidate_guard_blocked"})
        result_digest = short_digest(
            record_ref_of(control.corpus.corpus_id, decision.record.candidate_ref)
        )
        return _packet(
            control, decision, status="control_ready", result_digest=result_digest, calls=looked
        )
    written = _control_record(control, moment)
    result_digest = short_digest(_result_ref(written))
    if not writes:
        return _packet(control, None, status="control_ready", result_digest=result_digest)
    from reward_memory._operator_provider import execute_control  # noqa: PLC0415

    assert provider is not None
    assert binding is not None
    slot = None
    if control.standing_policy is not None:
        from reward_memory.ingestion import target_key  # noqa: PLC0415

        slot = target_key(control.standing_policy, control.record.candidate_ref)
    outcome = execute_control(
        action=control.action,
        record=control.record,
        written=written,
        key=control_key(control.action, control.record.record_ref),
        slot_key=slot,
        provider=provider,
        binding=binding,
    )
    return _packet(
        control,
        None,
        status=outcome.status,
        result_digest=result_digest,
        reasons=outcome.reasons,
        write_performed=outcome.write_performed,
        deleted=outcome.deleted,
        calls=outcome.calls,
    )


def _edit_lineage(
    control: OperatorControlRequest, provider: Provider, binding: ProviderBinding
) -> tuple[OperatorControl | None, int]:
    """With the provider at hand, an edit looks at the record first, as the other controls
    do: a record already purged, revoked or retired is not the active record an edit
    supersedes (its replacement would bring the closed content back). Returns the refusal
    (``None``: edit on) and the provider calls made."""
    from reward_memory._operator_provider import LocateFailed, locate  # noqa: PLC0415
    from reward_memory.guards.recall import binding_reasons  # noqa: PLC0415

    if binding_reasons(binding, control.corpus):
        return None, 0  # not this corpus's binding: nothing to look at (an edit writes nothing)
    try:
        located, calls = locate(
            provider,
            binding.provider_scope,
            record_ref=control.record.record_ref,
            candidate_ref=control.record.candidate_ref,
            timeout=float(binding.timeout_seconds),
        )
    except LocateFailed as exc:
        return _packet(
            control,
            None,
            status="provider_unavailable",
            result_digest=short_digest(control.record.record_ref),
            reasons=(exc.reason,),
            calls=exc.calls,
        ), exc.calls
    kinds = {item.kind for item in located}
    reason = (
        "record_purged"
        if "purged" in kinds
        else "record_revoked"
        if "revoked" in kinds
        else "record_not_active"
        if any(item.kind == "record" and not item.live for item in located)
        and not any(item.kind == "record" and item.live for item in located)
        else None
    )
    if reason is None:
        return None, calls
    return _packet(
        control,
        None,
        status="lineage_conflict",
        result_digest=short_digest(control.record.record_ref),
        reasons=(reason,),
        calls=calls,
    ), calls


def _blocked(control: OperatorControlRequest, codes: set[str]) -> OperatorControl:
    return OperatorControl(
        status="guard_blocked",
        action=control.action,
        reason_codes=_ordered(codes),
        provider_call_count=0,
    )


_NEXT: Final[dict[str, NextStep]] = {
    "edit": "review_replacement_then_owner_write_and_exact_readback",
    "dry_run": "execute_with_provider_then_exact_readback",
    "completed": "none",
}


def _packet(
    control: OperatorControlRequest,
    decision: CandidateReview | None,
    *,
    status: Any,
    result_digest: str,
    reasons: tuple[str, ...] = (),
    write_performed: bool = False,
    deleted: int = 0,
    calls: int = 0,
) -> OperatorControl:
    checkpoint, record = control.operator_checkpoint, control.record
    next_step: NextStep
    if control.action == "edit" and status == "control_ready":
        next_step = _NEXT["edit"]
    elif status == "control_ready":
        next_step = _NEXT["dry_run"]
    elif status in ("completed", "lineage_conflict"):
        next_step = _NEXT["completed"]
    else:
        next_step = "retry_control"
    receipt = OperatorControlReceipt(
        control_ref=control.control_ref,
        action=control.action,
        effective_action=control.action,
        status=status,
        reason_codes=reasons,
        operator_ref=checkpoint.operator_ref,
        authority_ref=checkpoint.authority_ref,
        authority_source_ref=checkpoint.source_ref,
        corpus_id=control.corpus.corpus_id,
        record_ref=record.record_ref,
        prior_record_digest=short_digest(record.record_ref),
        result_record_digest=result_digest,
        result_state=RESULT_STATE[control.action],
        reasoning_summary=control.reasoning_summary,
        provider_write_performed=write_performed,
        readback_verified=status == "completed",
        deleted_count=deleted,
        provider_call_count=calls,
        next_step=next_step,
    )
    return OperatorControl(
        status=status,
        action=control.action,
        reason_codes=reasons,
        decision=decision,
        receipt=receipt,
        provider_call_count=calls,
    )
