"""Packets about the schema catalogue itself (``reward-memory schema``)."""

from __future__ import annotations

from typing import Literal

from reward_memory._frozen import frozen
from reward_memory.records import _fields as f

__all__ = ["SchemaCatalog", "SchemaEntry", "SchemaValidation"]


@frozen(kw_only=True)
class SchemaEntry:
    """One bundled schema: its name (the ``schema_version`` it validates) and ``$id``."""

    name: str
    id: str
    title: str


@frozen(kw_only=True)
class SchemaCatalog:
    """``reward-memory schema list``: every bundled packet schema."""

    ok: Literal[True] = f.const(True)
    schema_version: Literal["reward_memory_schema_catalog_v0"] = f.const(
        "reward_memory_schema_catalog_v0"
    )
    schema_count: int = f.integer(minimum=0)
    schemas: tuple[SchemaEntry, ...]


@frozen(kw_only=True)
class SchemaValidation:
    """``reward-memory schema validate FILE``: the packet fits its schema and record model."""

    ok: Literal[True] = f.const(True)
    schema_version: Literal["reward_memory_schema_validation_v0"] = f.const(
        "reward_memory_schema_validation_v0"
    )
    status: Literal["valid"] = f.const("valid")
    validated_schema: str
    record_type: str
