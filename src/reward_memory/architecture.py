"""Stage 0: the architecture contract (five classes, precedence, invariants, stages).

The packet is constant data shipped with the package. :func:`architecture_packet`
returns it as plain JSON data (the CLI's fast path: no attrs or cattrs import);
:func:`architecture_contract` returns the typed record.
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from reward_memory.records.architecture import ArchitectureContract

__all__ = [
    "CLASS_PRECEDENCE",
    "PRECEDENCE",
    "architecture_contract",
    "architecture_packet",
]

# The seeds' guarded precedence, highest first (an attention envelope, not a router).
PRECEDENCE: Final = (
    "explicit_action_authority_and_privacy_boundary",
    "active_in_scope_hard_policy",
    "fresh_working_context_and_current_source_of_truth",
    "current_artifact_verified_procedural_experience",
    "active_in_scope_soft_preference",
    "run_bound_reward_as_evidence_only",
)
# The same order projected onto the memory classes (explicit authority is not a class).
CLASS_PRECEDENCE: Final = (
    "hard_policy",
    "working_context",
    "procedural_experience",
    "soft_preference",
    "run_bound_reward",
)


@functools.cache
def _raw() -> str:
    return resources.files("reward_memory").joinpath("data/architecture_v0.json").read_text("utf-8")


def architecture_packet() -> dict[str, Any]:
    """The ``reward_memory_architecture_v0`` packet as fresh JSON data."""
    packet: dict[str, Any] = json.loads(_raw())
    return packet


def architecture_contract() -> ArchitectureContract:
    """The architecture contract as a typed, validated record."""
    from reward_memory.records.architecture import ArchitectureContract  # noqa: PLC0415
    from reward_memory.wire import structure  # noqa: PLC0415

    return structure(architecture_packet(), ArchitectureContract)
