"""Governance and isolation against the real server.

SPI: "Two scopes that differ in any of the three parts share nothing" and a
provider "must never return anything outside the scope it was asked about";
issue 10: "another account, another user and another peer can neither read nor
find a record (verify 404/403 and empty searches)"; the governance part of the
conformance kit: sibling scopes (``.../a`` vs ``.../ab``), wildcard characters
(``% _ * ?``) in scope refs and queries, nothing readable or findable after delete.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable

import httpx
import pytest
from _server import LocalOpenViking, Tenant

from reward_memory.errors import RecordValidationError
from reward_memory.providers.spi import ProviderScope
from reward_memory_openviking import OpenVikingAuthError, OpenVikingProvider
from reward_memory_openviking._layout import Layout, parse_ref

Make = Callable[..., OpenVikingProvider]


def term() -> str:
    letters = "".join(chr(ord("a") + int(c, 16) % 26) for c in uuid.uuid4().hex[:10])
    return f"zq{letters}"


def unique() -> str:
    return uuid.uuid4().hex[:10]


def raw_client(openviking: LocalOpenViking, tenant: Tenant, **headers: str) -> httpx.Client:
    return httpx.Client(
        base_url=openviking.base_url,
        headers={"X-API-Key": tenant.key, **headers},
        timeout=30.0,
        trust_env=False,
    )


def record_uri(scope: ProviderScope, ref: str) -> str:
    layout = Layout(scope, "viking://resources/reward-memory")
    ref_hex = parse_ref(ref)
    assert ref_hex is not None
    return layout.uri(ref_hex)


def assert_invisible(
    provider: OpenVikingProvider, scope: ProviderScope, ref: str, word: str
) -> None:
    assert provider.read(scope=scope, ref=ref).found is False
    assert provider.search(scope=scope, query=word, limit=10).hits == ()
    assert provider.inventory(scope=scope).record_count == 0


# -- governance: sibling scopes, wildcard characters, delete ---------------------------------


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("viking://resources/{u}/a", "viking://resources/{u}/ab"),
        ("viking://resources/{u}/ab", "viking://resources/{u}/a"),
        ("{u}/a", "{u}/ab"),
        ("{u}/a_b", "{u}/axb"),
        ("{u}/a_b", "{u}/a-b"),
        ("viking://resources/{u}/a_b", "viking://resources/{u}/aXb"),
    ],
)
def test_sibling_and_wildcard_scope_refs_share_nothing(
    make_provider: Make, shared_tenant: Tenant, first: str, second: str
) -> None:
    base = unique()
    home = ProviderScope(namespace="rm-test", scope_ref=first.format(u=base))
    away = ProviderScope(namespace="rm-test", scope_ref=second.format(u=base))
    provider = make_provider(shared_tenant)
    word = term()
    written = provider.write(scope=home, key="doc-1", content=f"governed record {word}")
    assert_invisible(provider, away, written.ref, word)
    there = provider.write(scope=away, key="doc-1", content=f"neighbour record {word}")
    assert there.status == "created"
    assert [h.ref for h in provider.search(scope=home, query=word, limit=10).hits] == [written.ref]
    assert [h.ref for h in provider.search(scope=away, query=word, limit=10).hits] == [there.ref]
    assert provider.inventory(scope=home).record_count == 1
    assert provider.inventory(scope=away).record_count == 1
    assert provider.read(scope=home, ref=written.ref).content == f"governed record {word}"


@pytest.mark.parametrize(
    "inside",
    [
        "viking://resources/{u}/a/rm-rm_2dtest",  # the first scope's records directory
        "viking://resources/{u}/a/rm-rm_2dtest/sub",
        "viking://resources/{u}/a/",  # the first scope's own directory, spelt again
    ],
)
def test_a_scope_inside_or_on_another_is_refused_before_any_request(
    make_provider: Make, shared_tenant: Tenant, inside: str
) -> None:
    """A scope inside another's records directory would lose its records to the other's
    deletes and crowd its searches; it is refused, not isolated after the fact."""
    base = unique()
    provider = make_provider(shared_tenant)
    home = ProviderScope(namespace="rm-test", scope_ref=f"viking://resources/{base}/a")
    written = provider.write(scope=home, key="doc-1", content="governed record")
    with pytest.raises(RecordValidationError):
        provider.write(
            scope=ProviderScope(namespace="rm-test", scope_ref=inside.format(u=base)),
            key="doc-1",
            content="neighbour record",
        )
    assert provider.read(scope=home, ref=written.ref).content == "governed record"


@pytest.mark.parametrize("query", ["%", "_", "*", "?", "%%", "*?", "% _ * ?"])
def test_wildcard_queries_match_nothing(
    make_provider: Make, shared_tenant: Tenant, fresh_scope: ProviderScope, query: str
) -> None:
    provider = make_provider(shared_tenant)
    provider.write(scope=fresh_scope, key="doc-1", content="an ordinary record about tabs")
    provider.write(scope=fresh_scope, key="doc-2", content="100% * literal ? characters _")
    assert provider.search(scope=fresh_scope, query=query, limit=10).hits == ()


def test_wildcards_inside_a_query_stay_in_the_scope(
    make_provider: Make, shared_tenant: Tenant
) -> None:
    base = unique()
    home = ProviderScope(namespace="rm-test", scope_ref=f"{base}/a_b")
    away = ProviderScope(namespace="rm-test", scope_ref=f"{base}/axb")
    provider = make_provider(shared_tenant)
    word = term()
    provider.write(scope=home, key="doc-1", content=f"{word} lives here")
    for query in (f"{word}%", f"%{word}", f"{word}*", f"{word}?", f"{word[:4]}_"):
        assert provider.search(scope=away, query=query, limit=10).hits == ()


def test_nothing_readable_or_findable_after_delete(
    make_provider: Make, shared_tenant: Tenant, fresh_scope: ProviderScope
) -> None:
    provider = make_provider(shared_tenant)
    word = term()
    written = provider.write(scope=fresh_scope, key="doc-1", content=f"forget me {word}")
    kept = provider.write(scope=fresh_scope, key="doc-2", content=f"keep me {word}")
    assert written.ref in {
        h.ref for h in provider.search(scope=fresh_scope, query=word, limit=5).hits
    }
    assert provider.delete(scope=fresh_scope, ref=written.ref).deleted is True
    # Immediately: the delete waited for the index, so no stale hit survives it.
    assert provider.read(scope=fresh_scope, ref=written.ref).found is False
    hits = provider.search(scope=fresh_scope, query=word, limit=5).hits
    assert [h.ref for h in hits] == [kept.ref]
    assert provider.inventory(scope=fresh_scope).record_count == 1
    raw = provider.search(scope=fresh_scope, query=f"forget me {word}", limit=5).hits
    assert written.ref not in {h.ref for h in raw}


# -- isolation: accounts, users, peers ------------------------------------------------------


def test_another_account_can_neither_read_nor_find(
    openviking: LocalOpenViking, make_provider: Make, fresh_tenant: Tenant
) -> None:
    """viking://resources is shared within an account only; another account gets 404."""
    other = openviking.new_account()
    scopes = [
        ProviderScope(namespace="rm-test", scope_ref=f"viking://resources/iso-{unique()}"),
        ProviderScope(namespace="rm-test", scope_ref=f"iso-{unique()}"),
    ]
    mine, theirs = make_provider(fresh_tenant), make_provider(other)
    for scope in scopes:
        word = term()
        written = mine.write(scope=scope, key="doc-1", content=f"account secret {word}")
        assert_invisible(theirs, scope, written.ref, word)
        assert theirs.delete(scope=scope, ref=written.ref).deleted is False
        assert mine.read(scope=scope, ref=written.ref).content == f"account secret {word}"
        with raw_client(openviking, other) as client:
            uri = record_uri(scope, written.ref)
            assert client.get("/api/v1/content/read", params={"uri": uri}).status_code == 404
            found = client.post(
                "/api/v1/search/find", json={"query": word, "target_uri": "", "level": 2}
            ).json()["result"]
            assert not any(
                word in str(hit)
                for group in found.values()
                if isinstance(group, list)
                for hit in group
            )


@pytest.mark.parametrize("role", ["user", "admin"])
def test_another_user_can_neither_read_nor_find(
    openviking: LocalOpenViking, make_provider: Make, fresh_tenant: Tenant, role: str
) -> None:
    """viking://user/<u>/... is private: another user, even an admin, gets 403."""
    other = openviking.new_user(fresh_tenant.account, f"other-{role}", role=role)
    scope = ProviderScope(
        namespace="rm-test", scope_ref=f"viking://user/{fresh_tenant.user}/resources/iso-{unique()}"
    )
    mine, theirs = make_provider(fresh_tenant), make_provider(other)
    word = term()
    written = mine.write(scope=scope, key="doc-1", content=f"user secret {word}")
    with pytest.raises(OpenVikingAuthError):
        theirs.read(scope=scope, ref=written.ref)
    with pytest.raises(OpenVikingAuthError):
        theirs.write(scope=scope, key="doc-2", content="intrusion")
    try:
        hits = theirs.search(scope=scope, query=word, limit=10).hits
    except OpenVikingAuthError:
        hits = ()
    assert hits == ()
    with raw_client(openviking, other) as client:
        uri = record_uri(scope, written.ref)
        assert client.get("/api/v1/content/read", params={"uri": uri}).status_code == 403
        found = client.post(
            "/api/v1/search/find", json={"query": word, "target_uri": "", "level": 2}
        ).json()["result"]
        assert word not in str(found)
    assert mine.read(scope=scope, ref=written.ref).content == f"user secret {word}"


def test_another_peer_can_neither_read_nor_find(
    openviking: LocalOpenViking, make_provider: Make, fresh_tenant: Tenant
) -> None:
    """Under /peers/<p>/ the provider sends X-OpenViking-Actor-Peer; other peers get 403."""
    user = fresh_tenant.user
    base = f"viking://user/{user}/peers/{{peer}}/resources/iso-{unique()}"
    home = ProviderScope(namespace="rm-test", scope_ref=base.format(peer="p1"), actor_peer_id="p1")
    away = ProviderScope(namespace="rm-test", scope_ref=base.format(peer="p2"), actor_peer_id="p2")
    provider = make_provider(fresh_tenant)
    word = term()
    written = provider.write(scope=home, key="doc-1", content=f"peer secret {word}")
    assert provider.read(scope=home, ref=written.ref).content == f"peer secret {word}"
    assert_invisible(provider, away, written.ref, word)
    # The same records directory named by another peer is refused before any request.
    with pytest.raises(RecordValidationError):
        provider.read(
            scope=ProviderScope(namespace="rm-test", scope_ref=home.scope_ref, actor_peer_id="p2"),
            ref=written.ref,
        )
    # A provider pinned to p1 (option actor_peer) refuses p2's scope outright.
    pinned = make_provider(fresh_tenant, actor_peer="p1")
    assert pinned.read(scope=home, ref=written.ref).content == f"peer secret {word}"
    with pytest.raises(RecordValidationError):
        pinned.search(scope=away, query=word, limit=10)
    uri = Layout(home, "").uri(parse_ref(written.ref) or "")
    with raw_client(openviking, fresh_tenant, **{"X-OpenViking-Actor-Peer": "p2"}) as client:
        assert client.get("/api/v1/content/read", params={"uri": uri}).status_code == 403
        denied = client.post(
            "/api/v1/search/find",
            json={"query": word, "target_uri": Layout(home, "").directory, "level": 2},
        )
        assert denied.status_code == 403
        found = client.post(
            "/api/v1/search/find",
            json={"query": word, "target_uri": f"viking://user/{user}/peers", "level": 2},
        ).json()["result"]
        assert word not in str(found)
