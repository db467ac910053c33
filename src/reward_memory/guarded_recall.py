"""Stage-3 guarded recall: one corpus, one surface, exact readback, fail open.

::

    request ──guard (pure, ordered reasons)──▶ RecallRequestPacket
       ──blocked──▶ guard_blocked, zero provider calls
       ──ready──▶ per query: provider.search, then provider.read of each hit
       ──item filter──▶ RecallSession(packet=public RecallPacket, items=transient)

- :func:`build_recall_request` runs the guard and never calls a provider.
- :func:`execute_recall` runs a request packet against a provider binding.
- :func:`recall` does both; :func:`arecall` is its asyncio twin.

Fail open: any provider failure (``ProviderUnavailable``, or any other exception
the provider raises, or a malformed answer) gives status ``provider_unavailable``
with setup hints, discards whatever was gathered, and never raises. Items whose
readback is missing, unparseable or not an active record of the exact corpus,
class, scope and surface (or expired at ``now``, revoked, superseded, retired)
are skipped silently.

The public packet carries opaque refs (``provider-`` + 20 hex), query digests
and summaries; ``content_summary`` only for a ``public_safe`` corpus. The
exact query text and the items' private summaries stay in memory, in the
session's transient ``items``, which are never serialised.

Differs from the original: expiry is checked against an injectable ``now``
(default: the current UTC time), not the request's ``observed_at``; items are
accepted as ``reward_memory_active_record_v1`` (full envelope: revocation,
supersession and retirement are honoured) or legacy v0 (advisory only); a
provider-binding mismatch is a guard reason, not an exception.
"""

from __future__ import annotations

import functools
import hashlib
import json
import typing
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final, Literal

import attrs

from reward_memory.errors import ProviderUnavailable, RecordValidationError
from reward_memory.grammars import parse_timestamp, utc_now
from reward_memory.guards.recall import (
    RECORDED_MISMATCH,
    actor_peer_reasons,
    binding_reasons,
    packet_reasons,
    request_reasons,
)
from reward_memory.records._memo import check_token_memo
from reward_memory.records._plain import from_plain
from reward_memory.records.active import ActiveRecord, LegacyActiveRecord
from reward_memory.records.corpus import CorpusDeclaration, CorpusScope
from reward_memory.records.envelope import ClassId, RecordScope
from reward_memory.records.recall import (
    EMPTY_REASON,
    ProviderBinding,
    ReadAuthorityCheckpoint,
    RecallGuard,
    RecallPacket,
    RecallRequest,
    RecallRequestPacket,
    RecallResult,
    SetupHints,
    trusted_guard,
    trusted_recall_packet,
    trusted_request_packet,
)

if TYPE_CHECKING:
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

PROVIDER_EXECUTION_FAILED: Final = "provider_execution_failed"
DEFAULT_SETUP_HINTS: Final = SetupHints(
    install=(
        "Install the distribution that provides the bound provider_id; "
        "reward-memory providers lists what is installed."
    ),
    configure=(
        "Check the provider URL and the binding's namespace and scope_ref; "
        "recall fails open until the provider answers."
    ),
)
_PASSED: Final = RecallGuard(passed=True, reason_codes=())
_PARSE_CACHE_SIZE: Final = 2048
_REF_CACHE_SIZE: Final = 4096
_V1: Final = "reward_memory_active_record_v1"
_V0: Final = "reward_memory_active_record_v0"


def _hidden(value: object) -> str:
    del value
    return "<transient>"


@attrs.frozen(kw_only=True, eq=False)
class RecallItem:
    """One accepted item, in process only (never serialised, never in a public packet).

    ``memory_ref`` is the provider's raw resource ref; ``provider_ref`` the opaque
    ref the public packet shows. ``record`` is the parsed active record; a legacy
    v0 record is advisory only (``legacy=True``, ``authority_level="advisory"``).
    Items compare by identity (the same readback gives the same item object).
    """

    memory_ref: str = attrs.field(repr=_hidden)
    provider_ref: str
    candidate_ref: str
    class_id: ClassId
    content_summary: str = attrs.field(repr=_hidden)
    content_digest: str
    authority_level: str
    legacy: bool
    record: ActiveRecord | LegacyActiveRecord = attrs.field(repr=False)


class RecallSession:
    """The result of one recall: the public packet plus the transient items.

    Only :attr:`packet` is meant to leave the process (``wire.dump(session.packet)``);
    the session itself is deliberately not an attrs record, so the wire
    converter cannot serialise the items by accident.
    """

    __slots__ = ("_items", "_packet", "_refs", "_request_packet")

    def __init__(
        self,
        *,
        packet: RecallPacket,
        items: tuple[RecallItem, ...],
        request_packet: RecallRequestPacket,
    ) -> None:
        self._packet = packet
        self._items = items
        self._request_packet = request_packet
        self._refs: dict[str, str] | None = None

    @property
    def packet(self) -> RecallPacket:
        """The public ``reward_memory_recall_v0`` packet."""
        return self._packet

    @property
    def items(self) -> tuple[RecallItem, ...]:
        """The accepted items (transient; empty unless ``status == "completed"``)."""
        return self._items

    @property
    def refs(self) -> dict[str, str]:
        """Every item's raw ``memory_ref`` and opaque ``provider_ref``, mapped to the raw ref."""
        if self._refs is None:
            refs: dict[str, str] = {}
            for item in self._items:
                refs[item.memory_ref] = item.memory_ref
                refs[item.provider_ref] = item.memory_ref
            self._refs = refs
        return self._refs

    @property
    def request_packet(self) -> RecallRequestPacket:
        """The guarded request this recall ran (in memory; holds the query text)."""
        return self._request_packet

    @property
    def status(self) -> str:
        """The recall status: guard_blocked, provider_unavailable, completed or empty."""
        return self._packet.status

    def __repr__(self) -> str:
        return (
            f"RecallSession(status={self._packet.status!r}, "
            f"result_count={self._packet.result_count})"
        )

    def __reduce__(self) -> typing.NoReturn:
        raise TypeError("a RecallSession holds transient items and is never serialised")


# -- refs -------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=_REF_CACHE_SIZE)
def provider_ref(provider_id: str, namespace: str, resource_ref: str) -> str:
    """The opaque public ref of a provider resource (``provider-`` + 20 hex, reference §1.5)."""
    material = f"{provider_id}\n{namespace}\n{resource_ref}".encode()
    return "provider-" + hashlib.sha256(material).hexdigest()[:20]


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


# -- reading items back -----------------------------------------------------------------------


@attrs.frozen(kw_only=True, eq=False)
class _Parsed:
    """A readback parsed into a record, plus what the item filter needs (cached).

    Compared and hashed by identity: one object per distinct readback content.
    ``identity`` is (corpus, class, workspace, project, user, peer, session), the
    tuple an item must share exactly with its corpus.
    """

    record: ActiveRecord | LegacyActiveRecord
    legacy: bool
    identity: tuple[str | None, ...]
    surfaces: frozenset[str]
    revision_ref: str | None
    candidate_ref: str
    class_id: ClassId
    content_summary: str
    live: bool  # lifecycle active, not revoked, superseded or retired
    expires_at: datetime | None
    content_digest: str
    authority_level: str


def _identity(
    corpus_id: str, class_id: str, scope: RecordScope | CorpusScope
) -> tuple[str | None, ...]:
    return (
        corpus_id,
        class_id,
        scope.workspace_ref,
        scope.project_ref,
        scope.user_ref,
        scope.peer_ref,
        scope.session_ref,
    )


_LEGACY_SCOPE_KEYS: Final = frozenset(
    {
        "workspace_ref",
        "project_ref",
        "surface_ids",
        "revision_ref",
        "user_ref",
        "peer_ref",
        "session_ref",
    }
)
_LEGACY_LIFECYCLE_KEYS: Final = frozenset(
    {"state", "expires_at", "supersedes_refs", "superseded_by"}
)


def _digest_of(content: str) -> str:
    # canonical_text (reference §8.3): CRLF -> LF, then one trailing newline removed.
    text = content.replace("\r\n", "\n")
    if text.endswith("\n"):
        text = text[:-1]
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _parse_v1(data: dict[str, Any], content: str) -> _Parsed:
    record: ActiveRecord = from_plain(ActiveRecord, data)
    live = (
        record.lifecycle_state == "active"
        and record.revocation.revoked_by_ref is None
        and record.supersession.superseded_by_ref is None
        and record.expiry.retired_reason is None
    )
    expires = record.expiry.expires_at
    return _Parsed(
        record=record,
        legacy=False,
        identity=_identity(record.corpus_id, record.class_id, record.scope),
        surfaces=frozenset(record.scope.surface_ids),
        revision_ref=record.scope.revision_ref,
        candidate_ref=record.candidate_ref,
        class_id=record.class_id,
        content_summary=record.content_summary,
        live=live,
        expires_at=None if expires is None else parse_timestamp(expires),
        content_digest=_digest_of(content),
        authority_level=record.authority.level,
    )


def _parse_v0(data: dict[str, Any], content: str) -> _Parsed:
    record: LegacyActiveRecord = from_plain(LegacyActiveRecord, data)
    raw_scope = record.scope
    if not raw_scope.keys() <= _LEGACY_SCOPE_KEYS:
        raise RecordValidationError("unknown legacy scope fields", code="unknown_field")
    scope: RecordScope = from_plain(RecordScope, raw_scope)
    lifecycle = record.lifecycle
    if not lifecycle.keys() <= _LEGACY_LIFECYCLE_KEYS:
        raise RecordValidationError("unknown legacy lifecycle fields", code="unknown_field")
    expires = lifecycle.get("expires_at")
    return _Parsed(
        record=record,
        legacy=True,
        identity=_identity(record.corpus_id, record.target_class, scope),
        surfaces=frozenset(scope.surface_ids),
        revision_ref=scope.revision_ref,
        candidate_ref=record.candidate_ref,
        class_id=record.target_class,
        content_summary=record.content_summary,
        live=lifecycle.get("state") == "active" and lifecycle.get("superseded_by") is None,
        expires_at=None if expires is None else parse_timestamp(expires),
        content_digest=_digest_of(content),
        # A legacy record has no authority block: it is advisory, whatever its class.
        authority_level="advisory",
    )


@functools.lru_cache(maxsize=_PARSE_CACHE_SIZE)
def _parse(content: str) -> _Parsed | None:
    """Parse one readback (cached per exact content string); ``None`` when unusable."""
    try:
        data = json.loads(content)
        if type(data) is not dict:
            return None
        version = data.get("schema_version")
        if version == _V1:
            return _parse_v1(data, content)
        if version == _V0:
            return _parse_v0(data, content)
    except Exception:  # noqa: BLE001 - corrupt readback is skipped, never an error
        return None
    return None


_ANY_REVISION: Final = object()
_FILTER_CACHE_SIZE: Final = 256
_VERDICT_CACHE_SIZE: Final = 4096


class _Filter:
    """What the item filter compares every readback against, for one corpus and surface.

    Built once per (corpus object, surface) and kept (see :func:`_filter_of`): the
    corpus is a frozen record. The verdict on everything but expiry is a pure
    function of (filter, parsed readback), so it is cached (:func:`_static_fit`).
    """

    __slots__ = (
        "corpus",
        "corpus_surfaces",
        "exposed",
        "identity",
        "revision",
        "surface_id",
    )

    def __init__(self, corpus: CorpusDeclaration, surface_id: str) -> None:
        freshness = corpus.freshness
        self.corpus = corpus  # keeps the corpus alive while this filter is cached by its id
        self.identity = _identity(corpus.corpus_id, corpus.class_id, corpus.scope)
        self.corpus_surfaces = frozenset(corpus.scope.surface_ids)
        self.surface_id = surface_id
        self.revision: object = (
            freshness.source_revision if freshness.mode == "revision_bound" else _ANY_REVISION
        )
        self.exposed = corpus.privacy.visibility == "public_safe"

    def fits(self, parsed: _Parsed, now: datetime) -> bool:
        """Exact corpus, class and identities; requested surface; surfaces inside the corpus;
        the corpus revision when revision-bound; live; unexpired at ``now``."""
        expires = parsed.expires_at
        return _static_fit(self, parsed) and (expires is None or now < expires)


@functools.lru_cache(maxsize=_VERDICT_CACHE_SIZE)
def _static_fit(item_filter: _Filter, parsed: _Parsed) -> bool:
    """Everything :meth:`_Filter.fits` checks but expiry (both keys hash by identity)."""
    return (
        parsed.identity == item_filter.identity
        and parsed.live
        and item_filter.surface_id in parsed.surfaces
        and parsed.surfaces <= item_filter.corpus_surfaces
        and (item_filter.revision is _ANY_REVISION or parsed.revision_ref == item_filter.revision)
    )


_FILTERS: dict[tuple[int, str], _Filter] = {}


def _filter_of(corpus: CorpusDeclaration, surface_id: str) -> _Filter:
    """The item filter of ``corpus`` and ``surface_id`` (memoised per corpus object)."""
    if type(corpus) is not CorpusDeclaration:
        return _Filter(corpus, surface_id)
    key = (id(corpus), surface_id)
    found = _FILTERS.get(key)
    if found is not None and found.corpus is corpus:
        return found
    made = _Filter(corpus, surface_id)
    if len(_FILTERS) >= _FILTER_CACHE_SIZE:
        _FILTERS.clear()
    _FILTERS[key] = made
    return made


# -- executing --------------------------------------------------------------------------------


def _check_now(now: datetime | None) -> datetime:
    if now is None:
        return utc_now()
    if not isinstance(now, datetime) or now.tzinfo is None or now.utcoffset() is None:
        raise RecordValidationError(
            "now must be an aware datetime (UTC)", path="$.now", code="wrong_type"
        )
    return now


def _reason_code(exc: BaseException) -> str:
    if isinstance(exc, ProviderUnavailable):
        code = exc.reason_code
        try:
            return check_token_memo(code)
        except RecordValidationError:
            return "provider_unavailable"
    return PROVIDER_EXECUTION_FAILED


def execute_recall(
    packet: RecallRequestPacket,
    *,
    binding: ProviderBinding,
    provider: Provider,
    now: datetime | None = None,
) -> RecallSession:
    """Run a request packet against ``provider`` through ``binding``.

    The packet is data (built by a caller, loaded with :func:`wire.load`,
    replayed by a hook), so its recorded guard is never trusted: every guard
    (request, checkpoint, freshness, identity, the mode's query cap, the limit,
    the binding) is re-derived from the packet's content here
    (:func:`reward_memory.guards.recall.packet_reasons`). Any derived reason
    blocks, and so does a recorded verdict that disagrees with the derived one
    (``recorded_guard_verdict_mismatch``). Blocked: zero provider calls.
    """
    _require(packet, RecallRequestPacket, "packet")
    _require(binding, ProviderBinding, "binding")
    _require_provider(provider)
    moment = _check_now(now)
    reasons = packet_reasons(packet, binding)
    if reasons:
        packet = _reblocked(packet, reasons)
    elif not packet.guard.passed:  # pragma: no cover - packet_reasons reports the mismatch
        packet = _reblocked(packet, (RECORDED_MISMATCH,))
    return _execute(packet, binding, provider, moment)


def _require_provider(provider: object) -> None:
    if provider is None:
        raise RecordValidationError(
            "provider is required (an SPI provider object)", path="$.provider", code="wrong_type"
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
) -> RecallSession:
    """Guarded recall from one corpus and surface (build the request, then execute it).

    Never raises for a policy problem or a provider failure: the session's packet
    says ``guard_blocked``, ``provider_unavailable``, ``completed`` or ``empty``.
    Raises :class:`RecordValidationError` only for programmer errors (an argument
    that is not the expected record, a naive ``now``).
    """
    if type(binding) is not ProviderBinding:
        _require(binding, ProviderBinding, "binding")
    if provider is None:
        _require_provider(provider)  # type: ignore[unreachable]  # untyped callers
    moment = _check_now(now)
    packet = build_recall_request(request, corpus=corpus, checkpoint=checkpoint, binding=binding)
    return _execute(packet, binding, provider, moment)


async def arecall(
    request: RecallRequest,
    *,
    corpus: CorpusDeclaration,
    checkpoint: ReadAuthorityCheckpoint,
    binding: ProviderBinding,
    provider: Provider,
    now: datetime | None = None,
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
    )


_Status = Literal["guard_blocked", "provider_unavailable", "completed", "empty"]


def _packet(
    request_packet: RecallRequestPacket,
    status: _Status,
    *,
    results: tuple[RecallResult, ...] = (),
    calls: int = 0,
    reason_code: str | None = None,
    setup_hints: SetupHints | None = None,
) -> RecallPacket:
    """The public packet (trusted construction; the invariants hold by construction).

    Every part comes from checked records: the request packet's corpus and
    normalised request, results built by the validating :class:`RecallResult`
    constructor, reason codes that are the guard's tokens, ``EMPTY_REASON`` or a
    checked provider token, and the binding's (validated) setup hints. Per
    status: ``guard_blocked`` has reason codes, no calls and no results;
    ``provider_unavailable`` a reason code and hints; ``empty`` ``EMPTY_REASON``;
    ``completed`` at least one result (see :func:`_execute`).
    """
    corpus = request_packet.corpus
    request = request_packet.request
    count = len(results)
    return trusted_recall_packet(
        corpus_id=corpus.corpus_id,
        surface_id=request.surface_id,
        mode=request.mode,
        query_kind=request.query_kind,
        query_evidence=request.query_evidence,
        provider_id=corpus.provider_id,
        result_count=count,
        results=results,
        result_readback_verified=count > 0,
        provider_call_count=calls,
        status=status,
        reason_code=reason_code,
        reason_codes=request_packet.guard.reason_codes if status == "guard_blocked" else (),
        setup_hints=setup_hints,
    )


def _execute(
    request_packet: RecallRequestPacket,
    binding: ProviderBinding,
    provider: Provider,
    now: datetime,
) -> RecallSession:
    if not request_packet.guard.passed:
        blocked = _packet(request_packet, "guard_blocked")
        return RecallSession(packet=blocked, items=(), request_packet=request_packet)
    request = request_packet.request
    limit = request.limit
    item_filter = _filter_of(request_packet.corpus, request.surface_id)
    fits = item_filter.fits
    exposed = item_filter.exposed
    provider_id = binding.provider_id
    namespace = binding.namespace
    scope = binding.provider_scope
    timeout = binding.timeout_seconds
    items: list[RecallItem] = []
    results: list[RecallResult] = []
    seen: set[str] = set()
    calls = 0
    try:
        search = provider.search
        read = provider.read
        for query in request.queries:
            calls += 1
            found = search(scope=scope, query=query.query, limit=limit, timeout=timeout)
            for hit in found.hits[:limit]:
                ref = hit.ref
                if ref in seen:
                    continue
                seen.add(ref)
                calls += 1
                readback = read(scope=scope, ref=ref, timeout=timeout)
                content = readback.content
                if not readback.found or type(content) is not str or readback.ref != ref:
                    continue
                parsed = _parse(content)
                if parsed is None or not fits(parsed, now):
                    continue
                item, result = _accept(ref, parsed, provider_id, namespace, exposed)
                items.append(item)
                results.append(result)
                if len(items) >= limit:
                    break
            if len(items) >= limit:
                break
    except Exception as exc:  # noqa: BLE001 - fail open: nothing a provider raises escapes
        hints = binding.setup_hints
        if hints.install is None and hints.configure is None:
            hints = DEFAULT_SETUP_HINTS
        unavailable = _packet(
            request_packet,
            "provider_unavailable",
            calls=calls,
            reason_code=_reason_code(exc),
            setup_hints=hints,
        )
        return RecallSession(packet=unavailable, items=(), request_packet=request_packet)
    if not items:
        empty = _packet(request_packet, "empty", calls=calls, reason_code=EMPTY_REASON)
        return RecallSession(packet=empty, items=(), request_packet=request_packet)
    completed = _packet(request_packet, "completed", results=tuple(results), calls=calls)
    return RecallSession(packet=completed, items=tuple(items), request_packet=request_packet)


@functools.lru_cache(maxsize=_REF_CACHE_SIZE)
def _accept(
    ref: str, parsed: _Parsed, provider_id: str, namespace: str, exposed: bool
) -> tuple[RecallItem, RecallResult]:
    """The transient item and public result of one accepted readback (cached: both immutable)."""
    item = RecallItem(
        memory_ref=ref,
        provider_ref=provider_ref(provider_id, namespace, ref),
        candidate_ref=parsed.candidate_ref,
        class_id=parsed.class_id,
        content_summary=parsed.content_summary,
        content_digest=parsed.content_digest,
        authority_level=parsed.authority_level,
        legacy=parsed.legacy,
        record=parsed.record,
    )
    result = RecallResult(
        memory_ref=item.provider_ref,
        candidate_ref=item.candidate_ref,
        target_class=item.class_id,
        content_summary=item.content_summary if exposed else None,
        content_exposed=exposed,
    )
    return item, result
