"""Where a record stands in its corpus scope: locate its documents, name its markers.

The operator controls, explain and ingest all ask one question of the provider --
which documents in the scope are this record, or a control record of it -- through
the SPI alone: one bounded search for its bare digests, then an exact readback of
each hit. A hit that does not read back exactly, or reads back as something else,
is nothing. Also here: the key and content of a record's *closed* marker, which every
control writes before it deletes anything and ingest reads before it writes.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Final

from reward_memory._frozen import frozen
from reward_memory.digests import short_digest
from reward_memory.providers.spi import MAX_SEARCH_LIMIT

if TYPE_CHECKING:
    from reward_memory.providers.spi import Provider, ProviderScope

__all__ = [
    "CLOSED_SCHEMA",
    "CONTROL_KINDS",
    "LocateFailed",
    "Located",
    "classify",
    "closed_content",
    "closed_key",
    "locate",
    "locate_query",
]

CLOSED_SCHEMA: Final = "reward_memory_record_closed_v0"

CONTROL_KINDS: Final = {
    "reward_memory_revocation_record_v0": "revoked",
    "reward_memory_purge_tombstone_v0": "purged",
}


@frozen(kw_only=True)
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


def closed_key(record_ref: str) -> str:
    """The provider key of a record's *closed* marker (one per record, whatever the control).

    Every retire, revoke and purge writes it before it deletes anything; ingest
    reads it before it writes, so a replay of the event -- under any standing
    policy -- never brings the record back.
    """
    return f"reward-memory-closed-{record_ref.removeprefix('record:')}.json"


def closed_content(record_ref: str) -> str:
    """The marker's content: the same for every control of the record (a retry is
    ``unchanged``), content-free, and holding no digest a locate or recall search
    looks for (only a short digest *of* the record ref)."""
    return (
        f'{{"closed_record_digest":"{short_digest(record_ref)}",'
        f'"schema_version":"{CLOSED_SCHEMA}"}}'
    )


def classify(content: str, record_ref: str) -> tuple[str, bool] | None:
    """(its kind, whether recall could use it) when ``content`` is ``record_ref`` or one of
    its control records; None for anything else."""
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
    kind = CONTROL_KINDS.get(data.get("schema_version"))  # type: ignore[arg-type]
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
    complete: bool = False,
) -> tuple[list[Located], int]:
    """Every document in ``scope`` that reads back as this record or its control records.

    Returns the documents and the number of provider calls. Raises ``LocateFailed``
    (with the calls made) when the provider fails; a hit that does not read
    back exactly, or reads back as something else, is skipped.

    One search finds at most ``MAX_SEARCH_LIMIT`` documents: a full page may have
    left some out (other documents that hold the same digests outrank them), so
    with ``complete`` a full page raises ``LocateFailed("record_locate_incomplete")``
    -- a check that nothing of the record is left cannot rest on it.
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
    if complete and len(hits) >= MAX_SEARCH_LIMIT:
        raise LocateFailed("record_locate_incomplete", calls)
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
        kind = classify(content, record_ref)
        if kind is not None:
            located.append(Located(ref=ref, kind=kind[0], live=kind[1], content=content))
    return located, calls
