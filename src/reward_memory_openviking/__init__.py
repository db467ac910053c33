"""reward-memory-openviking: the OpenViking provider for reward-memory.

``get_provider("openviking://127.0.0.1:1933?api_key_env=OV_KEY")`` (entry point
``openviking`` in ``reward_memory.providers``) or :class:`OpenVikingProvider`
directly; :class:`AsyncOpenVikingProvider` is its async twin.
"""

from __future__ import annotations

from reward_memory_openviking._protocol import OpenVikingAuthError
from reward_memory_openviking._version import __version__
from reward_memory_openviking.aio import AsyncOpenVikingProvider
from reward_memory_openviking.provider import OpenVikingProvider

__all__ = ["AsyncOpenVikingProvider", "OpenVikingAuthError", "OpenVikingProvider", "__version__"]
