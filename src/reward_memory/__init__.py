"""reward-memory: govern what an AI agent may remember from human feedback.

The public surface is loaded lazily: ``import reward_memory`` costs almost
nothing, and a name is imported the first time it is used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from reward_memory.errors import (
        ProviderConfigError,
        ProviderError,
        ProviderLoadError,
        ProviderNotFoundError,
        ProviderUnavailable,
        RecordValidationError,
        RewardMemoryError,
        SchemaError,
        UnsafeTextError,
    )
    from reward_memory.providers.discovery import available_providers, get_provider

__all__ = [
    "ProviderConfigError",
    "ProviderError",
    "ProviderLoadError",
    "ProviderNotFoundError",
    "ProviderUnavailable",
    "RecordValidationError",
    "RewardMemoryError",
    "SchemaError",
    "UnsafeTextError",
    "__version__",
    "available_providers",
    "get_provider",
]

# public name -> module that defines it
_LAZY: dict[str, str] = {
    "ProviderConfigError": "reward_memory.errors",
    "ProviderError": "reward_memory.errors",
    "ProviderLoadError": "reward_memory.errors",
    "ProviderNotFoundError": "reward_memory.errors",
    "ProviderUnavailable": "reward_memory.errors",
    "RecordValidationError": "reward_memory.errors",
    "RewardMemoryError": "reward_memory.errors",
    "SchemaError": "reward_memory.errors",
    "UnsafeTextError": "reward_memory.errors",
    "available_providers": "reward_memory.providers.discovery",
    "get_provider": "reward_memory.providers.discovery",
}


def __getattr__(name: str) -> Any:
    if name == "__version__":
        from reward_memory._version import __version__  # noqa: PLC0415

        return __version__
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'reward_memory' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
