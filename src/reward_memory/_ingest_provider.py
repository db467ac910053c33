"""The provider half of the ingest loop: write, exact read, verification recall, receipt.

Split from :mod:`reward_memory.ingestion` (which owns the guard and the
activation): everything here runs only under ``execute`` and after the
standing-policy guard passed. Every provider failure fails open with a status
(see :mod:`reward_memory.records.ingest`); nothing a provider does raises.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Final, TypeVar

import attrs

from reward_memory._operator_provider import closed_key, locate, plain_status
from reward_memory.errors import ProviderUnavailable
from reward_memory.grammars import format_utc
from reward_memory.records import _memo as m
from reward_memory.records.execution_evidence import ExecutionEvidence, evidence_of
from reward_memory.records.ingest import PASSED_ON_REASONS, WRITES, IngestGuard, IngestReceipt
from reward_memory.records.recall import (
    FreshnessContext,
    ProviderBinding,
    ReadAuthorityCheckpoint,
    RecallQuery,
    RecallRequest,
)

if TYPE_CHECKING:
    from collections.abc import Callable
    from datetime import datetime

    from reward_memory._recall.readback import Parsed
    from reward_memory.providers.spi import Provider, ProviderScope
    from reward_memory.records.corpus import CorpusDeclaration
    from reward_memory.records.envelope import RecordScope
    from reward_memory.records.recall import RecallPacket
    from reward_memory.records.standing_policy import StandingPolicy

_T = TypeVar("_T")

__all__ = [
    "PASSED",
    "VERIFY_LIMIT",
    "VERIFY_SUMMARY",
    "Receipt",
    "execute_steps",
    "validated_request",
    "verification_request",
]

VERIFY_SUMMARY: Final = "Verify the just-activated reward-memory record."
VERIFY_LIMIT: Final = 8
# Seconds to wait before each verification search (the first at once): ~0.1 s at most.
_INDEX_RETRY_PAUSES: Final = (0.0, 0.01, 0.03, 0.06)
_CANDIDATE_PREFIX: Final = "candidate:"


# -- the receipt --------------------------------------------------------------------------


# The receipt is assembled from parts that are already checked records and refs
# this library derived (sha256-based, public-safe by construction), so the hot path
# skips re-validating them; ``done`` keeps the record's invariants by construction
# (the status decides the flags), and ``tests/test_ingest.py`` loads every receipt
# back through the validating constructor.
_trusted_receipt: Final = m.trusted(IngestReceipt)
PASSED: Final = IngestGuard(passed=True, reason_codes=())


def _failed(step: str, exc: BaseException) -> tuple[str, ...]:
    """A failed step's reason codes: the step's, with the provider's own (sorted)."""
    reason = exc.reason_code if isinstance(exc, ProviderUnavailable) else None
    if isinstance(reason, str) and reason in PASSED_ON_REASONS:
        return tuple(sorted((step, reason)))
    return (step,)


def _evidence(readback: RecallPacket | None) -> ExecutionEvidence:
    """The §11.1 evidence of the verification recall (one constant when none ran)."""
    if readback is None:
        if not _NO_EVIDENCE:
            _NO_EVIDENCE.append(evidence_of(None))
        return _NO_EVIDENCE[0]
    return evidence_of(readback)


_NO_EVIDENCE: list[ExecutionEvidence] = []


class Receipt:
    """The receipt's fields as the loop fills them in (built once, at the end)."""

    __slots__ = ("fields",)

    def __init__(self, **fields: Any) -> None:
        self.fields = fields

    def done(self, status: str, reasons: tuple[str, ...], **more: Any) -> IngestReceipt:
        fields = {
            "candidate_ref": None,
            "record_ref": None,
            "activation_ref": None,
            "surface_ids": (),
            "target_ref": None,
            "provider_ref": None,
            "write": None,
            "next_recall": None,
            "readback": None,
            "deduplicated": False,
            "external_writes_performed": False,
            "provider_call_count": 0,
            **self.fields,
            **more,
        }
        activated = status == "activated"
        fields["execution_evidence"] = _evidence(fields["readback"])
        return _trusted_receipt(
            status=status,
            reason_codes=reasons,
            exact_readback_verified=activated,
            memory_available_for_recall=activated,
            **fields,
        )


def execute_steps(  # noqa: PLR0915 - the steps in order, each failing open
    base: Receipt,
    *,
    provider: Provider,
    binding: ProviderBinding,
    corpus: CorpusDeclaration,
    policy: StandingPolicy,
    record: Any,
    content: str,
    key: str,
    moment: datetime,
    observed_as: Callable[[str], tuple[Any, str] | None] | None = None,
) -> IngestReceipt:
    """Write ``record`` under ``key``, read it back, verify it by recall (the receipt).

    ``observed_as``: the first observation is not known (``ingest(observed_at=None)``):
    when the target already holds this event's record, its time is taken -- the record
    as first observed then (``observed_as(stamp)``) must be exactly what is stored, and
    the write is a replay (``unchanged``, ``deduplicated``).
    """
    recall_side = _RECALL_SIDE[0] if _RECALL_SIDE else _load_recall_side()
    parsing, session = recall_side.readback, recall_side.session

    scope = binding.provider_scope
    timeout = float(binding.timeout_seconds)
    # What this call wrote, parsed once (the record is at hand): its canonical
    # content digest is the one every check below compares against.
    mine = parsing.written(record, content)
    expected = mine.content_digest
    failed = WRITES["failed"]

    # An operator control closed this record (retire, revoke, purge): a replay of
    # its event, under any standing policy, must not write it back.
    try:
        closed, calls = _shielded(_closed_by_operator, provider, scope, record.record_ref, timeout)
    except Exception as exc:  # noqa: BLE001 - fail open
        # The marker read is the write step's precondition (write unless closed).
        return base.done(
            "provider_unavailable",
            _failed("provider_write_failed", exc),
            write=failed,
            provider_call_count=1,
        )
    if closed:
        return base.done(
            "conflict",
            ("record_closed_by_operator",),
            provider_call_count=calls,
        )

    calls += 1
    try:
        written = _shielded(provider.write, scope=scope, key=key, content=content, timeout=timeout)
    except Exception as exc:  # noqa: BLE001 - fail open: the caller's work goes on
        return base.done(
            "provider_unavailable",
            _failed("provider_write_failed", exc),
            write=failed,
            provider_call_count=calls,
        )
    try:
        ref, status = _write_outcome(written)
        status = plain_status(status)  # an enum.StrEnum status as its plain value
    except Exception:  # noqa: BLE001 - not a write result
        ref, status = None, None
    # Exact types first: a status of another type may compare or hash as it likes.
    if (
        type(ref) is not str
        or not ref
        or len(ref) > 2048
        or type(status) is not str
        or status not in ("created", "unchanged", "conflict")
    ):
        return base.done(
            "provider_unavailable",
            ("provider_answer_malformed",),
            write=failed,
            provider_call_count=calls,
        )
    created = status == "created"
    write = WRITES[status]
    base.fields.update(
        write=write,
        external_writes_performed=created,
        provider_ref=session.provider_ref(binding.provider_id, binding.namespace, ref),
    )
    if status == "conflict" and observed_as is not None:
        calls += 1
        adopted = _first_observed(provider, scope, ref, record, observed_as, timeout)
        if adopted is not None:  # this event's record, as first observed: a replay
            (record, content), status = adopted, "unchanged"
            mine = parsing.written(record, content)
            expected = mine.content_digest
            base.fields.update(
                write=WRITES[status], external_writes_performed=False,
                activation_ref=record.activation_ref,
            )  # fmt: skip
    if status == "conflict":
        return base.done(
            "conflict", ("provider_target_content_conflict",), provider_call_count=calls
        )
    # A control that closed the record while this write waited (its marker written
    # after the read above, its own locate done before this write landed) would
    # report the record gone while this call brought it back: look once more, and
    # take back what was written.
    calls, closed_meanwhile = _taken_back(
        base, provider, scope, record.record_ref, ref, timeout, calls
    )
    if closed_meanwhile is not None:
        return closed_meanwhile
    base.fields["deduplicated"] = status == "unchanged"

    calls += 1
    try:
        read = _shielded(provider.read, scope=scope, ref=ref, timeout=timeout)
        found, read_ref, read_content = read.found, read.ref, read.content
    except Exception as exc:  # noqa: BLE001
        return base.done(
            "provider_unavailable", _failed("provider_read_failed", exc), provider_call_count=calls
        )
    exact = found is True and read_ref == ref and type(read_content) is str
    if exact and read_content != content:
        # Not the bytes written (a provider may re-serialise): the same canonical
        # content and candidate still make it exact; anything else does not.
        parsed = parsing.parse(read_content)
        exact = (
            parsed is not None
            and parsed.content_digest == expected
            and parsed.candidate_ref == record.candidate_ref
        )
    if not exact:
        return base.done(
            "readback_unverified",
            ("exact_provider_readback_unverified",),
            provider_call_count=calls,
        )

    descendant = ref + "/"
    # A search index may lag an acknowledged write (SQLite indexes write-behind and
    # does not queue behind another process's writer): search again, briefly,
    # before reporting the index as pending.
    for pause in _INDEX_RETRY_PAUSES:
        if pause:
            time.sleep(pause)
        verified = _verification_recall(
            recall_side,
            provider=provider,
            binding=binding,
            corpus=corpus,
            policy=policy,
            record=record,
            moment=moment,
            known=(content, mine),
        )
        readback: RecallPacket = verified.packet
        calls += readback.provider_call_count
        if readback.status == "provider_unavailable":
            said = PASSED_ON_REASONS.intersection(readback.reason_codes)
            return base.done(
                "provider_unavailable",
                tuple(sorted({"provider_verification_recall_failed", *said})),
                readback=readback,
                provider_call_count=calls,
            )
        if any(
            (item.memory_ref == ref or item.memory_ref.startswith(descendant))
            and item.candidate_ref == record.candidate_ref
            and item.content_digest == expected
            for item in verified.items
        ):
            return base.done("activated", (), readback=readback, provider_call_count=calls)
    # The record reads back exactly, but search does not return it (yet).
    return base.done(
        "committed_pending",
        ("provider_index_pending",),
        readback=readback,
        provider_call_count=calls,
    )


def _first_observed(  # noqa: PLR0917 - one private call site
    provider: Provider,
    scope: ProviderScope,
    ref: str,
    record: Any,
    observed_as: Callable[[str], tuple[Any, str] | None],
    timeout: float,
) -> tuple[Any, str] | None:
    """The record the target holds for this event, as :func:`execute_steps` would have
    written it had it known the first observation; None when the target holds anything
    else (or cannot be read: then it stays a conflict)."""
    from reward_memory.records.active import ActiveRecord, load_stored  # noqa: PLC0415

    try:
        held = _shielded(provider.read, scope=scope, ref=ref, timeout=timeout)
        content = held.content if held.found is True and held.ref == ref else None
        stored = load_stored(content) if type(content) is str else None
    except Exception:  # noqa: BLE001 - unreadable: a conflict, as before
        return None
    if (
        not isinstance(stored, ActiveRecord)
        or stored.record_ref != record.record_ref
        or stored.candidate_ref != record.candidate_ref
    ):
        return None
    again = observed_as(stored.activated_at)
    if again is None or again[0] != stored:
        return None
    return again


def _taken_back(  # noqa: PLR0917 - one private call site
    base: Receipt,
    provider: Provider,
    scope: ProviderScope,
    record_ref: str,
    ref: str,
    timeout: float,
    calls: int,
) -> tuple[int, IngestReceipt | None]:
    """(calls, the receipt) when a control closed the record while this write waited:
    the write is taken back (deleted); (calls, None) when the record is still open."""
    try:
        closed, more = _shielded(_closed_by_operator, provider, scope, record_ref, timeout)
    except Exception:  # noqa: BLE001 - fail open: unverified, never activated
        calls += 1
        return calls, base.done(
            "provider_unavailable", ("provider_read_failed",), provider_call_count=calls
        )
    calls += more
    if not closed:
        return calls, None
    calls += 1
    try:
        _shielded(provider.delete, scope=scope, ref=ref, timeout=timeout)
    except Exception:  # noqa: BLE001 - the control's retry finds and deletes it
        return calls, base.done(
            "provider_unavailable", ("provider_delete_failed",), provider_call_count=calls
        )
    base.fields["external_writes_performed"] = False
    return calls, base.done("conflict", ("record_closed_by_operator",), provider_call_count=calls)


def _closed_by_operator(
    provider: Provider, scope: ProviderScope, record_ref: str, timeout: float
) -> tuple[bool, int]:
    """Whether an operator control closed ``record_ref``, and the provider calls it took.

    One read of the record's closed marker by its key where the provider can
    (``read_key``, an optional capability: both built-in providers);
    elsewhere, through the SPI alone, the locate search an operator control
    runs: a revocation record, a tombstone or a retired copy closes it too.
    Raises when the provider fails (the caller fails open).
    """
    read_key = getattr(provider, "read_key", None)
    if read_key is not None:
        # Anything under the marker's key closes the record: a marker that does not
        # read back as written (a corrupting provider) must not reopen it, nor may an
        # answer that is not a boolean (``found=1``): the caller fails open, unwritten.
        found = read_key(scope=scope, key=closed_key(record_ref), timeout=timeout).found
        if found is True or found is False:
            return found, 1
        raise TypeError("the marker read answered found with no boolean")
    located, calls = locate(
        provider, scope, record_ref=record_ref, candidate_ref=None, timeout=timeout
    )
    return any(item.kind != "record" or _retired(item.content) for item in located), calls


def _retired(content: str) -> bool:
    from reward_memory._recall.readback import parse  # noqa: PLC0415

    parsed = parse(content)
    return parsed is not None and getattr(parsed.record, "lifecycle_state", None) == "retired"


class _ProviderRaised(Exception):
    """A provider call raised what is not an ``Exception`` (``GeneratorExit``, a
    ``CancelledError``): a failure like any other, so the loop fails open with the
    step's status, as recall does. ``KeyboardInterrupt`` and ``SystemExit`` pass."""


def _shielded(call: Callable[..., _T], /, *args: Any, **kwargs: Any) -> _T:
    try:
        return call(*args, **kwargs)
    except (KeyboardInterrupt, SystemExit, Exception):
        raise
    except BaseException as exc:
        raise _ProviderRaised from exc


def _write_outcome(written: Any) -> tuple[Any, Any]:
    return written.ref, written.status


def _verification_recall(
    recall_side: _RecallSide,
    *,
    provider: Provider,
    binding: ProviderBinding,
    corpus: CorpusDeclaration,
    policy: StandingPolicy,
    record: Any,
    moment: datetime,
    known: tuple[str, Parsed],
) -> Any:
    checkpoint, request = verification_request(corpus, policy.authority_source_ref, record, moment)
    # recall(), with the record this call wrote handed to its readback (see
    # readback.written): the guard is derived as for any recall.
    packet = recall_side.guarded_recall.build_recall_request(
        request, corpus=corpus, checkpoint=checkpoint, binding=binding
    )
    return recall_side.execution.execute(
        packet, binding, provider, moment, time.monotonic, known=known, policy=policy
    )


class _RecallSide:
    """The recall modules an executed ingest uses, imported on its first call.

    Not at import: a dry run (the ``ingest`` verb's default) never loads them.
    Then looked up as module attributes, not re-imported per call (an import
    statement costs more than the attribute it finds).
    """

    __slots__ = ("execution", "guarded_recall", "readback", "session")

    def __init__(self) -> None:
        from reward_memory import guarded_recall  # noqa: PLC0415
        from reward_memory._recall import execution, readback, session  # noqa: PLC0415

        self.execution: Any = execution
        self.guarded_recall: Any = guarded_recall
        self.readback: Any = readback
        self.session: Any = session


_RECALL_SIDE: list[_RecallSide] = []


def _load_recall_side() -> _RecallSide:
    if not _RECALL_SIDE:
        _RECALL_SIDE.append(_RecallSide())
    return _RECALL_SIDE[0]


def verification_request(
    corpus: CorpusDeclaration, source_ref: str | None, record: Any, moment: datetime
) -> tuple[ReadAuthorityCheckpoint, RecallRequest]:
    """The read checkpoint and the exact-corpus, exact-surface request that verify ``record``."""
    scope = record.scope
    # The bare digests of the candidate and of this activation: exact, inside the
    # scope, and cheap (each names one or a few documents). The activation digest
    # ranks this very activation first when a revised policy has stored the same
    # memory under a second target (recall shows each memory once). Both, not the
    # activation's alone: an embedding search (OpenViking) scores a lone hex term
    # too low to return the record. Differs from the original, whose query was
    # "<candidate_ref> <content_summary>".
    query = (
        f"{record.candidate_ref.removeprefix(_CANDIDATE_PREFIX)} "
        f"{record.activation_ref.removeprefix('activation:')}"
    )
    checkpoint, template = _verification_context(
        corpus, source_ref, scope, corpus.freshness.source_revision
    )
    request = _make_request(
        **template,
        queries=(_make_query(query=query, query_summary=VERIFY_SUMMARY),),
        observed_at=format_utc(moment),  # the stored spelling, as normalize_timestamp gives it
    )
    return checkpoint, request


# The verification recall's read checkpoint and request template depend only on
# the corpus, the policy's authority source and the record's scope: a few per
# experiment, each validated once (keyed by every value they are built from) by
# building a whole request through the validating constructors. A call then
# sets that template's fields, its own query -- two bare hex digests and a
# constant summary, compact and public-safe by construction -- and its clock,
# normalised, without re-running the validators (``tests/test_ingest_verification.py``
# holds the result equal to the validating constructors').
_CONTEXTS: dict[tuple[Any, ...], tuple[ReadAuthorityCheckpoint, dict[str, Any]]] = {}
_CONTEXTS_MAX: Final = 256
_PER_CALL: Final = frozenset({"queries", "observed_at"})
_make_request: Final = m.trusted(RecallRequest)
_make_query: Final = m.trusted(RecallQuery)


def _verification_context(
    corpus: CorpusDeclaration,
    source_ref: str | None,
    scope: RecordScope,
    source_revision: str | None,
) -> tuple[ReadAuthorityCheckpoint, dict[str, Any]]:
    key = (corpus.corpus_id, corpus.read_authority, source_ref, scope, source_revision)
    found = _CONTEXTS.get(key)
    if found is None:
        checkpoint = ReadAuthorityCheckpoint(
            verified=True,
            corpus_id=corpus.corpus_id,
            workspace_ref=scope.workspace_ref,
            project_ref=scope.project_ref,
            surface_id=scope.surface_ids[0],
            read_authority=corpus.read_authority,
            source_ref=source_ref,
            user_ref=scope.user_ref,
            peer_ref=scope.peer_ref,
            session_ref=scope.session_ref,
        )
        template = validated_request(
            scope, source_revision, query="0" * 20, observed_at="2000-01-01T00:00:00Z"
        )
        fields = {
            name: getattr(template, name)
            for name in attrs.fields_dict(RecallRequest)
            if name not in _PER_CALL
        }
        if len(_CONTEXTS) >= _CONTEXTS_MAX:
            _CONTEXTS.clear()
        found = _CONTEXTS[key] = (checkpoint, fields)
    return found


def validated_request(
    scope: RecordScope, source_revision: str | None, *, query: str, observed_at: str
) -> RecallRequest:
    """The verification recall's request through the validating constructors."""
    return RecallRequest(
        mode="function_boundary",
        surface_id=scope.surface_ids[0],
        workspace_ref=scope.workspace_ref,
        project_ref=scope.project_ref,
        revision_ref=scope.revision_ref,
        user_ref=scope.user_ref,
        peer_ref=scope.peer_ref,
        session_ref=scope.session_ref,
        queries=(RecallQuery(query=query, query_summary=VERIFY_SUMMARY),),
        limit=VERIFY_LIMIT,
        observed_at=observed_at,
        conflict_state="clear",
        query_kind="ingest_verification",
        freshness_context=FreshnessContext(
            source_truth_current=True,
            source_revision=scope.revision_ref or source_revision,
            age_seconds=0,
        ),
    )
