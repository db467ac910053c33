"""Test support for reward-memory users and provider authors.

- :class:`InMemoryProvider`: the ``memory`` fixture provider (call log, fault switches).
- :mod:`reward_memory.testing.conformance`: ``ProviderConformance``, the test class a
  provider author subclasses (imports pytest; import it from your test suite).
- :mod:`reward_memory.testing.pytest_plugin`: opt-in ``rm_``-prefixed fixtures
  (``pytest_plugins = ["reward_memory.testing.pytest_plugin"]``).

Importing this package never imports pytest.
"""

from __future__ import annotations

from reward_memory.testing.memory import Faults, InMemoryProvider, ProviderCall

__all__ = ["Faults", "InMemoryProvider", "ProviderCall"]
