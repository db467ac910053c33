"""Faults against the real server: stopped mid-run, slow past the timeout, a 409
retryable delete, a garbled response. Issue 10: "all fail open with the right
status and no escaped exception"; DESIGN: "provider failures fail open"."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable

import httpx
import pytest
from _server import BlackHole, LocalOpenViking, Tenant

from _recall_support import (
    active_record,
    binding,
    checkpoint,
    content_of,
    corpus,
    request,
    scope_of,
)
from reward_memory.digests import short_digest
from reward_memory.errors import ProviderUnavailable
from reward_memory.guarded_recall import recall
from reward_memory.providers.spi import ProviderScope
from reward_memory.records.recall import ProviderBinding
from reward_memory_openviking import OpenVikingProvider

Make = Callable[..., OpenVikingProvider]


def bound_scope() -> ProviderBinding:
    return binding(
        scope_ref=f"viking://resources/fault-{uuid.uuid4().hex[:10]}/review-policy",
        provider_id="openviking",
    )


def recall_with(provider: OpenVikingProvider, bound: ProviderBinding) -> str:
    session = recall(
        request(),
        corpus=corpus(
            provider_id="openviking", provider_scope_ref_digest=short_digest(bound.scope_ref)
        ),
        checkpoint=checkpoint(),
        binding=bound,
        provider=provider,
    )
    return session.packet.status


class Faulty(httpx.BaseTransport):
    """The real server behind a transport that injects one fault into chosen requests."""

    def __init__(self, fault: Callable[[httpx.Request], httpx.Response | None]) -> None:
        self._real = httpx.HTTPTransport()
        self._fault = fault
        self.seen: list[str] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.seen.append(f"{request.method} {request.url.path}")
        injected = self._fault(request)
        return injected if injected is not None else self._real.handle_request(request)

    def close(self) -> None:
        self._real.close()


def test_server_stopped_mid_run(
    openviking: LocalOpenViking, make_provider: Make, fresh_tenant: Tenant
) -> None:
    """Stopped mid-run: ProviderUnavailable from every call, recall fails open; back again
    after a restart, with the record intact (durable before the write returned)."""
    bound = bound_scope()
    scope = scope_of(bound)
    provider = make_provider(fresh_tenant, timeout=5.0, retries=1)
    written = provider.write(scope=scope, key="record-0", content=content_of(active_record(0)))
    assert recall_with(provider, bound) == "completed"
    openviking.stop_server()
    try:
        for call in (
            lambda: provider.read(scope=scope, ref=written.ref),
            lambda: provider.search(scope=scope, query="summary tone", limit=3),
            lambda: provider.write(scope=scope, key="record-1", content="x"),
            lambda: provider.delete(scope=scope, ref=written.ref),
            lambda: provider.inventory(scope=scope),
        ):
            with pytest.raises(ProviderUnavailable) as caught:
                call()
            assert caught.value.reason_code == "provider_unavailable"
        assert recall_with(provider, bound) == "provider_unavailable"
    finally:
        openviking.restart_server()
    # The same pooled client reconnects.
    assert provider.read(scope=scope, ref=written.ref).content == content_of(active_record(0))
    assert recall_with(provider, bound) == "completed"


def test_slow_server_past_the_timeout(black_hole: BlackHole, fresh_tenant: Tenant) -> None:
    """A server that accepts and never answers: provider_timeout within the budget."""
    bound = bound_scope()
    with OpenVikingProvider(base_url=black_hole.base_url, api_key=fresh_tenant.key) as provider:
        started = time.monotonic()
        with pytest.raises(ProviderUnavailable) as caught:
            provider.read(scope=scope_of(bound), ref="openviking:" + "a" * 32, timeout=0.3)
        assert caught.value.reason_code == "provider_timeout"
        assert time.monotonic() - started < 3.0
        started = time.monotonic()
        assert recall_with(provider, bound) == "provider_unavailable"
        assert time.monotonic() - started < bound.timeout_seconds + 3.0


def test_retryable_409_on_delete_is_retried(
    openviking: LocalOpenViking, fresh_tenant: Tenant, fresh_scope: ProviderScope
) -> None:
    """DELETE answered 409 path_busy retryable: retried, then really deleted."""
    busy = {"left": 2}

    def fault(request: httpx.Request) -> httpx.Response | None:
        if request.method == "DELETE" and busy["left"]:
            busy["left"] -= 1
            return httpx.Response(
                409,
                json={
                    "status": "error",
                    "error": {
                        "code": "CONFLICT",
                        "message": "lock acquire timed out after 0ms",
                        "details": {"conflict_type": "path_busy", "retryable": True},
                    },
                },
            )
        return None

    transport = Faulty(fault)
    with OpenVikingProvider(
        base_url=openviking.base_url, api_key=fresh_tenant.key, transport=transport
    ) as provider:
        written = provider.write(scope=fresh_scope, key="doc-1", content="busy record zqbusy")
        assert provider.delete(scope=fresh_scope, ref=written.ref).deleted is True
        assert transport.seen.count("DELETE /api/v1/fs") == 3
        assert provider.read(scope=fresh_scope, ref=written.ref).found is False
        assert provider.search(scope=fresh_scope, query="zqbusy", limit=3).hits == ()


@pytest.mark.parametrize(
    "garbage",
    [
        httpx.Response(200, content=b"\x00\xffnot json at all"),
        httpx.Response(200, json={"status": "ok", "result": {"resources": "oops"}}),
        httpx.Response(502, content=b"<html>bad gateway</html>"),
    ],
)
def test_garbled_search_response_fails_open(
    openviking: LocalOpenViking, fresh_tenant: Tenant, garbage: httpx.Response
) -> None:
    """A garbled reply to search/find: the recall says provider_unavailable, nothing escapes."""
    bound = bound_scope()

    def fault(request: httpx.Request) -> httpx.Response | None:
        return garbage if request.url.path == "/api/v1/search/find" else None

    with OpenVikingProvider(
        base_url=openviking.base_url,
        api_key=fresh_tenant.key,
        transport=Faulty(fault),
        retries=1,
    ) as provider:
        provider.write(scope=scope_of(bound), key="record-0", content=content_of(active_record(0)))
        assert recall_with(provider, bound) == "provider_unavailable"
        with pytest.raises(ProviderUnavailable):
            provider.search(scope=scope_of(bound), query="summary tone", limit=3)


def test_wrong_key_is_an_auth_error_and_fails_open(
    openviking: LocalOpenViking, fresh_tenant: Tenant
) -> None:
    bound = bound_scope()
    with OpenVikingProvider(base_url=openviking.base_url, api_key="cm0.bad.key") as provider:
        with pytest.raises(ProviderUnavailable) as caught:
            provider.inventory(scope=scope_of(bound))
        assert caught.value.reason_code == "provider_auth_failed"
        assert recall_with(provider, bound) == "provider_unavailable"
    # The root key may not touch tenant data in api_key mode: 403, the same error.
    with OpenVikingProvider(base_url=openviking.base_url, api_key=openviking.root_key) as root:
        with pytest.raises(ProviderUnavailable) as caught:
            root.read(scope=scope_of(bound), ref="openviking:" + "a" * 32)
        assert caught.value.reason_code == "provider_auth_failed"
