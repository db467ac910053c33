"""Stage-3 guarded recall: one corpus, one surface, exact readback, fail open.

::

    request ──guard (pure, ordered reasons)──▶ RecallRequestPacket
       ──blocked──▶ guard_blocked, zero provider calls
       ──ready──▶ per query: provider.search, then provider.read of each hit
       ──item filter──▶ RecallSession(packet=public RecallPacket, items=transient)

- :func:`build_recall_request` runs the guard and never calls a provider.
- :func:`execute_recall` runs a request packet against a provider binding.
- :func:`recall` does both; :func:`arecall` is its asyncio twin.

Fail open is total: ``provider_unavailable`` (with setup hints, discarding
whatever was gathered, never raising) for

- any exception a provider raises, or an object it returned raises when read,
  of any class but ``KeyboardInterrupt`` and ``SystemExit`` (which propagate),
  including ``BaseException`` subclasses and exceptions whose own attributes
  raise (reason ``provider_execution_failed``;
  a ``ProviderUnavailable`` keeps its ``reason_code`` when that is a plain,
  safe token, else ``provider_unavailable``);
- a wholly malformed search answer: ``None``, no ``hits``, or ``hits`` that is
  not a list or tuple (``provider_answer_malformed``);
- an exhausted deadline: the binding's ``timeout_seconds`` bounds the whole
  recall on a monotonic clock; each call gets the time that remains, and a
  recall whose budget runs out, or whose last answer came late, fails with
  ``recall_deadline_exceeded``. Nothing partial is reported: a recall that did
  not finish in time says so and shows nothing. (A provider that ignores its
  timeout can still block its own call; its late answer is then discarded.)

One bad part of an answer is skipped, never coerced: a hit whose ``ref`` is not
a plain, non-empty UTF-8 ``str`` of at most 2048 characters (it is never passed
on to ``read``); a repeated ref; a readback that is not
exactly ``found is True``, the same ``ref`` and ``str`` content; content that
is not an active record of the exact corpus, class, scope and surface (or is
expired at ``now``, revoked, superseded, retired, or, in a time-bound corpus,
older than ``max_age_seconds``); the same record already read under another
ref (the model sees each record once). A returned record that another returned
record supersedes (naming its candidate, activation or provider ref) is dropped
and counted in :attr:`RecallSession.superseded_dropped`.

The public packet carries opaque refs (``provider-`` + 20 hex), query digests
and summaries; ``content_summary`` only when the corpus is ``public_safe`` and
the record's own visibility is ``public_safe`` too (a legacy v0 record has no
visibility, so never). The exact query text and the items' private summaries
stay in memory, in the session's transient ``items``, which are never serialised.

Differs from the original: expiry is checked against an injectable ``now``
(default: the current UTC time), not the request's ``observed_at``; items are
accepted as ``reward_memory_active_record_v1`` (full envelope: revocation,
supersession and retirement are honoured) or legacy v0 (advisory only); a
provider-binding mismatch is a guard reason, not an exception.
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING, Any, Final

from reward_memory._recall.execution import DEFAULT_SETUP_HINTS, execute
from reward_memory._recall.readback import parse as _parse  # noqa: F401 - benchmarks time it
from reward_memory._recall.session import RecallItem, RecallSession, provider_ref
from reward_memory.errors import RecordValidationError
from reward_memory.grammars import resolve_now
from reward_memory.guards.recall import (
    RECORDED_MISMATCH,
    actor_peer_reasons,
    binding_reasons,
    packet_reasons,
    request_reasons,
)
from reward_memory.records.corpus import CorpusDeclaration
from reward_memory.records.recall import (
    ProviderBinding,
    ReadAuthorityCheckpoint,
    RecallGuard,
    RecallRequest,
    RecallRequestPacket,
    trusted_guard,
    trusted_request_packet,
)
from reward_memory.records.standing_policy import StandingPolicy

if TYPE_CHECKING:
    from collections.abc import Callable
    from datetime import datetime

    from reward_memory.authority import AuthoritySource
    from reward_memory.providers.spi import Provider

__all__ = [
    "DEFAULT_SETUP_HINTS",
    "RecallItem",
    "RecallSession",
    "arecall",
    "build_recall_request",
    "execute_recall",
    "provider_ref",
    "recall",
]

_PASSED: Final = RecallGuard(passed=True, reason_codes=())


# -- building the request ---------------------------------------------------------------------


def _require(value: object, cls: type[Any], name: str) -> None:
    if not isinstance(value, cls):
        raise RecordValidationError(
            f"{name} must be a {cls.__name__} record", path=f"$.{name}", code="wrong_type"
        )


def build_recall_request(
    request: RecallRequest,
    *,
    corpus: CorpusDeclaration,
    checkpoint: ReadAuthorityCheckpoint,
    binding: ProviderBinding | None = None,
) -> RecallRequestPacket:
    """Guard a recall request (no provider call); ``guard_blocked`` lists every reason.

    With a ``binding``, its reason codes (corpus, provider, scope digest, peer)
    follow the request's.
    """
    if type(request) is not RecallRequest:
        _require(request, RecallRequest, "request")
    if type(corpus) is not CorpusDeclaration:
        _require(corpus, CorpusDeclaration, "corpus")
    if type(checkpoint) is not ReadAuthorityCheckpoint:
        _require(checkpoint, ReadAuthorityCheckpoint, "checkpoint")
    reasons = request_reasons(request, corpus, checkpoint)
    if binding is not None:
        if type(binding) is not ProviderBinding:
            _require(binding, ProviderBinding, "binding")
        reasons += binding_reasons(binding, corpus)
        reasons += actor_peer_reasons(binding, corpus, request, checkpoint)
    return _request_packet(request, corpus, checkpoint, reasons)


def _request_packet(
    request: RecallRequest,
    corpus: CorpusDeclaration,
    checkpoint: ReadAuthorityCheckpoint,
    reasons: tuple[str, ...],
) -> RecallRequestPacket:
    # Trusted construction: every part is a checked record (their types were
    # required above), the reason codes are the guard's fixed tokens, and the
    # status follows the guard by construction.
    return trusted_request_packet(
        status="guard_blocked" if reasons else "ready",
        corpus=corpus,
        request=request.normalized,
        read_authority_checkpoint=checkpoint,
        guard=trusted_guard(passed=False, reason_codes=reasons) if reasons else _PASSED,
    )


# -- executing --------------------------------------------------------------------------------


def _check_clock(clock: Callable[[], float] | None) -> Callable[[], float]:
    if clock is None:
        return time.monotonic
    if not callable(clock):
        raise RecordValidationError(
            "clock must be a monotonic clock (a callable returning seconds)",
            path="$.clock",
            code="wrong_type",
        )
    return clock


def execute_recall(
    packet: RecallRequestPacket,
    *,
    binding: ProviderBinding,
    provider: Provider,
    now: datetime | None = None,
    clock: Callable[[], float] | None = None,
) -> RecallSession:
    """Run a request packet against ``provider`` through ``binding``.

    The packet is data (built by a caller, loaded with :func:`wire.load`,
    replayed by a hook), so its recorded guard is never trusted: every guard
    (request, checkpoint, freshness, identity, the mode's query cap, the limit,
    the binding) is re-derived from the packet's content here
    (:func:`reward_memory.guards.recall.packet_reasons`). Any derived reason
    blocks, and so does a recorded verdict that disagrees with the derived one
    (``recorded_guard_verdict_mismatch``). Blocked: zero provider calls.
    ``clock`` is the monotonic clock the recall's deadline is kept on (default
    :func:`time.monotonic`).
    """
    _require(packet, RecallRequestPacket, "packet")
    _require(binding, ProviderBinding, "binding")
    _require_provider(provider)
    moment = resolve_now(now)
    reasons = packet_reasons(packet, binding)
    if reasons:
        packet = _reblocked(packet, reasons)
    elif not packet.guard.passed:  # pragma: no cover - packet_reasons reports the mismatch
        packet = _reblocked(packet, (RECORDED_MISMATCH,))
    return execute(packet, binding, provider, moment, _check_clock(clock))


def _require_provider(provider: object) -> None:
    # No provider, or a URL where the provider object belongs, is the caller's mistake,
    # not an outage: a typed error, not provider_unavailable. (An object whose
    # operations are missing or fail is a provider failing: that fails open.)
    if provider is None or isinstance(provider, str | bytes):
        raise RecordValidationError(
            "provider is required (an SPI provider object, not a URL: see get_provider)",
            path="$.provider",
            code="wrong_type",
        )


def _reblocked(packet: RecallRequestPacket, reasons: tuple[str, ...]) -> RecallRequestPacket:
    # Trusted: the packet was validated when built and the reasons are the
    # guard's fixed tokens; only the verdict changes.
    return trusted_request_packet(
        status="guard_blocked",
        corpus=packet.corpus,
        request=packet.request,
        read_authority_checkpoint=packet.read_authority_checkpoint,
        guard=trusted_guard(passed=False, reason_codes=reasons),
    )


def recall(
    request: RecallRequest,
    *,
    corpus: CorpusDeclaration,
    checkpoint: ReadAuthorityCheckpoint,
    binding: ProviderBinding,
    provider: Provider,
    now: datetime | None = None,
    clock: Callable[[], float] | None = None,
    standing_policy: StandingPolicy | None = None,
    authority: AuthoritySource | None = None,
    deadline: float | None = None,
) -> RecallSession:
    """Guarded recall from one corpus and surface (build the request, then execute it).

    Never raises for a policy problem or for anything the provider does: the
    session's packet says ``guard_blocked``, ``provider_unavailable``,
    ``completed`` or ``empty`` (only ``KeyboardInterrupt`` and ``SystemExit``
    raised inside a provider propagate). The binding's ``timeout_seconds`` bounds
    the whole recall, kept on ``clock`` (default :func:`time.monotonic`); ``deadline``,
    a time on that clock, ends it earlier (a walk over several corpora shares one). Raises
    :class:`RecordValidationError` only for programmer errors (an argument that
    is not the expected record, a naive ``now``, a clock that is not callable).

    ``standing_policy``, the corpus's (the experiment runtime passes it): a stored
    record with action authority is then recalled only when its authority is what
    that policy could have activated -- ``constraint`` over scopes it allows,
    checkpointed by its authority source, for a class, source kind and actor
    role it allows. Without it, a record is still never recalled with an action
    scope no standing policy may grant (credential, write, publish, production).

    ``authority``, the caller's authority source (the experiment runtime passes
    it): a stored record with action authority is then recalled only when that
    source vouches, now, for its actor, role, project and action scopes under the
    checkpoint the record names -- a record anyone wrote into the scope claiming
    an actor the source grants nothing is passed over. A source that raises
    vouches for nothing.
    """
    if standing_policy is not None and type(standing_policy) is not StandingPolicy:
        _require(standing_policy, StandingPolicy, "standing_policy")
    if type(binding) is not ProviderBinding:
        _require(binding, ProviderBinding, "binding")
    _require_provider(provider)  # untyped callers: None, or a URL string
    moment = resolve_now(now)
    ticks = time.monotonic if clock is None else _check_clock(clock)
    packet = build_recall_request(request, corpus=corpus, checkpoint=checkpoint, binding=binding)
    vouched = None if authority is None else _vouched_by(authority, moment)
    if deadline is not None and (
        isinstance(deadline, bool) or not isinstance(deadline, int | float) or math.isnan(deadline)
    ):
        raise RecordValidationError(
            "deadline must be a time on the clock (seconds)", path="$.deadline", code="wrong_type"
        )
    return execute(
        packet,
        binding,
        provider,
        moment,
        ticks,
        policy=standing_policy,
        vouched=vouched,
        until=deadline,
    )


def _vouched_by(source: AuthoritySource, now: datetime) -> Callable[[Any], bool]:
    """Whether ``source`` verifies, at ``now``, the authority a stored record claims."""
    from reward_memory.records._candidate_inputs import AuthorityCheckpoint  # noqa: PLC0415

    def vouched(record: Any) -> bool:
        claimed, origin, scope = record.authority, record.source, record.scope
        try:
            granted = source.checkpoint_for(
                actor_ref=origin.actor_ref,
                actor_role=origin.actor_role or "",
                project_ref=scope.project_ref,
                action_scopes=tuple(claimed.action_scopes),
                now=now,
            )
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException:  # noqa: BLE001 - a source that fails vouches for nothing
            return False
        return (
            isinstance(granted, AuthorityCheckpoint)
            and granted.verified is True
            and granted.source_ref == claimed.checkpoint_ref
            and granted.actor_ref == origin.actor_ref
            and granted.actor_role == origin.actor_role
            and granted.project_ref == scope.project_ref
            and set(claimed.action_scopes).issubset(granted.action_scopes)
        )

    return vouched


async def arecall(
    request: RecallRequest,
    *,
    corpus: CorpusDeclaration,
    checkpoint: ReadAuthorityCheckpoint,
    binding: ProviderBinding,
    provider: Provider,
    now: datetime | None = None,
    clock: Callable[[], float] | None = None,
    standing_policy: StandingPolicy | None = None,
    authority: AuthoritySource | None = None,
) -> RecallSession:
    """The asyncio twin of :func:`recall`: runs it in a worker thread."""
    import asyncio  # noqa: PLC0415 - only asyncio callers pay for it

    return await asyncio.to_thread(
        recall,
        request,
        corpus=corpus,
        checkpoint=checkpoint,
        binding=binding,
        provider=provider,
        now=now,
        clock=clock,
        standing_policy=standing_policy,
        authority=authority,
    )
