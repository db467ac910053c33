"""The provider half of an operator control: locate, write, delete, read back. Fails open.

Only SPI operations (search, read, write, delete), so the same steps hold on
every provider. Every provider answer is untrusted: a document counts as the
record only when it reads back exactly and parses as an active record whose
``record_ref`` is the controlled one; a search hit that no longer reads back
(a lagging index) is nothing. Nothing a provider does raises out of here.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Final

import attrs

from reward_memory._frozen import frozen
from reward_memory._operator_locate import (
    CLOSED_SCHEMA,
    CONTROL_KINDS,
    Located,
    LocateFailed,
    classify,
    closed_content,
    closed_key,
    locate,
    locate_query,
)
from reward_memory.digests import canonical_json
from reward_memory.records._plain import to_plain

if TYPE_CHECKING:
    from reward_memory.providers.spi import Provider, ProviderScope
    from reward_memory.records.active import ActiveRecord
    from reward_memory.records.operator import PurgeTombstone, RevocationRecord
    from reward_memory.records.recall import ProviderBinding

__all__ = [
    "CLOSED_SCHEMA",
    "LocateFailed",
    "Located",
    "Outcome",
    "closed_content",
    "closed_key",
    "execute_control",
    "locate",
    "locate_query",
    "plain_status",
]


@frozen(kw_only=True)
class Outcome:
    """What executing a control did (the receipt's provider fields)."""

    status: str
    reasons: tuple[str, ...] = ()
    write_performed: bool = False
    deleted: int = 0
    calls: int = 0


def _content(written: ActiveRecord | RevocationRecord | PurgeTombstone) -> str:
    return canonical_json(to_plain(written)).decode("utf-8")


def _same_control(content: str, written: Any) -> bool:
    """An existing control document for the same record and action (a retry at another time)."""
    try:
        data = json.loads(content)
    except ValueError:
        return False
    if type(data) is not dict or data.get("record_ref") != written.record_ref:
        return False
    if written.schema_version in CONTROL_KINDS:  # a revocation record or a tombstone
        return bool(data.get("schema_version") == written.schema_version)
    return bool(data.get("lifecycle_state") == "retired")


def execute_control(  # noqa: PLR0915 - the control's steps in order, each failing open
    *,
    action: str,
    record: ActiveRecord,
    written: ActiveRecord | RevocationRecord | PurgeTombstone,
    key: str,
    provider: Provider,
    binding: ProviderBinding,
    slot_key: str | None = None,
) -> Outcome:
    """Locate, write the control record and the closed marker, delete the record's
    documents, close the ingest slot (``slot_key``, when known), read everything back."""
    scope = binding.provider_scope
    timeout = float(binding.timeout_seconds)
    content = _content(written)
    # 0. Close the record for ingest first (the marker a replay of its event reads before
    #    and after it writes): an ingest racing this control either wrote before the
    #    locate below (found, deleted) or sees the marker and takes its write back.
    marker = closed_content(record.record_ref)
    closed_ref, closed_created, failure = _write_marker(
        provider, scope, record.record_ref, marker, timeout
    )
    if closed_ref is None:
        return Outcome(status="provider_unavailable", reasons=(failure,), calls=1)
    try:
        located, calls = locate(
            provider,
            scope,
            record_ref=record.record_ref,
            candidate_ref=record.candidate_ref,
            timeout=timeout,
        )
    except LocateFailed as exc:
        return Outcome(
            status="provider_unavailable",
            reasons=(exc.reason,),
            write_performed=closed_created,
            calls=exc.calls + 1,
        )
    searched_empty = calls == 1  # the search had no hit (no read followed it)
    calls += 1  # the marker
    # The lineage only narrows: nothing comes back after a purge, and a revoked
    # record is not retired back into the store (its content would return).
    kinds = {item.kind for item in located}
    if "purged" in kinds and action != "purge":
        return Outcome(
            status="lineage_conflict",
            reasons=("record_purged",),
            write_performed=closed_created,
            calls=calls,
        )
    if "revoked" in kinds and action == "retire":
        return Outcome(
            status="lineage_conflict",
            reasons=("record_revoked",),
            write_performed=closed_created,
            calls=calls,
        )
    # Only a record the store holds is controlled: nothing of it there is no control to
    # complete (a typo'd store, another provider), and a retire writes the stored record,
    # retired -- never the request's copy, whose content could say anything. A refused
    # control takes back the marker it wrote, so ingest of that record stays open.
    refused = _not_held(action, located, record, written, searched_empty=searched_empty)
    if refused is not None:
        kept, more = (
            _take_back_marker(provider, scope, record, closed_ref, marker, timeout)
            if closed_created
            else (False, 0)
        )
        return Outcome(
            status="lineage_conflict",
            reasons=(refused,),
            write_performed=kept,
            calls=calls + more,
        )
    # A purge leaves the tombstone alone: the revocation record's reasoning goes too.
    deletable = frozenset({"record", "revoked"} if action == "purge" else {"record"})

    # 1. The control record first: who, when and why are durable before anything is gone.
    calls += 1
    try:
        result = provider.write(scope=scope, key=key, content=content, timeout=timeout)
        control_ref: Any = result.ref
        write_status: Any = plain_status(result.status)  # a third party's: checked below
    except Exception:  # noqa: BLE001
        return Outcome(
            status="provider_unavailable", reasons=("provider_write_failed",), calls=calls
        )
    if type(control_ref) is not str or (
        type(write_status) is not str or write_status not in ("created", "unchanged", "conflict")
    ):
        return Outcome(
            status="provider_unavailable", reasons=("provider_answer_malformed",), calls=calls
        )
    created = write_status == "created" or closed_created
    if write_status == "conflict":
        # The key is taken: by this control at an earlier time (a retry), or by something else.
        calls += 1
        try:
            existing = provider.read(scope=scope, ref=control_ref, timeout=timeout)
            held = existing.content if existing.found is True else None
        except Exception:  # noqa: BLE001
            return Outcome(
                status="provider_unavailable", reasons=("provider_read_failed",), calls=calls
            )
        if type(held) is not str or not _same_control(held, written):
            return Outcome(
                status="provider_unavailable",
                reasons=("provider_target_content_conflict",),
                calls=calls,
            )
        content = held

    # 2. Delete every document that is this record (a retired copy this control
    #    wrote -- under its key or in the slot -- stays).
    targets = [
        item.ref
        for item in located
        if item.kind in deletable
        and item.ref != control_ref
        and not _same_control(item.content, written)
    ]
    deleted = 0
    for ref in targets:
        calls += 1
        try:
            gone = provider.delete(scope=scope, ref=ref, timeout=timeout)
        except Exception:  # noqa: BLE001
            return Outcome(
                status="partial",
                reasons=("provider_delete_failed",),
                write_performed=created or deleted > 0,
                deleted=deleted,
                calls=calls,
            )
        if getattr(gone, "deleted", False) is True:
            deleted += 1
    if action == "purge" and not targets:
        calls += 1
        if not _erase_finished(provider, scope, record.record_ref, timeout):
            return Outcome(
                status="partial",
                reasons=("provider_delete_failed",),
                write_performed=created,
                calls=calls,
            )

    # 3. The ingest slot: the same control record where ingest wrote the record,
    #    so a replay of its event conflicts instead of writing it back.
    slot_ref = None
    if slot_key is not None:
        slot = _close_slot(
            provider,
            scope=scope,
            key=slot_key,
            content=content,
            written=written,
            record=record,
            deletable=deletable,
            timeout=timeout,
        )
        calls += slot.calls
        deleted += slot.deleted
        created = created or slot.created
        if slot.reason is not None:
            return Outcome(
                status="partial",
                reasons=(slot.reason,),
                write_performed=created or deleted > 0,
                deleted=deleted,
                calls=calls,
            )
        slot_ref = slot.ref
        if slot.ref in targets:
            targets.remove(slot.ref)  # deleted, then rewritten: it holds the control record
    performed = created or deleted > 0

    # 4. Read back: the control record exactly, every deleted document not found,
    #    and a fresh search that finds no document of this record left to recall.
    return _verify(
        _Verify(
            action=action,
            record=record,
            written=written,
            content=content,
            control_ref=control_ref,
            closed_ref=closed_ref,
            marker=marker,
            slot_ref=slot_ref,
            targets=tuple(targets),
        ),
        provider,
        scope,
        timeout,
        Outcome(status="completed", write_performed=performed, deleted=deleted, calls=calls),
    )


def _not_held(
    action: str, located: list[Located], record: ActiveRecord, written: Any, *, searched_empty: bool
) -> str | None:
    """Why the store does not hold what the control names (a reason code), or None.

    ``searched_empty``: the locate search had no hit at all (one call). A hit that did
    not read back (a lagging index, a corrupt read) may still be the record: a revoke or
    a purge goes on and its readback decides; a retire needs the stored copy itself.
    """
    if action != "retire":
        # Revoke and purge name the record by its ref: any copy of it will do.
        return "record_not_found" if searched_empty and not located else None
    copies = [item for item in located if item.kind == "record"]
    if any(_reads_as(item.content, (record, written)) for item in copies):
        return None
    return "record_content_mismatch" if copies else "record_not_found"


def _reads_as(content: str, records: tuple[Any, ...]) -> bool:
    from reward_memory.errors import RecordValidationError  # noqa: PLC0415
    from reward_memory.records.active import load_stored  # noqa: PLC0415

    try:
        return load_stored(content) in records
    except RecordValidationError:
        return False


def plain_status(status: object) -> object:
    """A write status that is a ``str`` subclass (an ``enum.StrEnum``) as its plain value."""
    if isinstance(status, str) and type(status) is not str:
        return str.__getitem__(status, slice(None))
    return status


def _erase_finished(provider: Provider, scope: Any, record_ref: str, timeout: float) -> bool:
    """Nothing was left to delete: an earlier attempt deleted it, and may have stopped
    before the provider erased every copy (an index entry, a log frame). The SPI's
    delete of a missing ref finishes that erase, so a retried purge says ``completed``
    only once it is done (the record ref is no provider's ref: nothing else goes)."""
    try:
        provider.delete(scope=scope, ref=record_ref, timeout=timeout)
    except Exception:  # noqa: BLE001 - fails open as a partial control
        return False
    return True


def _take_back_marker(  # noqa: PLR0917 - one private call site
    provider: Provider,
    scope: ProviderScope,
    record: ActiveRecord,
    ref: str,
    marker: str,
    timeout: float,
) -> tuple[bool, int]:
    """Delete the marker this refused control wrote; (whether one is left, the calls).

    Another control of the record may have begun meanwhile and relied on it: when the
    locate after the delete shows one (a revocation record, a tombstone, a retired copy),
    the marker is written again, so nothing a control closed reopens for ingest.
    """
    calls = 1
    try:
        provider.delete(scope=scope, ref=ref, timeout=timeout)
        located, more = locate(
            provider,
            scope,
            record_ref=record.record_ref,
            candidate_ref=record.candidate_ref,
            timeout=timeout,
        )
        calls += more
    except Exception:  # noqa: BLE001 - best effort: a marker left only keeps ingest closed
        return True, calls
    if any(item.kind != "record" or not item.live for item in located):
        calls += 1
        _write_marker(provider, scope, record.record_ref, marker, timeout)
        return True, calls
    return False, calls


def _write_marker(
    provider: Provider, scope: ProviderScope, record_ref: str, marker: str, timeout: float
) -> tuple[str | None, bool, str]:
    """Write the closed marker: (its ref or None, created, the failure reason)."""
    try:
        closing = provider.write(
            scope=scope, key=closed_key(record_ref), content=marker, timeout=timeout
        )
        ref, status = closing.ref, closing.status
    except Exception:  # noqa: BLE001 - fail open
        return None, False, "provider_write_failed"
    if status == "conflict":
        return None, False, "provider_target_content_conflict"
    if type(ref) is not str or status not in ("created", "unchanged"):
        return None, False, "provider_answer_malformed"
    return ref, status == "created", ""


@frozen(kw_only=True)
class _Verify:
    action: str
    record: ActiveRecord
    written: Any
    content: str
    control_ref: str
    closed_ref: str
    marker: str
    slot_ref: str | None
    targets: tuple[str, ...]


def _verify(
    what: _Verify, provider: Provider, scope: ProviderScope, timeout: float, done: Outcome
) -> Outcome:
    """The read-back step: ``done`` when everything reads back as it should."""
    performed, deleted, calls = done.write_performed, done.deleted, done.calls
    try:
        calls += 1
        check = provider.read(scope=scope, ref=what.control_ref, timeout=timeout)
        exact = (
            check.found is True and check.ref == what.control_ref and check.content == what.content
        )
        calls += 1
        closed = provider.read(scope=scope, ref=what.closed_ref, timeout=timeout)
        exact = exact and closed.found is True and closed.content == what.marker
        if what.slot_ref is not None:
            calls += 1
            in_slot = provider.read(scope=scope, ref=what.slot_ref, timeout=timeout)
            exact = (
                exact
                and in_slot.found is True
                and type(in_slot.content) is str
                and _same_control(in_slot.content, what.written)
            )
        still: list[str] = []
        for ref in what.targets:
            calls += 1
            again = provider.read(scope=scope, ref=ref, timeout=timeout)
            if again.found is not False:
                still.append(ref)
        after, more = locate(
            provider,
            scope,
            record_ref=what.record.record_ref,
            candidate_ref=what.record.candidate_ref,
            timeout=timeout,
            complete=True,
        )
        calls += more
    except LocateFailed as exc:
        return _unverified(exc.reason, performed, deleted, calls + exc.calls)
    except Exception:  # noqa: BLE001
        return _unverified("provider_read_failed", performed, deleted, calls)
    overtaken = _OVERTAKEN_BY.get(what.action, frozenset()) & {item.kind for item in after}
    if overtaken:
        # A narrower control (a purge, a revoke) closed the record while this one ran
        # (its locate came first): what this control wrote -- a retired copy holds the
        # record's content -- is taken back, and the lineage says why.
        calls += _take_back(provider, scope, what, timeout)
        return Outcome(
            status="lineage_conflict",
            reasons=("record_purged" if "purged" in overtaken else "record_revoked",),
            write_performed=performed,
            deleted=deleted,
            calls=calls,
        )
    if not exact:
        return _unverified("control_record_readback_unverified", performed, deleted, calls)
    kept = (what.control_ref, what.slot_ref)
    gone = {"record", "revoked"} if what.action == "purge" else {"record"}
    left = [item for item in after if item.kind in gone and item.ref not in kept]
    if what.action == "retire":
        left = [item for item in left if item.live]
    if still or left:
        return _unverified("record_still_readable", performed, deleted, calls)
    return attrs.evolve(done, calls=calls)


# The controls that close a record more narrowly than each action (the lineage only narrows).
_OVERTAKEN_BY: Final = {
    "retire": frozenset({"purged", "revoked"}),
    "revoke": frozenset({"purged"}),
}


def _take_back(provider: Provider, scope: ProviderScope, what: _Verify, timeout: float) -> int:
    """Delete the documents that hold this control's own record (its key, the slot);
    return the provider calls. Best effort: a failure leaves them to the purge's retry."""
    calls = 0
    for ref in (what.control_ref, what.slot_ref):
        if ref is None:
            continue
        try:
            calls += 1
            held = provider.read(scope=scope, ref=ref, timeout=timeout)
            if (
                held.found is True
                and type(held.content) is str
                and _same_control(held.content, what.written)
            ):
                calls += 1
                provider.delete(scope=scope, ref=ref, timeout=timeout)
        except Exception:  # noqa: BLE001, S112 - best effort
            continue
    return calls


def _unverified(reason: str, performed: bool, deleted: int, calls: int) -> Outcome:
    return Outcome(
        status="readback_unverified",
        reasons=(reason,),
        write_performed=performed,
        deleted=deleted,
        calls=calls,
    )


@frozen(kw_only=True)
class _Slot:
    ref: str | None = None
    reason: str | None = None
    created: bool = False
    deleted: int = 0
    calls: int = 0


def _close_slot(
    provider: Provider,
    *,
    scope: ProviderScope,
    key: str,
    content: str,
    written: Any,
    record: ActiveRecord,
    deletable: frozenset[str],
    timeout: float,
) -> _Slot:
    """Write the control record under the ingest key; a record still there is deleted first.

    The slot may hold the record itself (a document search did not list: an
    index that lags), this control's record (a retry), or something else (a
    conflict, reported). Never raises.
    """
    calls = deleted = 0
    try:
        for _ in range(2):
            calls += 1
            result = provider.write(scope=scope, key=key, content=content, timeout=timeout)
            ref: Any = result.ref
            status: Any = plain_status(result.status)  # a third party's: checked below
            if type(ref) is not str or type(status) is not str:
                return _Slot(reason="provider_answer_malformed", deleted=deleted, calls=calls)
            if status in ("created", "unchanged"):
                return _Slot(ref=ref, created=status == "created", deleted=deleted, calls=calls)
            calls += 1
            held = provider.read(scope=scope, ref=ref, timeout=timeout)
            current = held.content if held.found is True else None
            if type(current) is str and _same_control(current, written):
                return _Slot(ref=ref, deleted=deleted, calls=calls)
            kind = classify(current, record.record_ref) if type(current) is str else None
            if kind is None or kind[0] not in deletable:
                break
            calls += 1
            provider.delete(scope=scope, ref=ref, timeout=timeout)
            deleted += 1
    except Exception:  # noqa: BLE001 - fail open
        return _Slot(reason="provider_write_failed", deleted=deleted, calls=calls)
    return _Slot(reason="provider_target_content_conflict", deleted=deleted, calls=calls)
