"""reward-memory-openviking: the OpenViking provider for reward-memory.

``get_provider("openviking://127.0.0.1:1933?api_key_env=OV_KEY")`` (entry point
``openviking`` in ``reward_memory.providers``) or :class:`OpenVikingProvider`
directly; :class:`AsyncOpenVikingProvider` is its async twin. Names load on first
use, so discovery (which imports the provider module) does not import httpx.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from reward_memory_openviking._version import __version__

if TYPE_CHECKING:
    from reward_memory_openviking._replies import OpenVikingAuthError
    from reward_memory_openviking.aio import AsyncOpenVikingProvider
    from reward_memory_openviking.provider import OpenVikingProvider

__all__ = ["AsyncOpenVikingProvider", "OpenVikingAuthError", "OpenVikingProvider", "__version__"]

_HOMES = {
    "AsyncOpenVikingProvider": "reward_memory_openviking.aio",
    "OpenVikingAuthError": "reward_memory_openviking._replies",
    "OpenVikingProvider": "reward_memory_openviking.provider",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib  # noqa: PLC0415

    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value
