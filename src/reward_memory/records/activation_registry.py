"""Experimental activation: the registry file, a configure change, the status packet.

- :class:`ActivationRegistry` (``reward_memory_activation_registry_v0``): per goal
  id, ``enabled``, ``experimental``, a relative pointer to a config v1 file and
  the explicit agent allowlist -- never a provider choice or a scope ref (seeds,
  "Experimental activation"). The pointer is relative to the project root
  (see :mod:`reward_memory._activation_registry`), has no ``.``/``..``
  segment and ends in ``.json``.
- :class:`ActivationChange` (``reward_memory_activation_change_v0``): what
  ``configure`` would change (preview) or changed (``--execute``).
- :class:`ExperimentStatus` (``reward_memory_experiment_status_v1``, reference
  §10.4): goal + agent + config resolved, without a path or a scope ref.

Effective enablement is ``enabled and experimental and agent allowlisted``.
"""

from __future__ import annotations

import re
from typing import Any, Final, Literal, get_args

import attrs

from reward_memory._frozen import frozen
from reward_memory.errors import RecordValidationError
from reward_memory.grammars import check_token
from reward_memory.records import _fields as f
from reward_memory.text import require_safe

__all__ = [
    "ACTIVATION_CHANGE_SCHEMA",
    "ACTIVATION_REGISTRY_SCHEMA",
    "AGENT_ID",
    "CONFIG_RUNTIME_ROUTE_SCHEMA",
    "EXPERIMENT_STATUSES",
    "EXPERIMENT_STATUS_SCHEMA",
    "ActivationChange",
    "ActivationGoal",
    "ActivationRegistry",
    "ConfigRuntimeRoute",
    "ConfigStatus",
    "CorpusInventorySummary",
    "ExperimentStatus",
    "GoalSummary",
    "HealthStatus",
    "ProviderHealthSummary",
    "SurfaceProfileSummary",
    "check_agent_id",
    "check_config_pointer",
]

ACTIVATION_REGISTRY_SCHEMA: Final = "reward_memory_activation_registry_v0"
ACTIVATION_CHANGE_SCHEMA: Final = "reward_memory_activation_change_v0"
EXPERIMENT_STATUS_SCHEMA: Final = "reward_memory_experiment_status_v1"
CONFIG_RUNTIME_ROUTE_SCHEMA: Final = "reward_memory_config_runtime_route_v0"
MAX_GOALS: Final = 200
MAX_AGENTS: Final = 50
# Grammar A (reference §1.1), without the original's silent lower-casing.
AGENT_ID: Final = re.compile(r"[a-z][a-z0-9_.:@-]{0,79}")
_POINTER_SEGMENT: Final = re.compile(r"[A-Za-z0-9._-]{1,100}")
_MAX_POINTER: Final = 240

ExperimentStatusWord = Literal[
    "disabled", "agent_not_enabled", "config_missing", "config_invalid", "available"
]
EXPERIMENT_STATUSES: Final[tuple[ExperimentStatusWord, ...]] = get_args(ExperimentStatusWord)
ConfigStatus = Literal["valid", "missing", "invalid", "not_checked"]
HealthStatus = Literal[
    "available", "provider_unavailable", "provider_timeout", "load_failed", "failed", "not_checked"
]


def check_agent_id(value: Any, path: str = "$") -> str:
    """An agent id (grammar A: ``[a-z][a-z0-9_.:@-]{0,79}``, so ``codex@ci`` is one),
    scanned for secrets and local paths as a token is."""
    if type(value) is not str or AGENT_ID.fullmatch(value) is None:
        raise RecordValidationError(
            "must be an agent id: a lower-case letter, then up to 79 of a-z 0-9 _ . : @ -",
            path=path,
            code="invalid_format",
        )
    return require_safe(value, path=path, label="identifier")


def _agent_id_field(_: object, attribute: attrs.Attribute[Any], value: Any) -> None:
    check_agent_id(value, f"$.{attribute.name}")


def check_config_pointer(value: Any, path: str = "$") -> str:
    """A config pointer: relative, no ``.``/``..`` segment, plain segments, ends in ``.json``."""
    if type(value) is not str:
        raise RecordValidationError("must be a string", path=path, code="wrong_type")
    if value.startswith(("/", "\\", "~")) or re.match(r"[A-Za-z]:", value):
        raise RecordValidationError(
            "must be a relative path (to the project root), not an absolute one",
            path=path,
            code="config_path_absolute",
        )
    # A backslash is read as a separator for the traversal check (``..\\x`` climbs
    # on Windows), then refused: a pointer's separator is ``/`` (as the schema says).
    if any(segment in (".", "..") for segment in value.replace("\\", "/").split("/")):
        raise RecordValidationError(
            "must not contain a '.' or '..' segment", path=path, code="config_path_traversal"
        )
    segments = value.split("/")
    if (
        len(value) > _MAX_POINTER
        or not value.endswith(".json")
        or len(segments[-1]) <= len(".json")  # a name before the suffix
        or not all(_POINTER_SEGMENT.fullmatch(segment) for segment in segments)
    ):
        raise RecordValidationError(
            "must be a relative path of plain segments (A-Z a-z 0-9 . _ -) ending in .json",
            path=path,
            code="invalid_format",
        )
    # Never printed (only its digest), but written to the activation file: no secret there.
    return require_safe(value, path=path, label="config pointer")


def _agents(value: Any, field: attrs.Attribute[Any]) -> tuple[str, ...]:
    path = f"$.{field.name}"
    if not isinstance(value, list | tuple):
        raise RecordValidationError("must be a list", path=path, code="wrong_type")
    if len(value) > MAX_AGENTS:
        raise RecordValidationError(
            f"must hold at most {MAX_AGENTS} agent ids", path=path, code="invalid_value"
        )
    seen: set[str] = set()
    for index, item in enumerate(value):
        check_agent_id(item, f"{path}[{index}]")
        if item in seen:
            raise RecordValidationError(
                "must not repeat an agent id", path=f"{path}[{index}]", code="duplicate_item"
            )
        seen.add(item)
    return tuple(value)


def _agent_list() -> Any:
    return attrs.field(converter=attrs.Converter(_agents, takes_field=True))


def _pointer(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    check_config_pointer(value, f"$.{attribute.name}")


@frozen(kw_only=True)
class ActivationGoal:
    """One goal's opt-in: the two switches, the config pointer, the agent allowlist."""

    goal_id: str = f.token()
    enabled: bool = f.strict_bool()
    experimental: bool = f.strict_bool()
    config_path: str = attrs.field(validator=_pointer)
    enabled_agents: tuple[str, ...] = _agent_list()

    def __attrs_post_init__(self) -> None:
        if self.enabled and not self.enabled_agents:
            raise RecordValidationError(
                "enabling a goal requires at least one allowlisted agent",
                path="$.enabled_agents",
                code="agents_required",
            )

    def enabled_for(self, agent_id: str) -> bool:
        """Effective enablement: enabled, experimental, and the agent allowlisted."""
        return self.enabled and self.experimental and agent_id in self.enabled_agents


def _goals(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


def _check_goals(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    path = f"$.{attribute.name}"
    if not isinstance(value, tuple):
        raise RecordValidationError("must be a list", path=path, code="wrong_type")
    if len(value) > MAX_GOALS:
        raise RecordValidationError(
            f"must hold at most {MAX_GOALS} goals", path=path, code="invalid_value"
        )
    seen: set[str] = set()
    for index, goal in enumerate(value):
        if not isinstance(goal, ActivationGoal):
            raise RecordValidationError(
                "must be an ActivationGoal", path=f"{path}[{index}]", code="wrong_type"
            )
        if goal.goal_id in seen:
            raise RecordValidationError(
                "goal_id values must be unique",
                path=f"{path}[{index}].goal_id",
                code="duplicate_item",
            )
        seen.add(goal.goal_id)


@frozen(kw_only=True)
class ActivationRegistry:
    """``reward_memory_activation_registry_v0``: the per-goal opt-in file."""

    schema_version: Literal["reward_memory_activation_registry_v0"] = f.const(
        ACTIVATION_REGISTRY_SCHEMA
    )
    goals: tuple[ActivationGoal, ...] = attrs.field(
        factory=tuple, converter=_goals, validator=_check_goals
    )

    def goal(self, goal_id: str) -> ActivationGoal | None:
        """The goal's entry, or ``None`` when the goal is not configured."""
        for goal in self.goals:
            if goal.goal_id == goal_id:
                return goal
        return None


@frozen(kw_only=True)
class GoalSummary:
    """A goal's entry as public packets show it: the pointer only as registered + digest."""

    enabled: bool = f.strict_bool()
    experimental: bool = f.strict_bool()
    config_pointer_registered: bool = f.strict_bool()
    config_pointer_digest: str | None = f.optional_token()
    enabled_agents: tuple[str, ...] = _agent_list()

    @classmethod
    def of(cls, goal: ActivationGoal | None) -> GoalSummary | None:
        """The summary of an entry (``None`` for no entry)."""
        if goal is None:
            return None
        from reward_memory.digests import short_digest  # noqa: PLC0415

        return cls(
            enabled=goal.enabled,
            experimental=goal.experimental,
            config_pointer_registered=True,
            config_pointer_digest=short_digest(goal.config_path),
            enabled_agents=goal.enabled_agents,
        )


@frozen(kw_only=True)
class ActivationChange:
    """``reward_memory_activation_change_v0``: a configure preview, or what was written."""

    ok: Literal[True] = f.const(True)
    schema_version: Literal["reward_memory_activation_change_v0"] = f.const(
        ACTIVATION_CHANGE_SCHEMA
    )
    goal_id: str = f.token()
    status: Literal["preview", "written", "unchanged"] = f.enum("preview", "written", "unchanged")
    execute: bool = f.strict_bool()
    changed: bool = f.strict_bool()
    before: GoalSummary | None = None
    after: GoalSummary | None = None
    config_status: ConfigStatus = f.enum(*get_args(ConfigStatus))
    config_reason_code: str | None = f.optional_token()
    activation_written: bool = f.strict_bool()
    provider_choices_recorded: Literal[False] = f.const(False)
    raw_content_captured: Literal[False] = f.const(False)

    def __attrs_post_init__(self) -> None:
        if self.activation_written != (self.status == "written"):
            raise RecordValidationError(
                "activation_written is true exactly when the status is written",
                path="$.activation_written",
                code="invalid_value",
            )
        if self.status != "preview" and not self.execute:
            raise RecordValidationError(
                "without execute the status is preview", path="$.status", code="invalid_value"
            )


@frozen(kw_only=True)
class SurfaceProfileSummary:
    """One configured surface, without its corpora's scopes or bindings."""

    surface_id: str = f.surface_id()
    adapter: str = f.token()
    corpus_count: int = f.integer(minimum=1)
    ingest_corpus_id: str = f.corpus_id()
    recall_profile_id: str = f.token()
    mode: Literal["function_boundary", "bounded_agentic_search"] = f.enum(
        "function_boundary", "bounded_agentic_search"
    )
    max_queries: int = f.integer(minimum=1, maximum=3)
    limit: int = f.integer(minimum=1, maximum=8)


@frozen(kw_only=True)
class CorpusInventorySummary:
    """What the provider's inventory says about one corpus (counts, never content)."""

    corpus_id: str = f.corpus_id()
    available: bool = f.strict_bool()
    corpus_present: bool = f.strict_bool()
    record_count: int = f.integer(minimum=0)
    index_present: bool = f.strict_bool()


@frozen(kw_only=True)
class ProviderHealthSummary:
    """The configured provider's health, corpus by corpus; a failure is a status."""

    status: HealthStatus = f.enum(*get_args(HealthStatus))
    corpora: tuple[CorpusInventorySummary, ...] = attrs.field(factory=tuple, converter=_goals)


def _sorted_tokens() -> Any:
    def convert(value: Any, field: attrs.Attribute[Any]) -> tuple[str, ...]:
        path = f"$.{field.name}"
        if not isinstance(value, list | tuple):
            raise RecordValidationError("must be a list", path=path, code="wrong_type")
        for index, item in enumerate(value):
            check_token(item, f"{path}[{index}]")
        return tuple(sorted(set(value)))

    return attrs.field(factory=tuple, converter=attrs.Converter(convert, takes_field=True))


@frozen(kw_only=True)
class ConfigRuntimeRoute:
    """``reward_memory_config_runtime_route_v0`` (reference 10.4; the seeds' "compact
    config_runtime_route"): which registry and runtime scope the status was resolved
    through, and whether the config read back exactly -- never either local path."""

    schema_version: Literal["reward_memory_config_runtime_route_v0"] = f.const(
        CONFIG_RUNTIME_ROUTE_SCHEMA
    )
    registry_source: Literal["invoked_registry"] = f.const("invoked_registry")
    # An activation file is the project's own (there is no shared, global one).
    registry_role: Literal["project-local"] = f.const("project-local")
    runtime_scope: Literal["project_runtime"] = f.const("project_runtime")
    goal_source: Literal["registry.goals"] = f.const("registry.goals")
    config_source: Literal["goal_repo_relative_config_pointer"] = f.const(
        "goal_repo_relative_config_pointer"
    )
    readback_status: Literal["verified", "rejected", "not_attempted"] = f.enum(
        "verified", "rejected", "not_attempted", default="not_attempted"
    )
    exact_readback_verified: bool = f.strict_bool(default=False)


@frozen(kw_only=True)
class ExperimentStatus:
    """``reward_memory_experiment_status_v1``: never a path, a scope ref, a binding or a policy."""

    ok: Literal[True] = f.const(True)
    schema_version: Literal["reward_memory_experiment_status_v1"] = f.const(
        EXPERIMENT_STATUS_SCHEMA
    )
    goal_id: str = f.token()
    agent_id: str = attrs.field(validator=_agent_id_field)
    status: ExperimentStatusWord = f.enum(*EXPERIMENT_STATUSES)
    available: bool = f.strict_bool()
    reason_code: str | None = f.optional_token()
    experimental: bool = f.strict_bool()
    enabled: bool = f.strict_bool()
    configured_for_agent: bool = f.strict_bool()
    config_pointer_registered: bool = f.strict_bool()
    config_schema_version: Literal["reward_memory_experiment_config_v1"] | None = attrs.field(
        default=None, validator=attrs.validators.in_((None, "reward_memory_experiment_config_v1"))
    )
    provider_id: str | None = f.optional_token()
    corpus_count: int = f.integer(minimum=0, default=0)
    corpus_ids: tuple[str, ...] = _sorted_tokens()
    surface_count: int = f.integer(minimum=0, default=0)
    surface_ids: tuple[str, ...] = _sorted_tokens()
    surface_profiles: tuple[SurfaceProfileSummary, ...] = attrs.field(
        factory=tuple, converter=_goals
    )
    recall_profile_ids: tuple[str, ...] = _sorted_tokens()
    automatic_ingest: bool = f.strict_bool(default=False)
    automatic_recall: bool = f.strict_bool(default=False)
    fail_open: Literal[True] = f.const(True)
    readback_status: Literal["verified", "rejected", "not_attempted"] = f.enum(
        "verified", "rejected", "not_attempted", default="not_attempted"
    )
    exact_readback_verified: bool = f.strict_bool(default=False)
    provider_health: ProviderHealthSummary | None = None
    # With exactly one surface, its adapter and ingest corpus (reference 10.4).
    adapter: str | None = f.optional_token()
    corpus_id: str | None = f.optional_corpus_id()
    config_runtime_route: ConfigRuntimeRoute | None = None
    external_writes_performed: Literal[False] = f.const(False)
    raw_content_captured: Literal[False] = f.const(False)

    def __attrs_post_init__(self) -> None:
        route = self.config_runtime_route
        if route is None:  # derived: the same readback, said where the original said it
            route = ConfigRuntimeRoute(
                readback_status=self.readback_status,
                exact_readback_verified=self.exact_readback_verified,
            )
            object.__setattr__(self, "config_runtime_route", route)
        elif (route.readback_status, route.exact_readback_verified) != (
            self.readback_status,
            self.exact_readback_verified,
        ):
            raise RecordValidationError(
                "config_runtime_route repeats the status's readback_status and "
                "exact_readback_verified",
                path="$.config_runtime_route",
                code="invalid_value",
            )
        if (self.adapter is None) != (self.corpus_id is None) or (
            self.adapter is not None and self.surface_count != 1
        ):
            raise RecordValidationError(
                "adapter and corpus_id are given together, exactly when there is one surface",
                path="$.adapter",
                code="invalid_value",
            )
        if self.available != (self.status == "available"):
            raise RecordValidationError(
                "available is true exactly when the status is available",
                path="$.available",
                code="invalid_value",
            )
        if not self.available and (self.automatic_ingest or self.automatic_recall):
            raise RecordValidationError(
                "an unavailable experiment has both automatic flags false",
                path="$.automatic_recall" if self.automatic_recall else "$.automatic_ingest",
                code="invalid_value",
            )
