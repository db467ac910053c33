"""Provider SPI, discovery, and the built-in embedded SQLite provider.

``get_provider``, ``available_providers`` and ``load_provider_class`` are loaded
lazily from :mod:`reward_memory.providers.discovery`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from reward_memory.providers.discovery import (
        available_providers,
        get_provider,
        load_provider_class,
    )

__all__ = ["available_providers", "get_provider", "load_provider_class"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from reward_memory.providers import discovery  # noqa: PLC0415

        return getattr(discovery, name)
    raise AttributeError(f"module 'reward_memory.providers' has no attribute {name!r}")
