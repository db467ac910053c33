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

from reward_memory.digests import canonical_json
from reward_memory.providers.spi import MAX_SEARCH_LIMIT
from reward_memory.records._plain import to_plain
from reward_memory.records.operator import PurgeTombstone, RevocationRecord

if TYPE_CHECKING:
    from reward_memory.providers.spi import Provider, ProviderScope
    from reward_memory.records.active import ActiveRecord
    from reward_memory.records.recall import ProviderBinding

__all__ = ["LocateFailed", "Located", "Outcome", "execute_control", "locate", "locate_query"]

_CONTROL_KINDS: Final = {
    "reward_memory_revocation_record_v0": "revoked",
    "reward_memory_purge_tombstone_v0": "purged",
}


@attrs.frozen(kw_only=True)
class Outcome:
    """What executing a control did (the receipt's provider fields)."""

    status: str
    reasons: tuple[str, ...] = ()
    write_performed: bool = False
    deleted: int = 0
    calls: int = 0


@attrs.frozen(kw_only=True)
class Located:
    """One document in the corpus scope that belongs to the record.

    ``kind``: ``record`` (an active record of any state: ``live`` says whether
    recall could use it), ``revoked`` or ``purged`` (a control record).
    """

    ref: str
    kind: str
    live: bool = False
    content: str


class LocateFailed(Exception):
    """The provider failed while locating (``reason`` is the public reason code)."""

    def __init__(self, reason: str, calls: int) -> None:
        super().__init__(reason)
        self.reason = reason
        self.calls = calls


def locate_query(record_ref: str, candidate_ref: str | None) -> str:
    """The search that finds a record and its control records: the bare digests.

    Every v1 record and control record spells both refs out, and providers
    split ``record:<hex>`` into words, so the bare hex finds them inside the scope.
    """
    record_hex = record_ref.removeprefix("record:")
    if candidate_ref is None:
        return record_hex
    return f"{candidate_ref.removeprefix('candidate:')} {record_hex}"


def _classify(content: str, record_ref: str) -> tuple[str, bool] | None:
    from reward_memory._recall.readback import parse  # noqa: PLC0415

    parsed = parse(content)
    if parsed is not None:
        return ("record", parsed.live) if parsed.record_key == record_ref else None
    try:
        data = json.loads(content)
    except ValueError:
        return None
    if type(data) is not dict:
        return None
    kind = _CONTROL_KINDS.get(data.get("schema_version"))  # type: ignore[arg-type]
    if kind is None or data.get("record_ref") != record_ref:
        return None
    return kind, False


def locate(
    provider: Provider,
    scope: ProviderScope,
    *,
    record_ref: str,
    candidate_ref: str | None,
    timeout: float,
) -> tuple[list[Located], int]:
    """Every document in ``scope`` that reads back as this record or its control records.

    Returns the documents and the number of provider calls. Raises ``LocateFailed``
    (with the calls made) when the provider fails; a hit that does not read
    back exactly, or reads back as something else, is skipped.
    """
    calls = 1
    try:
        found = provider.search(
            scope=scope,
            query=locate_query(record_ref, candidate_ref),
            limit=MAX_SEARCH_LIMIT,
            timeout=timeout,
        )
        hits = list(found.hits)[:MAX_SEARCH_LIMIT]
    except Exception:  # noqa: BLE001 - fail open
        raise LocateFailed("provider_search_failed", calls) from None
    located: list[Located] = []
    seen: set[str] = set()
    for hit in hits:
        ref = getattr(hit, "ref", None)
        if type(ref) is not str or not ref or ref in seen:
            continue
        seen.add(ref)
        calls += 1
        try:
            read = provider.read(scope=scope, ref=ref, timeout=timeout)
            found_it, answered, content = read.found, read.ref, read.content
        except Exception:  # noqa: BLE001
            raise LocateFailed("provider_read_failed", calls) from None
        if found_it is not True or answered != ref or type(content) is not str:
            continue  # listed but gone (a lagging index): nothing to control
        kind = _classify(content, record_ref)
        if kind is not None:
            located.append(Located(ref=ref, kind=kind[0], live=kind[1], content=content))
    return located, calls


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
    if isinstance(written, RevocationRecord | PurgeTombstone):
        return bool(data.get("schema_version") == written.schema_version)
    return bool(data.get("lifecycle_state") == "retired")


def execute_control(
    *,
    action: str,
    record: ActiveRecord,
    written: ActiveRecord | RevocationRecord | PurgeTombstone,
    key: str,
    provider: Provider,
    binding: ProviderBinding,
) -> Outcome:
    """Locate, write the control record, delete the record's documents, read everything back."""
    scope = binding.provider_scope
    timeout = float(binding.timeout_seconds)
    content = _content(written)
    try:
        located, calls = locate(
            provider,
            scope,
            record_ref=record.record_ref,
            candidate_ref=record.candidate_ref,
            timeout=timeout,
        )
    except LocateFailed as exc:
        return Outcome(status="provider_unavailable", reasons=(exc.reason,), calls=exc.calls)

    # 1. The control record first: who, when and why are durable before anything is gone.
    calls += 1
    try:
        result = provider.write(scope=scope, key=key, content=content, timeout=timeout)
        control_ref, write_status = result.ref, result.status
    except Exception:  # noqa: BLE001
        return Outcome(
            status="provider_unavailable", reasons=("provider_write_failed",), calls=calls
        )
    if type(control_ref) is not str or write_status not in ("created", "unchanged", "conflict"):
        return Outcome(
            status="provider_unavailable", reasons=("provider_answer_malformed",), calls=calls
        )
    created = write_status == "created"
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

    # 2. Delete every document that is this record (retire keeps its own retired copy).
    targets = [item.ref for item in located if item.kind == "record" and item.ref != control_ref]
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
    performed = created or deleted > 0

    # 3. Read back: the control record exactly, every deleted document not found,
    #    and a fresh search that finds no document of this record left to recall.
    try:
        calls += 1
        check = provider.read(scope=scope, ref=control_ref, timeout=timeout)
        exact = check.found is True and check.ref == control_ref and check.content == content
        still: list[str] = []
        for ref in targets:
            calls += 1
            again = provider.read(scope=scope, ref=ref, timeout=timeout)
            if again.found is not False:
                still.append(ref)
        after, more = locate(
            provider,
            scope,
            record_ref=record.record_ref,
            candidate_ref=record.candidate_ref,
            timeout=timeout,
        )
        calls += more
    except LocateFailed as exc:
        return _unverified(exc.reason, performed, deleted, calls + exc.calls)
    except Exception:  # noqa: BLE001
        return _unverified("provider_read_failed", performed, deleted, calls)
    if not exact:
        return _unverified("control_record_readback_unverified", performed, deleted, calls)
    left = [item for item in after if item.kind == "record" and item.ref != control_ref]
    if action == "retire":
        left = [item for item in left if item.live]
    if still or left:
        return _unverified("record_still_readable", performed, deleted, calls)
    return Outcome(status="completed", write_performed=performed, deleted=deleted, calls=calls)


def _unverified(reason: str, performed: bool, deleted: int, calls: int) -> Outcome:
    return Outcome(
        status="readback_unverified",
        reasons=(reason,),
        write_performed=performed,
        deleted=deleted,
        calls=calls,
    )
