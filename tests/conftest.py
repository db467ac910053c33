"""Shared test configuration."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

# A noisy 2-core machine: no deadlines, and a profile CI can select.
settings.register_profile("default", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile(
    "ci", deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


@pytest.fixture(autouse=True, scope="session")
def _isolated_default_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """No test may touch the real default SQLite store (~/.local/share/reward-memory).

    Set in os.environ (not monkeypatch) so subprocesses started by tests inherit it.
    """
    previous = os.environ.get("REWARD_MEMORY_SQLITE_PATH")
    os.environ["REWARD_MEMORY_SQLITE_PATH"] = str(
        tmp_path_factory.mktemp("default-store") / "memory.db"
    )
    yield
    if previous is None:
        del os.environ["REWARD_MEMORY_SQLITE_PATH"]
    else:
        os.environ["REWARD_MEMORY_SQLITE_PATH"] = previous
