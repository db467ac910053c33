"""The SPI over OpenViking's HTTP API, without I/O: one plan per operation.

A plan is a generator that yields :class:`Call` (an HTTP request to make) or
:class:`Pause` (seconds to wait before a retry) and receives a :class:`Reply`; it
returns the SPI result. The sync and the async provider drive the same plans,
so both speak exactly the same protocol. A transport failure never reaches a
plan: the driver raises :class:`ProviderUnavailable` itself.

Failure mapping (messages name the operation and the server's error code, never
a URI, a key or content):

- transport errors and 5xx: ``ProviderUnavailable`` (``provider_unavailable``);
  timeouts, 504 and a spent deadline: ``provider_timeout``;
- 401/403: :class:`~._replies.OpenVikingAuthError` (``provider_auth_failed``);
- another 4xx the operation does not expect: ``provider_request_rejected``;
- a body that is not the JSON envelope the operation expects (nested past the parser's
  depth, content that is no UTF-8 text, a score that is not a number in [0, 1]):
  ``provider_bad_response``;
- 409 marked ``retryable`` (a path lock held by indexing), 429, 502 and 503 are
  retried with backoff, at most ``retries`` times, within the call's deadline;
- a write whose index did not complete: ``index_pending`` (the content is durable
  and readable, but a search may not find it yet; replaying the write is safe).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Generator
from typing import TYPE_CHECKING, Any, Final

from reward_memory.errors import ProviderUnavailable, RecordValidationError
from reward_memory.providers.spi import (
    MAX_CONTENT_BYTES,
    DeleteResult,
    Inventory,
    ReadResult,
    SearchHit,
    SearchResult,
    WriteResult,
)
from reward_memory_openviking._layout import Layout
from reward_memory_openviking._replies import (
    Reply,
    bad_response,
    envelope,
    failure,
    result_of,
    retryable,
    score,
    text,
)

if TYPE_CHECKING:
    from reward_memory_openviking._options import Options

PROVIDER_ID: Final = "openviking"
SUMMARY_CHARS: Final = 200
LIST_PAGE: Final = 1000
#: How long a writer that finds a key claimed waits for the claimant's content before
#: taking the claim over (a claimant writes within milliseconds unless it died), and
#: how often it looks meanwhile.
CLAIM_GRACE: Final = 2.0
CLAIM_POLL: Final = 0.05
_BACKOFF_FIRST: Final = 0.05
_BACKOFF_MAX: Final = 1.0
_INDEX_DONE: Final = frozenset({"complete", "completed", "skipped"})
_NO_HITS: Final = SearchResult()
#: The largest response body a call reads: a record's content (at most
#: MAX_CONTENT_BYTES) JSON-escaped (up to six bytes for one) in its envelope, with room
#: to spare. Anything larger is no answer a write of this provider could have made.
MAX_BODY_BYTES: Final = 8 * MAX_CONTENT_BYTES


class Call:
    """One HTTP request a plan wants made."""

    __slots__ = ("headers", "json", "method", "params", "path", "timeout")

    def __init__(
        self,
        method: str,
        path: str,
        *,
        timeout: float,
        params: dict[str, Any] | None = None,
        json: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.method = method
        self.path = path
        self.timeout = timeout
        self.params = params
        self.json = json
        self.headers = headers


class Pause:
    """Wait this many seconds (a retry backoff)."""

    __slots__ = ("seconds",)

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds


Plan = Generator[Call | Pause, Reply, Any]


class Deadline:
    """The time one SPI call may take, shared by its requests and retries."""

    __slots__ = ("_end", "op")

    def __init__(self, seconds: float, op: str) -> None:
        self._end = time.monotonic() + seconds
        self.op = op

    def remaining(self) -> float:
        left = self._end - time.monotonic()
        if left <= 0:
            raise ProviderUnavailable(
                f"openviking {self.op} did not finish in time", reason_code="provider_timeout"
            )
        return left


class Receiving:
    """One response body as it arrives, held to the call's time and to a size bound.

    httpx's timeout bounds each read, not the whole body: a server that sends one
    byte at a time would keep a call going far past its deadline, and one that sends
    400 MiB would have it buffered. Each chunk is checked as it comes.
    """

    __slots__ = ("_body", "_end", "op")

    def __init__(self, seconds: float, op: str) -> None:
        self._end = time.monotonic() + seconds
        self._body = bytearray()
        self.op = op

    def announced(self, length: str | None) -> None:
        """Refuse a body whose announced length is over the bound before reading it."""
        if length is not None and length.isdigit() and int(length) > MAX_BODY_BYTES:
            raise bad_response(self.op, "the body is larger than any answer can be")

    def take(self, chunk: bytes) -> None:
        self._body += chunk
        if len(self._body) > MAX_BODY_BYTES:
            raise bad_response(self.op, "the body is larger than any answer can be")
        if time.monotonic() > self._end:
            raise ProviderUnavailable(
                f"openviking {self.op} did not finish in time", reason_code="provider_timeout"
            )

    def reply(self, status: int) -> Reply:
        return Reply(status, bytes(self._body))


def _existing(ref: str, existing: str, content: str) -> WriteResult:
    return WriteResult(
        ref=ref,
        status="unchanged" if existing == content else "conflict",
        content_sha256=hashlib.sha256(existing.encode("utf-8")).hexdigest(),
    )


def summary_of(content: str) -> str:
    return " ".join(content.split())[:SUMMARY_CHARS]


class Protocol:
    """The plans of one provider (its options and per-scope layouts)."""

    __slots__ = ("_layouts", "options")

    def __init__(self, options: Options) -> None:
        self.options = options
        self._layouts: dict[object, Layout] = {}

    def layout(self, scope: Any) -> Layout:
        """The layout of a checked scope (cached: scopes are frozen and hashable)."""
        layout = self._layouts.get(scope)
        if layout is None:
            layout = Layout(scope, self.options.root)
            acting = self.options.actor_peer
            if acting is not None and (
                (scope.actor_peer_id is not None and scope.actor_peer_id != acting)
                or (layout.peer_header is not None and layout.peer_header != acting)
            ):
                # A provider configured for one peer never acts for another.
                raise RecordValidationError(
                    "this provider acts for one actor peer (option actor_peer); "
                    "the scope names another",
                    path="$.scope.actor_peer_id",
                    code="peer_mismatch",
                )
            if len(self._layouts) >= 1024:
                self._layouts.clear()
            self._layouts[scope] = layout
        return layout

    def _peer(self, layout: Layout) -> dict[str, str] | None:
        return (
            None if layout.peer_header is None else {"X-OpenViking-Actor-Peer": layout.peer_header}
        )

    def request(
        self,
        deadline: Deadline,
        method: str,
        path: str,
        *,
        expect: frozenset[int],
        layout: Layout | None = None,
        params: dict[str, Any] | None = None,
        body: dict[str, Any] | None = None,
    ) -> Generator[Call | Pause, Reply, Reply]:
        """One request, retried while the server says so; a reply whose status is expected."""
        attempt = 0
        while True:
            reply = yield Call(
                method,
                path,
                timeout=deadline.remaining(),
                params=params,
                json=body,
                headers=None if layout is None else self._peer(layout),
            )
            if reply.status in expect:
                return reply
            if not retryable(reply) or attempt >= self.options.retries:
                raise failure(reply, deadline.op)
            pause = min(_BACKOFF_FIRST * (2**attempt), _BACKOFF_MAX)
            if pause >= deadline.remaining():
                raise failure(reply, deadline.op)
            attempt += 1
            yield Pause(pause)

    # -- the operations ----------------------------------------------------------------

    def read_content(
        self, deadline: Deadline, layout: Layout, uri: str
    ) -> Generator[Call | Pause, Reply, str | None]:
        reply = yield from self.request(
            deadline,
            "GET",
            "/api/v1/content/read",
            expect=frozenset({200, 404}),
            layout=layout,
            params={"uri": uri},
        )
        if reply.status == 404:
            return None
        return text(result_of(reply, deadline.op), deadline.op, "content")

    def write(self, deadline: Deadline, layout: Layout, key: str, content: str) -> Plan:
        ref_hex = layout.ref_hex(key)
        uri = layout.uri(ref_hex)
        ref = "openviking:" + ref_hex
        # content/write has no create-if-absent (its "create" is an upsert): look first,
        # then claim the record's directory, which only one writer can create.
        existing = yield from self.read_content(deadline, layout, uri)
        if existing is None:
            claim = yield from self.request(
                deadline,
                "POST",
                "/api/v1/fs/mkdir",
                expect=frozenset({200, 409}),
                layout=layout,
                body={"uri": layout.claim(ref_hex)},
            )
            if claim.status == 409:
                # Another writer holds the claim: its content is durable within
                # milliseconds of its write, so wait for that (a claim left by a writer
                # that died before writing is taken over after CLAIM_GRACE seconds).
                existing = yield from self._await_content(deadline, layout, uri)
        if existing is not None:
            return _existing(ref, existing, content)
        options = self.options
        reply = yield from self.request(
            deadline,
            "POST",
            "/api/v1/content/write",
            expect=frozenset({200}),
            layout=layout,
            body={
                "uri": uri,
                "content": content,
                "mode": "replace",
                "wait": options.wait_for_index,
                "processing_mode": options.processing_mode,
            },
        )
        result = result_of(reply, deadline.op)
        if not isinstance(result, dict) or result.get("uri") != uri:
            raise bad_response(deadline.op, "the server stored the record elsewhere")
        # Look again (a taken-over claim can race with a late writer): whoever's content
        # is there now decides the status.
        stored = yield from self.read_content(deadline, layout, uri)
        if stored is None:
            raise ProviderUnavailable(
                "openviking write: the record is gone on readback (deleted meanwhile?)",
                reason_code="provider_readback_mismatch",
            )
        if stored != content:
            return _existing(ref, stored, content)
        if options.wait_for_index and result.get("vector_status") not in _INDEX_DONE:
            raise ProviderUnavailable(
                "openviking write: stored, but the search index did not complete",
                reason_code="index_pending",
            )
        return WriteResult(
            ref=ref,
            status="created",
            content_sha256=hashlib.sha256(content.encode("utf-8")).hexdigest(),
        )

    def _await_content(
        self, deadline: Deadline, layout: Layout, uri: str
    ) -> Generator[Call | Pause, Reply, str | None]:
        give_up = time.monotonic() + CLAIM_GRACE
        while True:
            existing = yield from self.read_content(deadline, layout, uri)
            if existing is not None or time.monotonic() >= give_up:
                return existing
            if deadline.remaining() <= CLAIM_POLL:
                raise ProviderUnavailable(
                    "openviking write: another writer holds this key",
                    reason_code="provider_timeout",
                )
            yield Pause(CLAIM_POLL)

    def probe(self, deadline: Deadline, result: Any) -> Plan:
        """Ask the server who we are (``/health`` with our credentials), then give ``result``.

        A ref this provider never issues names no record; the call still proves the
        server is reachable and the credentials good, as any other call would.
        """
        yield from self.request(deadline, "GET", "/health", expect=frozenset({200}))
        return result

    def read(self, deadline: Deadline, layout: Layout, ref: str, ref_hex: str) -> Plan:
        content = yield from self.read_content(deadline, layout, layout.uri(ref_hex))
        if content is None:
            return ReadResult(ref=ref, found=False)
        return ReadResult(ref=ref, found=True, content=content)

    def search(self, deadline: Deadline, layout: Layout, query: str, limit: int) -> Plan:
        body: dict[str, Any] = {
            "query": query,
            "target_uri": layout.directory,
            # Hits outside the directory are dropped below: ask for a little more.
            "limit": min(limit * 2, 200),
            "level": 2,
            "read_content": True,
        }
        reply = yield from self.request(
            deadline,
            "POST",
            "/api/v1/search/find",
            expect=frozenset({200, 404}),
            layout=layout,
            body=body,
        )
        if reply.status == 404:
            return _NO_HITS
        result = result_of(reply, deadline.op)
        if not isinstance(result, dict):
            raise bad_response(deadline.op, "result is not an object")
        threshold = self.options.score_threshold
        scored: list[tuple[float, str, str]] = []
        seen: set[str] = set()
        for group in ("resources", "memories", "skills"):
            items = result.get(group) or []
            if not isinstance(items, list):
                raise bad_response(deadline.op, f"{group} is not a list")
            for item in items:
                if not isinstance(item, dict):
                    raise bad_response(deadline.op, "a hit is not an object")
                ref = layout.ref_of_uri(item.get("uri"))
                if ref is None or ref in seen:
                    continue  # outside this scope's directory (the server matched a prefix)
                value = score(item.get("score"), deadline.op)
                if value < threshold:
                    continue  # no more related than chance (applied here, not in the
                    # server's hierarchical retrieval, which would prune directories)
                found = item.get("content")
                if not isinstance(found, str):
                    found = ""  # nothing to summarise; the hit still counts
                summary = text(found, deadline.op, "a hit's content")
                seen.add(ref)
                scored.append((value, ref, summary))
        scored.sort(key=lambda hit: -hit[0])
        hits = tuple(
            SearchHit(ref=ref, summary=summary_of(summary), score=value)
            for value, ref, summary in scored[:limit]
        )
        return SearchResult(hits=hits) if hits else _NO_HITS

    def delete(self, deadline: Deadline, layout: Layout, ref: str, ref_hex: str) -> Plan:
        reply = yield from self.request(
            deadline,
            "DELETE",
            "/api/v1/fs",
            expect=frozenset({200, 404}),
            layout=layout,
            # The record's directory (claim, file, sidecars) at once; wait: the vector
            # rows go too, so nothing is findable after the call.
            params={"uri": layout.claim(ref_hex), "recursive": "true", "wait": "true"},
        )
        if reply.status == 404:
            return DeleteResult(ref=ref, deleted=False)
        result = result_of(reply, deadline.op)
        count = result.get("estimated_deleted_count") if isinstance(result, dict) else None
        if isinstance(count, bool) or not isinstance(count, int):
            raise bad_response(deadline.op, "no deleted count")
        return DeleteResult(ref=ref, deleted=count > 0)

    def inventory(self, deadline: Deadline, layout: Layout) -> Plan:
        ready = yield from self.request(deadline, "GET", "/ready", expect=frozenset({200, 503}))
        if ready.status != 200:
            return _unavailable_inventory()
        checks = envelope(ready, deadline.op).get("checks")
        vectordb = checks.get("vectordb") if isinstance(checks, dict) else None
        count = 0
        present = False
        offset = 0
        while True:
            reply = yield from self.request(
                deadline,
                "GET",
                "/api/v1/fs/ls",
                expect=frozenset({200, 404}),
                layout=layout,
                params={
                    "uri": layout.directory,
                    "recursive": "true",
                    "node_limit": LIST_PAGE,
                    "offset": offset,
                },
            )
            if reply.status == 404:
                break
            present = True
            body = envelope(reply, deadline.op)
            entries = body.get("result")
            if body.get("status") != "ok" or not isinstance(entries, list):
                raise bad_response(deadline.op, "listing is not a list")
            for entry in entries:
                if isinstance(entry, dict) and not entry.get("isDir"):
                    count += layout.ref_of_uri(entry.get("uri")) is not None
            if body.get("has_more") is not True or not entries:
                break
            offset += len(entries)
        return Inventory(
            provider_id=PROVIDER_ID,
            available=True,
            corpus_present=present,
            record_count=count,
            index_present=present and vectordb == "ok",
        )


def _unavailable_inventory() -> Inventory:
    return Inventory(
        provider_id=PROVIDER_ID,
        available=False,
        corpus_present=False,
        record_count=0,
        index_present=False,
    )
