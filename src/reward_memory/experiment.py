"""Experimental activation at run time: load config v1, resolve goal + agent, report status.

- :func:`load_experiment_config` reads a ``reward_memory_experiment_config_v1``
  (a path, or data) within the bounds of :mod:`reward_memory.jsonio`; v0 and
  unknown versions are refused with a migration hint
  (``config_version_unsupported``), everything else with its field path.
- :func:`resolve_experiment` resolves an activation file, a goal id and an
  agent id into an :class:`ExperimentRuntime`. A missing or invalid activation
  file, an unknown or disabled goal, an agent not on the allowlist, a missing,
  invalid or non-v1 config: each gives an *unavailable* runtime with a reason
  code and both automatic flags false -- never an exception (fail-open). A wrong
  argument type, or an agent id outside grammar A, is a programmer error and
  raises.
- :func:`runtime_from_records` does the same from records built in code.
- :func:`experiment_status` is the ``reward_memory_experiment_status_v1``
  packet: counts, recall-profile ids, the effective automatic policy, the
  provider's health (failing open to a status), never a path or a scope ref.

The config pointer in the activation file is relative to the project root
(:func:`reward_memory._activation_registry.config_root`): the directory holding
``.reward-memory/`` when the activation file is in it, else the activation
file's own directory.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal

from reward_memory._activation_registry import (
    DEFAULT_ACTIVATION_PATH,
    config_file,
    config_root,
)
from reward_memory._frozen import frozen
from reward_memory.errors import RecordValidationError
from reward_memory.records.activation_registry import (
    ActivationGoal,
    ActivationRegistry,
    ExperimentStatus,
    check_agent_id,
)
from reward_memory.records.experiment import (
    EXPERIMENT_CONFIG_SCHEMA,
    ExperimentConfig,
    RecallProfile,
)

if TYPE_CHECKING:
    from reward_memory.providers.spi import Provider
    from reward_memory.records.activation_registry import HealthStatus, ProviderHealthSummary
    from reward_memory.records.corpus import CorpusDeclaration
    from reward_memory.records.recall import ProviderBinding
    from reward_memory.records.standing_policy import StandingPolicy

__all__ = [
    "DEFAULT_ACTIVATION_PATH",
    "CorpusRoute",
    "ExperimentRuntime",
    "SurfaceRoute",
    "experiment_status",
    "load_experiment_config",
    "resolve_experiment",
    "runtime_from_records",
]

STATUS_TIMEOUT: Final = 2.0
_MIGRATION_HINT: Final = (
    "only reward_memory_experiment_config_v1 is accepted; migrate the config explicitly "
    "(see schemas/reward_memory_experiment_config_v1.schema.json) before rollout"
)
# reason code -> status word (reference §10.4: first match wins, in this order).
_STATUS_OF: Final[dict[str, str]] = {
    "activation_missing": "disabled",
    "activation_invalid": "disabled",
    "goal_not_configured": "disabled",
    "goal_disabled": "disabled",
    "goal_not_experimental": "disabled",
    "agent_not_allowlisted": "agent_not_enabled",
    "config_missing": "config_missing",
    "config_version_unsupported": "config_invalid",
    "config_unavailable_or_invalid": "config_invalid",
}


def load_experiment_config(
    source: str | os.PathLike[str] | Mapping[str, Any] | ExperimentConfig,
) -> ExperimentConfig:
    """Load and validate a config v1 from a file path or from JSON-shaped data.

    Raises:
        RecordValidationError: ``config_version_unsupported`` for v0 or another
            version (with a migration hint), ``schema_version_missing``, an
            :class:`~reward_memory.errors.InputError` for unreadable or
            unbounded JSON, or the first rule broken, with its field path.
    """
    from reward_memory import jsonio  # noqa: PLC0415

    if isinstance(source, ExperimentConfig):
        return source
    parsed = False
    if isinstance(source, str | os.PathLike):
        parsed = True
        data: Any = jsonio.read(source)
    elif isinstance(source, Mapping):
        data = dict(source)
    else:
        raise TypeError("a config is a file path, a mapping or an ExperimentConfig")
    if not isinstance(data, dict):
        raise RecordValidationError("a config must be a JSON object", code="wrong_type")
    version = data.get("schema_version")
    if version is None:
        raise RecordValidationError(
            "schema_version is missing", path="$.schema_version", code="schema_version_missing"
        )
    if version != EXPERIMENT_CONFIG_SCHEMA:
        raise RecordValidationError(
            _MIGRATION_HINT, path="$.schema_version", code="config_version_unsupported"
        )
    if parsed:
        # Parsed JSON (plain dicts and lists): one strict pass into the record
        # (the schema names an error only), without cattrs or jsonschema.
        from reward_memory._boundary import strict_record  # noqa: PLC0415

        return strict_record(ExperimentConfig, data, EXPERIMENT_CONFIG_SCHEMA)
    # A caller's mapping may nest other mapping or sequence types: the schema
    # (which also bounds Python data), then the converter.
    from reward_memory import schemas, wire  # noqa: PLC0415

    schemas.validate(data, EXPERIMENT_CONFIG_SCHEMA)

    return wire.structure(data, ExperimentConfig)


@frozen(kw_only=True)
class CorpusRoute:
    """One configured corpus as the seams need it: declaration, standing policy, binding."""

    corpus: CorpusDeclaration
    standing_policy: StandingPolicy
    binding: ProviderBinding

    @property
    def corpus_id(self) -> str:
        """The corpus's id."""
        return self.corpus.corpus_id


@frozen(kw_only=True)
class SurfaceRoute:
    """A surface resolved from the config: its corpora in recall order, its ingest corpus."""

    surface_id: str
    adapter: str
    recall_profile: RecallProfile
    corpora: tuple[CorpusRoute, ...]
    ingest: CorpusRoute


@frozen(kw_only=True)
class ExperimentRuntime:
    """A resolved experiment: available (with its config), or unavailable with a reason.

    An unavailable runtime has no config and both automatic flags false; its
    :meth:`surface` raises. Build it with :func:`resolve_experiment` or
    :func:`runtime_from_records`.
    """

    goal_id: str
    agent_id: str
    reason_code: str | None = None
    goal: ActivationGoal | None = None
    config: ExperimentConfig | None = None

    def __attrs_post_init__(self) -> None:
        if (self.reason_code is None) != (self.config is not None):
            raise ValueError("an available runtime has a config and no reason code")
        if self.reason_code is not None and self.reason_code not in _STATUS_OF:
            raise ValueError(f"unknown unavailability reason: {self.reason_code!r}")

    @property
    def available(self) -> bool:
        """Whether goal, agent and config all resolved."""
        return self.config is not None

    @property
    def status(self) -> str:
        """``available``, or the reference §10.4 status word of the reason."""
        return "available" if self.reason_code is None else _STATUS_OF[self.reason_code]

    @property
    def automatic_recall(self) -> bool:
        """The effective flag: false unless available and configured on."""
        return self.config is not None and self.config.automation.automatic_recall

    @property
    def automatic_ingest(self) -> bool:
        """The effective flag: false unless available and configured on."""
        return self.config is not None and self.config.automation.automatic_ingest

    @property
    def fail_open(self) -> Literal[True]:
        """Always true: automation never becomes a user gate."""
        return True

    @property
    def provider_id(self) -> str | None:
        """The configured provider's id (``None`` when unavailable): build it with discovery."""
        return None if self.config is None else self.config.project_provider_binding.provider_id

    @property
    def surface_ids(self) -> tuple[str, ...]:
        """The configured surfaces, in config order (empty when unavailable)."""
        return () if self.config is None else tuple(s.surface_id for s in self.config.surfaces)

    def surface(self, surface_id: str, *, adapter: str | None = None) -> SurfaceRoute:
        """Resolve one configured surface (reference §10.3).

        Raises:
            RecordValidationError: ``experiment_unavailable`` (the runtime is
                unavailable), ``surface_not_configured``, or
                ``adapter_route_mismatch`` (``adapter`` given and not the
                configured one). Nothing is inferred: no other surface or
                corpus is ever chosen.
        """
        if self.config is None:
            raise RecordValidationError(
                f"the experiment is unavailable for this agent: {self.status}",
                path="$.goal_id",
                code="experiment_unavailable",
            )
        surface = self.config.surface(surface_id)
        if surface is None:
            raise RecordValidationError(
                "the surface is not configured for this experiment",
                path="$.surface_id",
                code="surface_not_configured",
            )
        if adapter is not None and adapter != surface.adapter:
            raise RecordValidationError(
                "the adapter does not match the configured route",
                path="$.adapter",
                code="adapter_route_mismatch",
            )
        index = self.config.corpus_index
        bindings = self.config.bindings
        routes = tuple(
            CorpusRoute(
                corpus=index[corpus_id].corpus,
                standing_policy=index[corpus_id].standing_policy,
                binding=bindings[corpus_id],
            )
            for corpus_id in surface.corpus_ids
        )
        ingest = next(route for route in routes if route.corpus_id == surface.ingest_corpus_id)
        return SurfaceRoute(
            surface_id=surface.surface_id,
            adapter=surface.adapter,
            recall_profile=surface.recall_profile,
            corpora=routes,
            ingest=ingest,
        )


def _check_ids(goal_id: object, agent_id: object) -> tuple[str, str]:
    if not isinstance(goal_id, str) or not isinstance(agent_id, str):
        raise TypeError("goal_id and agent_id must be strings")
    from reward_memory.grammars import check_token  # noqa: PLC0415

    check_token(goal_id, "$.goal_id")
    check_agent_id(agent_id, "$.agent_id")
    return goal_id, agent_id


def _gate(goal: ActivationGoal | None, agent_id: str) -> str | None:
    if goal is None:
        return "goal_not_configured"
    if not goal.enabled:
        return "goal_disabled"
    if not goal.experimental:
        return "goal_not_experimental"
    if agent_id not in goal.enabled_agents:
        return "agent_not_allowlisted"
    return None


def runtime_from_records(
    goal: ActivationGoal | None,
    config: ExperimentConfig | Mapping[str, Any] | None,
    *,
    agent_id: str,
    goal_id: str | None = None,
) -> ExperimentRuntime:
    """The runtime for records built in code (``config`` replaces the goal's pointer).

    ``config`` may be a mapping (validated here; an invalid one is unavailable)
    or ``None`` (``config_missing``).
    """
    if goal is not None and not isinstance(goal, ActivationGoal):
        raise TypeError("goal must be an ActivationGoal or None")
    name = goal.goal_id if goal is not None else goal_id
    goal_name, agent = _check_ids(name, agent_id)
    reason = _gate(goal, agent)
    if reason is not None:
        return ExperimentRuntime(goal_id=goal_name, agent_id=agent, reason_code=reason, goal=goal)
    if config is None:
        return ExperimentRuntime(
            goal_id=goal_name, agent_id=agent, reason_code="config_missing", goal=goal
        )
    try:
        loaded = load_experiment_config(config)
    except RecordValidationError as exc:
        code = (
            "config_version_unsupported"
            if exc.code == "config_version_unsupported"
            else "config_unavailable_or_invalid"
        )
        return ExperimentRuntime(goal_id=goal_name, agent_id=agent, reason_code=code, goal=goal)
    return ExperimentRuntime(goal_id=goal_name, agent_id=agent, goal=goal, config=loaded)


def resolve_registry(
    registry: ActivationRegistry,
    base_dir: str | os.PathLike[str],
    *,
    goal_id: str,
    agent_id: str,
) -> ExperimentRuntime:
    """Resolve a loaded registry; the goal's config pointer is read relative to ``base_dir``."""
    if not isinstance(registry, ActivationRegistry):
        raise TypeError("registry must be an ActivationRegistry")
    goal_name, agent = _check_ids(goal_id, agent_id)
    goal = registry.goal(goal_name)
    reason = _gate(goal, agent)
    if reason is not None or goal is None:
        return ExperimentRuntime(goal_id=goal_name, agent_id=agent, reason_code=reason, goal=goal)
    target = config_file(Path(base_dir), goal.config_path)
    if target is None:  # it leads outside the project root
        return ExperimentRuntime(
            goal_id=goal_name,
            agent_id=agent,
            reason_code="config_unavailable_or_invalid",
            goal=goal,
        )
    present = _is_file(target)
    if present is not True:
        return ExperimentRuntime(
            goal_id=goal_name,
            agent_id=agent,
            reason_code="config_missing" if present is False else "config_unavailable_or_invalid",
            goal=goal,
        )
    try:
        config = load_experiment_config(target)
    except RecordValidationError as exc:
        code = (
            "config_version_unsupported"
            if exc.code == "config_version_unsupported"
            else "config_unavailable_or_invalid"
        )
        return ExperimentRuntime(goal_id=goal_name, agent_id=agent, reason_code=code, goal=goal)
    return runtime_from_records(goal, config, agent_id=agent)


def _is_file(path: Path) -> bool | None:
    """Whether ``path`` is a file; ``None`` when that cannot even be asked (a name too long,
    a directory on the way that may not be searched): unreadable, not missing."""
    try:
        return path.is_file()
    except (OSError, ValueError):
        return None


def resolve_experiment(
    activation_path: str | os.PathLike[str] = DEFAULT_ACTIVATION_PATH,
    *,
    goal_id: str,
    agent_id: str,
) -> ExperimentRuntime:
    """Resolve an activation file, a goal and an agent; never raises for bad files (fail-open)."""
    if not isinstance(activation_path, str | os.PathLike):
        raise TypeError("activation_path must be a path")
    goal_name, agent = _check_ids(goal_id, agent_id)
    from reward_memory._activation_registry import load_activation_registry  # noqa: PLC0415

    path = Path(activation_path)
    present = _is_file(path)
    if present is not True:
        return ExperimentRuntime(
            goal_id=goal_name,
            agent_id=agent,
            reason_code="activation_missing" if present is False else "activation_invalid",
        )
    try:
        registry = load_activation_registry(path)
    except RecordValidationError:
        return ExperimentRuntime(
            goal_id=goal_name, agent_id=agent, reason_code="activation_invalid"
        )
    return resolve_registry(registry, config_root(path), goal_id=goal_name, agent_id=agent)


# -- status ----------------------------------------------------------------------------------


def _inventory(
    provider: Provider, route_bindings: dict[str, ProviderBinding], timeout: float
) -> ProviderHealthSummary:
    from reward_memory.errors import ProviderUnavailable  # noqa: PLC0415
    from reward_memory.providers.spi import well_formed_inventory  # noqa: PLC0415
    from reward_memory.records.activation_registry import (  # noqa: PLC0415
        CorpusInventorySummary,
        ProviderHealthSummary,
    )

    corpora: list[CorpusInventorySummary] = []
    overall: HealthStatus = "available"
    for corpus_id in sorted(route_bindings):
        binding = route_bindings[corpus_id]
        try:
            inventory = provider.inventory(
                scope=binding.provider_scope, timeout=min(timeout, binding.timeout_seconds)
            )
        except ProviderUnavailable as exc:
            timed_out = exc.reason_code == "provider_timeout"
            return ProviderHealthSummary(
                status="provider_timeout" if timed_out else "provider_unavailable"
            )
        except Exception:  # noqa: BLE001 - a broken provider is a status, never a crash
            return ProviderHealthSummary(status="failed")
        if not well_formed_inventory(inventory):
            return ProviderHealthSummary(status="failed")
        available = inventory.available
        if not available:
            overall = "provider_unavailable"
        corpora.append(
            CorpusInventorySummary(
                corpus_id=corpus_id,
                available=available,
                corpus_present=inventory.corpus_present,
                record_count=inventory.record_count,
                index_present=inventory.index_present,
            )
        )
    return ProviderHealthSummary(status=overall, corpora=tuple(corpora))


def _provider_health(
    config: ExperimentConfig, provider: Provider | None, timeout: float
) -> ProviderHealthSummary:
    from reward_memory.errors import ProviderError  # noqa: PLC0415
    from reward_memory.records.activation_registry import ProviderHealthSummary  # noqa: PLC0415

    opened = provider is None
    if provider is None:
        from reward_memory.providers.discovery import get_provider  # noqa: PLC0415

        try:
            provider = get_provider(config.project_provider_binding.provider_id)
        except ProviderError as exc:
            unavailable = exc.code == "provider_unavailable"
            return ProviderHealthSummary(
                status="provider_unavailable" if unavailable else "load_failed"
            )
        except Exception:  # noqa: BLE001 - fail open: the status says it
            return ProviderHealthSummary(status="failed")
    try:
        return _inventory(provider, config.bindings, timeout)
    finally:
        if opened:
            with contextlib.suppress(Exception):
                provider.close()


def experiment_status(
    runtime: ExperimentRuntime,
    *,
    provider: Provider | None = None,
    check_provider: bool = True,
    timeout: float = STATUS_TIMEOUT,
) -> ExperimentStatus:
    """The ``reward_memory_experiment_status_v1`` packet of a resolved runtime.

    With ``check_provider`` (default), the config's provider (``provider``, or
    the one discovery builds for its id at its default location) is asked for
    the inventory of each corpus scope; any failure is a ``provider_health``
    status, never an exception.
    """
    from reward_memory.records.activation_registry import (  # noqa: PLC0415
        ProviderHealthSummary,
        SurfaceProfileSummary,
    )

    goal = runtime.goal
    base: dict[str, Any] = {
        "goal_id": runtime.goal_id,
        "agent_id": runtime.agent_id,
        "status": runtime.status,
        "available": runtime.available,
        "reason_code": runtime.reason_code,
        "experimental": bool(goal and goal.experimental),
        "enabled": bool(goal and goal.enabled and goal.experimental),
        "configured_for_agent": bool(goal and runtime.agent_id in goal.enabled_agents),
        "config_pointer_registered": goal is not None,
    }
    config = runtime.config
    if config is None:
        rejected = runtime.status == "config_invalid"
        return ExperimentStatus(**base, readback_status="rejected" if rejected else "not_attempted")
    profiles = tuple(
        SurfaceProfileSummary(
            surface_id=surface.surface_id,
            adapter=surface.adapter,
            corpus_count=len(surface.corpus_ids),
            ingest_corpus_id=surface.ingest_corpus_id,
            recall_profile_id=surface.recall_profile.profile_id,
            mode=surface.recall_profile.mode,
            max_queries=surface.recall_profile.max_queries,
            limit=surface.recall_profile.limit,
        )
        for surface in config.surfaces
    )
    health = (
        _provider_health(config, provider, timeout)
        if check_provider
        else ProviderHealthSummary(status="not_checked")
    )
    return ExperimentStatus(
        **base,
        config_schema_version=EXPERIMENT_CONFIG_SCHEMA,
        # The id only: a provider URL may name a location (never shown here).
        provider_id=config.project_provider_binding.provider_id.partition("://")[0],
        corpus_count=len(config.corpora),
        corpus_ids=tuple(config.corpus_index),
        surface_count=len(config.surfaces),
        surface_ids=runtime.surface_ids,
        surface_profiles=profiles,
        recall_profile_ids=tuple(p.recall_profile_id for p in profiles),
        automatic_ingest=runtime.automatic_ingest,
        automatic_recall=runtime.automatic_recall,
        readback_status="verified",
        exact_readback_verified=True,
        adapter=profiles[0].adapter if len(profiles) == 1 else None,
        corpus_id=profiles[0].ingest_corpus_id if len(profiles) == 1 else None,
        provider_health=health,
    )
