"""Unit tests of the OpenViking provider with ``httpx.MockTransport`` (no server needed).

Fault injection only: everything a real server does is tested against one in the
``test_ov_*`` modules. Each test names the issue-10 / SPI sentence it protects.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from reward_memory.errors import ProviderConfigError, ProviderUnavailable, RecordValidationError
from reward_memory.grammars import TOKEN
from reward_memory.providers.discovery import get_provider
from reward_memory.providers.spi import ProviderScope
from reward_memory_openviking import AsyncOpenVikingProvider, OpenVikingAuthError
from reward_memory_openviking import OpenVikingProvider as OV
from reward_memory_openviking._layout import Layout, escape

SCOPE = ProviderScope(namespace="ns", scope_ref="main")
Handler = Callable[[httpx.Request], httpx.Response]


def ok(result: Any, status: int = 200) -> httpx.Response:
    return httpx.Response(status, json={"status": "ok", "result": result})


def error(status: int, code: str, **details: Any) -> httpx.Response:
    return httpx.Response(
        status,
        json={"status": "error", "result": None, "error": {"code": code, "details": details}},
    )


def provider(handler: Handler, **options: Any) -> OV:
    return OV(
        base_url="http://ov.test:1933",
        api_key="user-key",
        transport=httpx.MockTransport(handler),
        **options,
    )


class Store:
    """content/read and content/write over a dict (what the server keeps)."""

    def __init__(self, vector_status: str = "complete") -> None:
        self.files: dict[str, str] = {}
        self.vector_status = vector_status

    def read(self, request: httpx.Request) -> httpx.Response:
        uri = request.url.params["uri"]
        return ok(self.files[uri]) if uri in self.files else error(404, "NOT_FOUND")

    def write(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        self.files[body["uri"]] = body["content"]
        return ok({"uri": body["uri"], "vector_status": self.vector_status})


class Server:
    """A scripted server: a queue of replies per (method, path), and every request seen."""

    def __init__(self, **routes: list[httpx.Response] | Handler) -> None:
        routes.setdefault("mkdir", [ok({})])  # the record's claim: granted unless scripted
        self.routes = routes
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        key = f"{request.method} {request.url.path}"
        route = self.routes[_ROUTE_NAMES[key]]
        if callable(route):
            return route(request)
        return route.pop(0) if len(route) > 1 else route[0]

    def paths(self) -> list[str]:
        return [f"{r.method} {r.url.path}" for r in self.requests]


_ROUTE_NAMES = {
    "GET /api/v1/content/read": "read",
    "POST /api/v1/content/write": "write",
    "POST /api/v1/fs/mkdir": "mkdir",
    "POST /api/v1/search/find": "find",
    "DELETE /api/v1/fs": "delete",
    "GET /api/v1/fs/ls": "ls",
    "GET /ready": "ready",
    "GET /health": "health",
}


# -- options, URLs, discovery ------------------------------------------------------------


def test_entry_point_finds_the_provider() -> None:
    """Issue 10 item 1: get_provider("openviking", ...) finds it through the entry point."""
    built = get_provider("openviking", base_url="http://127.0.0.1:9", api_key="k")
    assert isinstance(built, OV)
    assert built.provider_id == "openviking"
    built.close()


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"colour": "red"}, "colour"),
        ({"base_url": "ftp://x"}, "base_url"),
        ({"base_url": "http://h:1/path"}, "base_url"),
        ({"base_url": "http://u:p@h:1"}, "base_url"),
        ({"base_url": "http://h:99999"}, "base_url"),
        ({"auth": "oidc"}, "auth"),
        ({"timeout": 0}, "timeout"),
        ({"timeout": float("nan")}, "timeout"),
        ({"retries": -1}, "retries"),
        ({"retries": True}, "retries"),
        ({"wait_for_index": "yes"}, "wait_for_index"),
        ({"processing_mode": "fast"}, "processing_mode"),
        ({"score_threshold": 2}, "score_threshold"),
        ({"root": "viking://user/u/memories/x"}, "root"),
        ({"root": "viking://resources/../x"}, "root"),
        ({"account": "a"}, "auth"),  # trusted mode needs the user too
        ({"auth": "api_key", "account": "a", "user": "u"}, "account"),
        ({"api_key_env": "NOT_SET_ANYWHERE_123"}, "api_key_env"),
        ({"actor_peer": "a/b"}, "actor_peer"),
        ({"actor_peer": ""}, "actor_peer"),
    ],
)
def test_bad_options_name_the_option(options: dict[str, Any], named: str) -> None:
    """SPI: an unknown option or a bad value raises ProviderConfigError naming the option."""
    options.setdefault("api_key", "secret-value-1")
    if "api_key_env" in options:
        del options["api_key"]
    with pytest.raises(ProviderConfigError) as caught:
        OV(**options)
    assert named in str(caught.value)
    assert "secret-value-1" not in str(caught.value)


def test_api_key_mode_needs_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("REWARD_MEMORY_OPENVIKING_API_KEY", raising=False)
    with pytest.raises(ProviderConfigError, match="api_key"):
        OV(auth="api_key")


@pytest.mark.parametrize(
    "url",
    [
        "sqlite://x",
        "openviking://u:secret@host:1",
        "openviking://host:1?api_key=secret",
        "openviking://host:1#frag",
        "openviking://host:1?timeout=1&timeout=2",
        "openviking://host:1?nope=1",
        "openviking://host:1?retries=x",
        "openviking://host:1?wait_for_index=maybe",
        "openviking://?tls=true",
        "openviking://host:1?a",
    ],
)
def test_bad_urls_are_refused_without_echoing_them(url: str) -> None:
    """SPI: a malformed URL raises ProviderConfigError without repeating the URL."""
    with pytest.raises(ProviderConfigError) as caught:
        OV.from_url(url)
    assert "secret" not in str(caught.value)
    assert url not in str(caught.value)


def test_url_options_and_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """A URL never carries the key: api_key_env names the variable that does."""
    monkeypatch.setenv("MY_OV_KEY", "root-key")
    built = OV.from_url(
        "openviking://ov.example:8443?tls=true&auth=trusted&account=acme&user=bob"
        "&api_key_env=MY_OV_KEY&timeout=2.5&retries=1&wait_for_index=false"
    )
    options = built.options
    assert options.base_url == "https://ov.example:8443"
    assert (options.auth, options.account, options.user) == ("trusted", "acme", "bob")
    assert (options.timeout, options.retries, options.wait_for_index) == (2.5, 1, False)
    assert "root-key" not in repr(options)
    assert "root-key" not in repr(built)
    built.close()
    monkeypatch.setenv("REWARD_MEMORY_OPENVIKING_URL", "http://10.0.0.5:1933")
    monkeypatch.setenv("REWARD_MEMORY_OPENVIKING_API_KEY", "user-key")
    default = OV.from_url("openviking://")
    assert default.options.base_url == "http://10.0.0.5:1933"
    assert default.options.auth == "api_key"
    default.close()


def test_auth_headers_per_mode() -> None:
    """Issue 10 item 2: api_key sends the user key; trusted sends root key + account/user."""
    seen: list[httpx.Headers] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers)
        return ok({"status": "ok"})

    for options in (
        {"api_key": "user-key"},
        {"api_key": "root-key", "auth": "trusted", "account": "acme", "user": "bob"},
        {"auth": "dev"},
    ):
        with OV(base_url="http://h:1", transport=httpx.MockTransport(handler), **options) as p:
            p.read(scope=SCOPE, ref="not-one-of-ours")
    api, trusted, dev = seen
    assert api["x-api-key"] == "user-key"
    assert "x-openviking-account" not in api
    assert trusted["x-api-key"] == "root-key"
    assert (trusted["x-openviking-account"], trusted["x-openviking-user"]) == ("acme", "bob")
    assert "x-api-key" not in dev


# -- layout: where scopes live --------------------------------------------------------


@given(st.text(max_size=40), st.text(max_size=40))
def test_escape_is_injective(a: str, b: str) -> None:
    """Two scopes that differ in any part share nothing: the segment encoding is injective."""
    if a != b:
        assert escape(a) != escape(b)
    assert "-" not in escape(a)
    assert "/" not in escape(a)


_TOKENS = st.from_regex(TOKEN, fullmatch=True).filter(lambda t: not t.startswith("viking:"))


@given(_TOKENS, _TOKENS, _TOKENS, _TOKENS)
def test_distinct_scopes_get_disjoint_directories(ns1: str, ref1: str, ns2: str, ref2: str) -> None:
    """Neither directory is the other, nor holds the other's records (a/ab, a_b/axb, case)."""
    one = Layout(ProviderScope(namespace=ns1, scope_ref=ref1), "viking://resources/r")
    two = Layout(ProviderScope(namespace=ns2, scope_ref=ref2), "viking://resources/r")
    if (ns1, ref1) == (ns2, ref2):
        assert one.directory == two.directory
        return
    assert one.directory != two.directory
    assert one.ref_of_uri(two.uri(two.ref_hex("k"))) is None
    assert two.ref_of_uri(one.uri(one.ref_hex("k"))) is None


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("x/a", "x/ab"),
        ("a_b", "aXb"),
        ("a_b", "a-b"),
        ("a.b", "a_b"),
        ("Main", "main"),
        ("a", "a/b"),
    ],
)
def test_sibling_scope_refs(first: str, second: str) -> None:
    one = Layout(ProviderScope(namespace="n", scope_ref=first), "viking://resources/r")
    two = Layout(ProviderScope(namespace="n", scope_ref=second), "viking://resources/r")
    assert one.directory != two.directory
    assert not two.directory.startswith(one.directory + "/")
    assert one.ref_of_uri(two.uri("0" * 32)) is None


def test_uri_scopes_and_nested_hits() -> None:
    """A viking:// scope_ref is the corpus scope; hits in a nested directory are not ours."""
    outer = Layout(ProviderScope(namespace="n", scope_ref="viking://resources/p/a"), "x")
    assert outer.directory == "viking://resources/p/a/rm-n"
    assert outer.ref_of_uri(f"{outer.directory}/{'a' * 32}/r.json") == f"openviking:{'a' * 32}"
    assert outer.ref_of_uri(f"{outer.directory}/sub/{'a' * 32}/r.json") is None
    assert outer.ref_of_uri(f"{outer.directory}x/{'a' * 32}/r.json") is None
    assert outer.ref_of_uri(f"{outer.directory}/{'a' * 32}/.abstract.md") is None
    assert outer.ref_of_uri(f"{outer.directory}/{'a' * 32}") is None
    assert outer.ref_of_uri(None) is None


@pytest.mark.parametrize(
    ("plain", "uri"),
    [
        # A viking:// scope_ref naming the directory the root gives a plain one.
        ("fooX", "viking://resources/reward-memory/s-fooX"),
        ("main", "viking://resources/reward-memory/s-main"),
    ],
)
def test_a_uri_scope_never_names_a_plain_scopes_directory(plain: str, uri: str) -> None:
    root = "viking://resources/reward-memory"
    Layout(ProviderScope(namespace="n", scope_ref=plain), root)
    with pytest.raises(RecordValidationError) as caught:
        Layout(ProviderScope(namespace="n", scope_ref=uri), root)
    assert caught.value.path == "$.scope.scope_ref"


@pytest.mark.parametrize("suffix", ["/", "//"])
def test_a_trailing_slash_is_refused_not_folded(suffix: str) -> None:
    """``.../tX/`` would name the directory of ``.../tX``: two scopes, one directory."""
    Layout(ProviderScope(namespace="n", scope_ref="viking://resources/tX"), "viking://resources/r")
    with pytest.raises(RecordValidationError):
        Layout(
            ProviderScope(namespace="n", scope_ref="viking://resources/tX" + suffix),
            "viking://resources/r",
        )


def test_a_scope_inside_another_scopes_records_is_refused() -> None:
    """Inside a records directory, or inside one record's own directory, a scope would lose
    its records to the other's delete and crowd the other's searches."""
    outer = Layout(ProviderScope(namespace="ns", scope_ref="viking://resources/crX"), "r")
    for inner in (
        outer.directory,  # viking://resources/crX/rm-ns
        outer.claim(outer.ref_hex("k")),  # a record's own directory
        "viking://resources/x/rm-other/y",
    ):
        with pytest.raises(RecordValidationError):
            Layout(ProviderScope(namespace="ns", scope_ref=inner), "r")
    with pytest.raises(ProviderConfigError):
        provider(Server(), root="viking://resources/x/rm-ns")


_SEGMENTS = st.lists(
    st.sampled_from(["a", "ab", "s-a", "s-main", "rm-n", "rm-ns", "x", "reward-memory"]),
    min_size=0,
    max_size=4,
)


_SCOPE_REFS = st.one_of(
    _TOKENS,
    st.sampled_from(["a", "main", "s-a"]),
    _SEGMENTS.map(lambda parts: "viking://resources/" + "/".join(parts)),
)


@given(
    _SCOPE_REFS, _SCOPE_REFS, _SEGMENTS, st.sampled_from(["n", "ns"]), st.sampled_from(["n", "ns"])
)
def test_no_accepted_scope_lies_in_or_on_another(
    ref1: str, ref2: str, extra: list[str], ns1: str, ns2: str
) -> None:
    """Plain and viking:// scope_refs alike: two scopes accepted by one provider never share
    a directory, and neither directory lies inside the other (``ref2`` is also tried as
    ``ref1`` extended by a few segments, and as the directory ``ref1``'s layout names)."""
    root = "viking://resources/reward-memory"

    def layout(ref: str, ns: str) -> Layout | None:
        try:
            return Layout(ProviderScope(namespace=ns, scope_ref=ref), root)
        except RecordValidationError:
            return None

    one = layout(ref1, ns1)
    if one is None:
        return
    suffix = "/".join(extra)
    others = [ref2, one.directory, *([f"{one.directory}/{suffix}"] if suffix else [])]
    if ref1.startswith("viking:") and suffix:
        others.append(f"{ref1}/{suffix}")
    for other in others:
        two = layout(other, ns2)
        if two is None or (other, ns2) == (ref1, ns1):
            continue
        assert one.directory != two.directory
        assert not one.directory.startswith(two.directory + "/")
        assert not two.directory.startswith(one.directory + "/")


@pytest.mark.parametrize(
    "scope_ref",
    [
        "viking://user/u1/memories/prefs",  # rewritten on the server: not exact
        "viking://session/s1/x",
        "viking://~/resources/x",
        "viking://resources/a/../b",
        "viking://resources//b",
        "viking://resources/a:b",
        "viking:resources",
    ],
)
def test_scope_refs_outside_a_resources_namespace_are_refused(scope_ref: str) -> None:
    with pytest.raises(RecordValidationError) as caught:
        Layout(ProviderScope(namespace="n", scope_ref=scope_ref), "viking://resources/r")
    # "~" and ".." are refused by ProviderScope itself, the rest by the layout.
    assert caught.value.path in ("$.scope_ref", "$.scope.scope_ref")


def test_peer_scope_must_carry_that_peer() -> None:
    """Issue 10 item 2: the actor peer is required to match a /peers/<peer>/ scope."""
    uri = "viking://user/u1/peers/p1/resources/rm"
    for peer in (None, "p2"):
        with pytest.raises(RecordValidationError) as caught:
            Layout(ProviderScope(namespace="n", scope_ref=uri, actor_peer_id=peer), "r")
        assert caught.value.path == "$.scope.actor_peer_id"
    layout = Layout(ProviderScope(namespace="n", scope_ref=uri, actor_peer_id="p1"), "r")
    assert layout.peer_header == "p1"
    plain = Layout(ProviderScope(namespace="n", scope_ref="main", actor_peer_id="p1"), "r")
    assert plain.peer_header is None
    assert plain.directory.endswith("-p1")


def test_a_provider_for_one_peer_never_acts_for_another() -> None:
    """Option actor_peer: a scope naming another peer is refused before any request."""
    store = Store()
    server = Server(read=store.read, write=store.write)
    p = provider(server, actor_peer="p1")
    uri = "viking://user/u1/peers/{}/resources/rm"
    refused = [
        ProviderScope(namespace="n", scope_ref=uri.format("p2"), actor_peer_id="p2"),
        ProviderScope(namespace="n", scope_ref="main", actor_peer_id="p2"),
    ]
    for scope in refused:
        with pytest.raises(RecordValidationError) as caught:
            p.write(scope=scope, key="k1", content="x")
        assert caught.value.path == "$.scope.actor_peer_id"
    assert server.requests == []
    mine = ProviderScope(namespace="n", scope_ref=uri.format("p1"), actor_peer_id="p1")
    assert p.write(scope=mine, key="k1", content="x").status == "created"
    assert p.write(scope=SCOPE, key="k1", content="shared").status == "created"
    assert OV.from_url("openviking://h:1?auth=dev&actor_peer=p1").options.actor_peer == "p1"


def test_peer_header_is_sent_for_peer_scopes_only() -> None:
    """Sent as X-OpenViking-Actor-Peer whenever the scope is under /peers/<peer>/."""
    store = Store()
    server = Server(read=store.read, write=store.write)
    p = provider(server)
    peer_scope = ProviderScope(
        namespace="n", scope_ref="viking://user/u1/peers/p1/resources/rm", actor_peer_id="p1"
    )
    p.write(scope=peer_scope, key="k1", content="x")
    p.write(scope=SCOPE, key="k1", content="x")
    peers = [r.headers.get("x-openviking-actor-peer") for r in server.requests]
    assert peers == ["p1"] * 4 + [None] * 4  # read, claim, write, look again


# -- the operations' wire protocol --------------------------------------------------------


def test_write_is_create_if_absent() -> None:
    """content/write's "create" is an upsert: the provider looks first, never overwrites."""
    server = Server(read=[ok("the original")])
    p = provider(server)
    result = p.write(scope=SCOPE, key="k1", content="something else")
    assert result.status == "conflict"
    assert server.paths() == ["GET /api/v1/content/read"]
    assert p.write(scope=SCOPE, key="k1", content="the original").status == "unchanged"


def test_write_waits_for_the_index() -> None:
    store = Store()
    server = Server(read=store.read, write=store.write)
    p = provider(server)
    assert p.write(scope=SCOPE, key="k1", content="x").status == "created"
    assert server.paths() == [
        "GET /api/v1/content/read",
        "POST /api/v1/fs/mkdir",
        "POST /api/v1/content/write",
        "GET /api/v1/content/read",
    ]
    body = json.loads(server.requests[2].content)
    assert body["wait"] is True
    assert body["processing_mode"] == "vectors_only"
    assert body["mode"] == "replace"
    assert body["uri"].startswith("viking://resources/reward-memory/s-main/rm-ns/")
    assert body["uri"].endswith("/r.json")
    claim = json.loads(server.requests[1].content)["uri"]
    assert body["uri"] == claim + "/r.json"


def test_a_claimed_key_waits_for_the_claimants_content() -> None:
    """mkdir is exclusive: the second writer of a new key reads the first one's content."""
    reads = [error(404, "NOT_FOUND"), error(404, "NOT_FOUND"), ok("theirs")]
    server = Server(read=reads, mkdir=[error(409, "CONFLICT")])
    result = provider(server).write(scope=SCOPE, key="k1", content="mine")
    assert result.status == "conflict"
    assert "POST /api/v1/content/write" not in server.paths()
    same = Server(read=[error(404, "NOT_FOUND"), ok("mine")], mkdir=[error(409, "CONFLICT")])
    assert provider(same).write(scope=SCOPE, key="k1", content="mine").status == "unchanged"


def test_an_abandoned_claim_is_taken_over(monkeypatch: pytest.MonkeyPatch) -> None:
    """A claim whose writer died before writing does not block the key forever."""
    from reward_memory_openviking import _protocol

    monkeypatch.setattr(_protocol, "CLAIM_GRACE", 0.2)
    store = Store()
    server = Server(read=store.read, write=store.write, mkdir=[error(409, "CONFLICT")])
    started = time.monotonic()
    assert provider(server).write(scope=SCOPE, key="k1", content="x").status == "created"
    assert 0.2 <= time.monotonic() - started < 2.0
    assert server.paths().count("POST /api/v1/content/write") == 1


def test_a_claim_held_past_the_deadline_times_out() -> None:
    server = Server(read=[error(404, "NOT_FOUND")], mkdir=[error(409, "CONFLICT")])
    with pytest.raises(ProviderUnavailable) as caught:
        provider(server).write(scope=SCOPE, key="k1", content="x", timeout=0.3)
    assert caught.value.reason_code == "provider_timeout"


def test_write_reports_index_pending() -> None:
    """Writes the core must find wait for the index, and otherwise say "index pending"."""

    store = Store(vector_status="queued")
    p = provider(Server(read=store.read, write=store.write))
    with pytest.raises(ProviderUnavailable) as caught:
        p.write(scope=SCOPE, key="k1", content="x")
    assert caught.value.reason_code == "index_pending"
    # The content is durable: a replay says so without pretending about the index.
    assert p.write(scope=SCOPE, key="k1", content="x").status == "unchanged"
    other = Store(vector_status="queued")
    unwaited = provider(Server(read=other.read, write=other.write), wait_for_index=False)
    assert unwaited.write(scope=SCOPE, key="k1", content="x").status == "created"


def test_a_racing_writer_gets_a_conflict() -> None:
    """Of two writers racing on one new key, the one whose content stays is "created"."""
    winner = "the winner's content"
    reads = [error(404, "NOT_FOUND"), ok(winner)]

    def write(request: httpx.Request) -> httpx.Response:
        return ok({"uri": json.loads(request.content)["uri"], "vector_status": "complete"})

    result = provider(Server(read=reads, write=write)).write(scope=SCOPE, key="k1", content="mine")
    assert result.status == "conflict"
    assert result.content_sha256 == hashlib.sha256(winner.encode()).hexdigest()


def test_a_record_gone_on_readback_is_not_created() -> None:
    def write(request: httpx.Request) -> httpx.Response:
        return ok({"uri": json.loads(request.content)["uri"], "vector_status": "complete"})

    server = Server(read=[error(404, "NOT_FOUND")], write=write)
    with pytest.raises(ProviderUnavailable) as caught:
        provider(server).write(scope=SCOPE, key="k1", content="x")
    assert caught.value.reason_code == "provider_readback_mismatch"


def test_write_stored_elsewhere_is_a_bad_response() -> None:
    """Always use result.uri: a server that rewrote the path does not get a 'created'."""
    p = provider(Server(read=[error(404, "NOT_FOUND")], write=[ok({"uri": "viking://x/y"})]))
    with pytest.raises(ProviderUnavailable) as caught:
        p.write(scope=SCOPE, key="k1", content="x")
    assert caught.value.reason_code == "provider_bad_response"


def test_delete_retries_a_retryable_409() -> None:
    """DELETE /fs retries 409 marked retryable (a path lock held by indexing)."""
    busy = error(409, "CONFLICT", conflict_type="path_busy", retryable=True)
    server = Server(delete=[busy, busy, ok({"estimated_deleted_count": 1})])
    p = provider(server)
    ref = "openviking:" + "a" * 32
    assert p.delete(scope=SCOPE, ref=ref).deleted is True
    assert server.paths().count("DELETE /api/v1/fs") == 3
    assert server.requests[0].url.params["wait"] == "true"


def test_a_409_not_marked_retryable_is_not_retried() -> None:
    server = Server(delete=[error(409, "CONFLICT", retryable=False)])
    with pytest.raises(ProviderUnavailable):
        provider(server).delete(scope=SCOPE, ref="openviking:" + "a" * 32)
    assert len(server.requests) == 1


def test_retries_are_bounded() -> None:
    busy = error(409, "CONFLICT", retryable=True)
    server = Server(delete=[busy])
    with pytest.raises(ProviderUnavailable) as caught:
        provider(server, retries=2).delete(scope=SCOPE, ref="openviking:" + "a" * 32)
    assert caught.value.reason_code == "provider_unavailable"
    assert len(server.requests) == 3


def test_search_drops_hits_outside_the_scope() -> None:
    """Results outside the scope are dropped client-side as well (the server matches prefixes)."""
    layout = Layout(SCOPE, "viking://resources/reward-memory")
    mine = layout.uri(layout.ref_hex("k1"))
    hits = {
        "resources": [
            {"uri": layout.directory + "x/" + "b" * 32 + ".json", "score": 0.99, "content": "x"},
            {"uri": layout.directory + "/nested/" + "c" * 32 + ".json", "score": 0.98},
            {"uri": mine, "score": 0.7, "content": "mine   here\n"},
            {"uri": mine, "score": 0.6, "content": "mine"},
        ],
        "memories": [{"uri": "viking://user/u/memories/m.md", "score": 0.9}],
        "skills": [],
    }
    server = Server(find=[ok(hits)])
    result = provider(server).search(scope=SCOPE, query="mine", limit=5)
    assert [(hit.ref, hit.summary) for hit in result.hits] == [
        ("openviking:" + layout.ref_hex("k1"), "mine here")
    ]
    body = json.loads(server.requests[0].content)
    assert (body["target_uri"], body["level"]) == (layout.directory, 2)
    assert "score_threshold" not in body  # applied client-side (see _protocol)
    weak = {"uri": layout.uri("d" * 32), "score": 0.52, "content": "weakly related"}
    hits["resources"].append(weak)
    default = provider(Server(find=[ok(hits)])).search(scope=SCOPE, query="mine", limit=5)
    assert [hit.score for hit in default.hits] == [0.7]  # 0.52: barely above chance
    loose = provider(Server(find=[ok(hits)]), score_threshold=0)
    assert [hit.score for hit in loose.search(scope=SCOPE, query="mine", limit=5).hits] == [
        0.7,
        0.52,
    ]


@pytest.mark.parametrize("query", ["%", "*", "?", "_", "%_*?", "", "  "])
def test_wildcard_only_queries_find_nothing(query: str) -> None:
    """An embedding search would rank the whole scope for '%': such a query finds nothing."""
    server = Server(health=[ok({"healthy": True})])
    assert provider(server).search(scope=SCOPE, query=query, limit=5).hits == ()
    assert server.paths() == ["GET /health"]


def test_inventory_counts_only_record_files() -> None:
    layout = Layout(SCOPE, "viking://resources/reward-memory")
    entries = [
        {"uri": layout.uri("a" * 32), "isDir": False},
        {"uri": layout.uri("b" * 32), "isDir": False},
        {"uri": layout.directory + "/.abstract.md", "isDir": False},
        {"uri": layout.directory + "/rm-x", "isDir": True},
    ]
    server = Server(
        ready=[httpx.Response(200, json={"status": "ready", "checks": {"vectordb": "ok"}})],
        ls=[httpx.Response(200, json={"status": "ok", "result": entries, "has_more": False})],
    )
    inventory = provider(server).inventory(scope=SCOPE)
    assert (inventory.available, inventory.corpus_present, inventory.record_count) == (
        True,
        True,
        2,
    )
    assert inventory.index_present is True


def test_inventory_of_a_server_not_ready() -> None:
    server = Server(ready=[httpx.Response(503, json={"status": "not_ready"})])
    inventory = provider(server).inventory(scope=SCOPE)
    assert inventory.available is False
    assert inventory.record_count == 0


# -- faults: every one is ProviderUnavailable with its reason code ------------------------------


def _raise(exc: Exception) -> Handler:
    def handler(request: httpx.Request) -> httpx.Response:
        raise exc

    handler.transport_fault = True  # type: ignore[attr-defined]
    return handler


def p_is_transport(handler: Handler) -> bool:
    return getattr(handler, "transport_fault", False)


@pytest.mark.parametrize(
    ("handler", "reason"),
    [
        (_raise(httpx.ConnectError("refused")), "provider_unavailable"),
        (_raise(httpx.ReadTimeout("slow")), "provider_timeout"),
        (_raise(httpx.RemoteProtocolError("garbled")), "provider_unavailable"),
        (lambda r: httpx.Response(200, content=b"<html>not json"), "provider_bad_response"),
        (lambda r: httpx.Response(200, json=["not", "an", "envelope"]), "provider_bad_response"),
        (lambda r: httpx.Response(200, json={"status": "ok"}), "provider_bad_response"),
        (lambda r: ok(12), "provider_bad_response"),
        (lambda r: error(500, "INTERNAL"), "provider_unavailable"),
        (lambda r: error(503, "UNAVAILABLE"), "provider_unavailable"),
        (lambda r: error(504, "DEADLINE_EXCEEDED"), "provider_timeout"),
        (lambda r: error(400, "INVALID_ARGUMENT"), "provider_request_rejected"),
        (lambda r: error(401, "UNAUTHENTICATED"), "provider_auth_failed"),
        (lambda r: error(403, "PERMISSION_DENIED"), "provider_auth_failed"),
    ],
)
@pytest.mark.parametrize("operation", ["write", "read", "search", "delete", "inventory"])
def test_faults_map_to_provider_unavailable(handler: Handler, reason: str, operation: str) -> None:
    """Transport errors, timeouts and 5xx are ProviderUnavailable; 401/403 a clear auth error."""
    p = provider(handler, retries=1)
    ref = "openviking:" + "a" * 32
    calls: dict[str, Callable[[], object]] = {
        "write": lambda: p.write(scope=SCOPE, key="k1", content="x"),
        "read": lambda: p.read(scope=SCOPE, ref=ref),
        "search": lambda: p.search(scope=SCOPE, query="x", limit=1),
        "delete": lambda: p.delete(scope=SCOPE, ref=ref),
        "inventory": lambda: p.inventory(scope=SCOPE),
    }
    probe = None if p_is_transport(handler) else handler(httpx.Request("GET", "http://h/ready"))
    if operation == "inventory" and probe is not None and probe.status_code == 503:
        # /ready answers 503 "not ready": inventory reports it instead of raising.
        assert p.inventory(scope=SCOPE).available is False
        return
    with pytest.raises(ProviderUnavailable) as caught:
        calls[operation]()
    assert caught.value.reason_code == reason
    assert isinstance(caught.value, OpenVikingAuthError) == (reason == "provider_auth_failed")
    assert "user-key" not in str(caught.value)
    assert "viking://" not in str(caught.value)
    p.close()


class _Drip(httpx.SyncByteStream):
    """A body that arrives one byte every ``pause`` seconds (headers at once)."""

    def __init__(self, body: bytes, pause: float) -> None:
        self.body = body
        self.pause = pause

    def __iter__(self) -> Any:
        for index in range(len(self.body)):
            time.sleep(self.pause)
            yield self.body[index : index + 1]


def test_a_body_that_drips_is_cut_at_the_call_deadline() -> None:
    """httpx bounds each read; the call's timeout bounds the whole body too."""
    body = json.dumps({"status": "ok", "result": "x" * 200}).encode()
    p = provider(lambda r: httpx.Response(200, stream=_Drip(body, 0.05)), retries=0)
    started = time.monotonic()
    with pytest.raises(ProviderUnavailable) as caught:
        p.read(scope=SCOPE, ref="openviking:" + "a" * 32, timeout=0.5)
    assert caught.value.reason_code == "provider_timeout"
    assert time.monotonic() - started < 2.0  # the whole body would take over 10 s
    p.close()


class _Endless(httpx.SyncByteStream):
    def __iter__(self) -> Any:
        chunk = b"x" * (1 << 20)
        while True:
            yield chunk


@pytest.mark.parametrize("announced", [True, False])
def test_a_body_larger_than_any_answer_is_a_bad_response(announced: bool) -> None:
    from reward_memory_openviking._protocol import MAX_BODY_BYTES

    def handler(request: httpx.Request) -> httpx.Response:
        if announced:
            return httpx.Response(
                200, headers={"content-length": str(MAX_BODY_BYTES + 1)}, stream=_Endless()
            )
        return httpx.Response(200, stream=_Endless())

    p = provider(handler, retries=0)
    with pytest.raises(ProviderUnavailable) as caught:
        p.read(scope=SCOPE, ref="openviking:" + "a" * 32, timeout=30.0)
    assert caught.value.reason_code == "provider_bad_response"
    p.close()


def test_the_async_twin_cuts_a_dripping_body_too() -> None:
    class _ADrip(httpx.AsyncByteStream):
        async def __aiter__(self) -> Any:
            for _ in range(200):
                await asyncio.sleep(0.05)
                yield b" "

    async def run() -> str:
        client_transport = httpx.MockTransport(lambda r: httpx.Response(200, stream=_ADrip()))
        p = AsyncOpenVikingProvider(
            base_url="http://ov.test:1933", api_key="user-key", transport=client_transport
        )
        try:
            await p.read(scope=SCOPE, ref="openviking:" + "a" * 32, timeout=0.5)
        except ProviderUnavailable as exc:
            return exc.reason_code
        finally:
            await p.aclose()
        return "no error"

    started = time.monotonic()
    assert asyncio.run(run()) == "provider_timeout"
    assert time.monotonic() - started < 2.0


def test_closed_provider_is_unavailable() -> None:
    p = provider(Server(health=[ok({})]))
    p.close()
    p.close()
    with pytest.raises(ProviderUnavailable):
        p.read(scope=SCOPE, ref="x")


def test_arguments_are_checked_before_any_request() -> None:
    server = Server()
    p = provider(server)
    with pytest.raises(RecordValidationError):
        p.write(scope=SCOPE, key="two words", content="x")
    with pytest.raises(RecordValidationError):
        p.search(scope=SCOPE, query="x", limit=0)
    with pytest.raises(RecordValidationError):
        p.read(scope="main", ref="x")  # type: ignore[arg-type]
    with pytest.raises(RecordValidationError):
        p.read(scope=SCOPE, ref="x", timeout=-1)
    assert server.requests == []


# -- the async twin ----------------------------------------------------------------------


def test_async_twin_speaks_the_same_protocol() -> None:
    """An async twin on httpx.AsyncClient: same plans, same results, same faults."""
    store: dict[str, str] = {}

    async def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/api/v1/content/read":
            uri = request.url.params["uri"]
            return ok(store[uri]) if uri in store else error(404, "NOT_FOUND")
        if request.url.path == "/api/v1/content/write":
            body = json.loads(request.content)
            store[body["uri"]] = body["content"]
            return ok({"uri": body["uri"], "vector_status": "complete"})
        if request.url.path == "/api/v1/fs/mkdir":
            return ok({})
        if request.url.path == "/api/v1/fs":
            removed = store.pop(request.url.params["uri"] + "/r.json", None)
            return ok({"estimated_deleted_count": int(removed is not None)})
        if request.url.path == "/api/v1/search/find":
            return ok(
                {"resources": [{"uri": u, "score": 0.9, "content": c} for u, c in store.items()]}
            )
        raise httpx.ConnectError("down")

    async def run() -> None:
        async with AsyncOpenVikingProvider(
            base_url="http://h:1", api_key="k", transport=httpx.MockTransport(handler)
        ) as p:
            first = await p.write(scope=SCOPE, key="k1", content="async\r\n")
            assert first.status == "created"
            assert (await p.write(scope=SCOPE, key="k1", content="async\r\n")).status == "unchanged"
            assert (await p.write(scope=SCOPE, key="k1", content="other")).status == "conflict"
            assert (await p.read(scope=SCOPE, ref=first.ref)).content == "async\r\n"
            hits = (await p.search(scope=SCOPE, query="async", limit=3)).hits
            assert [hit.ref for hit in hits] == [first.ref]
            assert (await p.delete(scope=SCOPE, ref=first.ref)).deleted is True
            assert (await p.read(scope=SCOPE, ref=first.ref)).found is False
            with pytest.raises(ProviderUnavailable):
                await p.inventory(scope=SCOPE)
        with pytest.raises(ProviderUnavailable):
            await p.read(scope=SCOPE, ref=first.ref)

    asyncio.run(run())
