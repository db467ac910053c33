"""Opt-in pytest fixtures for reward-memory users, all prefixed ``rm_``.

Enable them in your top-level ``conftest.py``::

    pytest_plugins = ["reward_memory.testing.pytest_plugin"]

- ``rm_provider_scope``: a :class:`~reward_memory.providers.spi.ProviderScope`
  unique to the test (derived from its node id, so it is stable across runs).
- ``rm_memory_provider``: a fresh :class:`~reward_memory.testing.InMemoryProvider`.
- ``rm_sqlite_provider``: the embedded SQLite provider on a file in the test's
  ``tmp_path``, built through discovery (``get_provider("sqlite", path=...)``).

There is no ``pytest11`` entry point: nothing is registered unless a suite asks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from reward_memory.digests import short_digest
from reward_memory.providers.spi import ProviderScope
from reward_memory.testing.memory import InMemoryProvider

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from reward_memory.providers.spi import Provider

__all__ = ["rm_memory_provider", "rm_provider_scope", "rm_sqlite_provider"]


@pytest.fixture
def rm_provider_scope(request: pytest.FixtureRequest) -> ProviderScope:
    """A provider scope that belongs to this test alone."""
    return ProviderScope(namespace="rm-test", scope_ref=f"test:{short_digest(request.node.nodeid)}")


@pytest.fixture
def rm_memory_provider() -> Iterator[InMemoryProvider]:
    """A fresh in-memory provider, closed after the test."""
    provider = InMemoryProvider()
    try:
        yield provider
    finally:
        provider.close()


@pytest.fixture
def rm_sqlite_provider(tmp_path: Path) -> Iterator[Provider]:
    """The SQLite provider on ``tmp_path / "memory.db"``, closed after the test."""
    from reward_memory.providers.discovery import get_provider  # noqa: PLC0415

    # The bare id with a path option: a URL would read `#`, `?` or `%` in the temporary
    # directory's name as URL syntax (a fragment, options, an escape).
    provider = get_provider("sqlite", path=str(tmp_path / "memory.db"))
    try:
        yield provider
    finally:
        provider.close()
