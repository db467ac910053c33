"""The result of one recall: the public packet, plus the transient items that never leave."""

from __future__ import annotations

import functools
import hashlib
import typing
from types import MappingProxyType
from typing import Final

if typing.TYPE_CHECKING:
    from collections.abc import Mapping

    from reward_memory._recall.readback import Parsed
    from reward_memory.records.active import ActiveRecord, LegacyActiveRecord
    from reward_memory.records.envelope import ClassId
    from reward_memory.records.recall import RecallPacket, RecallRequestPacket

__all__ = ["RecallItem", "RecallSession", "provider_ref"]

_REF_CACHE_SIZE: Final = 4096
# The private key only this library's recall execution passes to RecallSession.
MINT: Final = object()


def _hidden(value: object) -> str:
    del value
    return "<transient>"


class RecallItem:
    """One accepted item, in process only (never serialised, never in a public packet).

    ``memory_ref`` is the provider's raw resource ref; ``provider_ref`` the opaque
    ref the public packet shows. ``record`` is the parsed active record; a legacy
    v0 record is advisory only (``legacy=True``, ``authority_level="advisory"``).
    ``content_digest`` is the sha256 of the readback's canonical text. Items are
    read-only and compare by identity (the same readback gives the same item object).

    A plain slotted class, not an attrs record, so that the digest (a sha256 over
    the whole readback, wanted by the ingest loop's verification, rarely by a
    model callback) is computed on first use rather than for every item of every
    recall; a recall builds its items from its parsed readbacks (:meth:`of`).
    """

    __slots__ = (
        "_digest",
        "_source",
        "authority_level",
        "candidate_ref",
        "class_id",
        "content_summary",
        "legacy",
        "memory_ref",
        "provider_ref",
        "record",
    )
    memory_ref: str
    provider_ref: str
    candidate_ref: str
    class_id: ClassId
    content_summary: str
    authority_level: str
    legacy: bool
    record: ActiveRecord | LegacyActiveRecord
    _digest: str | None
    _source: Parsed | None

    def __init__(
        self,
        *,
        memory_ref: str,
        provider_ref: str,
        candidate_ref: str,
        class_id: ClassId,
        content_summary: str,
        content_digest: str | None = None,
        authority_level: str,
        legacy: bool,
        record: ActiveRecord | LegacyActiveRecord,
        _source: Parsed | None = None,
    ) -> None:
        if content_digest is None and _source is None:
            raise TypeError("a RecallItem needs its content_digest")
        put = object.__setattr__
        put(self, "memory_ref", memory_ref)
        put(self, "provider_ref", provider_ref)
        put(self, "candidate_ref", candidate_ref)
        put(self, "class_id", class_id)
        put(self, "content_summary", content_summary)
        put(self, "authority_level", authority_level)
        put(self, "legacy", legacy)
        put(self, "record", record)
        put(self, "_digest", content_digest)
        put(self, "_source", _source)

    @classmethod
    def of(cls, parsed: Parsed, memory_ref: str, provider_ref: str) -> RecallItem:
        """The item of one parsed readback read back under ``memory_ref``.

        Its slots are written through their descriptors (what ``__init__`` does
        by ``object.__setattr__``, without the keyword call and the lookups):
        a recall builds one per item it accepts.
        """
        item = _new(cls)
        _put_memory_ref(item, memory_ref)
        _put_provider_ref(item, provider_ref)
        _put_candidate_ref(item, parsed.candidate_ref)
        _put_class_id(item, parsed.class_id)
        _put_content_summary(item, parsed.content_summary)
        _put_authority_level(item, parsed.authority_level)
        _put_legacy(item, parsed.legacy)
        _put_record(item, parsed.record)
        _put_digest(item, None)
        _put_source(item, parsed)
        return item

    @property
    def content_digest(self) -> str:
        """sha256 (hex) of the readback's canonical text (reference §8.3)."""
        digest = self._digest
        if digest is None:
            source = self._source
            assert source is not None  # one of the two is always set
            digest = source.content_digest
            object.__setattr__(self, "_digest", digest)
        return digest

    def __copy__(self) -> RecallItem:
        return self  # read-only: a copy is the item itself

    def __deepcopy__(self, memo: dict[int, object]) -> RecallItem:
        return self

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        # As the attrs record it replaced: rebuilt from its fields (digest included).
        return _rebuilt, (
            self.memory_ref,
            self.provider_ref,
            self.candidate_ref,
            self.class_id,
            self.content_summary,
            self.content_digest,
            self.authority_level,
            self.legacy,
            self.record,
        )

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"a RecallItem is read-only ({name})")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"a RecallItem is read-only ({name})")

    def __repr__(self) -> str:
        return (
            f"RecallItem(memory_ref={_hidden(self.memory_ref)!r}, "
            f"provider_ref={self.provider_ref!r}, candidate_ref={self.candidate_ref!r}, "
            f"class_id={self.class_id!r}, content_summary={_hidden(self.content_summary)!r}, "
            f"authority_level={self.authority_level!r}, legacy={self.legacy!r})"
        )


_new: Final = object.__new__
_put_memory_ref: Final = RecallItem.__dict__["memory_ref"].__set__
_put_provider_ref: Final = RecallItem.__dict__["provider_ref"].__set__
_put_candidate_ref: Final = RecallItem.__dict__["candidate_ref"].__set__
_put_class_id: Final = RecallItem.__dict__["class_id"].__set__
_put_content_summary: Final = RecallItem.__dict__["content_summary"].__set__
_put_authority_level: Final = RecallItem.__dict__["authority_level"].__set__
_put_legacy: Final = RecallItem.__dict__["legacy"].__set__
_put_record: Final = RecallItem.__dict__["record"].__set__
_put_digest: Final = RecallItem.__dict__["_digest"].__set__
_put_source: Final = RecallItem.__dict__["_source"].__set__


def _rebuilt(*fields: object) -> RecallItem:
    names = (
        "memory_ref",
        "provider_ref",
        "candidate_ref",
        "class_id",
        "content_summary",
        "content_digest",
        "authority_level",
        "legacy",
        "record",
    )
    return RecallItem(**dict(zip(names, fields, strict=True)))  # type: ignore[arg-type]


class RecallSession:
    """The result of one recall: the public packet plus the transient items.

    Only :attr:`packet` is meant to leave the process (``wire.dump(session.packet)``);
    the session itself is deliberately not an attrs record, so the wire
    converter cannot serialise the items by accident.

    Only a recall builds one (and it cannot be subclassed): :func:`apply` trusts
    a session's items as read back exactly from the bound corpus, so a session
    assembled by hand, with items no provider returned, could make a receipt
    claim an application that never happened.
    """

    __slots__ = ("_items", "_packet", "_refs", "_request_packet", "_superseded_dropped")

    def __init_subclass__(cls, **kwargs: object) -> None:
        raise TypeError("RecallSession cannot be subclassed")

    def __init__(
        self,
        *,
        packet: RecallPacket,
        items: tuple[RecallItem, ...],
        request_packet: RecallRequestPacket,
        superseded_dropped: int = 0,
        _mint: object = None,
    ) -> None:
        if _mint is not MINT:
            raise TypeError("a RecallSession is built by recall() only, never by hand")
        self._packet = packet
        self._items = items
        self._request_packet = request_packet
        self._superseded_dropped = superseded_dropped
        self._refs: Mapping[str, str] | None = None

    @property
    def packet(self) -> RecallPacket:
        """The public ``reward_memory_recall_v0`` packet."""
        return self._packet

    @property
    def items(self) -> tuple[RecallItem, ...]:
        """The accepted items (transient; empty unless ``status == "completed"``)."""
        return self._items

    @property
    def refs(self) -> Mapping[str, str]:
        """Every item's raw ``memory_ref`` and opaque ``provider_ref``, mapped to the raw ref.

        Read-only: ``apply`` decides by it what is an item of this recall.
        """
        if self._refs is None:
            refs: dict[str, str] = {}
            for item in self._items:
                refs[item.memory_ref] = item.memory_ref
                refs[item.provider_ref] = item.memory_ref
            self._refs = MappingProxyType(refs)
        return self._refs

    @property
    def superseded_dropped(self) -> int:
        """How many read-back records were dropped: another returned record supersedes them."""
        return self._superseded_dropped

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


@functools.lru_cache(maxsize=_REF_CACHE_SIZE)
def provider_ref(provider_id: str, namespace: str, resource_ref: str) -> str:
    """The opaque public ref of a provider resource (``provider-`` + 20 hex, reference §1.5)."""
    material = f"{provider_id}\n{namespace}\n{resource_ref}".encode()
    return "provider-" + hashlib.sha256(material).hexdigest()[:20]
