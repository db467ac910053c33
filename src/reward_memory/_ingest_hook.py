"""The ingest hook (reference §10.6): one event through its surface's ingest corpus.

Routes the event to the configured surface's ingest corpus, with its standing
policy and binding, into :func:`reward_memory.ingestion.ingest` (the same core,
so replays stay idempotent), and wraps the receipt in a
``reward_memory_automatic_ingest_hook_v0`` packet. The public names live in
:mod:`reward_memory.hooks`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from reward_memory.errors import ProviderUnavailable, RecordValidationError
from reward_memory.experiment import ExperimentRuntime
from reward_memory.grammars import resolve_now
from reward_memory.records.hooks import (
    IngestHookPacket,
    IngestHookStatus,
    IngestHookTelemetry,
    Trigger,
)

if TYPE_CHECKING:
    from datetime import datetime

    from reward_memory.authority import AuthoritySource
    from reward_memory.providers.spi import Provider

__all__ = [
    "ABSENT_PROVIDER",
    "INGEST_ADAPTERS",
    "automatic_ingest",
    "event_surface",
    "run_ingest",
]

# config surface adapter -> the ingest core's adapter
INGEST_ADAPTERS: Final = {
    "issue_fix_maintainer_feedback": "issue_fix",
    "scoped_feedback": "scoped_feedback",
}
EVENT_UNROUTABLE: Final = "compact_actor_scoped_event_required"
INGEST_REJECTED: Final = "compact_event_or_standing_policy_rejected"
INGEST_OFF: Final = "automatic_ingest_disabled"


class _Absent:
    """Stands in for a provider that is not there: every call is unavailable (fail open)."""

    provider_id = "unavailable"

    def _fail(self, *_: Any, **__: Any) -> Any:
        raise ProviderUnavailable("no provider is available for this corpus")

    search = read = write = inventory = _fail

    def close(self) -> None:
        return None


# Shared with the recall hook: a corpus without a provider fails open, never crashes.
ABSENT_PROVIDER: Final[Any] = _Absent()


def event_surface(event: Any) -> str | None:
    """The surface an event names (record or mapping), or ``None``."""
    try:
        value = event.get("surface_id") if isinstance(event, Mapping) else event.surface_id
    except Exception:  # noqa: BLE001 - an event without one is unroutable
        return None
    return value if isinstance(value, str) else None


def _ingest_early(
    surface_id: str | None,
    trigger: Trigger,
    runtime: ExperimentRuntime,
    status: IngestHookStatus,
    reason: str | None,
) -> IngestHookPacket:
    return IngestHookPacket(
        surface_id=surface_id,
        trigger=trigger,
        status=status,
        reason_code=reason,
        automatic_ingest=runtime.automatic_ingest,
    )


# Arguments of the module author's own call: an invalid one raises (DESIGN §4), where
# anything the event, the store or the authority source does fails open.
_CALLER_ARGUMENTS: Final = frozenset({"observed_at", "execute", "authority", "provider", "now"})


def run_ingest(
    runtime: ExperimentRuntime,
    surface_id: str | None,
    event: Any,
    *,
    trigger: Trigger,
    authority: AuthoritySource | None,
    observed_at: str | datetime | None,
    execute: bool = False,
    provider: Provider | None = None,
    now: datetime | None = None,
) -> IngestHookPacket:
    """The routing behind :func:`automatic_ingest` and the explicit ``Experiment.ingest``."""
    if not isinstance(runtime, ExperimentRuntime):
        raise TypeError("runtime must be an ExperimentRuntime")
    moment = resolve_now(now)
    if trigger == "automatic" and not runtime.automatic_ingest:
        return _ingest_early(
            surface_id, trigger, runtime, "disabled", runtime.reason_code or INGEST_OFF
        )
    if not runtime.available:
        return _ingest_early(surface_id, trigger, runtime, "disabled", runtime.reason_code)
    named = event_surface(event)
    if named is None or (surface_id is not None and named != surface_id):
        return _ingest_early(surface_id, trigger, runtime, "guard_rejected", EVENT_UNROUTABLE)
    try:
        route = runtime.surface(named)
    except RecordValidationError as exc:
        return _ingest_early(named, trigger, runtime, "guard_rejected", exc.code)

    from reward_memory.ingestion import ingest  # noqa: PLC0415

    ingest_route = route.ingest
    try:
        receipt = ingest(
            event,
            adapter=INGEST_ADAPTERS[route.adapter],  # type: ignore[arg-type]
            corpus=ingest_route.corpus,
            standing_policy=ingest_route.standing_policy,
            binding=ingest_route.binding,
            provider=ABSENT_PROVIDER if provider is None else provider,
            authority=authority,
            observed_at=observed_at,
            execute=execute,
            now=moment,
        )
    except (KeyboardInterrupt, SystemExit):
        raise
    except RecordValidationError as exc:
        if exc.path in _CALLER_ARGUMENTS:
            raise  # the caller's own argument (a naive observed_at): a programmer error
        return _ingest_early(named, trigger, runtime, "guard_rejected", INGEST_REJECTED)
    except BaseException:  # noqa: BLE001 - fail open: a rejected event, never a crash
        return _ingest_early(named, trigger, runtime, "guard_rejected", INGEST_REJECTED)
    synced = (
        execute and receipt.write is not None and receipt.status not in ("guard_blocked", "planned")
    )
    return IngestHookPacket(
        surface_id=named,
        trigger=trigger,
        status=receipt.status,
        automatic_ingest=runtime.automatic_ingest,
        receipt=receipt,
        telemetry=IngestHookTelemetry(
            provider_sync_count=1 if synced else 0,
            provider_call_count=receipt.provider_call_count,
            exact_readback_verified=receipt.exact_readback_verified,
            deduplicated=receipt.deduplicated,
            provider_available=receipt.status not in ("provider_unavailable", "committed_pending"),
        ),
        external_writes_performed=receipt.external_writes_performed,
    )


def automatic_ingest(
    runtime: ExperimentRuntime,
    surface_id: str,
    event: Any,
    *,
    authority: AuthoritySource | None,
    observed_at: str | datetime | None,
    execute: bool = False,
    provider: Provider | None = None,
    now: datetime | None = None,
) -> IngestHookPacket:
    """The automatic ingest hook: runs only when the flag is on; the ingest core does the rest.

    The event must name ``surface_id`` (else ``guard_rejected`` /
    ``compact_actor_scoped_event_required``); it goes to the surface's ingest
    corpus with its standing policy and binding. ``execute`` defaults to a dry
    run (``planned``). Zero provider calls unless the ingest core reaches its
    write.
    """
    return run_ingest(
        runtime,
        surface_id,
        event,
        trigger="automatic",
        authority=authority,
        observed_at=observed_at,
        execute=execute,
        provider=provider,
        now=now,
    )
