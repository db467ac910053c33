"""An ingest never brings back a record an operator retired, revoked or purged.

Contract: DESIGN §6 ("Expired, superseded, revoked and retired material never
reaches a model"), issue 9 item 4 (revoke stops recall at once; purge leaves
only the tombstone), issue 8 item 5 (a replay is the same candidate and target,
never a second record). The control request here does *not* name the standing
policy the record was ingested under -- the operator often does not know it --
so the ingest slot is not closed; the record's *closed* marker is what a
replay, under any policy, reads before it writes. Both built-in providers, the
SQLite one over a real file; wrappers only to inject faults or hide the
optional ``read_key`` capability.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests._ingest_support import OBSERVED, soft_event_data, soft_policy
from tests._operator_support import (
    NOW,
    binding,
    corpus,
    ingest_soft,
    recall_soft,
    request,
    stored_record,
)

from _spi_only import SpiOnly
from reward_memory import schemas, wire
from reward_memory._operator_provider import closed_content, closed_key
from reward_memory.errors import ProviderUnavailable
from reward_memory.ingestion import ingest
from reward_memory.operator import operator_control
from reward_memory.providers.sqlite import SQLiteProvider
from reward_memory.records.ingest import IngestReceipt
from reward_memory.testing import InMemoryProvider

ACTIONS = ("retire", "revoke", "purge")


@pytest.fixture(params=["memory", "sqlite"])
def provider(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    made = (
        InMemoryProvider() if request.param == "memory" else SQLiteProvider(path=tmp_path / "m.db")
    )
    yield made
    made.close()


def _stored(provider: Any) -> Any:
    receipt = ingest_soft(provider)
    assert receipt.status == "activated"
    return stored_record(provider, receipt)


def _control(provider: Any, record: Any, action: str, *, via: Any = None) -> Any:
    """The control as an operator runs it without knowing the standing policy."""
    return operator_control(
        request(record, action, provider_id=provider.provider_id),
        provider=via or provider,
        binding=binding(provider.provider_id),
        execute=True,
        now=NOW,
    )


def _count(provider: Any) -> int:
    scope = binding(provider.provider_id).provider_scope
    return provider.inventory(scope=scope).record_count


def _ingest(provider: Any, policy: Any = None, *, via: Any = None) -> IngestReceipt:
    return ingest(
        soft_event_data("Lead the review summary with the risk."),
        adapter="scoped_feedback",
        corpus=corpus(provider_id=provider.provider_id),
        standing_policy=policy or soft_policy(),
        binding=binding(provider.provider_id),
        observed_at=OBSERVED,
        provider=via or provider,
        execute=True,
        now=NOW,
    )


def _closed(receipt: IngestReceipt) -> None:
    assert receipt.status == "conflict"
    assert receipt.reason_codes == ("record_closed_by_operator",)
    assert receipt.memory_available_for_recall is False
    assert receipt.exact_readback_verified is False
    assert receipt.external_writes_performed is False
    assert receipt.deduplicated is False
    assert receipt.write is None  # nothing was attempted
    data = wire.dump(receipt)
    assert schemas.validate(data) == "reward_memory_ingest_receipt_v0"
    assert wire.load(data, IngestReceipt) == receipt


@pytest.mark.parametrize("action", ACTIONS)
def test_a_replay_after_a_control_that_named_no_policy_writes_nothing(
    provider: Any, action: str
) -> None:
    record = _stored(provider)
    control = _control(provider, record, action)
    assert control.status == "completed", control.reason_codes
    before = _count(provider)
    replay = _ingest(provider)
    _closed(replay)
    assert replay.provider_call_count == 1  # the marker read, and nothing else
    assert _count(provider) == before
    assert recall_soft(provider).packet.result_count == 0


@pytest.mark.parametrize("action", ACTIONS)
def test_a_revised_policy_does_not_bring_the_record_back_either(provider: Any, action: str) -> None:
    """A revised policy names a new target (issue 8 item 5), yet the record it would
    write is the controlled one (the same candidate, the same record_ref)."""
    record = _stored(provider)
    assert _control(provider, record, action).status == "completed"
    revised = soft_policy(policy_id="policy:review-summary-revised")
    _closed(_ingest(provider, revised))
    assert recall_soft(provider).packet.result_count == 0


def test_a_control_writes_the_closed_marker_once(provider: Any) -> None:
    record = _stored(provider)
    assert _control(provider, record, "revoke").status == "completed"
    scope = binding(provider.provider_id).provider_scope
    marker = provider.read_key(scope=scope, key=closed_key(record.record_ref), timeout=5.0)
    assert marker.found is True
    assert marker.content == closed_content(record.record_ref)
    # Content-free: neither the summary nor any ref a search looks for.
    assert "risk" not in marker.content
    assert record.record_ref.removeprefix("record:") not in marker.content
    assert record.candidate_ref.removeprefix("candidate:") not in marker.content
    # A later purge finds the same marker (unchanged) and completes.
    purge = _control(provider, record, "purge")
    assert purge.status == "completed"
    _closed(_ingest(provider))


def test_other_events_still_activate_beside_a_closed_record(provider: Any) -> None:
    record = _stored(provider)
    assert _control(provider, record, "revoke").status == "completed"
    other = ingest_soft(provider, summary="Name the failing test first in the review summary.")
    assert other.status == "activated"


@pytest.mark.parametrize("action", ACTIONS)
def test_without_read_key_the_spi_search_finds_the_control(provider: Any, action: str) -> None:
    """A third-party provider without the optional capability: the locate search
    finds the revocation record, the tombstone or the retired copy."""
    spi_only = SpiOnly(provider)
    assert not hasattr(spi_only, "read_key")
    fresh = _ingest(provider, via=spi_only)
    assert fresh.status == "activated"  # an open record is not refused
    record = stored_record(provider, fresh)
    assert _control(provider, record, action, via=spi_only).status == "completed"
    before = _count(provider)
    replay = _ingest(provider, via=spi_only)
    assert replay.status == "conflict"
    assert replay.reason_codes == ("record_closed_by_operator",)
    assert _count(provider) == before


class _MarkerReadFails(InMemoryProvider):
    def read_key(self, **kwargs: Any) -> Any:
        raise ProviderUnavailable("read failed", reason_code="provider_unavailable")


def test_a_failing_marker_read_fails_open_before_any_write() -> None:
    provider = _MarkerReadFails()
    receipt = _ingest(provider)
    assert receipt.status == "provider_unavailable"
    assert receipt.reason_codes == ("provider_write_failed",)
    assert receipt.provider_call_count == 1
    assert provider.call_count("write") == 0
    assert receipt.memory_available_for_recall is False


def test_a_marker_that_reads_back_corrupt_still_closes_the_record() -> None:
    """Anything under the marker's key closes the record: a corrupting provider
    cannot reopen it."""
    provider = InMemoryProvider()
    record = _stored(provider)
    assert _control(provider, record, "revoke").status == "completed"
    writes = provider.call_count("write")
    with provider.set_faults(corrupt_readback=True):
        _closed(_ingest(provider))
    assert provider.call_count("write") == writes


class _MarkerWriteFails:
    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.provider_id = inner.provider_id
        self.spi_version = inner.spi_version

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def write(self, **kwargs: Any) -> Any:
        if kwargs["key"].startswith("reward-memory-closed-"):
            raise ProviderUnavailable("write failed", reason_code="provider_unavailable")
        return self._inner.write(**kwargs)


def test_a_failed_marker_write_changes_nothing_and_says_so(provider: Any) -> None:
    """The marker comes first, before the control record and any delete: a control
    that could not close the record removes nothing and says so; a retry completes."""
    record = _stored(provider)
    control = _control(provider, record, "revoke", via=_MarkerWriteFails(provider))
    assert control.status == "provider_unavailable"
    assert control.reason_codes == ("provider_write_failed",)
    assert control.receipt.deleted_count == 0
    assert control.receipt.readback_verified is False
    retry = _control(provider, record, "revoke")
    assert retry.status == "completed"
    _closed(_ingest(provider))
