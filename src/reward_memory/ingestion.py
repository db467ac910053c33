"""The minimal ingest loop (reference §9.3-9.4): one compact event, one write, exact readback.

::

    event ──adapter──▶ proposal ──authority source──▶ checkpoint (never from the event)
      ──propose──▶ candidate ──standing-policy guard──▶ guard_blocked (zero provider calls)
      ──review (accept, the policy's reviewer)──▶ activate (activated_at = observed_at)
      ──dry run──▶ planned (zero provider calls)
      ──execute──▶ write (create-if-absent) ──▶ read ──▶ one function-boundary recall
      ──▶ reward_memory_ingest_receipt_v0

It composes the existing seams and owns no lifecycle, store or router of its own.

Identity (§9.4, gap 5 fixed): the provider key is
``reward-memory-<policy_digest>-<candidate_digest>.json``, where ``policy_digest``
is 12 hex of sha256 over the canonical JSON of the *whole* standing policy
(the original hashed only ``policy_id``) and ``candidate_digest`` is the
``candidate_ref`` without its prefix. So the same event under the same policy
is the same candidate, the same review and the same target: a replay writes
nothing (``unchanged``) and reports ``deduplicated: true``; a revised policy --
any field -- names a new target and never reuses an older activation.
``observed_at`` is the immutable first-observation time: it is the record's
``activated_at`` and source time, and it is *not* part of the candidate (so a
retry with another ``observed_at`` is the same candidate and the same target
with other content: the provider refuses to overwrite it and the receipt says
``conflict`` -- never a duplicate record).

Exactness: ``activated`` (and ``memory_available_for_recall``) only when the
read returns the written ref with the same canonical content digest and the
same ``candidate_ref``, *and* one exact-corpus, exact-surface
``function_boundary`` recall (``query_kind: ingest_verification``) returns an
item with the written ref (or a descendant of it), the candidate ref and the
content digest. Provider failures fail open with a status, never an exception:
only programmer errors (a corpus, policy or binding that is not a valid
record, a naive clock, execute without a provider) raise.

Raw or unmodelled input -- an event with ``raw_content_captured: true``, an
unknown field (``comment_body``...), unsafe text, a wrong type -- is
``guard_blocked`` (``event_raw_content_refused`` / ``event_unsafe_text`` /
``event_not_modelled``) with zero provider calls, as the seeds say: it is data
from a module, not a programmer error.
"""

from __future__ import annotations

import functools
import hashlib
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final, Literal

from reward_memory.activation import activate
from reward_memory.candidates import propose, review
from reward_memory.digests import _CANONICAL, canonical_json, make_ref
from reward_memory.errors import RecordValidationError
from reward_memory.grammars import normalize_timestamp, parse_timestamp, resolve_now
from reward_memory.guards.standing_policy import standing_policy_reasons
from reward_memory.records import _memo as m
from reward_memory.records._plain import as_record, to_plain
from reward_memory.records.candidate import (
    UNVERIFIED_CHECKPOINT,
    AuthorityCheckpoint,
    Proposal,
    ReviewDecision,
)
from reward_memory.records.corpus import CorpusDeclaration
from reward_memory.records.ingest import IngestGuard, IngestReceipt, IngestWrite, NextRecall
from reward_memory.records.recall import (
    FreshnessContext,
    ProviderBinding,
    ReadAuthorityCheckpoint,
    RecallQuery,
    RecallRequest,
)
from reward_memory.records.standing_policy import StandingPolicy

if TYPE_CHECKING:
    from collections.abc import Mapping

    from reward_memory.authority import AuthoritySource
    from reward_memory.providers.spi import Provider
    from reward_memory.records.candidate import CandidatePacket
    from reward_memory.records.recall import RecallPacket

__all__ = [
    "ACCEPT_REASONING",
    "ADAPTERS",
    "Adapter",
    "aingest",
    "ingest",
    "policy_digest",
    "target_key",
]

Adapter = Literal["issue_fix", "scoped_feedback"]
ADAPTERS: Final[tuple[Adapter, ...]] = ("issue_fix", "scoped_feedback")
ACCEPT_REASONING: Final = "Standing exact-scope policy accepted this compact candidate."
VERIFY_SUMMARY: Final = "Verify the just-activated reward-memory record."
VERIFY_LIMIT: Final = 8
_CANDIDATE_PREFIX: Final = "candidate:"


# -- identity -----------------------------------------------------------------------------


@functools.lru_cache(maxsize=256)
def policy_digest(policy: StandingPolicy) -> str:
    """12 hex of sha256 over the canonical JSON of the whole standing policy."""
    return hashlib.sha256(canonical_json(to_plain(policy))).hexdigest()[:12]


def target_key(policy: StandingPolicy, candidate_ref: str) -> str:
    """The provider key one candidate has under one policy (binds both digests)."""
    candidate_digest = candidate_ref.removeprefix(_CANDIDATE_PREFIX)
    return f"reward-memory-{policy_digest(policy)}-{candidate_digest}.json"


def _canonical_digest(content: str) -> str:
    # canonical_text (reference §8.3): CRLF -> LF, then one trailing newline removed.
    text = content.replace("\r\n", "\n")
    if text.endswith("\n"):
        text = text[:-1]
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# -- inputs -------------------------------------------------------------------------------


def _event_proposal(adapter: str, event: Any) -> Proposal:
    if adapter == "issue_fix":
        from reward_memory.adapters.issue_fix import issue_fix_proposal  # noqa: PLC0415

        return issue_fix_proposal(event)
    from reward_memory.adapters.scoped_feedback import scoped_feedback_proposal  # noqa: PLC0415

    return scoped_feedback_proposal(event)


def _event_refusal(exc: RecordValidationError) -> str:
    if exc.code == "raw_content_captured" or exc.path.endswith(".raw_content_captured"):
        return "event_raw_content_refused"
    if exc.code in ("unsafe_text", "unsafe_character"):
        return "event_unsafe_text"
    return "event_not_modelled"


def _check_inputs(adapter: object, corpus: object, binding: object, authority: object) -> None:
    if adapter not in ADAPTERS:
        raise RecordValidationError(
            "adapter must be issue_fix or scoped_feedback", path="adapter", code="invalid_value"
        )
    if not isinstance(corpus, CorpusDeclaration):
        raise RecordValidationError(
            "corpus must be a CorpusDeclaration", path="corpus", code="wrong_type"
        )
    if not isinstance(binding, ProviderBinding):
        raise RecordValidationError(
            "binding must be a ProviderBinding", path="binding", code="wrong_type"
        )
    if binding.scope_ref.rstrip("/").endswith(".json"):
        raise RecordValidationError(
            "the binding's scope_ref must identify a collection, not a document",
            path="binding.scope_ref",
            code="invalid_value",
        )
    if authority is not None and not _is_source(authority):
        raise RecordValidationError(
            "authority must be an AuthoritySource (source_ref and checkpoint_for)",
            path="authority",
            code="wrong_type",
        )


def _as_policy(policy: StandingPolicy | Mapping[str, Any]) -> StandingPolicy:
    return as_record(policy, StandingPolicy, what="a standing policy", path="standing_policy")


def _observed(observed_at: str | datetime) -> datetime:
    if isinstance(observed_at, datetime):
        return resolve_now(observed_at)
    if not isinstance(observed_at, str):
        raise RecordValidationError(
            "observed_at is an aware timestamp (the event's first observation)",
            path="observed_at",
            code="wrong_type",
        )
    return parse_timestamp(normalize_timestamp(observed_at, "observed_at"), "observed_at")


def _ask_authority(
    authority: AuthoritySource | None, proposal: Proposal, now: datetime
) -> AuthorityCheckpoint | None:
    """The source's answer for what the event claims; anything but a checkpoint is a refusal."""
    if authority is None or proposal.target_class != "hard_policy":
        return None  # advisory classes need no authority, and are never given any
    try:
        answer = authority.checkpoint_for(
            actor_ref=proposal.source.actor_ref,
            actor_role=proposal.source.actor_role,
            project_ref=proposal.scope.project_ref,
            action_scopes=proposal.requested_action_scopes,
            now=now,
        )
    except Exception:  # noqa: BLE001 - a failing source vouches for nothing
        return None
    return answer if isinstance(answer, AuthorityCheckpoint) else None


def _source_ref(authority: AuthoritySource | None) -> str | None:
    if authority is None:
        return None
    try:
        ref = authority.source_ref
    except Exception:  # noqa: BLE001 - an unreadable ref matches no policy
        return ""
    return ref if isinstance(ref, str) else ""


# -- the receipt --------------------------------------------------------------------------


# The receipt is assembled from parts that are already checked records and refs
# this library derived (sha256-based, public-safe by construction), so the hot path
# skips re-validating them; ``done`` keeps the record's invariants by construction
# (the status decides the flags), and ``tests/test_ingest.py`` loads every receipt
# back through the validating constructor.
_trusted_receipt: Final = m.trusted(IngestReceipt)
_PASSED: Final = IngestGuard(passed=True, reason_codes=())


class _Receipt:
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
        return _trusted_receipt(  # type: ignore[no-any-return]
            status=status,
            reason_codes=reasons,
            exact_readback_verified=activated,
            memory_available_for_recall=activated,
            **fields,
        )


_SOURCE_TYPES: dict[type[Any], bool] = {}


def _is_source(authority: object) -> bool:
    # A runtime_checkable isinstance walks the protocol's members: once per class.
    kind = type(authority)
    known = _SOURCE_TYPES.get(kind)
    if known is None:
        from reward_memory.authority import AuthoritySource  # noqa: PLC0415

        known = _SOURCE_TYPES[kind] = isinstance(authority, AuthoritySource)
    return known


# -- the loop -----------------------------------------------------------------------------


def ingest(
    event: Any,
    *,
    adapter: Adapter,
    corpus: CorpusDeclaration,
    standing_policy: StandingPolicy | Mapping[str, Any],
    binding: ProviderBinding,
    provider: Provider | None,
    authority: AuthoritySource | None,
    observed_at: str | datetime,
    execute: bool = False,
    now: datetime | None = None,
) -> IngestReceipt:
    """Ingest one compact, already-distilled event under a standing policy.

    Args:
        event: an ``issue_fix_reward_memory_event_v0`` or
            ``scoped_feedback_reward_memory_event_v0`` (record or mapping).
        adapter: which of the two maps it onto the shared candidate.
        corpus: the declared ingest corpus; ``standing_policy`` its policy;
            ``binding`` where it lives (``scope_ref`` a collection).
        provider: the SPI provider (required to execute; never called otherwise).
        authority: the caller's authority source (required for ``hard_policy``).
        observed_at: when the event was first observed; reuse it on retries.
        execute: write and verify (default: a dry run that returns ``planned``).
        now: the clock (aware; default UTC now).

    Returns the receipt; never raises for anything the event, the authority
    source or the provider does.

    Raises:
        RecordValidationError: a programmer error (see the module docs).
    """
    _check_inputs(adapter, corpus, binding, authority)
    policy = _as_policy(standing_policy)
    moment = resolve_now(now)
    first_seen = _observed(observed_at)
    if execute is not True and execute is not False:
        raise RecordValidationError("execute must be a boolean", path="execute", code="wrong_type")
    if execute and provider is None:
        raise RecordValidationError(
            "execute needs a provider", path="provider", code="missing_field"
        )
    digest = policy_digest(policy)
    base = _Receipt(
        adapter=adapter,
        corpus_id=corpus.corpus_id,
        policy_id=policy.policy_id,
        policy_digest=digest,
    )

    try:
        proposal = _event_proposal(adapter, event)
    except RecordValidationError as exc:
        refused = (_event_refusal(exc),)
        return base.done(
            "guard_blocked",
            refused,
            candidate_ref=None,
            surface_ids=(),
            guard=IngestGuard(passed=False, reason_codes=refused),
        )

    checkpoint = _ask_authority(authority, proposal, moment)
    packet = propose(proposal, checkpoint or UNVERIFIED_CHECKPOINT, now=moment)
    candidate = packet.candidate
    reasons = standing_policy_reasons(
        candidate=candidate,
        candidate_reasons=packet.guard.reason_codes,
        candidate_guard_passed=packet.guard.passed,
        corpus=corpus,
        policy=policy,
        binding=binding,
        authority_source_ref=_source_ref(authority),
        checkpoint=checkpoint,
    )
    base.fields.update(
        candidate_ref=candidate.candidate_ref, surface_ids=candidate.scope.surface_ids
    )
    if reasons:
        return base.done(
            "guard_blocked", reasons, guard=IngestGuard(passed=False, reason_codes=reasons)
        )
    base.fields["guard"] = _PASSED

    record, content = _activate(
        packet=packet,
        corpus=corpus,
        policy=policy,
        checkpoint=checkpoint,
        digest=digest,
        moment=moment,
        first_seen=first_seen,
    )
    key = target_key(policy, candidate.candidate_ref)
    base.fields.update(
        record_ref=record.record_ref,
        activation_ref=record.activation_ref,
        target_ref=make_ref(
            "target",
            [binding.provider_id, binding.namespace, binding.scope_ref, binding.actor_peer_id, key],
        ),
        next_recall=NextRecall(corpus_id=corpus.corpus_id, surface_ids=candidate.scope.surface_ids),
    )
    if not execute:
        return base.done(
            "planned",
            ("execute_required_for_resource_write",),
            write=IngestWrite(status="planned", write_count=0),
        )
    assert provider is not None
    return _execute(
        base,
        provider=provider,
        binding=binding,
        corpus=corpus,
        policy=policy,
        record=record,
        content=content,
        key=key,
        moment=moment,
    )


def _activate(
    *,
    packet: CandidatePacket,
    corpus: CorpusDeclaration,
    policy: StandingPolicy,
    checkpoint: AuthorityCheckpoint | None,
    digest: str,
    moment: datetime,
    first_seen: datetime,
) -> tuple[Any, str]:
    candidate_digest = packet.candidate.candidate_ref.removeprefix(_CANDIDATE_PREFIX)
    accepted = review(
        packet,
        ReviewDecision(
            decision="accept",
            reviewer_ref=policy.reviewer_ref,
            review_ref=f"review:{digest}:{candidate_digest}",
            reasoning_summary=ACCEPT_REASONING,
        ),
        checkpoint=checkpoint,
        now=moment,
    )
    # The guard passed above; activate re-checks fit and authority under the same checkpoint.
    record = activate(accepted, corpus, checkpoint=checkpoint, now=first_seen)
    # The record's keys are field names: the canonical encoder, without the key walk.
    return record, _CANONICAL.encode(to_plain(record))


def _execute(
    base: _Receipt,
    *,
    provider: Provider,
    binding: ProviderBinding,
    corpus: CorpusDeclaration,
    policy: StandingPolicy,
    record: Any,
    content: str,
    key: str,
    moment: datetime,
) -> IngestReceipt:
    from reward_memory._recall.readback import parse  # noqa: PLC0415
    from reward_memory._recall.session import provider_ref  # noqa: PLC0415

    scope = binding.provider_scope
    timeout = float(binding.timeout_seconds)
    expected = _canonical_digest(content)
    failed = IngestWrite(status="failed", write_count=0)

    try:
        written = provider.write(scope=scope, key=key, content=content, timeout=timeout)
    except Exception:  # noqa: BLE001 - fail open: the caller's work goes on
        return base.done(
            "provider_unavailable", ("provider_write_failed",), write=failed, provider_call_count=1
        )
    try:
        ref, status = _write_outcome(written)
    except Exception:  # noqa: BLE001 - not a write result
        ref, status = None, None
    if (
        type(ref) is not str
        or not ref
        or len(ref) > 2048
        or status
        not in (
            "created",
            "unchanged",
            "conflict",
        )
    ):
        return base.done(
            "provider_unavailable",
            ("provider_answer_malformed",),
            write=failed,
            provider_call_count=1,
        )
    created = status == "created"
    write = IngestWrite(status=status, write_count=1 if created else 0)
    base.fields.update(
        write=write,
        external_writes_performed=created,
        provider_ref=provider_ref(binding.provider_id, binding.namespace, ref),
    )
    if status == "conflict":
        return base.done("conflict", ("provider_target_content_conflict",), provider_call_count=1)
    base.fields["deduplicated"] = status == "unchanged"

    try:
        read = provider.read(scope=scope, ref=ref, timeout=timeout)
        found, read_ref, read_content = read.found, read.ref, read.content
    except Exception:  # noqa: BLE001
        return base.done("provider_unavailable", ("provider_read_failed",), provider_call_count=2)
    parsed = parse(read_content) if type(read_content) is str else None
    exact = (
        found is True
        and read_ref == ref
        and parsed is not None
        and parsed.content_digest == expected
        and parsed.candidate_ref == record.candidate_ref
    )
    if not exact:
        return base.done(
            "readback_unverified", ("exact_provider_readback_unverified",), provider_call_count=2
        )

    session = _verification_recall(
        provider=provider,
        binding=binding,
        corpus=corpus,
        policy=policy,
        record=record,
        moment=moment,
    )
    readback: RecallPacket = session.packet
    calls = 2 + readback.provider_call_count
    if readback.status == "provider_unavailable":
        return base.done(
            "provider_unavailable",
            ("provider_verification_recall_failed",),
            readback=readback,
            provider_call_count=calls,
        )
    descendant = ref + "/"
    hit = any(
        (item.memory_ref == ref or item.memory_ref.startswith(descendant))
        and item.candidate_ref == record.candidate_ref
        and item.content_digest == expected
        for item in session.items
    )
    if not hit:
        # The record reads back exactly, but search does not return it (yet).
        return base.done(
            "committed_pending",
            ("provider_index_pending",),
            readback=readback,
            provider_call_count=calls,
        )
    return base.done("activated", (), readback=readback, provider_call_count=calls)


def _write_outcome(written: Any) -> tuple[Any, Any]:
    return written.ref, written.status


def _verification_recall(
    *,
    provider: Provider,
    binding: ProviderBinding,
    corpus: CorpusDeclaration,
    policy: StandingPolicy,
    record: Any,
    moment: datetime,
) -> Any:
    from reward_memory.guarded_recall import recall  # noqa: PLC0415

    scope = record.scope
    # The bare digests of the candidate and of this activation: exact, inside the
    # scope, and cheap (each names one or a few documents). The activation digest
    # ranks this very activation first when a revised policy has stored the same
    # memory under a second target (recall shows each memory once). Differs from
    # the original, whose query was "<candidate_ref> <content_summary>".
    query = (
        f"{record.candidate_ref.removeprefix(_CANDIDATE_PREFIX)} "
        f"{record.activation_ref.removeprefix('activation:')}"
    )
    request = RecallRequest(
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
        observed_at=normalize_timestamp(moment.isoformat()),
        conflict_state="clear",
        query_kind="ingest_verification",
        freshness_context=FreshnessContext(
            source_truth_current=True,
            source_revision=scope.revision_ref or corpus.freshness.source_revision,
            age_seconds=0,
        ),
    )
    checkpoint = ReadAuthorityCheckpoint(
        verified=True,
        corpus_id=corpus.corpus_id,
        workspace_ref=scope.workspace_ref,
        project_ref=scope.project_ref,
        surface_id=scope.surface_ids[0],
        read_authority=corpus.read_authority,
        source_ref=policy.authority_source_ref,
        user_ref=scope.user_ref,
        peer_ref=scope.peer_ref,
        session_ref=scope.session_ref,
    )
    return recall(
        request,
        corpus=corpus,
        checkpoint=checkpoint,
        binding=binding,
        provider=provider,
        now=moment,
    )


async def aingest(
    event: Any,
    *,
    adapter: Adapter,
    corpus: CorpusDeclaration,
    standing_policy: StandingPolicy | Mapping[str, Any],
    binding: ProviderBinding,
    provider: Provider | None,
    authority: AuthoritySource | None,
    observed_at: str | datetime,
    execute: bool = False,
    now: datetime | None = None,
) -> IngestReceipt:
    """The asyncio twin of :func:`ingest`: runs it in a worker thread."""
    import asyncio  # noqa: PLC0415 - only asyncio callers pay for it

    return await asyncio.to_thread(
        ingest,
        event,
        adapter=adapter,
        corpus=corpus,
        standing_policy=standing_policy,
        binding=binding,
        provider=provider,
        authority=authority,
        observed_at=observed_at,
        execute=execute,
        now=now,
    )
