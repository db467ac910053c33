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
``conflict`` -- never a duplicate record). ``observed_at=None`` says the time is not
known: it is now, unless the store already holds this event's record, whose first
observation is then taken (so a module that does not keep the time still replays
idempotently: ``deduplicated``).

Exactness: ``activated`` (and ``memory_available_for_recall``) only when the
read returns the written ref with the same canonical content digest and the
same ``candidate_ref``, *and* one exact-corpus, exact-surface
``function_boundary`` recall (``query_kind: ingest_verification``) returns an
item with the written ref (or a descendant of it), the candidate ref and the
content digest. Provider failures fail open with a status, never an exception:
only programmer errors (a corpus, policy or binding that is not a valid
record, a naive clock, execute without a provider) raise.

Time: each provider call (write, read, the verification recall) is bounded by
the binding's ``timeout_seconds``; a slow provider fails open as
``provider_unavailable``. A search index may lag an acknowledged write (the
SQLite provider indexes write-behind): when the read is exact but the search
misses, the search is repeated up to three times within about 0.1 s before the
receipt says ``committed_pending``.

Raw or unmodelled input -- an event with ``raw_content_captured: true``, an
unknown field (``comment_body``...), unsafe text, a wrong type -- is
``guard_blocked`` (``event_raw_content_refused`` / ``event_unsafe_text`` /
``event_not_modelled``) with zero provider calls, as the seeds say: it is data
from a module, not a programmer error.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final, Literal

from reward_memory._boundary import strict_packet
from reward_memory._canonical_text import canonical_text
from reward_memory._ingest_provider import PASSED, Receipt, execute_steps
from reward_memory.activation import activate_typed
from reward_memory.candidates import propose, review
from reward_memory.digests import canonical_json, make_ref
from reward_memory.errors import RecordValidationError
from reward_memory.grammars import _stored_moment, format_utc, parse_timestamp, resolve_now
from reward_memory.guards.standing_policy import freshness_reasons, standing_policy_reasons
from reward_memory.records import _memo as m
from reward_memory.records._plain import as_record, to_plain
from reward_memory.records.candidate import (
    UNVERIFIED_CHECKPOINT,
    AuthorityCheckpoint,
    Proposal,
    ReviewDecision,
)
from reward_memory.records.corpus import CorpusDeclaration
from reward_memory.records.ingest import WRITES, IngestGuard, IngestReceipt, NextRecall
from reward_memory.records.recall import (
    ProviderBinding,
)
from reward_memory.records.standing_policy import StandingPolicy

if TYPE_CHECKING:
    from reward_memory.authority import AuthoritySource
    from reward_memory.providers.spi import Provider
    from reward_memory.records.candidate import CandidatePacket

__all__ = [
    "ACCEPT_REASONING",
    "ADAPTERS",
    "Adapter",
    "accept_decision",
    "aingest",
    "ingest",
    "policy_digest",
    "target_key",
]

# The config v1 adapter ids (reference §10.2); ``issue_fix`` is accepted as a short alias.
Adapter = Literal["issue_fix_maintainer_feedback", "scoped_feedback", "issue_fix"]
ADAPTERS: Final[tuple[str, ...]] = ("issue_fix_maintainer_feedback", "scoped_feedback")
_ALIASES: Final = {"issue_fix": "issue_fix_maintainer_feedback"}
ACCEPT_REASONING: Final = "Standing exact-scope policy accepted this compact candidate."
_CANDIDATE_PREFIX: Final = "candidate:"


# -- identity -----------------------------------------------------------------------------


def policy_digest(policy: StandingPolicy) -> str:
    """12 hex of sha256 over the canonical JSON of the whole standing policy."""
    # The policy in use is usually the very same record call after call: compared
    # by identity (held here), before hashing the whole record for the value cache.
    last = _LAST_POLICY[0] if _LAST_POLICY else None
    if last is not None and last[0] is policy:
        return last[1]
    digest = _policy_digest(policy)
    _LAST_POLICY[:] = [(policy, digest)]
    return digest


_LAST_POLICY: list[tuple[StandingPolicy, str]] = []


@functools.lru_cache(maxsize=256)
def _policy_digest(policy: StandingPolicy) -> str:
    return hashlib.sha256(canonical_json(to_plain(policy))).hexdigest()[:12]


def target_key(policy: StandingPolicy, candidate_ref: str) -> str:
    """The provider key one candidate has under one policy (binds both digests)."""
    return _key(policy_digest(policy), candidate_ref)


def _key(digest: str, candidate_ref: str) -> str:
    return f"reward-memory-{digest}-{candidate_ref.removeprefix(_CANDIDATE_PREFIX)}.json"


# NextRecall per (corpus, surfaces): a few per experiment, validated once each.
_NEXT_RECALLS: dict[tuple[str, tuple[str, ...]], NextRecall] = {}
_NEXT_RECALLS_MAX: Final = 256


def _next_recall(corpus_id: str, surface_ids: tuple[str, ...]) -> NextRecall:
    key = (corpus_id, surface_ids)
    found = _NEXT_RECALLS.get(key)
    if found is None:
        if len(_NEXT_RECALLS) >= _NEXT_RECALLS_MAX:
            _NEXT_RECALLS.clear()
        found = _NEXT_RECALLS[key] = NextRecall(corpus_id=corpus_id, surface_ids=surface_ids)
    return found


# -- inputs -------------------------------------------------------------------------------


def _event_proposal(adapter: str, event: Any) -> tuple[Any, Proposal]:
    """(the typed event, its proposal)."""
    # A mapping (a module's JSON) is typed here in one strict pass, with the
    # schema's error when it has one: the same verdict and error as the
    # adapter's schema-then-record boundary, without jsonschema on every call.
    event_type, to_proposal = _ADAPTER_PARTS.get(adapter) or _adapter_parts(adapter)
    if type(event) is not event_type and isinstance(event, Mapping):
        event = strict_packet(dict(event), event_type)
    return event, to_proposal(event)


# adapter id -> (its event record class, its proposal mapping): imported on first
# use (a dry-run CLI verb loads only its own adapter), then looked up.
_ADAPTER_PARTS: dict[str, tuple[type[Any], Callable[[Any], Proposal]]] = {}


def _adapter_parts(adapter: str) -> tuple[type[Any], Callable[[Any], Proposal]]:
    if adapter == "issue_fix_maintainer_feedback":
        from reward_memory.adapters.issue_fix import (  # noqa: PLC0415
            IssueFixEvent,
            issue_fix_proposal,
        )

        parts: tuple[type[Any], Callable[[Any], Proposal]] = (IssueFixEvent, issue_fix_proposal)
    else:
        from reward_memory.adapters.scoped_feedback import (  # noqa: PLC0415
            ScopedFeedbackEvent,
            scoped_feedback_proposal,
        )

        parts = (ScopedFeedbackEvent, scoped_feedback_proposal)
    _ADAPTER_PARTS[adapter] = parts
    return parts


# The adapter wrapper's constant fields (reference §9.5), per adapter.
_WRAPPER: Final[dict[str, dict[str, str]]] = {
    "issue_fix_maintainer_feedback": {
        "adapter_schema_version": "issue_fix_reward_memory_event_v0",
        "next_issue_fix_call": "run_issue_fix_patch_planning_reward_memory",
    },
    "scoped_feedback": {
        "adapter_schema_version": "scoped_feedback_reward_memory_candidate_adapter_v0",
        "event_schema_version": "scoped_feedback_reward_memory_event_v0",
        "next_reward_memory_call": "explicit_function_boundary_recall",
    },
}


def _event_fields(adapter: str, event: Any, proposal: Proposal) -> dict[str, Any]:
    """The event's own §9.5 fields: its ref (``issue_ref`` or ``feedback_ref``, CT 160) and
    the digest of its compact summary (``event_summary_digest``, CT 500: never the text)."""
    summary = proposal.content_summary  # the event's, compacted (CT 500) by the proposal
    name = "issue_ref" if adapter == "issue_fix_maintainer_feedback" else "feedback_ref"
    return {  # the typed event's ref: already compact and scanned (CT 160)
        "event_summary_digest": hashlib.sha256(summary.encode()).hexdigest()[:16],
        name: getattr(event, name),
    }


def _event_refusal(exc: RecordValidationError) -> str:
    if exc.code == "raw_content_captured" or exc.path.endswith(".raw_content_captured"):
        return "event_raw_content_refused"
    if exc.code in ("unsafe_text", "unsafe_character"):
        return "event_unsafe_text"
    return "event_not_modelled"


def _event_path(path: str) -> str | None:
    """The refused field's path inside the event (``$.comment_body``), or ``None`` for the
    event as a whole (``$``: not an object, another schema)."""
    return path if path.startswith(("$.", "$[")) and len(path) <= 400 else None


def _check_inputs(adapter: object, corpus: object, binding: object, authority: object) -> None:
    if adapter not in ADAPTERS:
        raise RecordValidationError(
            "adapter must be issue_fix_maintainer_feedback (or issue_fix) or scoped_feedback",
            path="adapter",
            code="invalid_value",
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
    if type(policy) is not StandingPolicy and isinstance(policy, Mapping):
        return strict_packet(dict(policy), StandingPolicy)  # one strict pass (see _event_proposal)
    return as_record(policy, StandingPolicy, what="a standing policy", path="standing_policy")


def _observed(observed_at: str | datetime) -> tuple[datetime, str]:
    """The first observation as a moment and in its stored spelling (``activated_at``)."""
    if isinstance(observed_at, datetime):
        moment = resolve_now(observed_at)
        return moment, format_utc(moment)
    if not isinstance(observed_at, str):
        raise RecordValidationError(
            "observed_at is an aware timestamp (the event's first observation)",
            path="observed_at",
            code="wrong_type",
        )
    if type(observed_at) is str:
        # Already the stored spelling, or a UTC time as datetime.isoformat() spells
        # it (``+00:00``), which with ``Z`` for the offset is the stored spelling or
        # nothing: the grammar's cheap path (it settles the calendar too) gives the
        # moment, and the stored spelling is at hand -- nothing to format, no full
        # grammar to match. Anything else takes the full path below.
        stamp = observed_at
        if stamp.endswith(_UTC_OFFSET):
            stamp = stamp[: -len(_UTC_OFFSET)] + "Z"
        stored = _stored_moment(stamp)
        if stored is not None:
            return stored, stamp
    # Parsed once: its stored spelling is normalize_timestamp's (format_utc of the
    # parsed moment), and the errors are parse_timestamp's, as normalize_timestamp's are.
    moment = parse_timestamp(observed_at, "observed_at")
    return moment, format_utc(moment)


_UTC_OFFSET: Final = "+00:00"


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
    observed_at: str | datetime | None,
    provider: Provider | None = None,
    authority: AuthoritySource | None = None,
    execute: bool = False,
    now: datetime | None = None,
) -> IngestReceipt:
    """Ingest one compact, already-distilled event under a standing policy.

    Args:
        event: an ``issue_fix_reward_memory_event_v0`` or
            ``scoped_feedback_reward_memory_event_v0`` (record or mapping).
        adapter: which of the two maps it onto the shared candidate
            (``issue_fix_maintainer_feedback`` -- alias ``issue_fix`` -- or ``scoped_feedback``).
        corpus: the declared ingest corpus; ``standing_policy`` its policy;
            ``binding`` where it lives (``scope_ref`` a collection).
        provider: the SPI provider (required to execute; never called otherwise).
        authority: the caller's authority source (required for ``hard_policy``).
        observed_at: when the event was first observed; reuse it on retries. ``None``:
            not known -- now, or the first observation of the record the store
            already holds for this event (its target), so a replay deduplicates.
        execute: write and verify (default: a dry run that returns ``planned``).
        now: the clock (aware; default UTC now).

    Returns the receipt; never raises for anything the event, the authority
    source or the provider does.

    Raises:
        RecordValidationError: a programmer error (see the module docs).
    """
    adapter_id = _ALIASES.get(adapter, adapter) if isinstance(adapter, str) else adapter
    _check_inputs(adapter_id, corpus, binding, authority)
    policy = _as_policy(standing_policy)
    moment = resolve_now(now)
    first_seen, first_stamp = (
        (moment, format_utc(moment)) if observed_at is None else _observed(observed_at)
    )
    if execute is not True and execute is not False:
        raise RecordValidationError("execute must be a boolean", path="execute", code="wrong_type")
    if execute and provider is None:
        raise RecordValidationError(
            "execute needs a provider", path="provider", code="missing_field"
        )
    if isinstance(provider, str | bytes):  # a URL where the provider object belongs
        raise RecordValidationError(
            "provider is an SPI provider object, not a URL (see get_provider)",
            path="provider",
            code="wrong_type",
        )
    digest = policy_digest(policy)
    base = Receipt(
        adapter=adapter_id,
        corpus_id=corpus.corpus_id,
        policy_id=policy.policy_id,
        policy_digest=digest,
        **_WRAPPER[adapter_id],
    )

    try:
        typed, proposal = _event_proposal(adapter_id, event)
        base.fields.update(_event_fields(adapter_id, typed, proposal))
    except RecordValidationError as exc:
        refused = (_event_refusal(exc),)
        return base.done(
            "guard_blocked",
            refused,
            candidate_ref=None,
            surface_ids=(),
            guard=IngestGuard(passed=False, reason_codes=refused, field_path=_event_path(exc.path)),
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
    stale = freshness_reasons(corpus, first_seen, moment)
    if stale:
        reasons = tuple(sorted({*reasons, *stale}))
    base.fields.update(
        candidate_ref=candidate.candidate_ref, surface_ids=candidate.scope.surface_ids
    )
    if reasons:
        return base.done(
            "guard_blocked", reasons, guard=IngestGuard(passed=False, reason_codes=reasons)
        )
    base.fields["guard"] = PASSED

    activate_at = functools.partial(
        _activate,
        packet=packet,
        corpus=corpus,
        policy=policy,
        checkpoint=checkpoint,
        digest=digest,
        moment=moment,
    )
    record = activate_at(first_seen=first_seen, first_stamp=first_stamp)
    key = _key(digest, candidate.candidate_ref)
    base.fields.update(
        record_ref=record.record_ref,
        activation_ref=record.activation_ref,
        target_ref=make_ref(
            "target",
            [binding.provider_id, binding.namespace, binding.scope_ref, binding.actor_peer_id, key],
        ),
        next_recall=_next_recall(corpus.corpus_id, candidate.scope.surface_ids),
    )
    if not execute:
        return base.done(
            "planned",
            ("execute_required_for_resource_write",),
            write=WRITES["planned"],
        )
    assert provider is not None

    def observed_as(stamp: str) -> tuple[Any, str] | None:
        # The time not known: the record as first observed at ``stamp`` (the stored one's).
        try:
            seen, stored = _observed(stamp)
        except RecordValidationError:
            return None
        if freshness_reasons(corpus, seen, moment):
            return None  # stale (or future) by the stored time: recall would never return it
        again = activate_at(first_seen=seen, first_stamp=stored)
        return again, canonical_text(again)

    return execute_steps(
        base,
        provider=provider,
        binding=binding,
        corpus=corpus,
        policy=policy,
        record=record,
        content=canonical_text(record),  # written only when executing
        key=key,
        moment=moment,
        observed_as=observed_as if observed_at is None else None,
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
    first_stamp: str,
) -> Any:
    candidate_digest = packet.candidate.candidate_ref.removeprefix(_CANDIDATE_PREFIX)
    accepted = review(
        packet,
        accept_decision(policy, f"review:{digest}:{candidate_digest}"),
        checkpoint=checkpoint,
        now=moment,
    )
    # The guard passed above; activate re-checks fit and authority under the same checkpoint.
    return activate_typed(
        accepted, corpus, checkpoint or UNVERIFIED_CHECKPOINT, first_seen, first_stamp
    )


_make_decision: Final = m.trusted(ReviewDecision)


def accept_decision(policy: StandingPolicy, review_ref: str) -> ReviewDecision:
    """The standing policy's accept of one candidate, under ``review_ref``.

    ``review:<policy digest>:<candidate digest>`` -- two hex digests the library
    computed -- is a token by construction, the reviewer is the policy's (a
    token it checked), the reasoning a checked constant: the decision is set
    without re-running the validators (``tests/test_ingest.py`` holds it equal
    to the validating constructor's).
    """
    if type(policy) is StandingPolicy:
        return _make_decision(
            decision="accept",
            reviewer_ref=policy.reviewer_ref,
            review_ref=review_ref,
            reasoning_summary=ACCEPT_REASONING,
            edited_content_summary=None,
        )
    return ReviewDecision(
        decision="accept",
        reviewer_ref=policy.reviewer_ref,
        review_ref=review_ref,
        reasoning_summary=ACCEPT_REASONING,
    )


async def aingest(
    event: Any,
    *,
    adapter: Adapter,
    corpus: CorpusDeclaration,
    standing_policy: StandingPolicy | Mapping[str, Any],
    binding: ProviderBinding,
    observed_at: str | datetime | None,
    provider: Provider | None = None,
    authority: AuthoritySource | None = None,
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
