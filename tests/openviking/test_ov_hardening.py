"""Hostile or broken answers, odd arguments and slow servers (no OpenViking server needed).

Faults are injected with ``httpx.MockTransport`` or a tiny local socket server (real
sockets, for the timeouts): deep JSON, lone surrogates, scores that are no score,
huge per-call timeouts, URL numbers in other scripts, and a server that answers
just inside httpx's per-read timeout again and again.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import unquote

import httpx
import pytest

from reward_memory.cli import main as cli_main
from reward_memory.errors import ProviderConfigError, ProviderUnavailable, RecordValidationError
from reward_memory.providers.discovery import get_provider
from reward_memory.providers.spi import ProviderScope
from reward_memory_openviking import AsyncOpenVikingProvider
from reward_memory_openviking import OpenVikingProvider as OV
from reward_memory_openviking._layout import Layout
from reward_memory_openviking._options import MAX_TIMEOUT

SCOPE = ProviderScope(namespace="ns", scope_ref="main")
REF = "openviking:" + "a" * 32
DEEP = b"[" * 100_000 + b"]" * 100_000
SURROGATE = b'{"status":"ok","result":"a\\ud800b"}'


def raw(body: bytes, status: int = 200) -> Callable[[httpx.Request], httpx.Response]:
    return lambda request: httpx.Response(
        status, content=body, headers={"content-type": "application/json"}
    )


def mocked(handler: Callable[[httpx.Request], httpx.Response], **options: Any) -> OV:
    return OV(
        base_url="http://ov.test:1933",
        api_key="user-key",
        transport=httpx.MockTransport(handler),
        **options,
    )


def operations(p: OV) -> dict[str, Callable[[], object]]:
    return {
        "write": lambda: p.write(scope=SCOPE, key="k1", content="x"),
        "read": lambda: p.read(scope=SCOPE, ref=REF),
        "search": lambda: p.search(scope=SCOPE, query="x", limit=1),
        "delete": lambda: p.delete(scope=SCOPE, ref=REF),
        "inventory": lambda: p.inventory(scope=SCOPE),
    }


def reason_of(call: Callable[[], object]) -> str:
    with pytest.raises(ProviderUnavailable) as caught:
        call()
    assert "viking://" not in str(caught.value)
    return caught.value.reason_code


# -- 1. JSON nested past the parser's depth ----------------------------------------------


@pytest.mark.parametrize("status", [200, 409, 500])
@pytest.mark.parametrize("operation", ["write", "read", "search", "delete", "inventory"])
def test_json_nested_too_deeply_is_a_bad_response(status: int, operation: str) -> None:
    """``[[[[...`` past the recursion limit: ProviderUnavailable, never RecursionError."""
    p = mocked(raw(DEEP, status), retries=0)
    # A 409 or 500 is a failure whatever its body says (the body only names the code).
    expected = "provider_bad_response" if status == 200 else "provider_unavailable"
    assert reason_of(operations(p)[operation]) == expected
    p.close()


def test_providers_check_reports_deep_json_as_unavailable(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``providers --check`` over a server answering ``[[[[...``: a status, not a crash."""
    with ScriptedServer(lambda conn: reply(conn, 200, DEEP)) as server:
        code = cli_main(
            ["providers", "--format", "json", "--check", f"openviking://127.0.0.1:{server.port}"]
        )
    check = json.loads(capsys.readouterr().out)["check"]
    assert code == 0
    assert check["status"] == "provider_unavailable"
    assert "RecursionError" not in (check["detail"] or "")


# -- 2. lone surrogates in what the server sends ------------------------------------------


@pytest.mark.parametrize("operation", ["read", "write"])
def test_content_with_a_lone_surrogate_is_a_bad_response(operation: str) -> None:
    """No write stores a lone surrogate: a read of one is corrupt, not found=True."""
    p = mocked(raw(SURROGATE), retries=0)
    assert reason_of(operations(p)[operation]) == "provider_bad_response"
    p.close()


def test_a_hit_with_a_lone_surrogate_is_a_bad_response() -> None:
    uri = Layout(SCOPE, "viking://resources/reward-memory").uri("b" * 32)
    hit = b'{"uri":"%s","score":0.9,"content":"x\\udfffy"}' % uri.encode()
    p = mocked(raw(b'{"status":"ok","result":{"resources":[%s]}}' % hit), retries=0)
    assert reason_of(lambda: p.search(scope=SCOPE, query="x", limit=1)) == "provider_bad_response"
    p.close()


# -- 3. a query that is no UTF-8 text -------------------------------------------------------


def test_a_query_with_a_lone_surrogate_is_refused_before_any_request() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(500)

    p = mocked(handler)
    with pytest.raises(RecordValidationError) as caught:
        p.search(scope=SCOPE, query="a\ud800", limit=1)
    assert caught.value.path == "$.query"
    assert seen == []
    p.close()

    async def run() -> str | None:
        async with AsyncOpenVikingProvider(
            base_url="http://h:1", api_key="k", transport=httpx.MockTransport(raw(b"{}"))
        ) as ap:
            try:
                await ap.search(scope=SCOPE, query="\udc80x", limit=1)
            except RecordValidationError as exc:
                return exc.path
        return None

    assert asyncio.run(run()) == "$.query"


# -- 4. per-call timeouts past MAX_TIMEOUT --------------------------------------------------


def test_a_huge_call_timeout_is_capped_on_a_real_socket() -> None:
    """``timeout=1e12`` used to overflow the socket layer (OverflowError)."""
    not_found = json.dumps({"status": "error", "error": {"code": "NOT_FOUND"}}).encode()
    with ScriptedServer(lambda conn: reply(conn, 404, not_found), connections=4) as server:
        with OV(base_url=f"http://127.0.0.1:{server.port}", auth="dev", retries=0) as p:
            assert p.read(scope=SCOPE, ref=REF, timeout=1e12).found is False

        async def run() -> bool:
            async with AsyncOpenVikingProvider(
                base_url=f"http://127.0.0.1:{server.port}", auth="dev", retries=0
            ) as ap:
                return (await ap.read(scope=SCOPE, ref=REF, timeout=1e12)).found

        assert asyncio.run(run()) is False


def test_the_cap_is_the_options_bound() -> None:
    timeouts: list[dict[str, float]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        timeouts.append(request.extensions["timeout"])
        return httpx.Response(404, json={"status": "error"})

    with mocked(handler) as p:
        p.read(scope=SCOPE, ref=REF, timeout=1e300)
    assert timeouts
    assert all(0 < value <= MAX_TIMEOUT for value in timeouts[0].values())


# -- 5. URL numbers -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "option"),
    [
        ("retries=%C2%B2", "retries"),  # superscript two: str.isdigit() is true
        ("retries=%E2%91%A0", "retries"),  # circled one: isdigit() true, int() fails
        ("retries=%EF%BC%95", "retries"),  # full-width five: int() gives 5
        ("retries=+1", "retries"),
        ("timeout=1_0", "timeout"),  # float() reads 10.0
        ("timeout=%EF%BC%95", "timeout"),
        ("timeout=%D9%A3", "timeout"),  # Arabic-Indic three
        ("timeout=1e3", "timeout"),
        ("timeout=inf", "timeout"),
        ("timeout=%202", "timeout"),
        ("score_threshold=.5", "score_threshold"),
        ("score_threshold=nan", "score_threshold"),
    ],
)
def test_url_numbers_are_ascii_decimals(query: str, option: str) -> None:
    """Only [0-9]+(.[0-9]+)?: a ProviderConfigError naming the option, never the value."""
    url = f"openviking://127.0.0.1:1933?{query}"
    value = unquote(query.partition("=")[2])
    for build in (OV.from_url, get_provider):
        with pytest.raises(ProviderConfigError) as caught:
            build(url)
        message = str(caught.value)
        assert option in message
        assert value not in message
        assert "int()" not in message
        assert "float" not in message


def test_ascii_url_numbers_still_parse() -> None:
    with OV.from_url("openviking://127.0.0.1:1933?timeout=12&retries=0&score_threshold=0.6") as p:
        assert (p.options.timeout, p.options.retries, p.options.score_threshold) == (12.0, 0, 0.6)


# -- 6. scores that are no score ------------------------------------------------------------


def _hits(*scores: bytes) -> bytes:
    layout = Layout(SCOPE, "viking://resources/reward-memory")
    items = b",".join(
        b'{"uri":"%s","score":%s,"content":"text %d"}'
        % (layout.uri(f"{index:032x}").encode(), score, index)
        for index, score in enumerate(scores)
    )
    return b'{"status":"ok","result":{"resources":[%s]}}' % items


@pytest.mark.parametrize("score", [b"NaN", b"Infinity", b"-Infinity", b"1e308", b"1.5", b"-0.5"])
@pytest.mark.parametrize("threshold", [0.0, 0.55])
def test_a_score_outside_zero_to_one_is_a_bad_response(score: bytes, threshold: float) -> None:
    """NaN passes any threshold and infinity outranks every real hit: refused, not ranked."""
    p = mocked(raw(_hits(b"0.9", score)), retries=0, score_threshold=threshold)
    assert reason_of(lambda: p.search(scope=SCOPE, query="x", limit=5)) == "provider_bad_response"
    p.close()


def test_scores_in_range_rank_and_rounding_is_tolerated() -> None:
    p = mocked(raw(_hits(b"0.6", b"1.0000001", b"0.2", b'"high"')), score_threshold=0.5)
    hits = p.search(scope=SCOPE, query="x", limit=5).hits
    assert [(hit.summary, hit.score) for hit in hits] == [("text 1", 1.0), ("text 0", 0.6)]
    p.close()


# -- 7. the call's timeout is a deadline ----------------------------------------------------


class ScriptedServer:
    """A 127.0.0.1 listener that runs ``script(conn)`` for each connection (in a thread)."""

    def __init__(self, script: Callable[[socket.socket], None], connections: int = 8) -> None:
        self._sock = socket.create_server(("127.0.0.1", 0))
        self._sock.settimeout(0.1)
        self.port = int(self._sock.getsockname()[1])
        self._script = script
        self._left = connections
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._acceptor = threading.Thread(target=self._accept, daemon=True)
        self._acceptor.start()

    def _accept(self) -> None:
        while not self._stop.is_set() and self._left > 0:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                continue
            self._left -= 1
            thread = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            thread.start()
            self._threads.append(thread)

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            conn.recv(65536)  # the request (small: no body over a few bytes)
            with contextlib.suppress(OSError):  # the client gave up: what these tests want
                self._script(conn)

    def __enter__(self) -> ScriptedServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._acceptor.join(timeout=5)
        self._sock.close()
        for thread in self._threads:
            thread.join(timeout=10)


def reply(conn: socket.socket, status: int, body: bytes) -> None:
    head = f"HTTP/1.1 {status} X\r\nContent-Type: application/json\r\n"
    conn.sendall(f"{head}Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode())
    conn.sendall(body)


GAP = 0.7
TIMEOUT = 1.0
SLACK = 0.4


def just_in_time(conn: socket.socket) -> None:
    """Headers after GAP, then one body byte every GAP: each read inside httpx's timeout."""
    body = b'{"status":"ok","result":"abcdefgh"}'
    time.sleep(GAP)
    conn.sendall(
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\n\r\n" % len(body)
    )
    for byte in body:
        time.sleep(GAP)
        conn.sendall(bytes([byte]))


def dripping_headers(conn: socket.socket) -> None:
    """The status line and headers one byte every 0.2 s (given up on after 4 s)."""
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Padding: " + b"p" * 60
    for byte in head[:20]:
        time.sleep(0.2)
        conn.sendall(bytes([byte]))


@pytest.fixture(params=[just_in_time, dripping_headers], ids=["body", "headers"])
def slow_server(request: pytest.FixtureRequest) -> Iterator[ScriptedServer]:
    with ScriptedServer(request.param) as server:
        yield server


def test_a_server_answering_just_in_time_is_cut_at_the_deadline(
    slow_server: ScriptedServer,
) -> None:
    """The CHANGELOG's promise: the call's timeout bounds the whole response, not each read."""
    with OV(base_url=f"http://127.0.0.1:{slow_server.port}", auth="dev", retries=0) as p:
        started = time.monotonic()
        with pytest.raises(ProviderUnavailable) as caught:
            p.read(scope=SCOPE, ref=REF, timeout=TIMEOUT)
        elapsed = time.monotonic() - started
    assert caught.value.reason_code == "provider_timeout"
    assert elapsed < TIMEOUT + SLACK


def test_the_async_twin_cuts_a_just_in_time_server_too(slow_server: ScriptedServer) -> None:
    async def run() -> tuple[str, float]:
        async with AsyncOpenVikingProvider(
            base_url=f"http://127.0.0.1:{slow_server.port}", auth="dev", retries=0
        ) as p:
            started = time.monotonic()
            try:
                await p.read(scope=SCOPE, ref=REF, timeout=TIMEOUT)
            except ProviderUnavailable as exc:
                return exc.reason_code, time.monotonic() - started
        return "no error", 0.0

    reason, elapsed = asyncio.run(run())
    assert reason == "provider_timeout"
    assert elapsed < TIMEOUT + SLACK


def test_a_bounded_call_leaves_the_pooled_connection_usable() -> None:
    """A call cut at its deadline does not poison the next one on the same client."""
    found = json.dumps({"status": "ok", "result": "hello"}).encode()
    scripts: Iterator[Callable[[socket.socket], None]] = iter(
        [just_in_time, lambda conn: reply(conn, 200, found)]
    )

    def script(conn: socket.socket) -> None:
        next(scripts)(conn)

    with (
        ScriptedServer(script, connections=2) as server,
        OV(base_url=f"http://127.0.0.1:{server.port}", auth="dev", retries=0) as p,
    ):
        with pytest.raises(ProviderUnavailable):
            p.read(scope=SCOPE, ref=REF, timeout=TIMEOUT)
        assert p.read(scope=SCOPE, ref=REF, timeout=5.0).content == "hello"
