"""A counting proxy around any SPI provider: the evaluation's provider-side meter.

Every call the evaluated code (or the fixture) makes goes through
:class:`CountingProvider`, which forwards it unchanged and counts it in the
current *phase*: ``fixture`` (seeding the store and cleaning it up: the corpus
owner's writes) or ``case`` (the evaluated recall, application, adapter and
route operations). The release gate counts only the ``case`` writes; the
fixture's are reported apart. Writes are ``write`` and ``delete`` calls (a
delete changes the store too); the optional ``read_key`` is offered exactly when
the provider behind the proxy has it, and counts as a read. ``storage_write_bytes``
is the UTF-8 size of the content passed to ``write``. A call counts when it is
made, whether it succeeds or raises; a call that raises (``ProviderUnavailable``
or anything else) is also counted in ``failures``.

``restart`` swaps the provider behind the proxy for a new object over the same
store (the counts carry on), so the cases after a restart use the new object.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, Final, Literal

import attrs

from reward_memory.providers.spi import SPI_VERSION

if TYPE_CHECKING:
    from collections.abc import Callable

    from reward_memory.providers.spi import (
        DeleteResult,
        Inventory,
        Provider,
        ProviderScope,
        ReadResult,
        SearchResult,
        WriteResult,
    )

__all__ = ["CountingProvider", "Meter", "Phase"]

Phase = Literal["fixture", "case"]
_PHASES: Final = ("fixture", "case")


@attrs.define
class Meter:
    """Counts for one phase (mutable: the proxy adds to it)."""

    calls: int = 0
    writes: int = 0
    write_bytes: int = 0
    failures: int = 0

    def snapshot(self) -> tuple[int, int, int, int]:
        return (self.calls, self.writes, self.write_bytes, self.failures)


class CountingProvider:
    """Forwards every SPI call to ``inner`` and counts it in the current phase."""

    spi_version: int = SPI_VERSION

    def __init__(self, inner: Provider) -> None:
        self._inner = inner
        # A provider object is only duck-typed: a missing id is the runner's to report.
        self.provider_id: str = getattr(inner, "provider_id", None)  # type: ignore[assignment]
        self.meters: dict[str, Meter] = {phase: Meter() for phase in _PHASES}
        self._meter = self.meters["fixture"]
        self.phase: Phase = "fixture"
        # Refs written in the fixture phase: what cleanup deletes again.
        self.seeded: list[tuple[ProviderScope, str]] = []

    @property
    def inner(self) -> Provider:
        """The provider object calls go to now."""
        return self._inner

    def enter(self, phase: Phase) -> None:
        """Count the following calls in ``phase``."""
        self.phase = phase
        self._meter = self.meters[phase]

    def replace(self, successor: Provider) -> None:
        """Send later calls to ``successor`` (a new object over the same store)."""
        self._inner = successor

    def _count(self, *, write: bool = False, size: int = 0) -> Meter:
        meter = self._meter
        meter.calls += 1
        if write:
            meter.writes += 1
            meter.write_bytes += size
        return meter

    def write(
        self, *, scope: ProviderScope, key: str, content: str, timeout: float | None = None
    ) -> WriteResult:
        size = len(content.encode("utf-8", "surrogatepass")) if isinstance(content, str) else 0
        meter = self._count(write=True, size=size)
        try:
            result = self._inner.write(scope=scope, key=key, content=content, timeout=timeout)
        except Exception:
            meter.failures += 1
            raise
        if self.phase == "fixture" and result.status == "created":
            self.seeded.append((scope, result.ref))
        return result

    def read(self, *, scope: ProviderScope, ref: str, timeout: float | None = None) -> ReadResult:
        meter = self._count()
        try:
            return self._inner.read(scope=scope, ref=ref, timeout=timeout)
        except Exception:
            meter.failures += 1
            raise

    def __getattr__(self, name: str) -> Any:
        # The SPI's optional capability (``read_key``) exactly when the provider
        # calls go to has it, counted as the read it is: hiding it would bill the
        # cases for the SPI-only way round (a search) that no real caller of this
        # provider takes. Any other missing attribute stays missing.
        if name != "read_key":
            raise AttributeError(name)
        inner = getattr(self._inner, "read_key", None)
        if inner is None:
            raise AttributeError(name)
        return functools.partial(self._read_key, inner)

    def _read_key(
        self,
        inner: Callable[..., ReadResult],
        *,
        scope: ProviderScope,
        key: str,
        timeout: float | None = None,
    ) -> ReadResult:
        meter = self._count()
        try:
            return inner(scope=scope, key=key, timeout=timeout)
        except Exception:
            meter.failures += 1
            raise

    def search(
        self, *, scope: ProviderScope, query: str, limit: int, timeout: float | None = None
    ) -> SearchResult:
        meter = self._count()
        try:
            return self._inner.search(scope=scope, query=query, limit=limit, timeout=timeout)
        except Exception:
            meter.failures += 1
            raise

    def delete(
        self, *, scope: ProviderScope, ref: str, timeout: float | None = None
    ) -> DeleteResult:
        meter = self._count(write=True)
        try:
            return self._inner.delete(scope=scope, ref=ref, timeout=timeout)
        except Exception:
            meter.failures += 1
            raise

    def inventory(self, *, scope: ProviderScope, timeout: float | None = None) -> Inventory:
        meter = self._count()
        try:
            return self._inner.inventory(scope=scope, timeout=timeout)
        except Exception:
            meter.failures += 1
            raise

    def close(self) -> None:
        self._inner.close()
