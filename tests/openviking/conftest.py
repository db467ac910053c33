"""Fixtures for the OpenViking provider against a real, local OpenViking 0.5.2 server.

The server is started once per session, only when a test asks for it (the unit
tests in ``test_unit_*.py`` never do, and run without OpenViking installed). A
missing server is a failure, never a skip: ``python3 dev.py test`` installs it.

For new end-to-end tests (revoke, purge, explain, evaluate): take ``fresh_tenant``
(a new account and its user key, so nothing is shared with another test),
``fresh_scope`` (a unique scope) and ``make_provider`` (built against the server,
closed afterwards); ``openviking`` is the :class:`~_server.LocalOpenViking`
itself (``base_url``, ``new_account``, ``new_user``).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from _server import BlackHole, LocalOpenViking, Tenant, free_port, server_binary

from reward_memory.providers.spi import ProviderScope
from reward_memory_openviking import OpenVikingProvider


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # Deselect the real-server tests with -m "not openviking" (never skipped).
    for item in items:
        names = getattr(item, "fixturenames", ())
        if "openviking" in names or "openviking_trusted" in names:
            item.add_marker(pytest.mark.openviking)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "openviking: needs the real local OpenViking server")


@pytest.fixture(scope="session")
def openviking(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalOpenViking]:
    """The session's running server (api_key mode; root key in ``root_key``)."""
    server = _started(tmp_path_factory, "api_key")
    try:
        yield server
    finally:
        server.stop()


def _started(tmp_path_factory: pytest.TempPathFactory, auth_mode: str) -> LocalOpenViking:
    binary = server_binary()
    if binary is None:
        pytest.fail(
            "openviking==0.5.2 is not installed: run `python3 dev.py test` (it installs the "
            "server into its own venv once) or set REWARD_MEMORY_OPENVIKING_SERVER",
            pytrace=False,
        )
    server = LocalOpenViking(
        tmp_path_factory.mktemp(f"openviking-{auth_mode}"), auth_mode=auth_mode
    )
    try:
        server.start(binary)
    except RuntimeError as exc:
        pytest.fail(str(exc), pytrace=False)
    return server


@pytest.fixture(scope="session")
def openviking_trusted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalOpenViking]:
    """A second server in trusted mode (root key + account/user headers), started on demand."""
    server = _started(tmp_path_factory, "trusted")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def shared_tenant(openviking: LocalOpenViking) -> Tenant:
    """One account for tests that isolate by scope (the conformance kit)."""
    return openviking.new_account()


@pytest.fixture
def fresh_tenant(openviking: LocalOpenViking) -> Tenant:
    """A new account (and its admin user's key) for this test alone."""
    return openviking.new_account()


@pytest.fixture
def fresh_scope() -> ProviderScope:
    """A scope no other test uses (under the provider's default root)."""
    return ProviderScope(namespace="rm-test", scope_ref=f"case-{uuid.uuid4().hex[:12]}")


@pytest.fixture
def make_provider(
    openviking: LocalOpenViking,
) -> Iterator[Callable[..., OpenVikingProvider]]:
    """``make_provider(tenant, **options)``: a provider for that tenant, closed afterwards."""
    built: list[OpenVikingProvider] = []

    def make(tenant: Tenant, **options: Any) -> OpenVikingProvider:
        provider = OpenVikingProvider(base_url=openviking.base_url, api_key=tenant.key, **options)
        built.append(provider)
        return provider

    yield make
    for provider in built:
        provider.close()


@pytest.fixture(scope="session")
def black_hole() -> Iterator[BlackHole]:
    hole = BlackHole()
    yield hole
    hole.close()


@pytest.fixture(scope="session")
def closed_port() -> int:
    """A 127.0.0.1 port nothing listens on."""
    return free_port()
