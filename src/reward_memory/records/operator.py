"""Operator controls: the request, the checkpoint, the records a control writes, the receipt.

Four actions on one active record (seeds "Stage 5"; DESIGN §10):

==========  ==============================  ==========================================
action      the checkpoint must match       what the control yields
==========  ==============================  ==========================================
``edit``    the corpus ``owner_ref``        a replacement candidate superseding the record
``retire``  ``maintenance.retirement_       the record, ``retired`` (content kept, never
            authority``                     recalled)
``revoke``  the corpus ``owner_ref``        a content-free :class:`RevocationRecord`; the
                                            record's documents deleted
``purge``   the corpus ``owner_ref``        a content-free :class:`PurgeTombstone`; every
                                            document holding the content deleted
==========  ==============================  ==========================================

Every :class:`OperatorCheckpoint` binds one corpus, one project and one action:
a checkpoint for another corpus, project or action is refused with a reason
code (see :mod:`reward_memory.operator`), and no control ever yields action
authority (the receipt says ``grants_new_action_authority: false``).

The receipt (``reward_memory_operator_control_receipt_v0``) keeps the field
set of the original's operator-control receipt (reference §13.4; other
engineers validate it without importing this module), with ``prior_record_digest``
/ ``result_record_digest`` in place of the candidate-ref digests and status fields
added: ``status``, ``reason_codes``, ``record_ref`` (a hashed ref, so explain can
find the record again), ``deleted_count``, ``provider_call_count``, ``next_step``.
"""

from __future__ import annotations

from typing import Any, ClassVar, Final, Literal, get_args

import attrs

from reward_memory._frozen import frozen
from reward_memory.errors import RecordValidationError
from reward_memory.records import _fields as f
from reward_memory.records.active import ActiveRecord
from reward_memory.records.corpus import CorpusDeclaration
from reward_memory.records.review import CandidateReview
from reward_memory.records.standing_policy import StandingPolicy

__all__ = [
    "ACTIONS",
    "CONTROL_STATUSES",
    "OPERATOR_REASON_CODES",
    "RESULT_STATE_OF",
    "OperatorAction",
    "OperatorCheckpoint",
    "OperatorControl",
    "OperatorControlReceipt",
    "OperatorControlRequest",
    "PurgeTombstone",
    "RevocationRecord",
]

OperatorAction = Literal["edit", "retire", "revoke", "purge"]
ACTIONS: Final[tuple[OperatorAction, ...]] = get_args(OperatorAction)
ResultState = Literal["candidate", "retired", "revoked", "purged"]
RESULT_STATES: Final[tuple[ResultState, ...]] = get_args(ResultState)
ReceiptStatus = Literal[
    "control_ready",
    "completed",
    "partial",
    "provider_unavailable",
    "readback_unverified",
    "lineage_conflict",
]
RECEIPT_STATUSES: Final[tuple[ReceiptStatus, ...]] = get_args(ReceiptStatus)
ControlStatus = Literal[
    "guard_blocked",
    "control_ready",
    "completed",
    "partial",
    "provider_unavailable",
    "readback_unverified",
    "lineage_conflict",
]
CONTROL_STATUSES: Final[tuple[ControlStatus, ...]] = get_args(ControlStatus)
NextStep = Literal[
    "none",
    "review_replacement_then_owner_write_and_exact_readback",
    "execute_with_provider_then_exact_readback",
    "retry_control",
]
NEXT_STEPS: Final[tuple[NextStep, ...]] = get_args(NextStep)

# Every reason a control can be refused or fail with, in the order they are reported.
OPERATOR_REASON_CODES: Final[tuple[str, ...]] = (
    "operator_checkpoint_unverified",
    "operator_checkpoint_action_mismatch",
    "operator_checkpoint_corpus_mismatch",
    "operator_checkpoint_project_mismatch",
    "operator_authority_mismatch",
    "record_corpus_mismatch",
    "record_class_mismatch",
    "record_scope_mismatch",
    "corpus_read_only",
    "corpus_not_active",
    "record_not_active",
    "record_purged",
    "record_revoked",
    "accepted_review_mismatch",
    "replacement_candidate_guard_blocked",
    "provider_binding_corpus_mismatch",
    "provider_binding_provider_mismatch",
    "provider_binding_scope_digest_mismatch",
    "provider_binding_actor_peer_missing",
    "provider_binding_actor_peer_mismatch",
    "provider_binding_peer_scope_mismatch",
    "provider_binding_actor_peer_unscoped",
    "provider_binding_scope_ref_ambiguous",
    "provider_write_failed",
    "provider_answer_malformed",
    "provider_target_content_conflict",
    "provider_search_failed",
    "provider_read_failed",
    "provider_delete_failed",
    "control_record_readback_unverified",
    "record_still_readable",
    "record_locate_incomplete",
    "record_not_found",
    "record_content_mismatch",
)
_CODES: Final = frozenset(OPERATOR_REASON_CODES)

CHECKPOINT_SCHEMA: Final = "reward_memory_operator_checkpoint_v0"
REQUEST_SCHEMA: Final = "reward_memory_operator_control_request_v0"
CONTROL_SCHEMA: Final = "reward_memory_operator_control_v0"
RECEIPT_SCHEMA: Final = "reward_memory_operator_control_receipt_v0"
REVOCATION_SCHEMA: Final = "reward_memory_revocation_record_v0"
TOMBSTONE_SCHEMA: Final = "reward_memory_purge_tombstone_v0"


def _codes(value: Any) -> tuple[str, ...]:
    codes = tuple(value) if isinstance(value, list | tuple) else value
    if not isinstance(codes, tuple) or any(code not in _CODES for code in codes):
        raise RecordValidationError(
            "must be a list of operator-control reason codes",
            path="$.reason_codes",
            code="invalid_value",
        )
    return codes


def _digest16(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is None and attribute.default is None:
        return
    if (
        type(value) is not str
        or len(value) != 16
        or any(c not in "0123456789abcdef" for c in value)
    ):
        raise RecordValidationError(
            "must be 16 lower-case hex", path=f"$.{attribute.name}", code="invalid_format"
        )


def _instance(cls: type[Any]) -> Any:
    return attrs.validators.instance_of(cls)


@frozen(kw_only=True)
class OperatorCheckpoint:
    """``reward_memory_operator_checkpoint_v0``: one verified operator for one exact control.

    Issued by the caller's own source of truth (never inferred from the record):
    ``operator_ref`` acts with ``authority_ref`` (which must be the authority the
    corpus declares for ``action``), for exactly ``corpus_id``, ``project_ref`` and
    ``action``. ``source_ref`` names the source that verified it.
    """

    schema_version: Literal["reward_memory_operator_checkpoint_v0"] = f.const(CHECKPOINT_SCHEMA)
    verified: bool = f.strict_bool()
    operator_ref: str = f.token()
    authority_ref: str = f.token()
    source_ref: str = f.token()
    corpus_id: str = f.corpus_id()
    project_ref: str = f.token()
    action: OperatorAction = f.enum(*ACTIONS)


@frozen(kw_only=True)
class OperatorControlRequest:
    """``reward_memory_operator_control_request_v0``: one control on one active record.

    ``record`` is the active record (v1) as stored; ``corpus`` its declaration.
    An ``edit`` also needs ``edited_content_summary`` and the ``accepted_review``
    the record was activated from (the candidate it replaces: the record itself
    keeps no guard context); no other action takes either.

    ``standing_policy`` (optional): the policy the record was ingested under.
    Given, an executed retire / revoke / purge also closes the record's ingest
    slot (the provider key ingest writes it under), so replaying the same event
    under that policy conflicts instead of writing the record again.
    """

    __rm_omit_none__: ClassVar[bool] = True

    schema_version: Literal["reward_memory_operator_control_request_v0"] = f.const(REQUEST_SCHEMA)
    control_ref: str = f.token()
    action: OperatorAction = f.enum(*ACTIONS)
    record: ActiveRecord = attrs.field(validator=_instance(ActiveRecord))
    corpus: CorpusDeclaration = attrs.field(validator=_instance(CorpusDeclaration))
    operator_checkpoint: OperatorCheckpoint = attrs.field(validator=_instance(OperatorCheckpoint))
    reasoning_summary: str = f.text(360)
    edited_content_summary: str | None = f.optional_text(500)
    accepted_review: CandidateReview | None = attrs.field(
        default=None, validator=attrs.validators.optional(_instance(CandidateReview))
    )
    standing_policy: StandingPolicy | None = attrs.field(
        default=None, validator=attrs.validators.optional(_instance(StandingPolicy))
    )

    def __attrs_post_init__(self) -> None:
        if self.action == "edit":
            for name in ("edited_content_summary", "accepted_review"):
                if getattr(self, name) is None:
                    raise RecordValidationError(
                        "an edit needs this field", path=f"$.{name}", code="missing_field"
                    )
            return
        for name in ("edited_content_summary", "accepted_review"):
            if getattr(self, name) is not None:
                raise RecordValidationError(
                    f"only an edit takes this field, not {self.action}",
                    path=f"$.{name}",
                    code="invalid_value",
                )


@frozen(kw_only=True)
class RevocationRecord:
    """``reward_memory_revocation_record_v0``: who revoked which record, when and why.

    Content-free: hashed refs, the operator's compact reasoning, the time. Written
    in the corpus scope before the record's documents are deleted.
    """

    schema_version: Literal["reward_memory_revocation_record_v0"] = f.const(REVOCATION_SCHEMA)
    record_ref: str = f.token()
    corpus_id: str = f.corpus_id()
    candidate_ref: str = f.token()
    activation_ref: str = f.token()
    control_ref: str = f.token()
    revoked_by_ref: str = f.token()
    authority_ref: str = f.token()
    authority_source_ref: str = f.token()
    revoked_at: str = f.timestamp()
    reasoning_summary: str = f.text(360)
    content_present: Literal[False] = f.const(False)
    raw_content_captured: Literal[False] = f.const(False)


@frozen(kw_only=True)
class PurgeTombstone:
    """``reward_memory_purge_tombstone_v0``: the lineage a purged record leaves behind.

    Content-free on purpose: no summary, no activation ref (it hashes the
    content), and only a digest of the operator's reasoning (the reason for a
    right-to-be-forgotten request may itself describe what was forgotten).
    """

    schema_version: Literal["reward_memory_purge_tombstone_v0"] = f.const(TOMBSTONE_SCHEMA)
    record_ref: str = f.token()
    corpus_id: str = f.corpus_id()
    candidate_ref: str = f.token()
    control_ref: str = f.token()
    purged_by_ref: str = f.token()
    authority_ref: str = f.token()
    authority_source_ref: str = f.token()
    purged_at: str = f.timestamp()
    reasoning_digest: str = attrs.field(validator=_digest16)
    content_deleted: Literal[True] = f.const(True)
    raw_content_captured: Literal[False] = f.const(False)


@frozen(kw_only=True)
class OperatorControlReceipt:
    """``reward_memory_operator_control_receipt_v0``: the public-safe receipt of one control.

    Only emitted for a control whose checkpoint verified (a refused control has
    no receipt, only reason codes). ``provider_write_performed`` says this call
    changed provider state; ``readback_verified`` that the outcome was read back
    exactly (and the record no longer reads back, for revoke and purge).
    """

    schema_version: Literal["reward_memory_operator_control_receipt_v0"] = f.const(RECEIPT_SCHEMA)
    control_ref: str = f.token()
    action: OperatorAction = f.enum(*ACTIONS)
    effective_action: OperatorAction = f.enum(*ACTIONS)
    status: ReceiptStatus = f.enum(*RECEIPT_STATUSES)
    reason_codes: tuple[str, ...] = attrs.field(default=(), converter=_codes)
    operator_ref: str = f.token()
    authority_ref: str = f.token()
    authority_source_ref: str = f.token()
    authority_verified: Literal[True] = f.const(True)
    corpus_id: str = f.corpus_id()
    record_ref: str = f.token()
    prior_record_digest: str = attrs.field(validator=_digest16)
    result_record_digest: str | None = attrs.field(default=None, validator=_digest16)
    result_state: ResultState = f.enum(*RESULT_STATES)
    reasoning_summary: str = f.text(360)
    provider_write_performed: bool = f.strict_bool()
    readback_verified: bool = f.strict_bool()
    deleted_count: int = f.integer(minimum=0)
    provider_call_count: int = f.integer(minimum=0)
    next_step: NextStep = f.enum(*NEXT_STEPS)
    grants_new_action_authority: Literal[False] = f.const(False)
    raw_content_captured: Literal[False] = f.const(False)
    external_writes_performed: Literal[False] = f.const(False)

    def __attrs_post_init__(self) -> None:
        if self.effective_action != self.action:
            raise RecordValidationError(
                "a control does what it was asked or is refused",
                path="$.effective_action",
                code="inconsistent_receipt",
            )
        if (self.status == "completed") != self.readback_verified:
            raise RecordValidationError(
                "a control is completed exactly when its outcome read back",
                path="$.readback_verified",
                code="inconsistent_receipt",
            )
        if (self.status in ("control_ready", "completed")) == bool(self.reason_codes):
            raise RecordValidationError(
                "a failed control names why, a ready or completed one has no reason code",
                path="$.reason_codes",
                code="inconsistent_receipt",
            )
        if self.result_state != RESULT_STATE_OF[self.action]:
            raise RecordValidationError(
                f"is {RESULT_STATE_OF[self.action]} for {self.action}",
                path="$.result_state",
                code="inconsistent_receipt",
            )
        if self.action == "edit" and (self.status == "completed" or self.provider_write_performed):
            raise RecordValidationError(
                "an edit never writes: its replacement goes to review",
                path="$.status",
                code="inconsistent_receipt",
            )


# The state each action leaves the record in (reference 13.3, 13.4).
RESULT_STATE_OF: Final[dict[str, str]] = {
    "edit": "candidate",
    "retire": "retired",
    "revoke": "revoked",
    "purge": "purged",
}


@frozen(kw_only=True)
class OperatorControl:
    """``reward_memory_operator_control_v0``: the decision of one control, with its receipt.

    ``guard_blocked``: the checkpoint or the record did not fit (reason codes, no
    receipt, zero provider calls). Otherwise the receipt's status, and for an
    edit the ``decision`` (the replacement candidate's review packet).
    """

    ok: Literal[True] = f.const(True)
    schema_version: Literal["reward_memory_operator_control_v0"] = f.const(CONTROL_SCHEMA)
    status: ControlStatus = f.enum(*CONTROL_STATUSES)
    action: OperatorAction = f.enum(*ACTIONS)
    reason_codes: tuple[str, ...] = attrs.field(default=(), converter=_codes)
    decision: CandidateReview | None = attrs.field(
        default=None, validator=attrs.validators.optional(_instance(CandidateReview))
    )
    receipt: OperatorControlReceipt | None = attrs.field(
        default=None, validator=attrs.validators.optional(_instance(OperatorControlReceipt))
    )
    provider_call_count: int = f.integer(minimum=0)
    grants_new_action_authority: Literal[False] = f.const(False)
    raw_content_captured: Literal[False] = f.const(False)

    def __attrs_post_init__(self) -> None:
        blocked = self.status == "guard_blocked"
        if blocked != (self.receipt is None):
            raise RecordValidationError(
                "a refused control has no receipt; any other has one",
                path="$.receipt",
                code="inconsistent_control",
            )
        if blocked and (not self.reason_codes or self.provider_call_count):
            raise RecordValidationError(
                "a refused control names why and made no provider call",
                path="$.reason_codes",
                code="inconsistent_control",
            )
        if self.receipt is not None and (
            self.receipt.status != self.status or self.receipt.action != self.action
        ):
            raise RecordValidationError(
                "the control and its receipt agree on status and action",
                path="$.receipt.status",
                code="inconsistent_control",
            )
        if (self.decision is not None) != (
            self.action == "edit" and self.status == "control_ready"
        ):
            raise RecordValidationError(
                "a ready edit carries the replacement's review; nothing else does",
                path="$.decision",
                code="inconsistent_control",
            )
