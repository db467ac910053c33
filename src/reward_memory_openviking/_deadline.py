"""A call's timeout as a real deadline for the sync client.

httpx's timeouts bound each socket operation, not a response: a server that sends
its headers just inside the read timeout, then each body byte just inside it again,
keeps a call going for a multiple of its timeout. This module puts a network
backend under the sync client's connection pool that gives every connect, write
and read at most the time left before the deadline of the request in flight (set
around each request with :func:`bounded`), so a call ends within its timeout plus
the time one check takes. The async provider bounds its requests with
``asyncio.timeout`` instead.
"""

from __future__ import annotations

import contextvars
import time
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import httpcore
import httpx

if TYPE_CHECKING:
    import ssl
    from collections.abc import Iterable, Iterator

# Per thread (and per task): the pooled client is shared, each request has its own end.
_END: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "reward_memory_openviking_end", default=None
)
# What httpx.Client builds when it is given no transport (httpx's DEFAULT_LIMITS).
_MAX_CONNECTIONS = 100
_MAX_KEEPALIVE = 20
_KEEPALIVE_EXPIRY = 5.0


@contextmanager
def bounded(seconds: float) -> Iterator[None]:
    """Socket operations in this block end ``seconds`` from now at the latest."""
    token = _END.set(time.monotonic() + seconds)
    try:
        yield
    finally:
        _END.reset(token)


def _left(timeout: float | None, error: type[httpcore.TimeoutException]) -> float | None:
    end = _END.get()
    if end is None:
        return timeout
    left = end - time.monotonic()
    if left <= 0:
        raise error("the call's deadline has passed")
    return left if timeout is None else min(timeout, left)


class _Stream(httpcore.NetworkStream):
    __slots__ = ("_inner",)

    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _left(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _left(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        inner = self._inner.start_tls(
            ssl_context, server_hostname, _left(timeout, httpcore.ConnectTimeout)
        )
        return _Stream(inner)

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _Backend(httpcore.NetworkBackend):
    __slots__ = ("_inner",)

    def __init__(self) -> None:
        self._inner = httpcore.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        budget = _left(timeout, httpcore.ConnectTimeout)
        return _Stream(self._inner.connect_tcp(host, port, budget, local_address, socket_options))

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        budget = _left(timeout, httpcore.ConnectTimeout)
        return _Stream(self._inner.connect_unix_socket(path, budget, socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def deadline_transport() -> httpx.HTTPTransport:
    """httpx's default transport (no proxy from the environment) over the bounded backend."""
    transport = httpx.HTTPTransport(trust_env=False)
    # httpx takes no network backend: replace the pool it built (``_pool`` in every
    # httpx the distribution allows, >=0.27,<1) with the same pool over ours.
    transport._pool = httpcore.ConnectionPool(
        ssl_context=httpx.create_ssl_context(trust_env=False),
        max_connections=_MAX_CONNECTIONS,
        max_keepalive_connections=_MAX_KEEPALIVE,
        keepalive_expiry=_KEEPALIVE_EXPIRY,
        network_backend=_Backend(),
    )
    return transport
