"""Records of the Stage-0 architecture contract (``reward_memory_architecture_v0``).

The contract is constant data (``reward_memory/data/architecture_v0.json``);
these records give it a typed shape. Deeply nested descriptive maps (field
contracts, routing contract, provider alignment, ...) stay plain mappings:
they are vocabulary, not behaviour, and the schema pins their shape.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import attrs

from reward_memory._frozen import frozen
from reward_memory.records import _fields as f
from reward_memory.records.envelope import CLASS_IDS, ClassId

__all__ = ["ArchitectureContract", "MemoryClassSpec"]


@frozen(kw_only=True)
class MemoryClassSpec:
    """One of the five memory classes: purpose, sources, scope floor, authority, lifecycle."""

    # Optional descriptive keys are left out of the wire form when absent.
    __rm_omit_none__: ClassVar[bool] = True

    class_id: ClassId = f.enum(*CLASS_IDS)
    purpose: str
    source_kinds: tuple[str, ...]
    scope_floor: tuple[str, ...]
    authority: str
    future_influence: str
    durability: str
    supersession: str
    revocation: str
    expiry: str
    privacy: str
    durable_recall_eligible: bool = f.strict_bool()
    candidate_target: bool = f.strict_bool()
    excluded_sources: tuple[str, ...] | None = None
    derivation: dict[str, Any] | None = None
    experience_subtypes: tuple[str, ...] | None = None
    context_subtypes: tuple[str, ...] | None = None
    subtype_status: dict[str, str] | None = None


def _five_classes(
    _: Any, attribute: attrs.Attribute[Any], value: tuple[MemoryClassSpec, ...]
) -> None:
    from reward_memory.errors import RecordValidationError  # noqa: PLC0415

    if tuple(spec.class_id for spec in value) != CLASS_IDS:
        raise RecordValidationError(
            "must list the five memory classes once each, in contract order",
            path=f"$.{attribute.name}",
            code="invalid_value",
        )


@frozen(kw_only=True)
class ArchitectureContract:
    """The Stage-0 classification, precedence, invariants and stage boundaries."""

    ok: Literal[True] = f.const(True)
    schema_version: Literal["reward_memory_architecture_v0"] = f.const(
        "reward_memory_architecture_v0"
    )
    status: Literal["design_contract"] = f.const("design_contract")
    memory_classes: tuple[MemoryClassSpec, ...] = attrs.field(validator=_five_classes)
    required_record_fields: tuple[str, ...]
    field_contracts: dict[str, Any]
    lifecycle_states: tuple[str, ...]
    routing_contract: dict[str, Any]
    precedence: tuple[str, ...]
    conflict_resolution: tuple[str, ...]
    safety_invariants: tuple[str, ...]
    existing_capability_reuse: dict[str, Any]
    provider_alignment: dict[str, Any]
    pilot_meta_delegation: dict[str, Any]
    stage_boundaries: dict[str, str]
    external_writes_performed: Literal[False] = f.const(False)
    raw_memory_captured: Literal[False] = f.const(False)
