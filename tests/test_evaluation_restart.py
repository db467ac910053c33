"""The restart behind compact/restart survival: a new provider object over the same store.

For the memory provider that is :meth:`InMemoryProvider.handover` (its documents go to
a new object, the old one is closed); for a URL it is closing and opening it again.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from reward_memory.errors import ProviderUnavailable
from reward_memory.evaluation.counting import CountingProvider
from reward_memory.evaluation.runner import _restarter
from reward_memory.providers.discovery import get_provider
from reward_memory.providers.spi import ProviderScope
from reward_memory.testing.memory import InMemoryProvider

SCOPE = ProviderScope(namespace="reward_memory_evaluation", scope_ref="repository:x/eval")
OTHER = ProviderScope(namespace="reward_memory_evaluation", scope_ref="repository:x/other")


def test_handover_moves_every_document_to_a_new_object() -> None:
    old = InMemoryProvider()
    first = old.write(scope=SCOPE, key="a.json", content="alpha policy text")
    second = old.write(scope=SCOPE, key="b.json", content="beta policy text")
    other = old.write(scope=OTHER, key="a.json", content="gamma")
    new = old.handover()
    assert new is not old
    assert new.documents(SCOPE) == {first.ref: "alpha policy text", second.ref: "beta policy text"}
    assert new.documents(OTHER) == {other.ref: "gamma"}
    assert new.read(scope=SCOPE, ref=first.ref).content == "alpha policy text"
    # Same ranking (oldest first on ties) and the same refs for the same keys.
    hits = new.search(scope=SCOPE, query="policy", limit=5).hits
    assert [hit.ref for hit in hits] == [first.ref, second.ref]
    assert new.write(scope=SCOPE, key="a.json", content="alpha policy text").status == "unchanged"
    assert new.write(scope=SCOPE, key="a.json", content="changed").status == "conflict"
    # A fresh call log, and the old object is closed like a dead process's connection.
    assert new.call_counts()["read"] == 1
    with pytest.raises(ProviderUnavailable):
        old.read(scope=SCOPE, ref=first.ref)


def test_handover_keeps_stores_apart_afterwards() -> None:
    old = InMemoryProvider()
    old.write(scope=SCOPE, key="a.json", content="alpha")
    new = old.handover()
    added = new.write(scope=SCOPE, key="c.json", content="gamma delta")
    assert new.search(scope=SCOPE, query="gamma", limit=3).hits[0].ref == added.ref
    deleted = new.delete(scope=SCOPE, ref=added.ref)
    assert deleted.deleted is True
    assert len(new.documents(SCOPE)) == 1


def test_handover_keeps_the_fault_switches() -> None:
    old = InMemoryProvider(search_misses=True)
    assert old.handover().faults.search_misses is True


def test_a_url_restart_closes_and_reopens_the_same_file(tmp_path: Path) -> None:
    url = f"sqlite://{tmp_path / 'store.db'}"
    proxy = CountingProvider(get_provider(url))
    written = proxy.write(scope=SCOPE, key="a.json", content="alpha")
    old = proxy.inner
    restarts = [0]
    assert _restarter(proxy, url, restarts)() is True
    assert proxy.inner is not old
    assert restarts == [1]
    assert proxy.read(scope=SCOPE, ref=written.ref).content == "alpha"
    with pytest.raises(ProviderUnavailable):
        old.read(scope=SCOPE, ref=written.ref)
    proxy.close()


def test_the_proxy_counts_by_phase_and_remembers_what_it_seeded() -> None:
    proxy = CountingProvider(InMemoryProvider())
    written = proxy.write(scope=SCOPE, key="a.json", content="héllo")
    proxy.enter("case")
    proxy.read(scope=SCOPE, ref=written.ref)
    proxy.search(scope=SCOPE, query="x", limit=1)
    proxy.delete(scope=SCOPE, ref="memory-missing")
    assert proxy.meters["fixture"].snapshot() == (1, 1, 6, 0)  # 6 UTF-8 bytes
    assert proxy.meters["case"].snapshot() == (3, 1, 0, 0)
    assert proxy.seeded == [(SCOPE, written.ref)]


def test_the_proxy_counts_failed_calls() -> None:
    proxy = CountingProvider(InMemoryProvider(unavailable=True))
    with pytest.raises(ProviderUnavailable):
        proxy.inventory(scope=SCOPE)
    assert proxy.meters["fixture"].snapshot() == (1, 0, 0, 1)
    assert proxy.seeded == []


def test_the_proxy_is_an_spi_provider() -> None:
    from reward_memory.providers.spi import Provider

    proxy = CountingProvider(InMemoryProvider())
    assert isinstance(proxy, Provider)
    assert proxy.provider_id == "memory"


def test_the_counting_proxy_offers_read_key_exactly_when_the_provider_has_it() -> None:
    """The proxy is transparent: the optional capability passes through, counted as a read."""
    inner = InMemoryProvider()
    written = inner.write(scope=SCOPE, key="a.json", content="alpha policy text")
    proxy = CountingProvider(inner)
    proxy.enter("case")
    read = proxy.read_key(scope=SCOPE, key="a.json", timeout=5)
    assert (read.ref, read.content) == (written.ref, "alpha policy text")
    assert (proxy.meters["case"].calls, proxy.meters["case"].writes) == (1, 0)

    class SpiOnly:
        provider_id = "spi-only"

        def read(self, **kwargs: object) -> object:  # pragma: no cover - never called
            raise AssertionError

    assert not hasattr(CountingProvider(SpiOnly()), "read_key")  # type: ignore[arg-type]
    assert not hasattr(proxy, "write_many")  # nothing else is invented


def test_the_counting_proxy_counts_a_failing_read_key() -> None:
    inner = InMemoryProvider()
    proxy = CountingProvider(inner)
    inner.close()
    with pytest.raises(ProviderUnavailable):
        proxy.read_key(scope=SCOPE, key="a.json")
    assert proxy.meters["fixture"].failures == 1


def test_a_callers_own_memory_provider_keeps_its_store_after_the_restart() -> None:
    """The restart case hands the store to a new object; the caller's object must get it
    back (the probe lost every document of the caller's own namespace)."""
    from reward_memory.evaluation import evaluate
    from reward_memory.providers.spi import ProviderScope
    from reward_memory.testing import InMemoryProvider

    provider = InMemoryProvider()
    scope = ProviderScope(namespace="myapp", scope_ref="repository:mine/policies")
    written = provider.write(scope=scope, key="k1", content="mine", timeout=5)
    result = evaluate(provider=provider)
    assert result.release_gate.status == "ready_for_bounded_dogfood"
    assert result.fixture.restart_count == 1
    read = provider.read(scope=scope, ref=written.ref, timeout=5)
    assert (read.found, read.content) == (True, "mine")
    assert provider.inventory(scope=scope).record_count == 1
