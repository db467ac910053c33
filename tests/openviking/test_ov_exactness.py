"""Exact readback and create-if-absent under races, against the real server.

SPI: ``read`` returns "the exact string written"; ``write`` of the same key with
different content is a ``conflict``, "nothing changed". Issue 10: records live in
a ``resources`` namespace for byte-exact readback; "create-if-absent made real".
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable

from _server import Tenant
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reward_memory.providers.spi import ProviderScope, WriteResult
from reward_memory_openviking import OpenVikingProvider

Make = Callable[..., OpenVikingProvider]

# Any string the SPI accepts: every code point but lone surrogates.
TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=300)


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(content=TEXT)
def test_any_text_reads_back_exactly(
    make_provider: Make, shared_tenant: Tenant, content: str
) -> None:
    provider = make_provider(shared_tenant, wait_for_index=False)
    scope = ProviderScope(namespace="rm-exact", scope_ref=f"exact-{uuid.uuid4().hex[:12]}")
    written = provider.write(scope=scope, key="doc-1", content=content)
    assert written.status == "created"
    assert provider.read(scope=scope, ref=written.ref).content == content
    assert provider.write(scope=scope, key="doc-1", content=content).status == "unchanged"


def test_racing_writers_on_one_new_key(
    make_provider: Make, shared_tenant: Tenant, fresh_scope: ProviderScope
) -> None:
    """Two writers, one new key, different content: exactly one is created, and it is
    the content that stays; the other is a conflict (the claim directory is exclusive)."""
    for round_ in range(3):
        key = f"race-{round_}"
        results: dict[str, WriteResult] = {}
        start = threading.Barrier(2)

        def write(
            name: str,
            key: str = key,
            start: threading.Barrier = start,
            results: dict[str, WriteResult] = results,
        ) -> None:
            provider = make_provider(shared_tenant, wait_for_index=False)
            start.wait()
            results[name] = provider.write(scope=fresh_scope, key=key, content=f"from {name}")

        threads = [threading.Thread(target=write, args=(name,)) for name in ("a", "b")]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        reader = make_provider(shared_tenant)
        stored = reader.read(scope=fresh_scope, ref=results["a"].ref).content
        created = [name for name, result in results.items() if result.status == "created"]
        assert len(created) == 1, results
        assert stored == f"from {created[0]}"
        assert {result.status for result in results.values()} == {"created", "conflict"}
