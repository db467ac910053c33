"""Stage-1 corpus registry: the seven reference families, and registries of your own.

The registry is a stateless read model over provider-owned corpora. Building
one reads no provider, writes nothing, persists nothing and grants no
authority; it only checks that the declarations are well formed and agree
with each other (unique ids, lineage inside the registry, class coverage).

The seven reference families (reference §3.3) are declarative families, not a
claim that a live provider or corpus is configured. A live module declares its
own corpora and calls :func:`build_registry`, or bridges a semantic-preference
provider inventory with :func:`semantic_preference_registry` (the raw provider
scope reference never leaves that function: only its 16-hex digest does).

Pure functions: no I/O, no provider calls.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final, NamedTuple

from reward_memory.errors import RecordValidationError
from reward_memory.grammars import check_corpus_id, check_surface_id, check_token
from reward_memory.records.corpus import (
    BRIDGE_SCHEMA_VERSION,
    MAX_CORPORA,
    SOURCE_INVENTORY_SCHEMA,
    ClassCoverage,
    CorpusDeclaration,
    CorpusFreshness,
    CorpusLifecycle,
    CorpusMaintenance,
    CorpusPrivacy,
    CorpusRegistry,
    CorpusRetrieval,
    CorpusScope,
    MaintenanceContract,
    OpenVikingAlignment,
    ProviderAlignment,
)

__all__ = [
    "REFERENCE_CORPUS_IDS",
    "build_registry",
    "reference_corpora",
    "reference_corpus",
    "reference_registry",
    "semantic_preference_registry",
]


class _Family(NamedTuple):
    """One reference family (reference §3.3); owner_ref is also the retirement authority."""

    corpus_id: str
    class_id: str
    provider_id: str
    owner_ref: str
    source_of_truth: str
    read_authority: str
    write_authority: str
    surface: str
    freshness_mode: str
    source_revision: str | None
    # index, readback and application-receipt required, in that order
    required: tuple[bool, bool, bool]
    writeback_triggers: tuple[str, ...]
    closure_policy: str


_FAMILIES: Final = (
    _Family(
        corpus_id="run_reward_overlays",
        class_id="run_bound_reward",
        provider_id="loopx_control_plane",
        owner_ref="loopx_reward_ledger",
        source_of_truth="human_reward_event_ledger",
        read_authority="goal_run_scoped",
        write_authority="append_only_overlay",
        surface="control_plane.reward_review",
        freshness_mode="source_truth_bound",
        source_revision=None,
        required=(False, True, False),
        writeback_triggers=("explicit_human_reward", "correction_or_revocation"),
        closure_policy="append_event_then_readback",
    ),
    _Family(
        corpus_id="authority_policy_sources",
        class_id="hard_policy",
        provider_id="loopx_control_plane",
        owner_ref="canonical_authority_sources",
        source_of_truth="user_repository_operator_authority",
        read_authority="authority_scoped",
        write_authority="authorized_policy_source",
        surface="control_plane.action_gate",
        freshness_mode="source_truth_bound",
        source_revision=None,
        required=(False, True, False),
        writeback_triggers=(
            "authority_source_changed",
            "verified_contributor_policy_derived",
            "expiry_reached",
        ),
        closure_policy="verified_actor_scope_then_canonical_policy_readback",
    ),
    _Family(
        corpus_id="scoped_preferences",
        class_id="soft_preference",
        provider_id="configured_memory_provider",
        owner_ref="provider_scope_owner",
        source_of_truth="explicit_reviewed_feedback",
        read_authority="module_scoped",
        write_authority="provider_managed",
        surface="module.owned_surface",
        freshness_mode="source_truth_bound",
        source_revision=None,
        required=(True, True, True),
        writeback_triggers=("explicit_feedback", "source_truth_changed"),
        closure_policy="provider_write_index_read_and_scoped_recall",
    ),
    _Family(
        corpus_id="execution_trajectories",
        class_id="procedural_experience",
        provider_id="configured_memory_provider",
        owner_ref="provider_scope_owner",
        source_of_truth="revision_stamped_execution",
        read_authority="module_scoped",
        write_authority="provider_managed",
        surface="issue_fix.diagnosis",
        freshness_mode="revision_bound",
        source_revision="revision:observed",
        required=(True, True, True),
        writeback_triggers=("validated_execution",),
        closure_policy="provider_write_then_revision_verified_read",
    ),
    _Family(
        corpus_id="distilled_experiences",
        class_id="procedural_experience",
        provider_id="configured_memory_provider",
        owner_ref="provider_scope_owner",
        source_of_truth="reviewed_revision_lineage",
        read_authority="module_scoped",
        write_authority="provider_managed",
        surface="issue_fix.routing",
        freshness_mode="revision_bound",
        source_revision="revision:observed",
        required=(True, True, True),
        writeback_triggers=("reviewed_candidate", "source_truth_changed"),
        closure_policy="provider_write_then_revision_verified_read",
    ),
    _Family(
        corpus_id="session_working_memory",
        class_id="working_context",
        provider_id="configured_session_provider",
        owner_ref="session_owner",
        source_of_truth="completed_session_archive",
        read_authority="session_scoped",
        write_authority="provider_managed",
        surface="session.continuation",
        freshness_mode="session_archive_bound",
        source_revision="archive:completed",
        required=(False, True, False),
        writeback_triggers=("completed_session_archive",),
        closure_policy="completed_archive_then_direct_read",
    ),
    _Family(
        corpus_id="fresh_execution_context",
        class_id="working_context",
        provider_id="loopx_runtime",
        owner_ref="current_execution",
        source_of_truth="registry_todo_checkout_observation",
        read_authority="actor_scoped",
        write_authority="ephemeral_runtime",
        surface="control_plane.current_execution",
        freshness_mode="execution_bound",
        source_revision=None,
        required=(False, True, False),
        writeback_triggers=("fresh_source_observed",),
        closure_policy="fresh_read_replaces_prior_context",
    ),
)
# Only the session family is bound to a session; every family is otherwise
# workspace:exact / project:exact, private, active with no lineage.
_SESSION_REFS: Final = {"session_working_memory": "session:exact"}

REFERENCE_CORPUS_IDS: Final[tuple[str, ...]] = tuple(family.corpus_id for family in _FAMILIES)

_BRIDGE_ITEM_KEYS: Final = frozenset(
    {
        "corpus_id",
        "scope_ref",
        "read_role",
        "write_mode",
        "write_actor_ref",
        "source_of_truth",
        "writeback_triggers",
        "closure_policy",
    }
)


def _family(row: _Family) -> CorpusDeclaration:
    index, readback, receipt = row.required
    return CorpusDeclaration(
        corpus_id=row.corpus_id,
        class_id=row.class_id,  # type: ignore[arg-type]  # checked by the record
        provider_id=row.provider_id,
        owner_ref=row.owner_ref,
        source_of_truth=row.source_of_truth,
        read_authority=row.read_authority,  # type: ignore[arg-type]
        write_authority=row.write_authority,  # type: ignore[arg-type]
        scope=CorpusScope(
            workspace_ref="workspace:exact",
            project_ref="project:exact",
            surface_ids=(row.surface,),
            session_ref=_SESSION_REFS.get(row.corpus_id),
        ),
        freshness=CorpusFreshness(
            mode=row.freshness_mode,  # type: ignore[arg-type]
            source_revision=row.source_revision,
        ),
        lifecycle=CorpusLifecycle(state="active"),
        retrieval=CorpusRetrieval(
            index_required=index, readback_required=readback, application_receipt_required=receipt
        ),
        maintenance=CorpusMaintenance(
            writeback_triggers=row.writeback_triggers,
            closure_policy=row.closure_policy,
            retirement_authority=row.owner_ref,
        ),
        privacy=CorpusPrivacy(visibility="private", raw_content_in_registry=False),
    )


def reference_corpus(corpus_id: str) -> CorpusDeclaration:
    """One of the seven reference families, by id (cheaper than building the registry)."""
    for row in _FAMILIES:
        if row.corpus_id == corpus_id:
            return _family(row)
    raise RecordValidationError(
        "names no reference corpus family", path="$.corpus_id", code="invalid_value"
    )


@functools.cache  # frozen records: one tuple serves every caller
def reference_corpora() -> tuple[CorpusDeclaration, ...]:
    """The seven reference corpus families, in reference order."""
    return tuple(_family(row) for row in _FAMILIES)


def _assemble(
    corpora: tuple[CorpusDeclaration, ...], *, status: str, bridged: bool = False
) -> CorpusRegistry:
    return CorpusRegistry(
        status=status,  # type: ignore[arg-type]  # checked by the record
        corpus_count=len(corpora),
        corpora=corpora,
        class_coverage=ClassCoverage.of(corpora),
        maintenance_contract=MaintenanceContract(),
        provider_alignment=ProviderAlignment(openviking=OpenVikingAlignment()),
        bridge_schema_version=BRIDGE_SCHEMA_VERSION if bridged else None,
        source_inventory_schema=SOURCE_INVENTORY_SCHEMA if bridged else None,
    )


def reference_registry() -> CorpusRegistry:
    """The reference registry: all five classes through seven corpus families."""
    return _assemble(reference_corpora(), status="reference_registry")


def build_registry(corpora: Iterable[CorpusDeclaration]) -> CorpusRegistry:
    """A ``registered`` registry over 1 to 50 declarations.

    Raises :class:`RecordValidationError` (path under ``$.corpora``) when an item
    is not a declaration, when ids repeat, or when a lifecycle reference names
    the corpus itself or a corpus that is not in the same registry.
    """
    if isinstance(corpora, str | bytes | Mapping) or not isinstance(corpora, Iterable):
        raise RecordValidationError(
            "must be a list of corpora", path="$.corpora", code="wrong_type"
        )
    items = tuple(corpora)
    for index, item in enumerate(items):
        if not isinstance(item, CorpusDeclaration):
            raise RecordValidationError(
                "must be a CorpusDeclaration", path=f"$.corpora[{index}]", code="wrong_type"
            )
    return _assemble(items, status="registered")


def _bridge_item(
    item: Any,
    index: int,
    *,
    provider_id: str,
    workspace_ref: str,
    project_ref: str,
    surface: str,
    source_revision: str | None,
) -> CorpusDeclaration:
    path = f"$.inventory[{index}]"
    if not isinstance(item, Mapping):
        raise RecordValidationError("must be an object", path=path, code="wrong_type")
    extras = sorted(str(key) for key in item if key not in _BRIDGE_ITEM_KEYS)
    if extras:
        raise RecordValidationError(
            f"unknown field: {', '.join(extras)}", path=f"{path}.{extras[0]}", code="unknown_field"
        )
    for key in (
        "corpus_id",
        "scope_ref",
        "read_role",
        "write_mode",
        "source_of_truth",
        "closure_policy",
    ):
        if key not in item:
            raise RecordValidationError(
                "required field is missing", path=f"{path}.{key}", code="missing_field"
            )
    corpus_id = check_corpus_id(item["corpus_id"], f"{path}.corpus_id")
    # The raw scope reference (often a provider URI) is checked, hashed and dropped.
    scope_ref = check_token(item["scope_ref"], f"{path}.scope_ref")
    write_mode = item["write_mode"]
    if write_mode not in ("read_only", "provider_managed"):
        raise RecordValidationError(
            "must be one of: read_only, provider_managed",
            path=f"{path}.write_mode",
            code="invalid_value",
        )
    actor = item.get("write_actor_ref")
    owner_ref = provider_id if actor is None else check_token(actor, f"{path}.write_actor_ref")
    triggers = item.get("writeback_triggers", [])
    if not isinstance(triggers, list):
        raise RecordValidationError(
            "must be a list", path=f"{path}.writeback_triggers", code="wrong_type"
        )
    triggers = tuple(triggers)
    try:
        return CorpusDeclaration(
            corpus_id=corpus_id,
            class_id="soft_preference",
            provider_id=provider_id,
            owner_ref=owner_ref,
            source_of_truth=item["source_of_truth"],
            read_authority="module_scoped",
            write_authority=write_mode,
            scope=CorpusScope(
                workspace_ref=workspace_ref, project_ref=project_ref, surface_ids=(surface,)
            ),
            freshness=(
                CorpusFreshness(mode="revision_bound", source_revision=source_revision)
                if source_revision is not None
                else CorpusFreshness(mode="source_truth_bound")
            ),
            lifecycle=CorpusLifecycle(state="active"),
            retrieval=CorpusRetrieval(
                index_required=True, readback_required=True, application_receipt_required=True
            ),
            maintenance=CorpusMaintenance(
                writeback_triggers=triggers,
                closure_policy=item["closure_policy"],
                retirement_authority=owner_ref,
            ),
            privacy=CorpusPrivacy(visibility="private", raw_content_in_registry=False),
            provider_scope_ref_digest=hashlib.sha256(scope_ref.encode("utf-8")).hexdigest()[:16],
            read_role=check_token(item["read_role"], f"{path}.read_role"),  # required: a token
        )
    except RecordValidationError as exc:
        if exc.path.startswith(path):  # named in the caller's terms already
            raise
        # The remaining item keys are spelled like the record fields that check
        # them (source_of_truth, writeback_triggers[i], closure_policy, read_role).
        clone = exc.under("$")
        clone.path = path + exc.path[1:]
        raise clone from None


def semantic_preference_registry(
    inventory: Sequence[Mapping[str, Any]],
    *,
    provider_id: str,
    workspace_ref: str,
    project_ref: str,
    surface: str,
    source_revision: str | None = None,
) -> CorpusRegistry:
    """Bridge a semantic-preference provider inventory into a ``registered`` registry.

    Each inventory item (``corpus_id``, ``scope_ref``, ``read_role``,
    ``write_mode``, optional ``write_actor_ref``, ``source_of_truth``,
    ``writeback_triggers``, ``closure_policy``; nothing else) becomes a
    ``soft_preference`` corpus scoped to exactly ``project_ref`` and
    ``surface``. The item's ``scope_ref`` is kept only as its 16-hex sha256
    digest (``provider_scope_ref_digest``): the raw provider scope never
    appears in the registry.
    """
    provider = check_token(provider_id, "$.provider_id")
    workspace = check_token(workspace_ref, "$.workspace_ref")
    project = check_token(project_ref, "$.project_ref")
    surface_id = check_surface_id(surface, "$.surface")
    revision = (
        None if source_revision is None else check_token(source_revision, "$.source_revision")
    )
    if isinstance(inventory, str | bytes) or not isinstance(inventory, Sequence):  # type: ignore[unreachable]
        raise RecordValidationError("must be a list", path="$.inventory", code="wrong_type")
    if not 1 <= len(inventory) <= MAX_CORPORA:
        raise RecordValidationError(
            f"must hold between 1 and {MAX_CORPORA} items", path="$.inventory", code="invalid_value"
        )
    corpora = tuple(
        _bridge_item(
            item,
            index,
            provider_id=provider,
            workspace_ref=workspace,
            project_ref=project,
            surface=surface_id,
            source_revision=revision,
        )
        for index, item in enumerate(inventory)
    )
    seen: set[str] = set()
    for index, corpus in enumerate(corpora):  # named where the caller wrote it
        if corpus.corpus_id in seen:
            raise RecordValidationError(
                "corpus_id values must be unique",
                path=f"$.inventory[{index}].corpus_id",
                code="duplicate_item",
            )
        seen.add(corpus.corpus_id)
    return _assemble(corpora, status="registered", bridged=True)
