"""Stage-1 corpus declarations and the registry packet (``reward_memory_corpus_registry_v0``).

A corpus declaration is a compact, provider-neutral inventory entry: which
Stage-0 class a corpus holds, who owns it, its separate read and write
authority, its scope, freshness, lifecycle, retrieval requirements,
maintenance and privacy. It never carries memory content.

The registry packet is a stateless read model over declarations: it persists
nothing, writes nothing, and grants no authority. Its invariants (unique ids,
lifecycle lineage inside the registry, class coverage, count) live in the
record, so a registry loaded from JSON is held to the same rules as one built
by :func:`reward_memory.registry.build_registry`.

Differs from the original: unknown fields are rejected at every level (the
original dropped them), and ``provider_scope_ref_digest`` must be a digest
(16 hex or ``sha256:`` + 64 hex), never an arbitrary token such as a raw
scope URI.
"""

from __future__ import annotations

from typing import Any, ClassVar, Final, Literal, get_args

import attrs

from reward_memory._frozen import frozen
from reward_memory.errors import RecordValidationError
from reward_memory.grammars import check_digest
from reward_memory.records import _fields as f
from reward_memory.records.envelope import CLASS_IDS, ClassId

__all__ = [
    "BRIDGE_SCHEMA_VERSION",
    "FRESHNESS_MODES",
    "MAX_CORPORA",
    "READ_AUTHORITIES",
    "REGISTRY_SCHEMA_VERSION",
    "SOURCE_INVENTORY_SCHEMA",
    "VISIBILITIES",
    "WRITE_AUTHORITIES",
    "ClassCoverage",
    "CorpusDeclaration",
    "CorpusFreshness",
    "CorpusLifecycle",
    "CorpusMaintenance",
    "CorpusPrivacy",
    "CorpusRegistry",
    "CorpusRetrieval",
    "CorpusScope",
    "MaintenanceContract",
    "OpenVikingAlignment",
    "ProviderAlignment",
]

REGISTRY_SCHEMA_VERSION: Final = "reward_memory_corpus_registry_v0"
BRIDGE_SCHEMA_VERSION: Final = "reward_memory_semantic_preference_registry_bridge_v0"
SOURCE_INVENTORY_SCHEMA: Final = "semantic_preference_provider_response_v0"
MAX_CORPORA: Final = 50

ReadAuthority = Literal[
    "goal_run_scoped", "authority_scoped", "module_scoped", "actor_scoped", "session_scoped"
]
READ_AUTHORITIES: Final[tuple[ReadAuthority, ...]] = get_args(ReadAuthority)
WriteAuthority = Literal[
    "append_only_overlay",
    "authorized_policy_source",
    "provider_managed",
    "read_only",
    "ephemeral_runtime",
]
WRITE_AUTHORITIES: Final[tuple[WriteAuthority, ...]] = get_args(WriteAuthority)
FreshnessMode = Literal[
    "source_truth_bound", "revision_bound", "time_bound", "session_archive_bound", "execution_bound"
]
FRESHNESS_MODES: Final[tuple[FreshnessMode, ...]] = get_args(FreshnessMode)
VISIBILITIES: Final[tuple[str, ...]] = ("private", "workspace", "public_safe")

# Freshness modes that are meaningless without the revision they are bound to.
_REVISION_MODES: Final = frozenset({"revision_bound", "session_archive_bound"})


@frozen(kw_only=True)
class CorpusScope:
    """Where a corpus applies: workspace, project, module surfaces, optional identities."""

    workspace_ref: str = f.token()
    project_ref: str = f.token()
    surface_ids: tuple[str, ...] = f.surface_list(min_items=1, max_items=20)
    user_ref: str | None = f.optional_token()
    peer_ref: str | None = f.optional_token()
    session_ref: str | None = f.optional_token()


@frozen(kw_only=True)
class CorpusFreshness:
    """How currency is proven: the mode, and the revision or maximum age it needs."""

    mode: FreshnessMode = f.enum(*FRESHNESS_MODES)
    source_revision: str | None = f.optional_token()
    max_age_seconds: int | None = f.integer(minimum=1, default=None)

    def __attrs_post_init__(self) -> None:
        if self.mode in _REVISION_MODES and self.source_revision is None:
            raise RecordValidationError(
                f"freshness mode {self.mode} requires source_revision",
                path="$.source_revision",
                code="missing_field",
            )
        if self.mode == "time_bound" and self.max_age_seconds is None:
            raise RecordValidationError(
                "freshness mode time_bound requires max_age_seconds",
                path="$.max_age_seconds",
                code="missing_field",
            )


@frozen(kw_only=True)
class CorpusLifecycle:
    """Active, superseded or retired, with compact lineage (corpus ids only)."""

    state: Literal["active", "superseded", "retired"] = f.enum("active", "superseded", "retired")
    supersedes: tuple[str, ...] = f.corpus_id_list(max_items=MAX_CORPORA)
    superseded_by: str | None = f.optional_corpus_id()
    retirement_reason: str | None = f.optional_token()

    def __attrs_post_init__(self) -> None:
        # A lifecycle is consistent or invalid: an active corpus has no successor
        # and no retirement reason (a "half-retired" corpus would look live), and a
        # superseded one is not also retired by reason alone.
        if self.state == "active":
            if self.superseded_by is not None:
                raise RecordValidationError(
                    "an active corpus cannot name a successor",
                    path="$.superseded_by",
                    code="invalid_state",
                )
            if self.retirement_reason is not None:
                raise RecordValidationError(
                    "an active corpus cannot carry a retirement reason",
                    path="$.retirement_reason",
                    code="invalid_state",
                )
        if self.state == "superseded" and self.retirement_reason is not None:
            raise RecordValidationError(
                "a superseded corpus carries no retirement reason (retire it instead)",
                path="$.retirement_reason",
                code="invalid_state",
            )
        if self.state == "superseded" and self.superseded_by is None:
            raise RecordValidationError(
                "a superseded corpus names the corpus that superseded it",
                path="$.superseded_by",
                code="missing_field",
            )
        if self.state == "retired" and self.retirement_reason is None:
            raise RecordValidationError(
                "a retired corpus keeps a compact retirement_reason",
                path="$.retirement_reason",
                code="missing_field",
            )

    def references(self) -> tuple[tuple[str, str], ...]:
        """Every lineage reference as ``(relative path, corpus id)``."""
        refs = [(f"supersedes[{index}]", ref) for index, ref in enumerate(self.supersedes)]
        if self.superseded_by is not None:
            refs.append(("superseded_by", self.superseded_by))
        return tuple(refs)


@frozen(kw_only=True)
class CorpusRetrieval:
    """Which proofs the corpus requires: a derived index, readback, an application receipt."""

    index_required: bool = f.strict_bool()
    readback_required: bool = f.strict_bool()
    application_receipt_required: bool = f.strict_bool()


@frozen(kw_only=True)
class CorpusMaintenance:
    """What triggers a writeback, what closes it, and who may retire the corpus."""

    writeback_triggers: tuple[str, ...] = f.token_list(max_items=10)
    closure_policy: str = f.token()
    retirement_authority: str = f.token()


def _no_raw_content(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if not isinstance(value, bool):
        raise RecordValidationError(
            "must be a boolean", path=f"$.{attribute.name}", code="wrong_type"
        )
    if value:
        raise RecordValidationError(
            "the registry must not contain raw memory content",
            path=f"$.{attribute.name}",
            code="invalid_value",
        )


@frozen(kw_only=True)
class CorpusPrivacy:
    """Visibility, and the stated invariant that no raw content is in the registry."""

    visibility: Literal["private", "workspace", "public_safe"] = f.enum(*VISIBILITIES)
    # Required and always false: a declaration must say so explicitly.
    raw_content_in_registry: Literal[False] = attrs.field(validator=_no_raw_content)


def _optional_digest(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is not None:
        check_digest(value, f"$.{attribute.name}")


@frozen(kw_only=True)
class CorpusDeclaration:
    """One provider-owned corpus, declared without its content (reference §3.1)."""

    # provider_scope_ref_digest and read_role are left out of the wire form when
    # absent, as in the original.
    __rm_omit_none__: ClassVar[bool] = True

    corpus_id: str = f.corpus_id()
    class_id: ClassId = f.enum(*CLASS_IDS)
    provider_id: str = f.token()
    owner_ref: str = f.token()
    source_of_truth: str = f.token()
    read_authority: ReadAuthority = f.enum(*READ_AUTHORITIES)
    write_authority: WriteAuthority = f.enum(*WRITE_AUTHORITIES)
    # Nested records are checked to be records: a programmer's dict (a privacy block
    # saying raw content is in the registry, say) would pass their rules unchecked.
    scope: CorpusScope = f.record(CorpusScope)
    freshness: CorpusFreshness = f.record(CorpusFreshness)
    lifecycle: CorpusLifecycle = f.record(CorpusLifecycle)
    retrieval: CorpusRetrieval = f.record(CorpusRetrieval)
    maintenance: CorpusMaintenance = f.record(CorpusMaintenance)
    privacy: CorpusPrivacy = f.record(CorpusPrivacy)
    provider_scope_ref_digest: str | None = attrs.field(default=None, validator=_optional_digest)
    read_role: str | None = f.optional_token()

    def __attrs_post_init__(self) -> None:
        for where, ref in self.lifecycle.references():
            if ref == self.corpus_id:
                raise RecordValidationError(
                    "a corpus lifecycle must not reference the corpus itself",
                    path=f"$.lifecycle.{where}",
                    code="invalid_value",
                )


def _as_tuple(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


@frozen(kw_only=True)
class ClassCoverage:
    """For each of the five Stage-0 classes, the sorted ids of the corpora holding it."""

    # Every key is always present (an uncovered class lists no corpora); the
    # registry checks the lists against its corpora.
    run_bound_reward: tuple[str, ...] = attrs.field(converter=_as_tuple)
    hard_policy: tuple[str, ...] = attrs.field(converter=_as_tuple)
    soft_preference: tuple[str, ...] = attrs.field(converter=_as_tuple)
    procedural_experience: tuple[str, ...] = attrs.field(converter=_as_tuple)
    working_context: tuple[str, ...] = attrs.field(converter=_as_tuple)

    @classmethod
    def of(cls, corpora: tuple[CorpusDeclaration, ...]) -> ClassCoverage:
        """The coverage a set of declarations implies."""
        by_class: dict[str, list[str]] = {class_id: [] for class_id in CLASS_IDS}
        for corpus in corpora:
            by_class[corpus.class_id].append(corpus.corpus_id)
        return cls(**{class_id: tuple(sorted(ids)) for class_id, ids in by_class.items()})


@frozen(kw_only=True)
class MaintenanceContract:
    """The six constant maintenance rules every registry restates."""

    inventory_owner: Literal["provider_or_canonical_source_owner"] = f.const(
        "provider_or_canonical_source_owner"
    )
    write_rule: Literal["write_only_through_declared_write_authority"] = f.const(
        "write_only_through_declared_write_authority"
    )
    freshness_rule: Literal["verify_source_truth_revision_or_archive_before_use"] = f.const(
        "verify_source_truth_revision_or_archive_before_use"
    )
    supersession_rule: Literal["preserve_lineage_and_stop_recalling_inactive_items"] = f.const(
        "preserve_lineage_and_stop_recalling_inactive_items"
    )
    retirement_rule: Literal["retain_compact_reason_without_raw_content"] = f.const(
        "retain_compact_reason_without_raw_content"
    )
    scope_rule: Literal["fail_closed_on_project_or_surface_mismatch"] = f.const(
        "fail_closed_on_project_or_surface_mismatch"
    )


@frozen(kw_only=True)
class OpenVikingAlignment:
    """How OpenViking's concepts map onto the reference corpus families (constant)."""

    content_source_of_truth: Literal["agfs_content"] = f.const("agfs_content")
    index_role: Literal["derived_retrieval_reference"] = f.const("derived_retrieval_reference")
    preferences: Literal["scoped_preferences"] = f.const("scoped_preferences")
    trajectories: Literal["execution_trajectories"] = f.const("execution_trajectories")
    experiences: Literal["distilled_experiences"] = f.const("distilled_experiences")
    working_memory: Literal["session_working_memory"] = f.const("session_working_memory")
    cases: Literal["evaluation_fixture_not_registered_as_executable_memory"] = f.const(
        "evaluation_fixture_not_registered_as_executable_memory"
    )


@frozen(kw_only=True)
class ProviderAlignment:
    """Provider-specific alignment notes (OpenViking only, for now)."""

    openviking: OpenVikingAlignment


def _check_registry(registry: CorpusRegistry) -> None:
    corpora = registry.corpora
    if not isinstance(corpora, tuple):
        raise RecordValidationError("must be a list", path="$.corpora", code="wrong_type")
    for index, corpus in enumerate(corpora):
        if not isinstance(corpus, CorpusDeclaration):
            raise RecordValidationError(
                "must be a CorpusDeclaration", path=f"$.corpora[{index}]", code="wrong_type"
            )
    if not 1 <= len(corpora) <= MAX_CORPORA:
        raise RecordValidationError(
            f"must hold between 1 and {MAX_CORPORA} corpora", path="$.corpora", code="invalid_value"
        )
    if registry.corpus_count != len(corpora):
        raise RecordValidationError(
            "must equal the number of corpora", path="$.corpus_count", code="invalid_value"
        )
    seen: set[str] = set()
    for index, corpus in enumerate(corpora):
        if corpus.corpus_id in seen:
            raise RecordValidationError(
                "corpus_id values must be unique",
                path=f"$.corpora[{index}].corpus_id",
                code="duplicate_item",
            )
        seen.add(corpus.corpus_id)
    for index, corpus in enumerate(corpora):
        for where, ref in corpus.lifecycle.references():
            path = f"$.corpora[{index}].lifecycle.{where}"
            if ref == corpus.corpus_id:
                raise RecordValidationError(
                    "a corpus lifecycle must not reference the corpus itself",
                    path=path,
                    code="invalid_value",
                )
            if ref not in seen:
                raise RecordValidationError(
                    "a corpus lifecycle references a corpus_id that is not in this registry",
                    path=path,
                    code="unknown_reference",
                )
    _check_lineage(corpora)
    if registry.status == "reference_registry":
        # The status says which registry this is (given no corpora): a recorded
        # verdict the contents do not bear out is refused.
        from reward_memory.registry import reference_corpora  # noqa: PLC0415 - a cycle

        if corpora != reference_corpora():
            raise RecordValidationError(
                "a reference_registry holds exactly the reference corpora (else: registered)",
                path="$.status",
                code="invalid_value",
            )
    if registry.class_coverage != ClassCoverage.of(corpora):
        raise RecordValidationError(
            "must list, per class, exactly the sorted ids of the corpora of that class",
            path="$.class_coverage",
            code="invalid_value",
        )
    if (registry.bridge_schema_version is None) != (registry.source_inventory_schema is None):
        raise RecordValidationError(
            "bridge_schema_version and source_inventory_schema go together",
            path="$.source_inventory_schema",
            code="invalid_value",
        )
    if registry.bridge_schema_version is not None and registry.status != "registered":
        raise RecordValidationError(
            "a bridged inventory is a registered registry", path="$.status", code="invalid_value"
        )


def _check_lineage(corpora: tuple[CorpusDeclaration, ...]) -> None:
    """The registry's lineage agrees with itself: a corpus another supersedes is no longer
    active (it stops influencing recall), and a chain of successors ends (no cycle)."""
    index_of = {corpus.corpus_id: index for index, corpus in enumerate(corpora)}
    for corpus in corpora:
        for old in corpus.lifecycle.supersedes:
            if corpora[index_of[old]].lifecycle.state == "active":
                raise RecordValidationError(
                    f"is superseded by {corpus.corpus_id}, so it cannot stay active",
                    path=f"$.corpora[{index_of[old]}].lifecycle.state",
                    code="invalid_state",
                )
    for index, corpus in enumerate(corpora):
        seen = {corpus.corpus_id}
        successor = corpus.lifecycle.superseded_by
        while successor is not None:
            if successor in seen:
                raise RecordValidationError(
                    "a chain of successors must end in a corpus that is not superseded",
                    path=f"$.corpora[{index}].lifecycle.superseded_by",
                    code="invalid_state",
                )
            seen.add(successor)
            successor = corpora[index_of[successor]].lifecycle.superseded_by


def _optional_const(expected: str) -> Any:
    def validate(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
        if value is not None and value != expected:
            raise RecordValidationError(
                f"must be {expected!r} or absent", path=f"$.{attribute.name}", code="invalid_value"
            )

    return validate


@frozen(kw_only=True)
class CorpusRegistry:
    """The Stage-1 registry packet: a stateless read model, never a memory store."""

    # The bridge keys appear only on a registry bridged from a provider inventory.
    __rm_omit_none__: ClassVar[bool] = True

    ok: Literal[True] = f.const(True)
    schema_version: Literal["reward_memory_corpus_registry_v0"] = f.const(REGISTRY_SCHEMA_VERSION)
    status: Literal["reference_registry", "registered"] = f.enum("reference_registry", "registered")
    registry_role: Literal["stateless_read_model_not_memory_source_of_truth"] = f.const(
        "stateless_read_model_not_memory_source_of_truth"
    )
    corpus_count: int = f.integer(minimum=1, maximum=MAX_CORPORA)
    corpora: tuple[CorpusDeclaration, ...] = attrs.field(converter=_as_tuple)
    class_coverage: ClassCoverage = f.record(ClassCoverage)
    maintenance_contract: MaintenanceContract = f.record(MaintenanceContract)
    provider_alignment: ProviderAlignment = f.record(ProviderAlignment)
    raw_memory_captured: Literal[False] = f.const(False)
    registry_persisted: Literal[False] = f.const(False)
    provider_write_performed: Literal[False] = f.const(False)
    external_writes_performed: Literal[False] = f.const(False)
    bridge_schema_version: (
        Literal["reward_memory_semantic_preference_registry_bridge_v0"] | None
    ) = attrs.field(default=None, validator=_optional_const(BRIDGE_SCHEMA_VERSION))
    source_inventory_schema: Literal["semantic_preference_provider_response_v0"] | None = (
        attrs.field(default=None, validator=_optional_const(SOURCE_INVENTORY_SCHEMA))
    )

    def __attrs_post_init__(self) -> None:
        _check_registry(self)
