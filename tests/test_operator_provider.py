"""Operator controls through real providers: revoke stops recall at once, purge leaves nothing.

Contract: issue 9 item 4 ("revoke stops recall of that record at once on every
provider and records who, when and why, content-free; purge deletes the content
and keeps a content-free tombstone in the lineage"), DESIGN §4 ("Provider ...
failure fails open ... nothing is reported as activated or applied"), §10.
Both built-in providers, the SQLite one over a real file; faults injected by a
wrapper only where a provider must fail mid-control.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests._ingest_support import soft_policy
from tests._operator_support import (
    NOW,
    binding,
    ingest_soft,
    recall_soft,
    request,
    stored_record,
)

from reward_memory._operator_provider import locate
from reward_memory.errors import ProviderUnavailable
from reward_memory.operator import operator_control
from reward_memory.providers.spi import SearchHit, SearchResult
from reward_memory.providers.sqlite import SQLiteProvider
from reward_memory.testing import InMemoryProvider

SUMMARY = "Lead the review summary with the risk."


@pytest.fixture(params=["memory", "sqlite"])
def provider(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    made = (
        InMemoryProvider() if request.param == "memory" else SQLiteProvider(path=tmp_path / "m.db")
    )
    yield made
    made.close()


def _run(provider: Any, record: Any, action: str, *, via: Any = None, now: Any = NOW) -> Any:
    return operator_control(
        request(record, action, provider_id=provider.provider_id),
        provider=via or provider,
        binding=binding(provider.provider_id),
        execute=True,
        now=now,
    )


def _stored(provider: Any) -> Any:
    receipt = ingest_soft(provider)
    assert receipt.status == "activated"
    return stored_record(provider, receipt)


def _everything(provider: Any, record: Any, *, forgotten: bool = True) -> list[str]:
    """Every document any search in the scope can still lead to, read back.

    ``forgotten``: the content must not show in any hit summary either.
    """
    scope = binding(provider.provider_id).provider_scope
    queries = [
        SUMMARY,
        "review summary risk lead",
        record.candidate_ref.removeprefix("candidate:"),
        record.record_ref.removeprefix("record:"),
        record.activation_ref.removeprefix("activation:"),
    ]
    contents: list[str] = []
    for query in queries:
        for hit in provider.search(scope=scope, query=query, limit=100).hits:
            assert not forgotten or SUMMARY not in hit.summary
            read = provider.read(scope=scope, ref=hit.ref)
            if read.found:
                contents.append(read.content)
    return contents


# -- revoke ------------------------------------------------------------------------------


def test_revoke_stops_recall_on_the_very_next_call(provider: Any) -> None:
    record = _stored(provider)
    assert recall_soft(provider).packet.result_count == 1
    control = _run(provider, record, "revoke")
    assert control.status == "completed"
    assert control.receipt.readback_verified is True
    assert control.receipt.provider_write_performed is True
    assert control.receipt.deleted_count == 1
    after = recall_soft(provider)
    assert after.packet.status == "empty"
    assert after.packet.result_count == 0


def test_revoke_records_who_when_and_why_without_content(provider: Any) -> None:
    record = _stored(provider)
    _run(provider, record, "revoke")
    found, _ = locate(
        provider,
        binding(provider.provider_id).provider_scope,
        record_ref=record.record_ref,
        candidate_ref=record.candidate_ref,
        timeout=5.0,
    )
    assert [item.kind for item in found] == ["revoked"]
    revocation = json.loads(found[0].content)
    assert revocation["revoked_by_ref"] == "operator:alice"
    assert revocation["revoked_at"] == "2026-11-02T09:00:00Z"
    assert revocation["reasoning_summary"] == "Current source truth supersedes this record."
    assert revocation["content_present"] is False
    assert SUMMARY not in found[0].content


def test_a_repeated_revoke_is_idempotent(provider: Any) -> None:
    record = _stored(provider)
    assert _run(provider, record, "revoke").status == "completed"
    again = _run(provider, record, "revoke", now=NOW.replace(hour=11))
    assert again.status == "completed"
    assert again.receipt.provider_write_performed is False
    assert again.receipt.deleted_count == 0


def test_a_search_index_that_still_lists_the_record_does_not_matter(provider: Any) -> None:
    record = _stored(provider)
    scope = binding(provider.provider_id).provider_scope
    old_ref = provider.search(scope=scope, query=SUMMARY, limit=5).hits[0].ref
    _run(provider, record, "revoke")
    stale = _StaleIndex(provider, old_ref)
    session = recall_soft(stale)
    assert stale.listed
    assert session.packet.result_count == 0


# -- purge -------------------------------------------------------------------------------


def test_purge_leaves_nothing_readable_or_findable(provider: Any) -> None:
    record = _stored(provider)
    scope = binding(provider.provider_id).provider_scope
    old_ref = provider.search(scope=scope, query=SUMMARY, limit=5).hits[0].ref
    control = _run(provider, record, "purge")
    assert control.status == "completed"
    assert control.receipt.result_state == "purged"
    assert provider.read(scope=scope, ref=old_ref).found is False
    contents = _everything(provider, record)
    assert all(SUMMARY not in content for content in contents)
    kinds = {json.loads(content)["schema_version"] for content in contents}
    assert kinds == {"reward_memory_purge_tombstone_v0"}
    assert recall_soft(provider).packet.result_count == 0


def test_purge_after_retire_and_revoke_deletes_the_retired_copy(provider: Any) -> None:
    record = _stored(provider)
    assert _run(provider, record, "retire").status == "completed"
    assert any(SUMMARY in c for c in _everything(provider, record, forgotten=False))
    assert _run(provider, record, "revoke").status == "completed"
    assert _run(provider, record, "purge").status == "completed"
    contents = _everything(provider, record)
    assert all(SUMMARY not in content for content in contents)


def test_the_tombstone_is_content_free(provider: Any) -> None:
    record = _stored(provider)
    _run(provider, record, "purge")
    (tombstone,) = [json.loads(c) for c in _everything(provider, record)][:1]
    assert set(tombstone) == {
        "schema_version",
        "record_ref",
        "corpus_id",
        "candidate_ref",
        "control_ref",
        "purged_by_ref",
        "authority_ref",
        "authority_source_ref",
        "purged_at",
        "reasoning_digest",
        "content_deleted",
        "raw_content_captured",
    }


# -- retire ------------------------------------------------------------------------------


def test_retire_keeps_a_retired_record_that_recall_never_uses(provider: Any) -> None:
    record = _stored(provider)
    control = _run(provider, record, "retire")
    assert control.status == "completed"
    assert control.receipt.result_state == "retired"
    assert recall_soft(provider).packet.result_count == 0
    retired = [json.loads(c) for c in _everything(provider, record, forgotten=False)]
    assert {item["lifecycle_state"] for item in retired} == {"retired"}
    assert {item["expiry"]["retired_reason"] for item in retired} == {"operator_retirement"}


# -- fail open, never half-done "completed" ---------------------------------------------------


def test_an_unavailable_provider_changes_nothing_and_says_so() -> None:
    provider = InMemoryProvider()
    record = _stored(provider)
    scope = binding(provider.provider_id).provider_scope
    before = provider.documents(scope)
    with provider.set_faults(unavailable=True):
        control = _run(provider, record, "revoke")
    assert control.status == "provider_unavailable"
    assert control.reason_codes == ("provider_write_failed",)  # the marker, its first step
    assert control.receipt.provider_write_performed is False
    assert control.receipt.readback_verified is False
    assert control.receipt.next_step == "retry_control"
    assert provider.documents(scope) == before  # the one write it tried failed
    assert recall_soft(provider).packet.result_count == 1


def test_a_failed_delete_is_partial_and_a_retry_completes(provider: Any) -> None:
    record = _stored(provider)
    control = _run(provider, record, "revoke", via=_FailingDelete(provider))
    assert control.status == "partial"
    assert control.reason_codes == ("provider_delete_failed",)
    assert control.receipt.provider_write_performed is True  # the revocation record
    assert control.receipt.readback_verified is False
    assert control.receipt.next_step == "retry_control"
    # Retried later (another clock): the same revocation record, then the delete.
    retry = _run(provider, record, "revoke", now=NOW.replace(hour=12))
    assert retry.status == "completed"
    assert retry.receipt.deleted_count == 1
    assert recall_soft(provider).packet.result_count == 0
    kinds = [json.loads(c)["schema_version"] for c in _everything(provider, record)]
    assert set(kinds) == {"reward_memory_revocation_record_v0"}


def test_a_corrupt_readback_is_unverified() -> None:
    provider = InMemoryProvider()
    record = _stored(provider)
    with provider.set_faults(corrupt_readback=True):
        control = _run(provider, record, "revoke")
    assert control.status == "readback_unverified"
    assert control.reason_codes == ("control_record_readback_unverified",)
    assert control.receipt.readback_verified is False


def test_a_failed_write_is_unavailable() -> None:
    provider = InMemoryProvider()
    record = _stored(provider)
    control = _run(provider, record, "purge", via=_FailingWrite(provider))
    assert control.status == "provider_unavailable"
    assert control.reason_codes == ("provider_write_failed",)
    assert recall_soft(provider).packet.result_count == 1


def test_a_foreign_document_under_the_control_key_is_a_conflict() -> None:
    from reward_memory.operator import control_key

    provider = InMemoryProvider()
    record = _stored(provider)
    scope = binding().provider_scope
    provider.write(scope=scope, key=control_key("revoke", record.record_ref), content="{}")
    control = _run(provider, record, "revoke")
    assert control.status == "provider_unavailable"
    assert control.reason_codes == ("provider_target_content_conflict",)
    assert recall_soft(provider).packet.result_count == 1


def test_a_record_still_readable_after_delete_is_unverified() -> None:
    provider = InMemoryProvider()
    record = _stored(provider)
    control = _run(provider, record, "revoke", via=_DeleteDoesNothing(provider))
    assert control.status == "readback_unverified"
    assert control.reason_codes == ("record_still_readable",)


@pytest.mark.parametrize("action", ["revoke", "purge"])
def test_a_search_too_full_to_prove_the_record_gone_is_never_completed(
    provider: Any, action: str
) -> None:
    """Other documents holding the record's digests fill the one bounded locate search
    (at most 100 hits), so it cannot show that nothing of the record is left (a copy
    may be ranked out): the control is never ``completed`` (nothing half-done says so)."""
    scope = binding(provider.provider_id).provider_scope
    record = _stored(provider)
    digests = f"{record.candidate_ref.removeprefix('candidate:')} {record.record_ref[7:]}"
    for index in range(100):
        provider.write(scope=scope, key=f"note-{index}", content=f"note {index} {digests}")
    control = _run(provider, record, action)
    assert control.status == "readback_unverified"
    assert control.reason_codes == ("record_locate_incomplete",)
    assert control.receipt.status == "readback_unverified"


# -- fault wrappers (fault injection only; every other call is the real provider's) -----------


class _Wrapper:
    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.provider_id = inner.provider_id
        self.spi_version = inner.spi_version

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class _FailingDelete(_Wrapper):
    def delete(self, **kwargs: Any) -> Any:
        raise ProviderUnavailable("delete failed", reason_code="provider_unavailable")


class _FailingWrite(_Wrapper):
    def write(self, **kwargs: Any) -> Any:
        raise ProviderUnavailable("write failed", reason_code="provider_unavailable")


class _DeleteDoesNothing(_Wrapper):
    def delete(self, *, scope: Any, ref: str, timeout: Any = None) -> Any:
        from reward_memory.providers.spi import DeleteResult

        return DeleteResult(ref=ref, deleted=True)


class _StaleIndex(_Wrapper):
    """Search keeps listing a deleted ref (a lagging index); read is the real one."""

    def __init__(self, inner: Any, ref: str) -> None:
        super().__init__(inner)
        self._ref = ref
        self.listed = False

    def search(self, **kwargs: Any) -> Any:
        found = self._inner.search(**kwargs)
        self.listed = True
        return SearchResult(hits=(SearchHit(ref=self._ref, summary="stale"), *found.hits))


# -- the ingest slot: a replay of the event does not bring the record back ---------------------


@pytest.mark.parametrize("action", ["retire", "revoke", "purge"])
def test_a_replay_after_a_control_under_its_policy_conflicts(provider: Any, action: str) -> None:
    """DESIGN §6: "Expired, superseded, revoked and retired material never reaches a
    model" -- not even when the event that made it is ingested again."""
    record = _stored(provider)
    control = operator_control(
        request(record, action, provider_id=provider.provider_id, standing_policy=soft_policy()),
        provider=provider,
        binding=binding(provider.provider_id),
        execute=True,
        now=NOW,
    )
    assert control.status == "completed", control.reason_codes
    replay = ingest_soft(provider)
    assert replay.status == "conflict"
    assert replay.memory_available_for_recall is False
    assert recall_soft(provider).packet.result_count == 0
    if action == "purge":
        assert all(SUMMARY not in c for c in _everything(provider, record))


def test_the_slot_finds_a_record_the_index_missed() -> None:
    """A search index that lags must not leave the record behind: the ingest slot
    holds it, so the control deletes it there."""
    provider = InMemoryProvider()
    record = _stored(provider)
    with provider.set_faults(search_misses=True):
        control = operator_control(
            request(record, "revoke", standing_policy=soft_policy()),
            provider=provider,
            binding=binding(),
            execute=True,
            now=NOW,
        )
    assert control.status == "completed"
    assert control.receipt.deleted_count == 1
    assert recall_soft(provider).packet.result_count == 0


def test_a_retry_with_the_slot_closed_is_idempotent(provider: Any) -> None:
    record = _stored(provider)
    given = request(
        record, "revoke", provider_id=provider.provider_id, standing_policy=soft_policy()
    )
    for hour in (9, 10):
        control = operator_control(
            given,
            provider=provider,
            binding=binding(provider.provider_id),
            execute=True,
            now=NOW.replace(hour=hour),
        )
        assert control.status == "completed"
    assert control.receipt.provider_write_performed is False
    assert control.receipt.deleted_count == 0


# -- the lineage only narrows -----------------------------------------------------------------


def test_after_a_purge_only_the_tombstone_is_left(provider: Any) -> None:
    record = _stored(provider)
    assert _run(provider, record, "revoke").status == "completed"
    assert _run(provider, record, "purge").status == "completed"
    kinds = [json.loads(c)["schema_version"] for c in _everything(provider, record)]
    assert set(kinds) == {"reward_memory_purge_tombstone_v0"}


@pytest.mark.parametrize("action", ["retire", "revoke"])
def test_nothing_comes_back_after_a_purge(provider: Any, action: str) -> None:
    """A purged record's content must not return through a later control built
    from the operator's old copy of the record."""
    record = _stored(provider)
    assert _run(provider, record, "purge").status == "completed"
    writes = _writes(provider)
    control = _run(provider, record, action)
    assert control.status == "lineage_conflict"
    assert control.reason_codes == ("record_purged",)
    assert control.receipt.provider_write_performed is False
    assert control.receipt.next_step == "none"
    # Nothing new stored: only the closed marker's idempotent rewrite (unchanged), which
    # every control makes first.
    assert _writes(provider) in (writes, writes + 1)
    assert all(SUMMARY not in c for c in _everything(provider, record))
    assert _run(provider, record, "purge").status == "completed"  # purging again is fine


def test_a_revoked_record_is_not_retired_back(provider: Any) -> None:
    record = _stored(provider)
    assert _run(provider, record, "revoke").status == "completed"
    control = _run(provider, record, "retire")
    assert (control.status, control.reason_codes) == ("lineage_conflict", ("record_revoked",))
    assert all(SUMMARY not in c for c in _everything(provider, record))


def _writes(provider: Any) -> int:
    if isinstance(provider, InMemoryProvider):
        return provider.call_count("write")
    scope = binding(provider.provider_id).provider_scope
    return provider.inventory(scope=scope).record_count


# -- the control acts on what the store holds ------------------------------------------------


def test_a_retire_never_writes_the_requests_own_copy(provider: Any) -> None:
    """A retire-only checkpoint must not replace what the corpus says: a request whose
    record was rewritten (its activation ref recomputed to match) is refused, and the
    stored record stays as it was, live."""
    import attrs

    from reward_memory.activation import activation_ref_of

    record = _stored(provider)
    pending = attrs.evolve(
        record, activation_ref="activation:pending", content_summary="Rewritten by the board."
    )
    forged = attrs.evolve(pending, activation_ref=activation_ref_of(pending))
    control = _run(provider, forged, "retire")
    assert (control.status, control.reason_codes) == (
        "lineage_conflict",
        ("record_content_mismatch",),
    )
    scope = binding(provider.provider_id).provider_scope
    assert provider.search(scope=scope, query="Rewritten board", limit=10).hits == ()
    assert all(SUMMARY in content for content in _everything(provider, record, forgotten=False))
    assert recall_soft(provider).packet.result_count == 1
    # Its event still replays (the marker was taken back), and the record itself retires.
    replay = ingest_soft(provider)
    assert (replay.status, replay.deduplicated) == ("activated", True)
    assert _run(provider, record, "retire").status == "completed"


@pytest.mark.parametrize("action", ["retire", "revoke", "purge"])
def test_a_control_of_a_record_the_store_does_not_hold_is_not_completed(
    provider: Any, action: str
) -> None:
    elsewhere = InMemoryProvider()
    record = _stored(elsewhere)  # another store holds it
    control = _run(provider, record, action)
    assert (control.status, control.reason_codes) == ("lineage_conflict", ("record_not_found",))
    assert control.receipt.readback_verified is False
    # Nothing is left written (the closed marker is taken back), so ingest stays open.
    assert provider.inventory(scope=binding(provider.provider_id).provider_scope).record_count == 0
    assert control.receipt.provider_write_performed is False
    assert ingest_soft(provider).status == "activated"


def test_a_provider_other_than_the_bindings_is_refused_before_any_call(tmp_path: Path) -> None:
    memory = InMemoryProvider()
    record = _stored(memory)
    with SQLiteProvider(path=tmp_path / "m.db") as sqlite:
        control = operator_control(
            request(record, "revoke", provider_id="memory"),
            provider=sqlite,
            binding=binding("memory"),
            execute=True,
            now=NOW,
        )
    assert (control.status, control.reason_codes) == (
        "guard_blocked",
        ("provider_binding_provider_mismatch",),
    )
    assert control.provider_call_count == 0
    assert recall_soft(memory).packet.result_count == 1
