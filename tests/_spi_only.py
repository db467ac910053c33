"""A provider with the SPI operations only: forwards them, and offers nothing else.

No optional capability (``read_key``), no ``handover``, no URL: what a minimal
third-party provider looks like to the core. Subclasses change one behaviour.
"""

from __future__ import annotations

from typing import Any


class SpiOnly:
    """Forwards ``write``, ``read``, ``search``, ``delete``, ``inventory`` and ``close``."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    @property
    def provider_id(self) -> Any:
        return self._inner.provider_id

    @property
    def spi_version(self) -> Any:
        return self._inner.spi_version

    def write(self, **kwargs: Any) -> Any:
        return self._inner.write(**kwargs)

    def read(self, **kwargs: Any) -> Any:
        return self._inner.read(**kwargs)

    def search(self, **kwargs: Any) -> Any:
        return self._inner.search(**kwargs)

    def delete(self, **kwargs: Any) -> Any:
        return self._inner.delete(**kwargs)

    def inventory(self, **kwargs: Any) -> Any:
        return self._inner.inventory(**kwargs)

    def close(self) -> None:
        self._inner.close()
