"""Stage-3 application: the caller's model decides; deterministic code keeps the receipt honest.

:func:`apply` hands the recalled items to the caller's model callback
(``apply_memory(base_output, items)``), which returns a decision: ``applied``,
``ignored`` or ``refuted``, the output, the memory refs it relied on, a compact
reasoning summary, and whether it verified the current artifact (reference §7.5):

=====================================================  =========================  ======
situation                                              status (= receipt outcome)  output
=====================================================  =========================  ======
recall not ``completed`` (or no items)                 ``not_available``           base
no callback                                            ``available_not_applied``   base
callback raises, or returns an invalid decision        ``failed``                  base
valid decision                                         the decision's outcome      its output
=====================================================  =========================  ======

A decision is invalid when: it is neither a mapping nor a :class:`ModelDecision`;
a key is missing or unknown; the outcome is not applied/ignored/refuted;
``memory_refs`` is not a list of refs of items of *this* recall;
``current_artifact_verified`` is not a boolean; ``applied`` names no ref or lacks
current-artifact verification; ``ignored``/``refuted`` changes the output; or the
reasoning summary is empty, over 500 characters, or not public-safe.

The receipt never holds raw provider content: memory refs are hashed
(``sha256(raw ref)[:16]``, sorted, de-duplicated), and only for a valid decision.
Nothing here raises for a model or provider problem; an invalid
``application_id`` or ``artifact_ref`` (not a token) is a programmer error and
raises :class:`~reward_memory.errors.RecordValidationError`.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, TypeAlias

from reward_memory.errors import RecordValidationError
from reward_memory.guarded_recall import RecallItem, RecallSession
from reward_memory.records._memo import check_token_memo, compact_memo
from reward_memory.records.application import (
    MODEL_OUTCOMES,
    ApplicationReceipt,
    ApplicationResult,
    ModelDecision,
    Outcome,
    trusted_receipt,
    trusted_result,
)
from reward_memory.records.recall import RecallPacket

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = [
    "CALLBACK_FAILED",
    "CALLBACK_MISSING",
    "ApplyMemory",
    "ModelDecision",
    "apply",
]

ApplyMemory: TypeAlias = Callable[
    [Any, tuple[RecallItem, ...]], "Mapping[str, Any] | ModelDecision"
]

CALLBACK_MISSING: Final = "model_application_callback_not_supplied"
CALLBACK_FAILED: Final = "application_boundary_failed"
_DECISION_KEYS: Final = frozenset(
    {"outcome", "output", "memory_refs", "reasoning_summary", "current_artifact_verified"}
)


class _Invalid(Exception):
    """A model decision that does not hold (turned into a ``failed`` receipt)."""


def _same(left: Any, right: Any) -> bool:
    if left is right:
        return True
    try:
        return bool(left == right)
    except Exception:  # noqa: BLE001 - an odd __eq__ is "not the same", never an error
        return False


def _decision_fields(decision: Any) -> tuple[Any, Any, Any, Any, Any]:
    if isinstance(decision, ModelDecision):
        return (
            decision.outcome,
            decision.output,
            decision.memory_refs,
            decision.reasoning_summary,
            decision.current_artifact_verified,
        )
    if not isinstance(decision, Mapping) or decision.keys() != _DECISION_KEYS:
        raise _Invalid
    return (
        decision["outcome"],
        decision["output"],
        decision["memory_refs"],
        decision["reasoning_summary"],
        decision["current_artifact_verified"],
    )


def _raw_ref(items: Iterable[RecallItem], ref: object) -> str:
    """The raw ``memory_ref`` a decision's ref names, as :attr:`RecallSession.refs` maps it.

    ``items`` is walked last first: the mapping's later entries win.
    """
    if type(ref) is str:
        for item in items:
            if ref in (item.provider_ref, item.memory_ref):
                return item.memory_ref
    raise _Invalid


def _check_decision(
    decision: Any, base_output: Any, session: RecallSession
) -> tuple[Outcome, Any, tuple[str, ...], str, bool]:
    if type(decision) is dict:  # the common case, without the ABC checks
        if decision.keys() != _DECISION_KEYS:
            raise _Invalid
        outcome = decision["outcome"]
        output = decision["output"]
        refs = decision["memory_refs"]
        summary = decision["reasoning_summary"]
        verified = decision["current_artifact_verified"]
    else:
        outcome, output, refs, summary, verified = _decision_fields(decision)
    if outcome not in MODEL_OUTCOMES:
        raise _Invalid
    if type(refs) is not list and (isinstance(refs, str | bytes) or not isinstance(refs, Sequence)):
        raise _Invalid
    items = session.items[::-1]
    raw_refs = [_raw_ref(items, ref) for ref in refs]
    if type(verified) is not bool:
        raise _Invalid
    if outcome == "applied" and (not raw_refs or not verified):
        raise _Invalid
    if outcome != "applied" and not _same(output, base_output):
        raise _Invalid
    try:
        text = compact_memo(summary, 500, "$.reasoning_summary")
    except RecordValidationError:
        raise _Invalid from None
    return outcome, output, tuple(raw_refs), text, verified


@functools.lru_cache(maxsize=4096)
def _ref_digest(raw_ref: str) -> str:
    return hashlib.sha256(raw_ref.encode("utf-8")).hexdigest()[:16]


def _digests(raw_refs: tuple[str, ...]) -> tuple[str, ...]:
    if len(raw_refs) == 1:
        return (_ref_digest(raw_refs[0]),)
    return tuple(sorted({_ref_digest(ref) for ref in raw_refs}))


def apply(
    base_output: Any,
    session: RecallSession,
    *,
    application_id: str,
    artifact_ref: str | None = None,
    apply_memory: ApplyMemory | None = None,
) -> ApplicationResult:
    """Let the caller's model apply, ignore or refute a recall; fail open on every problem.

    Args:
        base_output: what the caller produces without memory; kept unless a valid
            decision says otherwise.
        session: the :class:`~reward_memory.guarded_recall.RecallSession` of this recall.
        application_id: the caller's id for this application (a token).
        artifact_ref: the current artifact the model verified against (a token).
        apply_memory: the model callback, ``apply_memory(base_output, items)``.

    Returns:
        The ``reward_memory_application_v0`` record: status, output, receipt.
    """
    application_id = check_token_memo(application_id, "$.application_id")
    if artifact_ref is not None:
        artifact_ref = check_token_memo(artifact_ref, "$.artifact_ref")
    if not isinstance(session, RecallSession):
        raise RecordValidationError(
            "session must be a RecallSession", path="$.session", code="wrong_type"
        )
    ids = (application_id, artifact_ref)
    packet = session.packet
    items = session.items
    if packet.status != "completed" or not items:
        return _fail_open(packet, ids, "not_available", base_output, f"recall_{packet.status}")
    if apply_memory is None:
        return _fail_open(packet, ids, "available_not_applied", base_output, CALLBACK_MISSING)
    try:
        decision = apply_memory(base_output, items)
        outcome, output, raw_refs, summary, verified = _check_decision(
            decision, base_output, session
        )
    except Exception:  # noqa: BLE001 - a failing model callback fails open
        return _fail_open(packet, ids, "failed", base_output, CALLBACK_FAILED)
    return _result(
        packet,
        application_id=application_id,
        artifact_ref=artifact_ref,
        outcome=outcome,
        output=output,
        base_output=base_output,
        summary=summary,
        digests=_digests(raw_refs),
        verified=verified,
    )


def _fail_open(
    packet: RecallPacket,
    ids: tuple[str, str | None],
    outcome: Outcome,
    base_output: Any,
    summary: str,
) -> ApplicationResult:
    return _result(
        packet,
        application_id=ids[0],
        artifact_ref=ids[1],
        outcome=outcome,
        output=base_output,
        base_output=base_output,
        summary=summary,
    )


def _result(
    packet: RecallPacket,
    *,
    application_id: str,
    artifact_ref: str | None,
    outcome: Outcome,
    output: Any,
    base_output: Any,
    summary: str,
    digests: tuple[str, ...] = (),
    verified: bool = False,
) -> ApplicationResult:
    """The receipt and result (trusted construction; the invariants hold by construction).

    ``application_id`` and ``artifact_ref`` were checked tokens; the packet is a
    :class:`RecallPacket` (validated, or built from checked parts); ``summary`` is
    compacted, scanned text or one of this module's fixed codes; ``digests`` are
    sorted, distinct 16-hex digests, non-empty exactly for an ``applied``
    decision that named refs and verified the current artifact of a ``completed``
    (hence read-back) recall; every other non-model outcome keeps the base
    output and names no memory.
    """
    # A packet of another type (a hand-built session) gets the validating constructors.
    trusted = type(packet) is RecallPacket
    receipt = (trusted_receipt if trusted else ApplicationReceipt)(
        application_id=application_id,
        artifact_ref=artifact_ref,
        corpus_id=packet.corpus_id,
        surface_id=packet.surface_id,
        mode=packet.mode,
        query_kind=packet.query_kind,
        query_evidence=packet.query_evidence,
        outcome=outcome,
        memory_ref_digests=digests,
        reasoning_summary=summary,
        current_artifact_verified=verified,
        result_readback_verified=packet.result_readback_verified,
        provider_call_count=packet.provider_call_count,
    )
    return (trusted_result if trusted else ApplicationResult)(
        status=outcome,
        output=output,
        receipt=receipt,
        fail_open_preserved_base=output is base_output or _same(output, base_output),
    )
