"""The async twin of :class:`~reward_memory_openviking.provider.OpenVikingProvider`.

Same options, same protocol (the plans of :mod:`._protocol`), on one pooled
:class:`httpx.AsyncClient`; every SPI operation is a coroutine. The core's
provider SPI is synchronous: this class is for async applications that talk
to the same records directly (it is not an SPI provider and is not registered
as an entry point).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Self

import httpx

from reward_memory.errors import ProviderConfigError, ProviderUnavailable
from reward_memory.grammars import check_token
from reward_memory.providers.spi import (
    SPI_VERSION,
    DeleteResult,
    Inventory,
    ProviderScope,
    ReadResult,
    SearchResult,
    WriteResult,
    check_content,
    check_limit,
)
from reward_memory_openviking._layout import REF_PREFIX
from reward_memory_openviking._options import Options, build_options, options_from_url
from reward_memory_openviking._protocol import (
    PROVIDER_ID,
    Call,
    Deadline,
    Pause,
    Plan,
    Protocol,
    Receiving,
)
from reward_memory_openviking._replies import Reply
from reward_memory_openviking.provider import (
    _transport_error,
    check_call_arguments,
    check_ref,
    check_search_query,
    searchable,
)

if TYPE_CHECKING:
    from types import TracebackType

__all__ = ["AsyncOpenVikingProvider"]

_NO_HITS = SearchResult()


class AsyncOpenVikingProvider:
    """OpenViking over :class:`httpx.AsyncClient`; options as for the sync provider.

    ``transport`` takes an :class:`httpx.AsyncBaseTransport`. Close it with
    ``await provider.aclose()`` or ``async with``.

    .. versionadded:: 0.1.0
    """

    provider_id: str = PROVIDER_ID
    spi_version: int = SPI_VERSION

    def __init__(
        self, *, transport: httpx.AsyncBaseTransport | None = None, **options: Any
    ) -> None:
        if transport is not None and not isinstance(transport, httpx.AsyncBaseTransport):
            raise ProviderConfigError(
                "openviking provider option 'transport' must be an httpx.AsyncBaseTransport"
            )
        self._options: Options = build_options({k: v for k, v in options.items() if v is not None})
        self._protocol = Protocol(self._options)
        self._client = httpx.AsyncClient(
            base_url=self._options.base_url,
            headers=self._options.headers(),
            timeout=self._options.timeout,
            transport=transport,
            trust_env=False,
            follow_redirects=False,
        )
        self._closed = False

    @classmethod
    def from_url(cls, url: str) -> Self:
        """Build from an ``openviking://`` URL (see the sync provider)."""
        return cls(**options_from_url(url, cls.provider_id))

    @property
    def options(self) -> Options:
        return self._options

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return f"<AsyncOpenVikingProvider {self._options.auth} {state}>"

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def write(
        self, *, scope: ProviderScope, key: str, content: str, timeout: float | None = None
    ) -> WriteResult:
        scope, seconds = check_call_arguments(scope, timeout, self._options.timeout)
        key = check_token(key, "$.key")
        check_content(content)
        layout = self._protocol.layout(scope)
        deadline = Deadline(seconds, "write")
        return await self._drive(self._protocol.write(deadline, layout, key, content), deadline)  # type: ignore[no-any-return]

    async def read(
        self, *, scope: ProviderScope, ref: str, timeout: float | None = None
    ) -> ReadResult:
        scope, seconds = check_call_arguments(scope, timeout, self._options.timeout)
        ref, ref_hex = check_ref(ref)
        layout = self._protocol.layout(scope)
        deadline = Deadline(seconds, "read")
        if ref_hex is None:
            miss = ReadResult(ref=ref, found=False)
            return await self._drive(self._protocol.probe(deadline, miss), deadline)  # type: ignore[no-any-return]
        return await self._drive(self._protocol.read(deadline, layout, ref, ref_hex), deadline)  # type: ignore[no-any-return]

    async def read_key(
        self, *, scope: ProviderScope, key: str, timeout: float | None = None
    ) -> ReadResult:
        scope, seconds = check_call_arguments(scope, timeout, self._options.timeout)
        key = check_token(key, "$.key")
        layout = self._protocol.layout(scope)
        ref_hex = layout.ref_hex(key)
        deadline = Deadline(seconds, "read")
        plan = self._protocol.read(deadline, layout, REF_PREFIX + ref_hex, ref_hex)
        return await self._drive(plan, deadline)  # type: ignore[no-any-return]

    async def search(
        self, *, scope: ProviderScope, query: str, limit: int, timeout: float | None = None
    ) -> SearchResult:
        scope, seconds = check_call_arguments(scope, timeout, self._options.timeout)
        query = check_search_query(query)
        limit = check_limit(limit)
        layout = self._protocol.layout(scope)
        deadline = Deadline(seconds, "search")
        if not searchable(query):
            return await self._drive(self._protocol.probe(deadline, _NO_HITS), deadline)  # type: ignore[no-any-return]
        return await self._drive(self._protocol.search(deadline, layout, query, limit), deadline)  # type: ignore[no-any-return]

    async def delete(
        self, *, scope: ProviderScope, ref: str, timeout: float | None = None
    ) -> DeleteResult:
        scope, seconds = check_call_arguments(scope, timeout, self._options.timeout)
        ref, ref_hex = check_ref(ref)
        layout = self._protocol.layout(scope)
        deadline = Deadline(seconds, "delete")
        if ref_hex is None:
            miss = DeleteResult(ref=ref, deleted=False)
            return await self._drive(self._protocol.probe(deadline, miss), deadline)  # type: ignore[no-any-return]
        return await self._drive(self._protocol.delete(deadline, layout, ref, ref_hex), deadline)  # type: ignore[no-any-return]

    async def inventory(self, *, scope: ProviderScope, timeout: float | None = None) -> Inventory:
        scope, seconds = check_call_arguments(scope, timeout, self._options.timeout)
        layout = self._protocol.layout(scope)
        deadline = Deadline(seconds, "inventory")
        return await self._drive(self._protocol.inventory(deadline, layout), deadline)  # type: ignore[no-any-return]

    async def aclose(self) -> None:
        """Close the connection pool; later operations raise ``ProviderUnavailable``."""
        if not self._closed:
            self._closed = True
            await self._client.aclose()

    def _check_open(self) -> None:
        if self._closed:
            raise ProviderUnavailable("the openviking provider is closed")

    async def _drive(self, plan: Plan, deadline: Deadline) -> Any:
        self._check_open()
        try:
            step = next(plan)
            while True:
                if isinstance(step, Pause):
                    await asyncio.sleep(step.seconds)
                    step = plan.send(Reply(0, b""))
                    continue
                step = plan.send(await self._send(step, deadline.op))
        except StopIteration as done:
            return done.value
        finally:
            plan.close()

    async def _send(self, call: Call, op: str) -> Reply:
        body = Receiving(call.timeout, op)
        try:
            # httpx bounds each socket operation; this bounds the request as a whole
            # (headers that arrive just in time, then a body byte just in time again).
            async with (
                asyncio.timeout(call.timeout),
                self._client.stream(
                    call.method,
                    call.path,
                    params=call.params,
                    json=call.json,
                    headers=call.headers,
                    timeout=call.timeout,
                ) as response,
            ):
                body.announced(response.headers.get("content-length"))
                async for chunk in response.aiter_bytes():
                    body.take(chunk)
                return body.reply(response.status_code)
        except TimeoutError:
            raise ProviderUnavailable(
                f"openviking {op} did not finish in time", reason_code="provider_timeout"
            ) from None
        except httpx.HTTPError as exc:
            raise _transport_error(exc, op) from None
        except RuntimeError:
            raise ProviderUnavailable("the openviking provider is closed") from None
