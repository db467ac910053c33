"""Experiment config v1 (``reward_memory_experiment_config_v1``, reference §10.2).

One project provider binding with an exact scope per corpus, the project's
corpora (each a full corpus declaration plus its standing policy), the
module-owned surfaces (ordered compatible corpus ids, one ingest corpus, a
recall profile) and the automation policy (both flags default false,
``fail_open`` must be true). Nothing here is discovered: a surface lists its
corpora, and recall walks exactly those, in that order.

Every record is strict (unknown fields refused, field path named) and the
cross-record rules live in :class:`ExperimentConfig`, so a config built in code
is held to the same rules as one loaded from JSON:

- every corpus has exactly one scope in the binding; the binding's provider is
  each corpus's provider, and the binding materialised for a corpus matches it
  (scope digest, peer rules: :func:`reward_memory.guards.recall.binding_reasons`);
- corpus ids and surface ids are unique; all corpora name one workspace and
  project; every corpus is assigned to a surface;
- each standing policy fits its corpus (owner, workspace, project, identities,
  exactly its class, surfaces within the corpus's);
- a surface references declared corpora that list it (and whose policies list
  it), its ingest corpus is among them, and they agree on class, owner,
  read/write authority, the policy's authority source, privacy, freshness and
  lifecycle.

Differs from the original: ``provider_binary`` and ``minimum_provider_version``
(for the original's CLI subprocess provider) are not part of the binding; a
corpus scope may carry its own ``actor_peer_id`` (a project may hold corpora of
more than one peer); a ``function_boundary`` profile allows exactly one query.
"""

from __future__ import annotations

import functools
from typing import Any, ClassVar, Final, Literal, get_args

import attrs

from reward_memory._frozen import frozen
from reward_memory.errors import RecordValidationError
from reward_memory.grammars import check_corpus_id
from reward_memory.records import _fields as f
from reward_memory.records.corpus import CorpusDeclaration
from reward_memory.records.recall import (
    DEFAULT_TIMEOUT_SECONDS,
    MAX_LIMIT,
    MODES,
    Mode,
    ProviderBinding,
    SetupHints,
)
from reward_memory.records.standing_policy import StandingPolicy

__all__ = [
    "ADAPTERS",
    "EXPERIMENT_CONFIG_SCHEMA",
    "MAX_CONFIG_CORPORA",
    "MAX_SURFACES",
    "AutomationPolicy",
    "ConfiguredCorpus",
    "CorpusScopeBinding",
    "ExperimentConfig",
    "ProjectProviderBinding",
    "RecallProfile",
    "SurfaceConfig",
]

EXPERIMENT_CONFIG_SCHEMA: Final = "reward_memory_experiment_config_v1"
MAX_CONFIG_CORPORA: Final = 50
MAX_SURFACES: Final = 20
MAX_QUERIES: Final = 3
Adapter = Literal["issue_fix_maintainer_feedback", "scoped_feedback"]
ADAPTERS: Final[tuple[Adapter, ...]] = get_args(Adapter)


def _tuple(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


def _records_of(cls: type[Any], *, minimum: int, maximum: int) -> Any:
    def validate(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
        path = f"$.{attribute.name}"
        if not isinstance(value, tuple):
            raise RecordValidationError("must be a list", path=path, code="wrong_type")
        if not minimum <= len(value) <= maximum:
            raise RecordValidationError(
                f"must hold between {minimum} and {maximum} items", path=path, code="invalid_value"
            )
        for index, item in enumerate(value):
            if not isinstance(item, cls):
                raise RecordValidationError(
                    f"must be a {cls.__name__}", path=f"{path}[{index}]", code="wrong_type"
                )

    return validate


def _instance(cls: type[Any]) -> Any:
    def validate(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
        if not isinstance(value, cls):
            raise RecordValidationError(
                f"must be a {cls.__name__}", path=f"$.{attribute.name}", code="wrong_type"
            )

    return validate


def _timeout(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 1 <= value <= 120:
        raise RecordValidationError(
            "must be a number of seconds between 1 and 120",
            path=f"$.{attribute.name}",
            code="invalid_value",
        )


@frozen(kw_only=True)
class CorpusScopeBinding:
    """The exact provider scope of one corpus (and its actor peer, when peer-scoped)."""

    __rm_omit_none__: ClassVar[bool] = True

    corpus_id: str = f.corpus_id()
    scope_ref: str = f.token()
    actor_peer_id: str | None = f.optional_token()


@frozen(kw_only=True)
class ProjectProviderBinding:
    """The one provider of the project, and an exact scope for each corpus."""

    __rm_omit_none__: ClassVar[bool] = True

    provider_id: str = f.token()
    namespace: str = f.token()
    timeout_seconds: float = attrs.field(default=DEFAULT_TIMEOUT_SECONDS, validator=_timeout)
    setup_hints: SetupHints = attrs.field(factory=SetupHints, validator=_instance(SetupHints))
    actor_peer_id: str | None = f.optional_token()
    provider_binary: str | None = f.optional_text(240)
    minimum_provider_version: str | None = f.optional_text(64)
    corpus_scopes: tuple[CorpusScopeBinding, ...] = attrs.field(
        converter=_tuple,
        validator=_records_of(CorpusScopeBinding, minimum=1, maximum=MAX_CONFIG_CORPORA),
    )

    def binding_for(self, scope: CorpusScopeBinding) -> ProviderBinding:
        """The recall/ingest binding of one corpus: this binding plus that corpus's scope."""
        return ProviderBinding(
            corpus_id=scope.corpus_id,
            provider_id=self.provider_id,
            namespace=self.namespace,
            scope_ref=scope.scope_ref,
            timeout_seconds=self.timeout_seconds,
            actor_peer_id=scope.actor_peer_id or self.actor_peer_id,
            setup_hints=self.setup_hints,
            provider_binary=self.provider_binary,
            minimum_provider_version=self.minimum_provider_version,
        )


@frozen(kw_only=True)
class ConfiguredCorpus:
    """One corpus of the project: its full declaration and its standing policy."""

    corpus: CorpusDeclaration = attrs.field(validator=_instance(CorpusDeclaration))
    standing_policy: StandingPolicy = attrs.field(validator=_instance(StandingPolicy))


@frozen(kw_only=True)
class RecallProfile:
    """How a surface recalls: the mode, the query cap and the result limit."""

    profile_id: str = f.token()
    mode: Mode = f.enum(*MODES)
    max_queries: int = f.integer(minimum=1, maximum=MAX_QUERIES)
    limit: int = f.integer(minimum=1, maximum=MAX_LIMIT)

    def __attrs_post_init__(self) -> None:
        if self.mode == "function_boundary" and self.max_queries != 1:
            raise RecordValidationError(
                "a function_boundary profile allows exactly one query",
                path="$.max_queries",
                code="invalid_value",
            )


def _corpus_ids(value: Any, field: attrs.Attribute[Any]) -> tuple[str, ...]:
    # Ordered (it is the recall order), unique, 1-50 corpus ids.
    path = f"$.{field.name}"
    if not isinstance(value, list | tuple):
        raise RecordValidationError("must be a list", path=path, code="wrong_type")
    if not 1 <= len(value) <= MAX_CONFIG_CORPORA:
        raise RecordValidationError(
            f"must hold between 1 and {MAX_CONFIG_CORPORA} items", path=path, code="invalid_value"
        )
    seen: set[str] = set()
    for index, item in enumerate(value):
        check_corpus_id(item, f"{path}[{index}]")
        if item in seen:
            raise RecordValidationError(
                "must not repeat an item", path=f"{path}[{index}]", code="duplicate_item"
            )
        seen.add(item)
    return tuple(value)


def _corpus_id_list() -> Any:
    return attrs.field(converter=attrs.Converter(_corpus_ids, takes_field=True))


@frozen(kw_only=True)
class SurfaceConfig:
    """A module-owned surface: its adapter, its ordered corpora, its ingest corpus, its profile."""

    surface_id: str = f.surface_id()
    adapter: Adapter = f.enum(*ADAPTERS)
    corpus_ids: tuple[str, ...] = _corpus_id_list()
    ingest_corpus_id: str = f.corpus_id()
    recall_profile: RecallProfile = attrs.field(validator=_instance(RecallProfile))

    def __attrs_post_init__(self) -> None:
        if self.ingest_corpus_id not in self.corpus_ids:
            raise RecordValidationError(
                "the ingest corpus must be one of the surface's corpus_ids",
                path="$.ingest_corpus_id",
                code="unknown_reference",
            )


def _fail_open(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is not True:
        raise RecordValidationError(
            "reward-memory automation must be fail-open (fail_open: true)",
            path=f"$.{attribute.name}",
            code="fail_open_required",
        )


@frozen(kw_only=True)
class AutomationPolicy:
    """What the runtime hooks may do on their own: nothing, unless a flag is set."""

    automatic_recall: bool = f.strict_bool(default=False)
    automatic_ingest: bool = f.strict_bool(default=False)
    fail_open: Literal[True] = attrs.field(validator=_fail_open)


# What corpora on one surface must share (the seeds: "the same memory class,
# authority, privacy, freshness, and lifecycle"; the reference adds the owner
# and the policy's authority source).
_COMPATIBILITY: Final = (
    "class_id",
    "owner_ref",
    "read_authority",
    "write_authority",
    "authority_source_ref",
    "privacy",
    "freshness",
    "lifecycle",
)
_IDENTITIES: Final = ("user_ref", "peer_ref", "session_ref")


def _signature(entry: ConfiguredCorpus) -> tuple[Any, ...]:
    corpus = entry.corpus
    return (
        corpus.class_id,
        corpus.owner_ref,
        corpus.read_authority,
        corpus.write_authority,
        entry.standing_policy.authority_source_ref,
        corpus.privacy,
        corpus.freshness,
        corpus.lifecycle,
    )


def _error(message: str, path: str, code: str) -> RecordValidationError:
    return RecordValidationError(message, path=path, code=code)


def _check_policy(index: int, entry: ConfiguredCorpus) -> None:
    corpus, policy = entry.corpus, entry.standing_policy
    base = f"$.corpora[{index}].standing_policy"
    if policy.owner_ref != corpus.owner_ref:
        raise _error(
            "the standing policy's owner must be the corpus owner",
            f"{base}.owner_ref",
            "standing_policy_owner_mismatch",
        )
    for name in ("workspace_ref", "project_ref", *_IDENTITIES):
        if getattr(policy.scope, name) != getattr(corpus.scope, name):
            raise _error(
                f"the standing policy's {name} must be the corpus's",
                f"{base}.scope.{name}",
                f"standing_policy_{name.removesuffix('_ref')}_corpus_mismatch",
            )
    corpus_surfaces = set(corpus.scope.surface_ids)
    for position, surface in enumerate(policy.scope.surface_ids):
        if surface not in corpus_surfaces:
            raise _error(
                "the standing policy names a surface the corpus does not",
                f"{base}.scope.surface_ids[{position}]",
                "standing_policy_surface_exceeds_corpus",
            )
    if policy.allowed_target_classes != (corpus.class_id,):
        raise _error(
            "the standing policy must allow exactly the corpus's class",
            f"{base}.allowed_target_classes",
            "standing_policy_class_not_exact_for_corpus",
        )


def _check_corpora(config: ExperimentConfig) -> dict[str, int]:
    binding = config.project_provider_binding
    where: dict[str, int] = {}
    first = config.corpora[0].corpus.scope
    for index, entry in enumerate(config.corpora):
        corpus = entry.corpus
        base = f"$.corpora[{index}].corpus"
        if corpus.corpus_id in where:
            raise _error("corpus_id values must be unique", f"{base}.corpus_id", "duplicate_item")
        where[corpus.corpus_id] = index
        if corpus.provider_id != binding.provider_id:
            raise _error(
                "the corpus's provider must be the project binding's provider",
                f"{base}.provider_id",
                "provider_binding_provider_mismatch",
            )
        for name in ("workspace_ref", "project_ref"):
            if getattr(corpus.scope, name) != getattr(first, name):
                raise _error(
                    f"every corpus of one config names the same {name} (no cross-project config)",
                    f"{base}.scope.{name}",
                    "cross_project_config",
                )
        _check_policy(index, entry)
    return where


def _check_scopes(config: ExperimentConfig, where: dict[str, int]) -> None:
    from reward_memory.guards.recall import binding_reasons  # noqa: PLC0415

    binding = config.project_provider_binding
    scoped: set[str] = set()
    for index, scope in enumerate(binding.corpus_scopes):
        base = f"$.project_provider_binding.corpus_scopes[{index}]"
        if scope.corpus_id in scoped:
            raise _error("a corpus has exactly one scope", f"{base}.corpus_id", "duplicate_item")
        scoped.add(scope.corpus_id)
        if scope.corpus_id not in where:
            raise _error(
                "names a corpus that is not declared in corpora",
                f"{base}.corpus_id",
                "unknown_reference",
            )
        corpus = config.corpora[where[scope.corpus_id]].corpus
        reasons = binding_reasons(binding.binding_for(scope), corpus)
        if reasons:
            raise _error(
                "the corpus's scope does not match its declaration: " + ", ".join(reasons),
                f"{base}.scope_ref",
                reasons[0],
            )
    for corpus_id, index in where.items():
        if corpus_id not in scoped:
            raise _error(
                "every corpus needs exactly one scope in project_provider_binding.corpus_scopes",
                f"$.corpora[{index}].corpus.corpus_id",
                "corpus_scope_missing",
            )


def _check_surfaces(config: ExperimentConfig, where: dict[str, int]) -> None:
    surfaces: set[str] = set()
    assigned: set[str] = set()
    for index, surface in enumerate(config.surfaces):
        base = f"$.surfaces[{index}]"
        if surface.surface_id in surfaces:
            raise _error("surface_id values must be unique", f"{base}.surface_id", "duplicate_item")
        surfaces.add(surface.surface_id)
        signature: tuple[Any, ...] | None = None
        for position, corpus_id in enumerate(surface.corpus_ids):
            path = f"{base}.corpus_ids[{position}]"
            if corpus_id not in where:
                raise _error(
                    "names a corpus that is not declared in corpora", path, "unknown_reference"
                )
            assigned.add(corpus_id)
            entry = config.corpora[where[corpus_id]]
            if surface.surface_id not in entry.corpus.scope.surface_ids:
                raise _error(
                    "the corpus's scope does not list this surface", path, "surface_not_in_corpus"
                )
            if surface.surface_id not in entry.standing_policy.scope.surface_ids:
                raise _error(
                    "the corpus's standing policy does not list this surface",
                    path,
                    "surface_not_in_standing_policy",
                )
            mine = _signature(entry)
            if signature is None:
                signature = mine
            elif mine != signature:
                differs = [
                    n for n, a, b in zip(_COMPATIBILITY, signature, mine, strict=True) if a != b
                ]
                raise _error(
                    "surface corpora must share memory class, authority, privacy, freshness "
                    f"and lifecycle (this one differs in: {', '.join(differs)})",
                    path,
                    "surface_corpora_incompatible",
                )
    for corpus_id, index in where.items():
        if corpus_id not in assigned:
            raise _error(
                "every declared corpus must be assigned to an explicit surface",
                f"$.corpora[{index}].corpus.corpus_id",
                "corpus_unassigned",
            )


@frozen(kw_only=True)
class ExperimentConfig:
    """``reward_memory_experiment_config_v1``: one project's experiment, validated whole."""

    schema_version: Literal["reward_memory_experiment_config_v1"] = f.const(
        EXPERIMENT_CONFIG_SCHEMA
    )
    project_provider_binding: ProjectProviderBinding = attrs.field(
        validator=_instance(ProjectProviderBinding)
    )
    corpora: tuple[ConfiguredCorpus, ...] = attrs.field(
        converter=_tuple,
        validator=_records_of(ConfiguredCorpus, minimum=1, maximum=MAX_CONFIG_CORPORA),
    )
    surfaces: tuple[SurfaceConfig, ...] = attrs.field(
        converter=_tuple, validator=_records_of(SurfaceConfig, minimum=1, maximum=MAX_SURFACES)
    )
    automation: AutomationPolicy = attrs.field(validator=_instance(AutomationPolicy))

    def __attrs_post_init__(self) -> None:
        where = _check_corpora(self)
        _check_scopes(self, where)
        _check_surfaces(self, where)

    @functools.cached_property
    def corpus_index(self) -> dict[str, ConfiguredCorpus]:
        """Corpus id -> its configured corpus."""
        return {entry.corpus.corpus_id: entry for entry in self.corpora}

    @functools.cached_property
    def bindings(self) -> dict[str, ProviderBinding]:
        """Corpus id -> the provider binding materialised for it."""
        binding = self.project_provider_binding
        return {scope.corpus_id: binding.binding_for(scope) for scope in binding.corpus_scopes}

    def surface(self, surface_id: str) -> SurfaceConfig | None:
        """The configured surface, or ``None`` when this config has no such surface."""
        for surface in self.surfaces:
            if surface.surface_id == surface_id:
                return surface
        return None
