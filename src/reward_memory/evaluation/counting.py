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

Writes the provider makes on its own (an audit document per search, say) pass no
proxy: :meth:`CountingProvider.drift` compares the provider's own record counts
(``inventory``) with the ledger of what the run created and deleted, and the runner
bills a case for the drift it added.
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
        # Fixture writes that raised: (scope, key), looked up again at cleanup.
        self.unsettled: list[tuple[ProviderScope, str]] = []
        # The ledger: per scope written to, the record count the provider should show
        # (its count before the first write, plus what was created, less what was
        # deleted). A store that changes otherwise wrote on its own (see drift()).
        self._expected: dict[ProviderScope, int] = {}
        # Writes and deletes forwarded to each provider object (its own log's baseline).
        self._forwarded: dict[int, int] = {}

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
            key = id(self._inner)
            self._forwarded[key] = self._forwarded.get(key, 0) + 1
        return meter

    def write(
        self, *, scope: ProviderScope, key: str, content: str, timeout: float | None = None
    ) -> WriteResult:
        size = len(content.encode("utf-8", "surrogatepass")) if isinstance(content, str) else 0
        self._open_ledger(scope)
        meter = self._count(write=True, size=size)
        try:
            result = self._inner.write(scope=scope, key=key, content=content, timeout=timeout)
        except Exception:
            meter.failures += 1
            if self.phase == "fixture":  # it may be stored all the same (an index pending)
                self.unsettled.append((scope, key))
            raise
        status = getattr(result, "status", None)
        if status == "created":
            self._expected[scope] = self._expected.get(scope, 0) + 1
        if self.phase == "fixture" and status in ("created", "unchanged"):
            # This run's own namespace: a document there is the fixture's, whatever the
            # status said (a provider answering unchanged for a first write left one too).
            self.seeded.append((scope, result.ref))
        return result

    def _open_ledger(self, scope: ProviderScope) -> None:
        """Note a scope's record count before this run first writes to it (uncounted:
        the ledger is the evaluation's own bookkeeping, not a call of the core)."""
        if scope not in self._expected:
            self._expected[scope] = self._record_count(scope) or 0

    def _record_count(self, scope: ProviderScope) -> int | None:
        try:
            answer = self._inner.inventory(scope=scope, timeout=5)
        except Exception:  # noqa: BLE001 - no count, no claim
            return None
        count = getattr(answer, "record_count", None)
        return count if type(count) is int else None

    def drift(self) -> int:
        """Writes the provider made that this run did not ask for.

        Two measures, the larger counts: how far its record counts (``inventory`` of
        each scope the run wrote to) are from the ledger of what the run created and
        deleted; and, for a provider that keeps its own call log (the memory double's
        ``call_counts``), its own count of writes and deletes less the ones this proxy
        forwarded to it -- which sees a write into any scope. A provider with neither
        shows no drift: nothing measured, nothing claimed.
        """
        ledger = 0
        for scope, expected in self._expected.items():
            count = self._record_count(scope)
            if count is not None:
                ledger += abs(count - expected)
        return max(ledger, self._own_log_drift())

    def _own_log_drift(self) -> int:
        counts = getattr(self._inner, "call_counts", None)
        if not callable(counts):
            return 0
        try:
            own = counts()
            done = int(own.get("write", 0)) + int(own.get("delete", 0))
        except Exception:  # noqa: BLE001 - no log, no claim
            return 0
        return max(0, done - self._forwarded.get(id(self._inner), 0))

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
        self._open_ledger(scope)
        meter = self._count(write=True)
        try:
            result = self._inner.delete(scope=scope, ref=ref, timeout=timeout)
        except Exception:
            meter.failures += 1
            raise
        if getattr(result, "deleted", False) is True:
            self._expected[scope] = self._expected.get(scope, 0) - 1
        return result

    def inventory(self, *, scope: ProviderScope, timeout: float | None = None) -> Inventory:
        meter = self._count()
        try:
            return self._inner.inventory(scope=scope, timeout=timeout)
        except Exception:
            meter.failures += 1
            raise

    def close(self) -> None:
        self._inner.close()
