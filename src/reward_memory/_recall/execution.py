"""The provider loop of one guarded recall: search, exact readback, item filter, fail open."""

from __future__ import annotations

import functools
import re
from itertools import islice
from typing import TYPE_CHECKING, Any, Final, Literal

from reward_memory._recall.item_filter import ACTING_LEVELS, filter_of, static_fit, within_policy
from reward_memory._recall.readback import Parsed, parse
from reward_memory._recall.session import MINT, RecallItem, RecallSession, provider_ref
from reward_memory.errors import ProviderUnavailable, RecordValidationError
from reward_memory.providers.spi import ReadResult, SearchHit, SearchResult
from reward_memory.records import _memo as m
from reward_memory.records._memo import check_token_memo
from reward_memory.records.active import ActiveRecord, LegacyActiveRecord
from reward_memory.records.recall import (
    EMPTY_REASON,
    RecallPacket,
    RecallResult,
    SetupHints,
    trusted_recall_packet,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from datetime import datetime

    from reward_memory.providers.spi import Provider
    from reward_memory.records.recall import ProviderBinding, RecallRequestPacket
    from reward_memory.records.standing_policy import StandingPolicy

__all__ = [
    "DEADLINE_EXCEEDED",
    "DEFAULT_SETUP_HINTS",
    "PROVIDER_ANSWER_MALFORMED",
    "PROVIDER_EXECUTION_FAILED",
    "execute",
]

PROVIDER_EXECUTION_FAILED: Final = "provider_execution_failed"
PROVIDER_ANSWER_MALFORMED: Final = "provider_answer_malformed"
DEADLINE_EXCEEDED: Final = "recall_deadline_exceeded"
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
# A result is built from parts validated once already: the opaque ref this module
# derives (provider- + 20 hex), and the candidate ref, class and summary of a
# record the strict readback parse has just built; exposure and summary agree
# by construction (below). So it is not validated a second time, on every item of
# every recall; every packet a test sees is loaded back through the schema.
_result: Final = m.trusted(RecallResult)
_MAX_REF_LENGTH: Final = 2048  # a provider ref longer than this is not a ref

_Status = Literal["guard_blocked", "provider_unavailable", "completed", "empty"]


class _Failed(Exception):
    """An answer that fails the whole recall (raised inside the loop, never escapes it)."""

    def __init__(self, reason_code: str) -> None:
        super().__init__(reason_code)
        self.reason_code = reason_code


_REASON_WORD: Final = re.compile(r"[a-z][a-z0-9_]{0,63}")


def _reason_code(exc: BaseException) -> str:
    """The public reason code of a provider failure; reading it never raises.

    Only the exception's real type is trusted (``type()``, not ``__class__``);
    a ``reason_code`` that is not a plain lower-case word (or whose property
    raises) gives ``provider_unavailable``.
    """
    kind = type(exc)
    if kind is _Failed:
        return exc.reason_code  # type: ignore[attr-defined, no-any-return]  # ours
    if not issubclass(kind, ProviderUnavailable):
        return PROVIDER_EXECUTION_FAILED
    try:
        code = exc.reason_code  # type: ignore[attr-defined]
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException:  # noqa: BLE001 - a provider's exception may raise on any attribute
        return "provider_unavailable"
    # A reason code is a word (``provider_timeout``, ``index_pending``), never a ref, a
    # URI or an identity a provider might put there: those stay out of the public packet.
    if type(code) is not str or _REASON_WORD.fullmatch(code) is None:
        return "provider_unavailable"
    try:
        return check_token_memo(code)  # and nothing credential-shaped
    except RecordValidationError:
        return "provider_unavailable"


def _packet(
    request_packet: RecallRequestPacket,
    status: _Status,
    *,
    results: tuple[RecallResult, ...] = (),
    calls: int = 0,
    reason_code: str | None = None,
    setup_hints: SetupHints | None = None,
    dropped: int = 0,
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
        superseded_dropped_count=dropped,
    )


def _foreign_hits(found: object) -> object:
    """The ``hits`` of a search answer that is not a :class:`SearchResult` (``None`` if absent)."""
    return getattr(found, "hits", None)


def _checked_hits(hits: object, limit: int) -> Iterable[object]:
    """Hits that are not a plain tuple or list: a subclass is walked lazily (at most
    ``limit`` entries); anything else (``None``, a generator, a string, a mapping)
    is a wholly malformed answer and fails the recall."""
    if isinstance(hits, tuple | list):
        return islice(hits, limit)
    raise _Failed(PROVIDER_ANSWER_MALFORMED)


def _foreign_ref(hit: object) -> object:
    """The ``ref`` of a hit that is not a :class:`SearchHit` (anything, checked by the caller)."""
    return getattr(hit, "ref", None)


def _usable_ref(ref: str) -> bool:
    """A ref is usable when non-empty, not huge, and UTF-8 (no lone surrogate)."""
    if not ref or len(ref) > _MAX_REF_LENGTH:
        return False
    try:
        ref.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _foreign_content(readback: object, ref: str) -> str | None:
    """The content of a readback that is not a :class:`ReadResult`, when exactly "found ``ref``"."""
    found = getattr(readback, "found", None)
    answered = getattr(readback, "ref", None)
    content = getattr(readback, "content", None)
    if found is not True or type(content) is not str or type(answered) is not str:
        return None
    return content if answered == ref else None


def _superseded(items: list[RecallItem]) -> list[bool]:
    """Which items another returned item supersedes.

    A record is named by its candidate ref, its activation ref, or the raw or
    opaque provider ref it was read back under; a record naming itself is not
    dropped by itself.
    """
    named = [
        {item.candidate_ref, item.memory_ref, item.provider_ref, item.record.activation_ref}
        for item in items
    ]
    supersedes = [frozenset(_supersedes(item.record)) for item in items]
    dropped = [False] * len(items)
    for index, names in enumerate(named):
        for other, refs in enumerate(supersedes):
            if other != index and not refs.isdisjoint(names):
                dropped[index] = True
                break
    return dropped


def _supersedes(record: ActiveRecord | LegacyActiveRecord) -> tuple[str, ...]:
    if isinstance(record, ActiveRecord):
        return record.supersession.supersedes_refs
    return record.lifecycle.supersedes_refs


def execute(  # noqa: PLR0915 - the hot loop stays in one frame (locals, no call per step)
    request_packet: RecallRequestPacket,
    binding: ProviderBinding,
    provider: Provider,
    now: datetime,
    clock: Callable[[], float],
    *,
    known: tuple[str, Parsed] | None = None,
    policy: StandingPolicy | None = None,
    vouched: Callable[[Any], bool] | None = None,
    until: float | None = None,
) -> RecallSession:
    """Run a guarded request packet (blocked: no provider call); never raises for a provider.

    Search each query, read each new hit back, keep what fits. The binding's
    ``timeout_seconds`` bounds the whole recall: every call gets the time that
    remains, and a recall whose budget runs out (before a call, or because an
    answer came late) fails open with ``recall_deadline_exceeded``. Only
    ``KeyboardInterrupt`` and ``SystemExit`` propagate. (Hot path: the SPI's own
    result types are read inline; anything else goes through the checked helpers.)

    ``known`` is ``(content, parse)`` of the one content the caller itself has
    just written (:func:`~reward_memory._recall.readback.written`): a readback of
    exactly that content uses it instead of decoding it again; any other content
    is parsed.

    ``policy`` is the corpus's standing policy, when the caller has it: a record
    with action authority is then recalled only when that authority is what the
    policy could have activated (:func:`~reward_memory._recall.item_filter.within_policy`).
    """
    if not request_packet.guard.passed:
        blocked = _packet(request_packet, "guard_blocked")
        return RecallSession(packet=blocked, items=(), request_packet=request_packet, _mint=MINT)
    request = request_packet.request
    limit = request.limit
    item_filter = filter_of(request_packet.corpus, request.surface_id)
    fits_at = item_filter.fits_at
    aging = item_filter.max_age is not None
    exposed = item_filter.exposed
    scope = binding.provider_scope
    provider_id = binding.provider_id
    namespace = binding.namespace
    items: list[RecallItem] = []
    results: list[RecallResult] = []
    seen: set[str] = set()
    keys: set[str] = set()
    superseding = False
    calls = 0
    known_content, known_parsed = (None, None) if known is None else known
    try:
        deadline = clock() + binding.timeout_seconds
        if until is not None and until < deadline:  # a walk over corpora shares one deadline
            deadline = until
        search = provider.search
        read = provider.read
        for query in request.queries:
            remaining = deadline - clock()
            if not remaining > 0:
                raise _Failed(DEADLINE_EXCEEDED)
            calls += 1
            found = search(scope=scope, query=query.query, limit=limit, timeout=remaining)
            hits = found.hits if type(found) is SearchResult else _foreign_hits(found)
            kind = type(hits)
            hits = (
                hits[:limit]  # type: ignore[index]  # checked: a tuple or a list
                if kind is tuple or kind is list
                else _checked_hits(hits, limit)
            )
            for hit in hits:
                ref = hit.ref if type(hit) is SearchHit else _foreign_ref(hit)
                if type(ref) is not str or ref in seen:
                    continue
                if not ((ref.isascii() and 0 < len(ref) <= _MAX_REF_LENGTH) or _usable_ref(ref)):
                    continue  # empty, huge, or not UTF-8: never passed on to read
                seen.add(ref)
                remaining = deadline - clock()
                if not remaining > 0:
                    raise _Failed(DEADLINE_EXCEEDED)
                calls += 1
                readback = read(scope=scope, ref=ref, timeout=remaining)
                if type(readback) is ReadResult:
                    content = readback.content
                    answered = readback.ref
                    if (
                        readback.found is not True
                        or type(content) is not str
                        or type(answered) is not str
                        or answered != ref
                    ):
                        continue
                else:
                    content = _foreign_content(readback, ref)
                    if content is None:
                        continue
                if content == known_content:
                    parsed: Parsed | None = known_parsed
                else:
                    parsed = parse(content)
                if (
                    parsed is None
                    or not static_fit(item_filter, parsed)
                    or ((aging or parsed.expires_at is not None) and not fits_at(parsed, now))
                    or parsed.record_key in keys
                    or (
                        parsed.authority_level in ACTING_LEVELS
                        and (
                            (
                                policy is not None and not within_policy(parsed.record, policy)  # type: ignore[arg-type]
                            )
                            or (vouched is not None and not vouched(parsed.record))
                        )
                    )
                ):
                    continue
                keys.add(parsed.record_key)  # one record under several refs: seen once
                public = exposed and parsed.public
                item, result = _accept(ref, parsed, provider_id, namespace, public)
                items.append(item)
                results.append(result)
                if parsed.supersedes:
                    superseding = True
                if len(items) >= limit:
                    break
            if len(items) >= limit:
                break
        if not clock() <= deadline:  # the last answer came after the deadline
            raise _Failed(DEADLINE_EXCEEDED)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # noqa: BLE001 - fail open: nothing a provider raises escapes
        return _unavailable(request_packet, binding, calls, _reason_code(exc))
    dropped = 0
    if superseding:
        flags = _superseded(items)
        dropped = sum(flags)
        items = [item for item, gone in zip(items, flags, strict=True) if not gone]
        results = [result for result, gone in zip(results, flags, strict=True) if not gone]
    if not items:
        empty = _packet(
            request_packet, "empty", calls=calls, reason_code=EMPTY_REASON, dropped=dropped
        )
        return RecallSession(
            packet=empty,
            items=(),
            request_packet=request_packet,
            superseded_dropped=dropped,
            _mint=MINT,
        )
    completed = _packet(
        request_packet, "completed", results=tuple(results), calls=calls, dropped=dropped
    )
    return RecallSession(
        packet=completed,
        items=tuple(items),
        request_packet=request_packet,
        superseded_dropped=dropped,
        _mint=MINT,
    )


def _unavailable(
    request_packet: RecallRequestPacket, binding: ProviderBinding, calls: int, reason_code: str
) -> RecallSession:
    hints = binding.setup_hints
    if hints.install is None and hints.configure is None:
        hints = DEFAULT_SETUP_HINTS
    packet = _packet(
        request_packet,
        "provider_unavailable",
        calls=calls,
        reason_code=reason_code,
        setup_hints=hints,
    )
    return RecallSession(packet=packet, items=(), request_packet=request_packet, _mint=MINT)


@functools.lru_cache(maxsize=_REF_CACHE_SIZE)
def _accept(
    ref: str, parsed: Parsed, provider_id: str, namespace: str, exposed: bool
) -> tuple[RecallItem, RecallResult]:
    """The transient item and public result of one accepted readback (cached: both immutable)."""
    item = RecallItem.of(parsed, ref, provider_ref(provider_id, namespace, ref))
    result = _result(
        memory_ref=item.provider_ref,
        candidate_ref=item.candidate_ref,
        target_class=item.class_id,
        content_summary=item.content_summary if exposed else None,
        content_exposed=exposed,
    )
    return item, result
