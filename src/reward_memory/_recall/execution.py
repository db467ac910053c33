"""The provider loop of one guarded recall: search, exact readback, item filter, fail open."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Final, Literal

from reward_memory._recall.item_filter import filter_of
from reward_memory._recall.readback import Parsed, parse
from reward_memory._recall.session import RecallItem, RecallSession, provider_ref
from reward_memory.errors import ProviderUnavailable, RecordValidationError
from reward_memory.records._memo import check_token_memo
from reward_memory.records.recall import (
    EMPTY_REASON,
    RecallPacket,
    RecallResult,
    SetupHints,
    trusted_recall_packet,
)

if TYPE_CHECKING:
    from datetime import datetime

    from reward_memory.providers.spi import Provider
    from reward_memory.records.recall import ProviderBinding, RecallRequestPacket

__all__ = ["DEFAULT_SETUP_HINTS", "PROVIDER_EXECUTION_FAILED", "execute"]

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
_REF_CACHE_SIZE: Final = 4096

_Status = Literal["guard_blocked", "provider_unavailable", "completed", "empty"]


def _reason_code(exc: BaseException) -> str:
    if isinstance(exc, ProviderUnavailable):
        code = exc.reason_code
        try:
            return check_token_memo(code)
        except RecordValidationError:
            return "provider_unavailable"
    return PROVIDER_EXECUTION_FAILED


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
    ``completed`` at least one result (see :func:`execute`).
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


def execute(
    request_packet: RecallRequestPacket,
    binding: ProviderBinding,
    provider: Provider,
    now: datetime,
) -> RecallSession:
    """Run a guarded request packet (blocked: no provider call); never raises for a provider."""
    if not request_packet.guard.passed:
        blocked = _packet(request_packet, "guard_blocked")
        return RecallSession(packet=blocked, items=(), request_packet=request_packet)
    request = request_packet.request
    limit = request.limit
    item_filter = filter_of(request_packet.corpus, request.surface_id)
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
                parsed = parse(content)
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
    ref: str, parsed: Parsed, provider_id: str, namespace: str, exposed: bool
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
