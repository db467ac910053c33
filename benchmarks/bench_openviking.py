"""Benchmark the OpenViking provider against the same raw httpx calls, on a real server.

Run with the project's interpreter (``python3 dev.py bench`` installs the server)::

    .venv/bin/python benchmarks/bench_openviking.py            # 40 rounds
    .venv/bin/python benchmarks/bench_openviking.py --rounds 15

It starts a local OpenViking 0.5.2 (``tests/openviking/_server.py``: the embedding
stub, a generated config, a fresh account), then measures, interleaved pair by
pair (who goes first alternates) so that server and machine noise fall on both
sides alike, in three phases (waited writes; searches and reads on an idle
server; durable writes, each call on an idle server):

* write+readback: ``provider.write`` of a new record then ``provider.read`` of it,
  beside the raw calls made for it (``content/read`` -> 404, ``fs/mkdir`` (the
  record's claim), ``content/write``,
  ``content/read`` twice: the provider's look again and the caller's), each parsed
  as JSON; once with ``wait`` (the
  default: the record is searchable when the write returns; its time is the
  server's 200 ms queue poll, so it has no target) and once durable only
  (``wait_for_index=False`` / ``wait: false``: the overhead target applies);
* search: ``provider.search`` (limit 5) beside a raw ``search/find`` (same body);
* read: ``provider.read`` beside a raw ``content/read``.

Overhead is the median of the paired differences (provider call minus the raw call
made beside it) over the raw median (target <= 5 %); the medians are shown too. Connection reuse:
the distinct local TCP ports this process used to reach the server, per client,
over a phase where only that client runs (target: 1 per client). Results go to
``benchmarks/results/bench_openviking.json``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
from _util import report

if TYPE_CHECKING:
    from collections.abc import Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "openviking"))

from _server import LocalOpenViking

from reward_memory.providers.spi import ProviderScope
from reward_memory_openviking import OpenVikingProvider
from reward_memory_openviking._layout import Layout

WORDS = (
    "espresso tabs commit review parser module focused diff policy tone summary".split()  # noqa: SIM905
)


def document(i: int) -> str:
    words = " ".join(WORDS[(i + k) % len(WORDS)] for k in range(8))
    return f'{{"id": "rec-{i}", "text": "record {i}: {words}", "n": {i}}}'


def client_ports(server_port: int) -> set[int]:
    """Local ports of this process's established TCP connections to ``server_port``."""
    inodes = set()
    for fd in Path("/proc/self/fd").iterdir():
        try:
            target = str(fd.readlink())
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    ports = set()
    for table in ("/proc/self/net/tcp", "/proc/self/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            local, remote, state, inode = fields[1], fields[2], fields[3], fields[9]
            if state == "01" and inode in inodes and int(remote.split(":")[1], 16) == server_port:
                ports.add(int(local.split(":")[1], 16))
    return ports


def timed(call: Callable[[], Any]) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def replayed_overheads(
    raw: httpx.Client, scope: ProviderScope, uri: str, found: Any
) -> dict[str, tuple[float, float]]:
    """Client-side microseconds per call, provider vs raw httpx, on a replayed real reply.

    The server is out of the picture (an ``httpx.MockTransport`` answers with the
    bodies the real server gave), so this is the provider's own cost, noise-free.
    """
    read_body = raw.get("/api/v1/content/read", params={"uri": uri}).content
    find_body = json.dumps(found).encode()
    raw_layout = Layout(scope, "viking://resources/reward-memory")

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=find_body if request.method == "POST" else read_body)

    transport = httpx.MockTransport(answer)
    provider = OpenVikingProvider(base_url="http://replay:1", api_key="k", transport=transport)
    client = httpx.Client(
        base_url="http://replay:1", headers={"X-API-Key": "k"}, transport=transport
    )
    ref = "openviking:" + uri.rsplit("/", 1)[1].removesuffix(".json")
    body = {
        "query": "q",
        "target_uri": raw_layout.directory,
        "limit": 10,
        "level": 2,
        "read_content": True,
    }
    cases = {
        "read": (
            lambda: provider.read(scope=scope, ref=ref),
            lambda: client.get("/api/v1/content/read", params={"uri": uri}).json(),
        ),
        "search": (
            lambda: provider.search(scope=scope, query="q", limit=5),
            lambda: client.post("/api/v1/search/find", json=body).json(),
        ),
    }
    out: dict[str, tuple[float, float]] = {}
    for name, (mine, theirs) in cases.items():
        a: list[float] = []
        b: list[float] = []
        for _ in range(2000):
            a.append(timed(mine))
            b.append(timed(theirs))
        out[name] = (statistics.median(a) * 1e6, statistics.median(b) * 1e6)
    provider.close()
    client.close()
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=40)
    args = parser.parse_args()
    rounds = args.rounds

    with tempfile.TemporaryDirectory(prefix="rm-bench-ov-") as work:
        server = LocalOpenViking(Path(work))
        started = time.perf_counter()
        server.start()
        print(f"server ready in {time.perf_counter() - started:.1f} s", flush=True)
        try:
            return run(server, rounds)
        finally:
            server.stop()


def run(server: LocalOpenViking, rounds: int) -> int:
    tenant = server.new_account()
    scope = ProviderScope(namespace="bench", scope_ref=f"bench-{uuid.uuid4().hex[:8]}")
    raw_scope = ProviderScope(namespace="bench-raw", scope_ref=scope.scope_ref)
    layout = Layout(scope, "viking://resources/reward-memory")
    raw_layout = Layout(raw_scope, "viking://resources/reward-memory")
    server.admin().close()  # the provisioning client's connection is not counted
    baseline = client_ports(server.port)
    provider = OpenVikingProvider(base_url=server.base_url, api_key=tenant.key)
    durable = OpenVikingProvider(base_url=server.base_url, api_key=tenant.key, wait_for_index=False)
    raw = httpx.Client(
        base_url=server.base_url,
        headers={"Accept": "application/json", "X-API-Key": tenant.key},
        timeout=10.0,
        trust_env=False,
    )

    def raw_read(uri: str) -> Any:
        return raw.get("/api/v1/content/read", params={"uri": uri}).json()

    def raw_write(i: int, *, wait: bool = True) -> str:
        uri = raw_layout.uri(raw_layout.ref_hex(f"doc-{i}"))
        raw_read(uri)  # create-if-absent: the same look first, then the claim
        raw.post("/api/v1/fs/mkdir", json={"uri": uri.removesuffix("/r.json")}).json()
        raw.post(
            "/api/v1/content/write",
            json={
                "uri": uri,
                "content": document(i),
                "mode": "replace",
                "wait": wait,
                "processing_mode": "vectors_only",
            },
        ).json()
        assert raw_read(uri)["result"] == document(i)  # the provider's look again
        assert raw_read(uri)["result"] == document(i)  # the caller's readback
        return uri

    def provider_write(i: int, *, via: OpenVikingProvider | None = None) -> str:
        client = via or provider
        written = client.write(scope=scope, key=f"doc-{i}", content=document(i))
        assert client.read(scope=scope, ref=written.ref).content == document(i)
        return written.ref

    def raw_search(query: str) -> Any:
        body = {
            "query": query,
            "target_uri": raw_layout.directory,
            "limit": 10,
            "level": 2,
            "read_content": True,
        }
        return raw.post("/api/v1/search/find", json=body).json()

    # Connection reuse: each client alone for a phase.
    ports_provider: set[int] = set()
    ports_raw: set[int] = set()
    refs: list[str] = []
    uris: list[str] = []
    samples: dict[str, list[float]] = {
        k: [] for k in ("pw", "rw", "pd", "rd", "ps", "rs", "pr", "rr")
    }
    for i in range(3):  # warm-up, also the connection phases
        refs.append(provider_write(i))
        provider.search(scope=scope, query=WORDS[i], limit=5)
        ports_provider |= client_ports(server.port) - baseline
    for i in range(3):
        uris.append(raw_write(i))
        raw_search(WORDS[i])
        ports_raw |= client_ports(server.port) - ports_provider - baseline

    def pair(
        p_key: str,
        r_key: str,
        p_call: Callable[[], Any],
        r_call: Callable[[], Any],
        between: Callable[[], Any] | None = None,
    ) -> None:
        # Alternate who goes first, so that lingering server work falls on both alike;
        # ``between`` (untimed) runs before each call.
        first, second = ((p_key, p_call), (r_key, r_call))
        if len(samples[p_key]) % 2:
            first, second = second, first
        for key, call in (first, second):
            if between is not None:
                between()
            samples[key].append(timed(call))

    # Phase 1: waited writes (each leaves directory work behind on the server).
    for i in range(3, 3 + rounds):
        pair(
            "pw",
            "rw",
            lambda i=i: refs.append(provider_write(i)),
            lambda i=i: uris.append(raw_write(i)),
        )
    raw.post("/api/v1/system/wait", json={}, timeout=60.0)
    # Phase 2: searches and reads on an idle server (they queue no work); they are
    # cheap, so they get more pairs (their medians move less with machine noise).
    for i in range(rounds * 5):
        query = f"{WORDS[i % len(WORDS)]} {WORDS[(i + 3) % len(WORDS)]}"
        ref, uri = refs[i % len(refs)], uris[i % len(uris)]
        pair(
            "ps",
            "rs",
            lambda q=query: provider.search(scope=scope, query=q, limit=5),
            lambda q=query: raw_search(q),
        )
        pair(
            "pr",
            "rr",
            lambda r=ref: provider.read(scope=scope, ref=r),
            lambda u=uri: raw_read(u),
        )

    # Durable-only writes queue indexing work that would land on the waited writes and
    # on each other: a phase of their own, each call starting on an idle server.
    def idle() -> None:
        raw.post("/api/v1/system/wait", json={}, timeout=60.0)

    for i in range(max(10, rounds // 2)):
        pair(
            "pd",
            "rd",
            lambda i=i: provider_write(10_000 + i, via=durable),
            lambda i=i: raw_write(10_000 + i, wait=False),
            between=idle,
        )
    assert layout.directory != raw_layout.directory
    total_ports = client_ports(server.port)
    client_side = replayed_overheads(raw, raw_scope, uris[0], raw_search(WORDS[0]))
    provider.close()
    durable.close()
    raw.close()

    rows: list[dict[str, Any]] = []
    targets: dict[str, float] = {}
    for name, p, r, target in (
        # Index waits end on the server's 200 ms queue poll (the regime shifts between
        # ~170 and ~400 ms during a run): only the paired differences are meaningful.
        ("write+readback (index wait)", "pw", "rw", 5.0),
        ("write+readback (durable)", "pd", "rd", 5.0),
        ("search", "ps", "rs", 5.0),
        ("read", "pr", "rr", 5.0),
    ):
        provider_ms, raw_ms = median_ms(samples[p]), median_ms(samples[r])
        # Paired: each provider call beside the raw call made next to it, so a server
        # or machine regime change during the run cancels out.
        paired = statistics.median(a - b for a, b in zip(samples[p], samples[r], strict=True))
        overhead = paired * 1000 / raw_ms * 100
        rows.append({"what": f"{name} provider median", "value": provider_ms, "unit": "ms"})
        rows.append({"what": f"{name} raw httpx median", "value": raw_ms, "unit": "ms"})
        rows.append({"what": f"{name} provider overhead", "value": overhead, "unit": "%"})
        if target is not None:
            targets[f"{name} provider overhead"] = target
    for name, (provider_us, raw_us) in client_side.items():
        rows.append(
            {"what": f"{name}: client-side cost, provider", "value": provider_us, "unit": "us"}
        )
        rows.append({"what": f"{name}: client-side cost, raw httpx", "value": raw_us, "unit": "us"})
    rows.append(
        {"what": "TCP connections, provider client", "value": len(ports_provider), "unit": ""}
    )
    rows.append({"what": "TCP connections, raw client", "value": len(ports_raw), "unit": ""})
    rows.append(
        {"what": "TCP connections, both, after the run", "value": len(total_ports), "unit": ""}
    )
    targets["TCP connections, provider client"] = 1
    print(f"{rounds} interleaved rounds against openviking 0.5.2 on 127.0.0.1")
    return report("bench_openviking", rows, targets=targets)


if __name__ == "__main__":
    sys.exit(main())
