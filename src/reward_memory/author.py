"""The module author's object (DESIGN.md §2): open an experiment once, then ingest and recall.

::

    memory = open_experiment(".reward-memory/activation.json", goal_id="issue-fix",
                             agent_id="agent:patcher", authority=authority_map,
                             read_authority=my_read_checkpoints)
    hook = memory.ingest(event, observed_at="2026-11-01T12:00:00Z", execute=True)
    outcome = memory.recall("issue_fix.patch_planning", queries=["..."], base_output=plan,
                            apply_memory=my_model, application_id="app-1")

    @memory.boundary("issue_fix.patch_planning", queries=lambda issue: [issue.title])
    def plan(issue): ...

Scopes, bindings and checkpoints are never built by hand: the surface and its
corpora come from the config, the hard-policy checkpoint from the authority
source (:mod:`reward_memory.authority`), the read checkpoint per corpus from
``read_authority`` -- a callable ``(corpus, surface_id, context) ->
ReadAuthorityCheckpoint | None`` -- or, when none is given, from the authority
source's optional ``read_checkpoint_for(corpus=, surface_id=, context=,
agent_id=, now=)``. Neither is ever inferred from the event or from memory;
without an answer, that corpus is guard-blocked.

Explicit calls (``ingest``, ``recall``, the boundary decorator) need an
available runtime -- a configured, enabled goal and an allowlisted agent -- but
not the automatic flags, which authorize only the automatic hooks
(:func:`reward_memory.hooks.automatic_recall` / ``automatic_ingest``; here
:meth:`Experiment.automatic_recall` / :meth:`Experiment.automatic_ingest`).

The provider is built once, on first use, from the config's provider id via
:func:`reward_memory.providers.discovery.get_provider` (unless injected); if it
cannot be built, calls fail open (``provider_unavailable``). :meth:`close` (or
the context manager) closes a provider the object built, never an injected one.
The repr shows the goal, the agent and the status only -- no path, no scope ref.
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from reward_memory._activation_watch import Watched
from reward_memory.errors import RecordValidationError
from reward_memory.experiment import (
    DEFAULT_ACTIVATION_PATH,
    CorpusRoute,
    ExperimentRuntime,
    experiment_status,
    resolve_experiment,
    runtime_from_records,
)
from reward_memory.grammars import resolve_now
from reward_memory.hooks import (
    RecallContext,
    RecallOutcome,
    event_surface,
    run_ingest,
    run_recall,
)

if TYPE_CHECKING:
    from datetime import datetime

    from reward_memory.application import ApplyMemory
    from reward_memory.authority import AuthoritySource
    from reward_memory.providers.spi import Provider
    from reward_memory.records.activation_registry import ActivationGoal, ExperimentStatus
    from reward_memory.records.corpus import CorpusDeclaration
    from reward_memory.records.experiment import ExperimentConfig
    from reward_memory.records.hooks import IngestHookPacket
    from reward_memory.records.recall import ReadAuthorityCheckpoint

__all__ = ["Experiment", "ReadAuthority", "open_experiment", "open_experiment_from"]

ReadAuthority = Callable[
    ["CorpusDeclaration", str, RecallContext], "ReadAuthorityCheckpoint | None"
]
F = TypeVar("F", bound=Callable[..., Any])
_UNSET: Any = object()


def _check_arguments(authority: object, provider: object) -> None:
    """The module author's own arguments, checked when the object is made (DESIGN §4):
    a wrong one would otherwise surface only as a rejected event or a missing recall."""
    from reward_memory.ingestion import _is_source  # noqa: PLC0415

    if authority is not None and not _is_source(authority):
        raise RecordValidationError(
            "authority must be an AuthoritySource (source_ref and checkpoint_for), or None",
            path="authority",
            code="wrong_type",
        )
    if isinstance(provider, str | bytes):
        raise RecordValidationError(
            "provider is an SPI provider object, not a URL (the config names the provider)",
            path="provider",
            code="wrong_type",
        )


class Experiment:
    """One resolved experiment for one agent: ``ingest``, ``recall``, ``boundary``, ``status``."""

    def __init__(
        self,
        runtime: ExperimentRuntime,
        *,
        authority: AuthoritySource | None,
        read_authority: ReadAuthority | None = None,
        provider: Provider | None = None,
    ) -> None:
        if not isinstance(runtime, ExperimentRuntime):
            raise TypeError("runtime must be an ExperimentRuntime")
        if read_authority is not None and not callable(read_authority):
            raise TypeError("read_authority must be a callable")
        _check_arguments(authority, provider)
        self._runtime = runtime
        self._authority = authority
        self._read_authority = read_authority
        self._provider = provider
        self._injected = provider is not None
        self._owned = False
        self._built = provider is not None
        self._lock = threading.Lock()
        self._source: Watched | None = None

    # -- state ----------------------------------------------------------------------------

    @property
    def runtime(self) -> ExperimentRuntime:
        """The resolved runtime (available or not, with its reason)."""
        self._refresh()
        return self._runtime

    @property
    def available(self) -> bool:
        """Whether goal, agent and config resolved."""
        self._refresh()
        return self._runtime.available

    def _watch(self, source: Watched) -> None:
        self._source = source

    def _refresh(self) -> None:
        """Resolve again when the activation file or the config changed since the last call.

        An operator who clears the goal, disables it or drops the agent from the
        allowlist stops this object's next call, as it stops a freshly opened one
        (an experiment opened from records in code has no file to watch).
        """
        source = self._source
        if source is None:
            return
        stamp = source.stamp()
        if stamp == source.seen:
            return
        runtime = resolve_experiment(source.path, goal_id=source.goal_id, agent_id=source.agent_id)
        stale: Provider | None = None
        with self._lock:
            before = self._runtime.config
            after = runtime.config
            if not self._injected and (
                after is None
                or before is None
                or after.project_provider_binding != before.project_provider_binding
            ):
                # Another provider (or none, or one the first build could not make): the
                # one this object built goes, the next call builds what the config names.
                stale = self._provider if self._owned else None
                self._provider, self._owned, self._built = None, False, False
            self._runtime = runtime
            source.track(runtime)
            if source.seen[:1] != stamp[:1]:
                # The activation file changed while it was being read: what was read may
                # be the old state. Look again on the next call.
                source.seen = ()
        if stale is not None:
            with contextlib.suppress(Exception):
                stale.close()

    def __repr__(self) -> str:
        runtime = self._runtime
        return (
            f"Experiment(goal_id={runtime.goal_id!r}, agent_id={runtime.agent_id!r}, "
            f"status={runtime.status!r})"
        )

    def _get_provider(self) -> Provider | None:
        if self._built or not self._runtime.available:
            return self._provider
        with self._lock:
            if not self._built:
                config = self._runtime.config
                assert config is not None
                from reward_memory.providers.discovery import get_provider  # noqa: PLC0415

                try:
                    self._provider = get_provider(config.project_provider_binding.provider_id)
                    self._owned = True
                except Exception:  # noqa: BLE001 - fail open: calls report provider_unavailable
                    self._provider = None
                self._built = True
        return self._provider

    def close(self) -> None:
        """Close the provider this object built (an injected one is the caller's)."""
        with self._lock:
            provider, owned = self._provider, self._owned
            self._provider, self._owned, self._built = None, False, True
            self._injected = True  # closed: a later config change builds nothing
        if owned and provider is not None:
            with contextlib.suppress(Exception):
                provider.close()

    def __enter__(self) -> Experiment:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def status(self, *, check_provider: bool = True) -> ExperimentStatus:
        """The ``reward_memory_experiment_status_v1`` packet (no path, no scope ref)."""
        self._refresh()
        provider = self._get_provider() if check_provider else None
        if check_provider and self._runtime.available and provider is None:
            from reward_memory.records.activation_registry import (  # noqa: PLC0415
                ProviderHealthSummary,
            )

            packet = experiment_status(self._runtime, check_provider=False)
            import attrs  # noqa: PLC0415

            return attrs.evolve(
                packet, provider_health=ProviderHealthSummary(status="provider_unavailable")
            )
        return experiment_status(self._runtime, provider=provider, check_provider=check_provider)

    # -- ingest ---------------------------------------------------------------------------

    def ingest(
        self,
        event: Any,
        *,
        observed_at: str | datetime | None = None,
        execute: bool = False,
        now: datetime | None = None,
    ) -> IngestHookPacket:
        """Ingest one compact event on the surface it names (dry run unless ``execute``).

        ``observed_at`` is the event's first-observation time. Pass the same value on
        retries: a replay is then ``deduplicated``, while another ``observed_at`` is a
        ``conflict``. Left out, it is not known: now, or the first observation of the
        record the store already holds for this event (so a replay still deduplicates).
        Returns the hook packet (``trigger: explicit``) whose ``receipt`` is the ingest
        receipt.
        """
        self._refresh()
        moment = resolve_now(now)
        return run_ingest(
            self._runtime,
            None,
            event,
            trigger="explicit",
            authority=self._authority,
            observed_at=observed_at,
            execute=execute,
            provider=self._get_provider() if execute else None,
            now=moment,
        )

    async def aingest(
        self,
        event: Any,
        *,
        observed_at: str | datetime | None = None,
        execute: bool = False,
        now: datetime | None = None,
    ) -> IngestHookPacket:
        """The asyncio twin of :meth:`ingest` (a worker thread)."""
        import asyncio  # noqa: PLC0415

        return await asyncio.to_thread(
            self.ingest, event, observed_at=observed_at, execute=execute, now=now
        )

    def automatic_ingest(
        self,
        event: Any,
        *,
        observed_at: str | datetime | None = None,
        execute: bool = False,
        now: datetime | None = None,
    ) -> IngestHookPacket:
        """The automatic ingest hook: ``disabled`` (zero calls) unless the flag is on."""
        self._refresh()
        moment = resolve_now(now)
        if not self._runtime.automatic_ingest:
            return run_ingest(
                self._runtime,
                event_surface(event),
                event,
                trigger="automatic",
                authority=None,
                observed_at=moment,
                now=moment,
            )
        return run_ingest(
            self._runtime,
            event_surface(event),
            event,
            trigger="automatic",
            authority=self._authority,
            observed_at=observed_at,
            execute=execute,
            provider=self._get_provider() if execute else None,
            now=moment,
        )

    # -- recall ---------------------------------------------------------------------------

    def _checkpoints(
        self, surface_id: str, context: RecallContext, moment: datetime
    ) -> Callable[[CorpusRoute], Any]:
        agent_id = self._runtime.agent_id

        def answer(route: CorpusRoute) -> Any:
            if self._read_authority is not None:
                return self._read_authority(route.corpus, surface_id, context)
            ask = getattr(self._authority, "read_checkpoint_for", None)
            if ask is None:
                return None
            return ask(
                corpus=route.corpus,
                surface_id=surface_id,
                context=context,
                agent_id=agent_id,
                now=moment,
            )

        return answer

    def _context(self, surface_id: str, moment: datetime) -> RecallContext | None:
        # The default observation: the surface's own workspace and project, source
        # truth current (the module-owned boundary has just produced its output).
        try:
            route = self._runtime.surface(surface_id)
        except Exception:  # noqa: BLE001 - the walk reports the surface
            return None
        scope = route.corpora[0].corpus.scope
        return RecallContext.current(
            workspace_ref=scope.workspace_ref,
            project_ref=scope.project_ref,
            now=moment,
            user_ref=scope.user_ref,
            peer_ref=scope.peer_ref,
            session_ref=scope.session_ref,
        )

    def _recall(
        self,
        surface_id: str,
        *,
        automatic: bool,
        queries: Any,
        base_output: Any,
        application_id: str,
        artifact_ref: str | None,
        apply_memory: ApplyMemory | None,
        context: RecallContext | None,
        checkpoints: Any,
        now: datetime | None,
    ) -> RecallOutcome:
        from reward_memory._memory_boundary import is_async  # noqa: PLC0415

        if is_async(apply_memory):
            # Its answer would be a coroutine, read as junk: say so (arecall awaits it).
            raise TypeError("apply_memory is a coroutine function: use arecall (or a sync one)")
        self._refresh()
        moment = resolve_now(now)
        ctx = context if context is not None else self._context(surface_id, moment)
        use = checkpoints if checkpoints is not _UNSET else None
        wanted = automatic and self._runtime.automatic_recall
        live = self._runtime.available and (wanted or not automatic)
        return run_recall(
            self._runtime,
            surface_id,
            trigger="automatic" if automatic else "explicit",
            queries=queries,
            base_output=base_output,
            checkpoints=use
            if use is not None
            else self._checkpoints(surface_id, ctx, moment)
            if ctx is not None
            else None,
            context=ctx,  # type: ignore[arg-type]  # None is reported as guard_rejected
            application_id=application_id,
            artifact_ref=artifact_ref,
            apply_memory=apply_memory,
            provider=self._get_provider() if live else None,
            now=moment,
            authority=self._authority,
        )

    def recall(
        self,
        surface_id: str,
        *,
        queries: Any,
        base_output: Any,
        application_id: str,
        artifact_ref: str | None = None,
        apply_memory: ApplyMemory | None = None,
        context: RecallContext | None = None,
        checkpoints: Any = _UNSET,
        now: datetime | None = None,
    ) -> RecallOutcome:
        """Recall on a module-owned surface (its corpora in order) and apply; fail open.

        Returns a :class:`~reward_memory.hooks.RecallOutcome`: ``output`` (the
        base unless a valid ``applied`` decision replaced it), ``application``
        (the application result, or ``None``) and ``packet`` (the hook packet,
        ``trigger: explicit``). ``context`` defaults to the surface's own
        workspace and project with source truth current now; ``checkpoints``
        overrides the read authority for this call.
        """
        return self._recall(
            surface_id,
            automatic=False,
            queries=queries,
            base_output=base_output,
            application_id=application_id,
            artifact_ref=artifact_ref,
            apply_memory=apply_memory,
            context=context,
            checkpoints=checkpoints,
            now=now,
        )

    async def arecall(self, surface_id: str, **kwargs: Any) -> RecallOutcome:
        """The asyncio twin of :meth:`recall` (a worker thread); an ``apply_memory`` that is a
        coroutine function runs on this event loop."""
        import asyncio  # noqa: PLC0415

        from reward_memory._memory_boundary import on_loop  # noqa: PLC0415

        if kwargs.get("apply_memory") is not None:
            kwargs["apply_memory"] = on_loop(kwargs["apply_memory"], asyncio.get_running_loop())
        return await asyncio.to_thread(functools.partial(self.recall, surface_id, **kwargs))

    def automatic_recall(
        self,
        surface_id: str,
        *,
        queries: Any,
        base_output: Any,
        application_id: str,
        artifact_ref: str | None = None,
        apply_memory: ApplyMemory | None = None,
        context: RecallContext | None = None,
        checkpoints: Any = _UNSET,
        now: datetime | None = None,
    ) -> RecallOutcome:
        """The automatic recall hook: ``disabled`` (zero provider calls) unless the flag is on."""
        return self._recall(
            surface_id,
            automatic=True,
            queries=queries,
            base_output=base_output,
            application_id=application_id,
            artifact_ref=artifact_ref,
            apply_memory=apply_memory,
            context=context,
            checkpoints=checkpoints,
            now=now,
        )

    # -- the boundary decorator -----------------------------------------------------------

    def boundary(
        self,
        surface_id: str,
        *,
        queries: Callable[..., Any],
        apply_memory: ApplyMemory | None = None,
        application_id: str | Callable[..., str] = "boundary",
        artifact_ref: str | Callable[..., str | None] | None = None,
        context: Callable[..., RecallContext | None] | None = None,
    ) -> Callable[[F], F]:
        """Pass a function's output through recall and apply on ``surface_id``.

        ``queries`` (and ``application_id`` / ``artifact_ref`` / ``context``
        when callables) get the function's own arguments. The caller gets the
        applied output, or the function's own output on *any* memory failure
        (never an exception because of memory); an exception of the function
        itself propagates. Coroutine functions (and callables returning awaitables)
        are wrapped as coroutines, a ``staticmethod`` or ``classmethod`` keeps its
        kind, a generator function is refused (see :mod:`reward_memory._memory_boundary`).
        """

        from reward_memory._memory_boundary import decorate  # noqa: PLC0415

        for name, value in (("queries", queries), ("context", context)):
            if value is not None and not callable(value):
                raise TypeError(f"boundary: {name} must be a callable of the function's arguments")

        def through(output: Any, args: tuple[Any, ...], kwargs: dict[str, Any], model: Any) -> Any:
            try:
                outcome = self.recall(
                    surface_id,
                    queries=queries(*args, **kwargs),
                    base_output=output,
                    application_id=_value(application_id, args, kwargs),
                    artifact_ref=_value(artifact_ref, args, kwargs),
                    apply_memory=model,
                    context=context(*args, **kwargs) if context is not None else None,
                )
            except (KeyboardInterrupt, SystemExit):
                raise
            except BaseException:  # noqa: BLE001 - memory never breaks the caller
                return output
            return outcome.output if outcome.status == "applied" else output

        def wrap(function: F) -> F:
            wrapped: F = decorate(function, through, apply_memory)
            return wrapped

        return wrap


def _authority_source(
    authority: AuthoritySource | str | os.PathLike[str] | None,
) -> AuthoritySource | None:
    if isinstance(authority, str | os.PathLike):
        from reward_memory.authority import AuthorityMap  # noqa: PLC0415

        return AuthorityMap.from_file(authority)
    return authority


def _value(value: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    return value(*args, **kwargs) if callable(value) else value


def open_experiment(
    activation_path: str | os.PathLike[str] = DEFAULT_ACTIVATION_PATH,
    *,
    goal_id: str,
    agent_id: str,
    authority: AuthoritySource | str | os.PathLike[str] | None,
    read_authority: ReadAuthority | None = None,
    provider: Provider | None = None,
) -> Experiment:
    """Open an experiment from an activation file.

    A missing or invalid activation file, goal or config, or an agent not on
    the allowlist, gives an unavailable experiment (every call ``disabled``,
    zero provider calls) -- never an exception. ``authority`` is an
    :class:`~reward_memory.authority.AuthoritySource` or the path of an
    authority-map file (read now; a bad file raises
    :class:`~reward_memory.errors.RecordValidationError`).
    """
    runtime = resolve_experiment(activation_path, goal_id=goal_id, agent_id=agent_id)
    experiment = Experiment(
        runtime,
        authority=_authority_source(authority),
        read_authority=read_authority,
        provider=provider,
    )
    source = Watched(Path(activation_path), goal_id, agent_id)
    source.track(runtime)
    experiment._watch(source)
    return experiment


def open_experiment_from(
    goal: ActivationGoal | None,
    config: ExperimentConfig | Mapping[str, Any] | None,
    *,
    agent_id: str,
    authority: AuthoritySource | str | os.PathLike[str] | None,
    read_authority: ReadAuthority | None = None,
    provider: Provider | None = None,
    goal_id: str | None = None,
) -> Experiment:
    """Open an experiment from records built in code (:func:`runtime_from_records`)."""
    runtime = runtime_from_records(goal, config, agent_id=agent_id, goal_id=goal_id)
    return Experiment(
        runtime,
        authority=_authority_source(authority),
        read_authority=read_authority,
        provider=provider,
    )
