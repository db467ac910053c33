"""Runtime hooks (reference §10.5-10.6, gap 6 fixed): recall across a surface, ingest through it.

:func:`automatic_recall` walks a configured surface's corpora **in configured
order**. Each corpus gets one guarded recall (:func:`reward_memory.guarded_recall.recall`)
with the surface's recall profile and the caller's read-authority checkpoint for
that corpus. A corpus whose recall is ``guard_blocked`` (a missing or wrong
checkpoint, a stale or conflicted context...), ``provider_unavailable`` or
``empty`` is passed over -- the original stopped at the first non-empty status,
so one blocked corpus hid every later one. The walk stops at the first
``completed`` recall (exact readback: the guarded recall returns only records it
read back from the exact corpus and surface) and hands that session to
:func:`reward_memory.application.apply`. Status:

- ``disabled``: the automatic flag is off, or the runtime is unavailable (the
  agent is not allowlisted, the config is invalid...); zero provider calls;
- ``guard_rejected``: the surface is not configured, the queries break the
  profile (a non-string list of 1..``max_queries``, exactly 1 for
  ``function_boundary``), or the request context is invalid; zero provider calls;
- the application's status (``applied``, ``ignored``, ``refuted``, ``failed``,
  ``available_not_applied``) when a corpus hit;
- without a hit: ``provider_unavailable`` when any attempted corpus was
  unavailable, else ``not_available``.

:func:`automatic_ingest` routes one event through its surface's ingest corpus
into :func:`reward_memory.ingestion.ingest` (the same core, so replays stay
idempotent) and wraps the receipt.

``trigger="explicit"`` is the module author's own call at a module-owned
boundary (:class:`reward_memory.author.Experiment`): it needs an available
runtime (goal configured, agent allowlisted) but not the automatic flag, which
authorizes only the automatic hook (seeds, "Experimental activation").

Fail open: nothing a provider, a checkpoint callable or the model callback does
escapes (``KeyboardInterrupt`` and ``SystemExit`` aside), and the caller's base
output is kept unless a valid ``applied`` decision replaces it. Only programmer
errors raise: a runtime that is not an :class:`ExperimentRuntime`, an
``application_id`` or ``artifact_ref`` that is not a token, a naive ``now``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final, Union

import attrs

from reward_memory._frozen import frozen

# The ingest hook lives in its own module and is part of this module's surface.
from reward_memory._ingest_hook import ABSENT_PROVIDER as _ABSENT
from reward_memory._ingest_hook import (
    INGEST_ADAPTERS,
    automatic_ingest,
    event_surface,
    run_ingest,
)
from reward_memory.errors import RecordValidationError
from reward_memory.experiment import CorpusRoute, ExperimentRuntime, SurfaceRoute
from reward_memory.grammars import check_token, normalize_timestamp, resolve_now
from reward_memory.records import _fields as f
from reward_memory.records.hooks import (
    RecallHookPacket,
    RecallHookStatus,
    RecallHookTelemetry,
    Trigger,
)
from reward_memory.records.recall import (
    FreshnessContext,
    ReadAuthorityCheckpoint,
    RecallQuery,
    RecallRequest,
)

if TYPE_CHECKING:
    from datetime import datetime

    from reward_memory.application import ApplyMemory
    from reward_memory.authority import AuthoritySource
    from reward_memory.guarded_recall import RecallSession
    from reward_memory.providers.spi import Provider
    from reward_memory.records.application import ApplicationReceipt, ApplicationResult
    from reward_memory.records.recall import RecallPacket

__all__ = [
    "DEFAULT_QUERY_SUMMARY",
    "INGEST_ADAPTERS",
    "Checkpoints",
    "Providers",
    "RecallContext",
    "RecallOutcome",
    "automatic_ingest",
    "automatic_recall",
    "event_surface",
    "run_ingest",
    "run_recall",
]

DEFAULT_QUERY_SUMMARY: Final = "Function-boundary reward-memory recall."
QUERY_INVALID: Final = "surface_profile_or_query_invalid"
REQUEST_INVALID: Final = "exact_corpus_request_invalid"
RECALL_OFF: Final = "automatic_recall_disabled"

Checkpoints = (
    Mapping[str, ReadAuthorityCheckpoint]
    | Callable[[CorpusRoute], "ReadAuthorityCheckpoint | None"]
    | None
)
# One provider for every corpus, or one per corpus id (a missing one is unavailable).
Providers = Union["Provider", Mapping[str, "Provider"], None]


@frozen(kw_only=True)
class RecallContext:
    """What the caller observes at the boundary, now: identities, freshness, conflict state.

    Never taken from memory. :meth:`current` builds the common case (source
    truth current, no conflict) for one workspace and project.
    """

    workspace_ref: str = f.token()
    project_ref: str = f.token()
    revision_ref: str | None = f.optional_token()
    user_ref: str | None = f.optional_token()
    peer_ref: str | None = f.optional_token()
    session_ref: str | None = f.optional_token()
    observed_at: str = f.timestamp()
    conflict_state: str = f.token(default="clear")
    freshness_context: FreshnessContext = attrs.field(
        validator=attrs.validators.instance_of(FreshnessContext)
    )

    @classmethod
    def current(
        cls,
        *,
        workspace_ref: str,
        project_ref: str,
        now: datetime | None = None,
        revision_ref: str | None = None,
        source_revision: str | None = None,
        user_ref: str | None = None,
        peer_ref: str | None = None,
        session_ref: str | None = None,
    ) -> RecallContext:
        """Source truth observed current just now (age 0), conflict state ``clear``."""
        moment = resolve_now(now)
        return cls(
            workspace_ref=workspace_ref,
            project_ref=project_ref,
            revision_ref=revision_ref,
            observed_at=normalize_timestamp(moment.isoformat()),
            freshness_context=FreshnessContext(
                source_truth_current=True,
                source_revision=source_revision or revision_ref,
                age_seconds=0,
            ),
            user_ref=user_ref,
            peer_ref=peer_ref,
            session_ref=session_ref,
        )


@frozen(kw_only=True)
class RecallOutcome:
    """What a walk gives the caller: the output to use, the hook packet, the application.

    ``output`` is the base output unless a valid ``applied`` decision replaced
    it. ``application`` is the application result when a recall was applied
    (or tried), else ``None``. ``session`` (transient, never serialised) is the
    recall session that was applied.
    """

    packet: RecallHookPacket
    output: Any
    application: ApplicationResult | None = None
    session: RecallSession | None = attrs.field(default=None, repr=False)

    @property
    def status(self) -> str:
        """The hook packet's status."""
        return self.packet.status

    @property
    def receipt(self) -> ApplicationReceipt | None:
        """The application receipt (as on an application result), or ``None``."""
        return self.packet.application

    @property
    def fail_open_preserved_base(self) -> bool:
        """Whether ``output`` is the caller's base output."""
        return self.packet.fail_open_preserved_base


def _provider_for(providers: Any, corpus_id: str) -> Any:
    if isinstance(providers, Mapping):
        found = providers.get(corpus_id)
        return _ABSENT if found is None else found
    return _ABSENT if providers is None else providers


_QUERY_KEYS: Final = ("query", "query_summary")


def _queries(value: Any, max_queries: int) -> tuple[RecallQuery, ...]:
    if isinstance(value, str | bytes) or not isinstance(value, list | tuple):
        raise RecordValidationError("queries must be a list", path="$.queries", code="wrong_type")
    if not 1 <= len(value) <= max_queries:
        raise RecordValidationError(
            f"the profile allows 1 to {max_queries} queries", path="$.queries", code="invalid_value"
        )
    out: list[RecallQuery] = []
    for index, query in enumerate(value):
        if isinstance(query, RecallQuery):
            out.append(query)
        elif isinstance(query, str):
            out.append(RecallQuery(query=query, query_summary=DEFAULT_QUERY_SUMMARY))
        elif isinstance(query, Mapping):
            # Exactly its two fields: an unknown one is refused, never dropped unseen.
            for key in query:
                if key not in _QUERY_KEYS:
                    raise RecordValidationError(
                        "unknown field", path=f"$.queries[{index}].{key}", code="unknown_field"
                    )
            for key in _QUERY_KEYS:
                if key not in query:
                    raise RecordValidationError(
                        "required field is missing",
                        path=f"$.queries[{index}].{key}",
                        code="missing_field",
                    )
            out.append(RecallQuery(query=query["query"], query_summary=query["query_summary"]))
        else:
            raise RecordValidationError(
                "a query is a string, a RecallQuery or {query, query_summary}",
                path=f"$.queries[{index}]",
                code="wrong_type",
            )
    return tuple(out)


def _checkpoint(
    checkpoints: Any, route: CorpusRoute, surface_id: str, context: RecallContext
) -> ReadAuthorityCheckpoint:
    answer: Any = None
    try:
        if isinstance(checkpoints, Mapping):
            answer = checkpoints.get(route.corpus_id)
        elif callable(checkpoints):
            answer = checkpoints(route)
    except Exception:  # noqa: BLE001 - a failing source vouches for nothing
        answer = None
    if isinstance(answer, ReadAuthorityCheckpoint):
        return answer
    # Nothing verified: the recall guard blocks this corpus (zero provider calls).
    return ReadAuthorityCheckpoint(
        verified=False,
        corpus_id=route.corpus_id,
        workspace_ref=context.workspace_ref,
        project_ref=context.project_ref,
        surface_id=surface_id,
        read_authority=route.corpus.read_authority,
    )


def _request(route: SurfaceRoute, queries: tuple[RecallQuery, ...], ctx: RecallContext) -> Any:
    profile = route.recall_profile
    return RecallRequest(
        mode=profile.mode,
        surface_id=route.surface_id,
        workspace_ref=ctx.workspace_ref,
        project_ref=ctx.project_ref,
        revision_ref=ctx.revision_ref,
        user_ref=ctx.user_ref,
        peer_ref=ctx.peer_ref,
        session_ref=ctx.session_ref,
        queries=queries,
        limit=profile.limit,
        observed_at=ctx.observed_at,
        conflict_state=ctx.conflict_state,
        freshness_context=ctx.freshness_context,
    )


def _early(  # noqa: PLR0917 - one private call site shape
    surface_id: str,
    trigger: Trigger,
    runtime: ExperimentRuntime,
    status: RecallHookStatus,
    reason: str | None,
    base_output: Any,
    telemetry: RecallHookTelemetry | None = None,
) -> RecallOutcome:
    packet = RecallHookPacket(
        surface_id=surface_id,
        trigger=trigger,
        status=status,
        reason_code=reason,
        automatic_recall=runtime.automatic_recall,
        telemetry=telemetry or RecallHookTelemetry(),
        fail_open_preserved_base=True,
    )
    return RecallOutcome(packet=packet, output=base_output)


def run_recall(
    runtime: ExperimentRuntime,
    surface_id: str,
    *,
    trigger: Trigger,
    queries: Any,
    base_output: Any,
    checkpoints: Checkpoints,
    context: RecallContext,
    application_id: str,
    artifact_ref: str | None = None,
    apply_memory: ApplyMemory | None = None,
    provider: Providers = None,
    now: datetime | None = None,
    authority: AuthoritySource | None = None,
) -> RecallOutcome:
    """The walk behind :func:`automatic_recall` and the explicit ``Experiment.recall``.

    ``authority`` (the experiment's authority source) must vouch, at recall, for
    the actor and scopes of any recalled record with action authority."""
    if not isinstance(runtime, ExperimentRuntime):
        raise TypeError("runtime must be an ExperimentRuntime")
    check_token(application_id, "$.application_id")
    if artifact_ref is not None:
        check_token(artifact_ref, "$.artifact_ref")
    moment = resolve_now(now)
    if trigger == "automatic" and not runtime.automatic_recall:
        return _early(
            surface_id, trigger, runtime, "disabled", runtime.reason_code or RECALL_OFF, base_output
        )
    if not runtime.available:
        return _early(surface_id, trigger, runtime, "disabled", runtime.reason_code, base_output)
    try:
        route = runtime.surface(surface_id)
        profile = route.recall_profile
        typed = _queries(queries, profile.max_queries)
    except (RecordValidationError, KeyError, TypeError):
        return _early(surface_id, trigger, runtime, "guard_rejected", QUERY_INVALID, base_output)
    per_corpus = profile.max_queries * (1 + profile.limit)
    telemetry: dict[str, Any] = {
        "profile_id": profile.profile_id,
        "mode": profile.mode,
        "query_count": len(typed),
        "max_queries_per_corpus": profile.max_queries,
        "configured_corpus_count": len(route.corpora),
        "provider_call_cap": per_corpus * len(route.corpora),
    }
    try:
        if not isinstance(context, RecallContext):
            raise TypeError("context must be a RecallContext")
        request = _request(route, typed, context)
    except (RecordValidationError, TypeError):
        return _early(
            surface_id,
            trigger,
            runtime,
            "guard_rejected",
            REQUEST_INVALID,
            base_output,
            RecallHookTelemetry(**telemetry),
        )

    from reward_memory.guarded_recall import recall  # noqa: PLC0415

    attempts: list[RecallPacket] = []
    last: RecallSession | None = None
    hit: RecallSession | None = None
    calls = 0
    # One deadline for the whole walk (the project binding's timeout, which every corpus
    # of the surface shares): a corpus that times out does not restart the clock for the
    # next one, so a surface of N corpora is never N timeouts long.
    deadline = time.monotonic() + min(
        (corpus_route.binding.timeout_seconds for corpus_route in route.corpora), default=0
    )
    for corpus_route in route.corpora:
        if time.monotonic() >= deadline:
            break
        try:
            session = recall(
                request,
                corpus=corpus_route.corpus,
                checkpoint=_checkpoint(checkpoints, corpus_route, route.surface_id, context),
                binding=corpus_route.binding,
                provider=_provider_for(provider, corpus_route.corpus_id),
                now=moment,
                standing_policy=corpus_route.standing_policy,
                # No authority source: nobody vouches, so no record acts (authority is
                # never inferred; the standing policy only narrows a source's word).
                authority=_NOBODY if authority is None else authority,
                deadline=deadline,
            )
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException:  # noqa: BLE001, S112 - pass over this corpus, never fail the caller
            continue
        # Whatever a provider claims, a corpus never spends more than its share.
        calls += min(session.packet.provider_call_count, per_corpus)
        attempts.append(session.packet)
        last = session
        if session.packet.status == "completed" and session.packet.result_readback_verified:
            hit = session
            break
    telemetry.update(
        attempted_corpus_count=len(attempts),
        provider_call_count=calls,
        result_readback_verified=hit is not None,
    )
    return _applied(
        route.surface_id,
        trigger,
        runtime,
        attempts,
        hit or last,
        hit is not None,
        base_output,
        application_id,
        artifact_ref,
        apply_memory,
        RecallHookTelemetry(**telemetry),
    )


def _applied(  # noqa: PLR0917 - one private call site shape
    surface_id: str,
    trigger: Trigger,
    runtime: ExperimentRuntime,
    attempts: list[RecallPacket],
    session: RecallSession | None,
    hit: bool,
    base_output: Any,
    application_id: str,
    artifact_ref: str | None,
    apply_memory: ApplyMemory | None,
    telemetry: RecallHookTelemetry,
) -> RecallOutcome:
    from reward_memory.application import apply  # noqa: PLC0415

    result: ApplicationResult | None = None
    if session is not None:
        try:
            result = apply(
                base_output,
                session,
                application_id=application_id,
                artifact_ref=artifact_ref,
                apply_memory=apply_memory if hit else None,
            )
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException:  # noqa: BLE001 - fail open: the base output stands
            result = None
    status: RecallHookStatus
    if hit:
        status = result.status if result is not None else "failed"
    elif any(packet.status == "provider_unavailable" for packet in attempts):
        status = "provider_unavailable"
    else:
        status = "not_available"
    applied = result is not None and result.status == "applied" and hit
    packet = RecallHookPacket(
        surface_id=surface_id,
        trigger=trigger,
        status=status,
        reason_code=None if hit else _miss_reason(attempts),
        automatic_recall=runtime.automatic_recall,
        hit_corpus_id=attempts[-1].corpus_id if hit else None,
        recall_attempts=tuple(attempts),
        application=result.receipt if result is not None else None,
        telemetry=telemetry,
        fail_open_preserved_base=not applied,
    )
    return RecallOutcome(
        packet=packet,
        output=result.output if applied and result is not None else base_output,
        application=result,
        session=session,
    )


def _miss_reason(attempts: list[RecallPacket]) -> str:
    if not attempts:
        return "no_corpus_recall_completed"
    if all(packet.status == "guard_blocked" for packet in attempts):
        return "every_corpus_guard_blocked"
    return "no_exact_readback_hit"


def _context_from(**fields: Any) -> RecallContext | None:
    freshness = fields["freshness_context"]
    try:
        if isinstance(freshness, Mapping):
            fields["freshness_context"] = FreshnessContext(**freshness)
        return RecallContext(**fields)
    except (RecordValidationError, TypeError):
        return None


class _Nobody:
    """The authority source of a caller that has none: it vouches for nothing."""

    source_ref = "authority:none"

    def checkpoint_for(self, **_: Any) -> None:
        return None


_NOBODY: Final = _Nobody()


def automatic_recall(
    runtime: ExperimentRuntime,
    surface_id: str,
    *,
    queries: Any,
    base_output: Any,
    checkpoints: Checkpoints,
    application_id: str,
    context: RecallContext | None = None,
    artifact_ref: str | None = None,
    apply_memory: ApplyMemory | None = None,
    provider: Providers = None,
    now: datetime | None = None,
    workspace_ref: str | None = None,
    project_ref: str | None = None,
    revision_ref: str | None = None,
    user_ref: str | None = None,
    peer_ref: str | None = None,
    session_ref: str | None = None,
    observed_at: str | None = None,
    freshness_context: FreshnessContext | Mapping[str, Any] | None = None,
    conflict_state: str = "clear",
    authority: AuthoritySource | None = None,
) -> RecallOutcome:
    """The automatic recall hook (module docs): runs only when the flag is on.

    Args:
        runtime: the resolved experiment (its ``automatic_recall`` must be true).
        surface_id: a configured, module-owned surface.
        queries: 1..``max_queries`` queries (strings, :class:`RecallQuery` or
            ``{query, query_summary}``); exactly 1 for ``function_boundary``.
        base_output: what the caller produces without memory.
        checkpoints: the caller's read-authority checkpoints per corpus id, or
            a callable ``(CorpusRoute) -> checkpoint | None``; a missing one
            blocks that corpus.
        context: the current observations (:class:`RecallContext`); or, as in
            the reference's signature, its fields one by one (``workspace_ref``,
            ``project_ref``, ..., ``observed_at``, ``freshness_context``,
            ``conflict_state``). Invalid observations are ``guard_rejected`` /
            ``exact_corpus_request_invalid``, zero provider calls.
        application_id, artifact_ref, apply_memory: as for
            :func:`reward_memory.application.apply`.
        provider: the SPI provider, or one per corpus id (a missing one is
            unavailable).
        now: the clock (aware; default UTC now).
    """
    if context is None:
        context = _context_from(
            workspace_ref=workspace_ref,
            project_ref=project_ref,
            revision_ref=revision_ref,
            user_ref=user_ref,
            peer_ref=peer_ref,
            session_ref=session_ref,
            observed_at=observed_at,
            freshness_context=freshness_context,
            conflict_state=conflict_state,
        )
    return run_recall(
        runtime,
        surface_id,
        trigger="automatic",
        queries=queries,
        base_output=base_output,
        checkpoints=checkpoints,
        context=context,  # type: ignore[arg-type]  # None is reported as guard_rejected
        application_id=application_id,
        artifact_ref=artifact_ref,
        apply_memory=apply_memory,
        provider=provider,
        now=now,
        authority=authority,
    )
