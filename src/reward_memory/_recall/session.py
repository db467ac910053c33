"""The result of one recall: the public packet, plus the transient items that never leave."""

from __future__ import annotations

import functools
import hashlib
import typing
from typing import Final

import attrs

if typing.TYPE_CHECKING:
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
