"""Trusted mode against a real server: the root key plus account/user headers.

Issue 10 item 2: "auth (``api_key`` mode with a user key; ``trusted`` mode with the
root key plus account/user headers)". What isolation it relies on: the account
header decides the tenant (``viking://resources`` is shared inside an account,
invisible outside it) and ``viking://user/<u>`` stays private to that user.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from _server import LocalOpenViking

from reward_memory.errors import ProviderUnavailable
from reward_memory.providers.spi import ProviderScope
from reward_memory_openviking import OpenVikingAuthError, OpenVikingProvider


@pytest.fixture
def trusted(openviking_trusted: LocalOpenViking) -> Iterator[dict[str, OpenVikingProvider]]:
    account, other_account = f"acme-{uuid.uuid4().hex[:8]}", f"rival-{uuid.uuid4().hex[:8]}"
    built = {
        name: OpenVikingProvider(
            base_url=openviking_trusted.base_url,
            api_key=openviking_trusted.root_key,
            auth="trusted",
            account=acct,
            user=user,
        )
        for name, acct, user in (
            ("alice", account, "alice"),
            ("bob", account, "bob"),
            ("rival", other_account, "alice"),
        )
    }
    yield built
    for provider in built.values():
        provider.close()


def test_trusted_mode_round_trip_and_isolation(trusted: dict[str, OpenVikingProvider]) -> None:
    alice, bob, rival = trusted["alice"], trusted["bob"], trusted["rival"]
    shared = ProviderScope(namespace="rm-test", scope_ref=f"trusted-{uuid.uuid4().hex[:8]}")
    private = ProviderScope(
        namespace="rm-test", scope_ref=f"viking://user/alice/resources/t-{uuid.uuid4().hex[:8]}"
    )
    word = "zqtrusted" + uuid.uuid4().hex[:6].translate(str.maketrans("0123456789", "ghijklmnop"))
    in_shared = alice.write(scope=shared, key="doc-1", content=f"account-wide {word}\n")
    in_private = alice.write(scope=private, key="doc-1", content=f"alice only {word}\n")
    assert alice.read(scope=shared, ref=in_shared.ref).content == f"account-wide {word}\n"
    assert [h.ref for h in alice.search(scope=private, query=word, limit=5).hits] == [
        in_private.ref
    ]
    # Same account: resources are shared, the user space is not.
    assert bob.read(scope=shared, ref=in_shared.ref).content == f"account-wide {word}\n"
    with pytest.raises(OpenVikingAuthError):
        bob.read(scope=private, ref=in_private.ref)
    # Another account (same user name): nothing at all.
    assert rival.read(scope=shared, ref=in_shared.ref).found is False
    assert rival.search(scope=shared, query=word, limit=5).hits == ()
    assert rival.inventory(scope=shared).record_count == 0


def test_trusted_mode_with_a_wrong_root_key(openviking_trusted: LocalOpenViking) -> None:
    with OpenVikingProvider(
        base_url=openviking_trusted.base_url,
        api_key="not-the-root-key",
        auth="trusted",
        account="acme",
        user="alice",
    ) as provider:
        with pytest.raises(ProviderUnavailable) as caught:
            provider.read(scope=ProviderScope(namespace="n", scope_ref="x"), ref="x")
        assert caught.value.reason_code == "provider_auth_failed"
