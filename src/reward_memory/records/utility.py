"""The utility observation ``memory_utility_observation_v0``: proposal-only, default off.

An evaluator's post-outcome *proposal* of whether the memory a settled
application used was helpful, harmful, neutral or unknown. It is evidence
about one settlement, not policy and not authority: it is never persisted,
never reduced into a score, never changes a dogfood disposition or a batch's
readiness, and every boundary flag on it is false.

The record re-checks every typed rule and recomputes ``observation_id`` (an
evaluation key: stable across retries, blind to the label, confidence,
reasons and time, so a conflicting re-delivery shares the key), so a tampered
observation is refused when loaded back.
"""

from __future__ import annotations

import math
import re
from typing import Any, Final, Literal, get_args

import attrs

from reward_memory._frozen import frozen
from reward_memory.digests import digest_hex
from reward_memory.errors import RecordValidationError
from reward_memory.grammars import check_digest
from reward_memory.records import _fields as f
from reward_memory.text import require_safe, require_safe_characters

__all__ = [
    "ATTRIBUTION_LEVELS",
    "EVIDENCE_BASES",
    "STRONG_BASES",
    "UTILITY_LABELS",
    "UTILITY_SCHEMA",
    "UtilityObservation",
    "UtilityScope",
    "check_opaque",
    "observation_id_of",
]

UTILITY_SCHEMA: Final = "memory_utility_observation_v0"
UtilityLabel = Literal["helpful", "harmful", "neutral", "unknown"]
UTILITY_LABELS: Final[tuple[UtilityLabel, ...]] = get_args(UtilityLabel)
AttributionLevel = Literal["item", "set", "none"]
ATTRIBUTION_LEVELS: Final[tuple[AttributionLevel, ...]] = get_args(AttributionLevel)
EvidenceBasis = Literal[
    "owner_correction",
    "controlled_replay",
    "deterministic_effect",
    "evaluator_inference",
    "insufficient",
]
EVIDENCE_BASES: Final[tuple[EvidenceBasis, ...]] = get_args(EvidenceBasis)
STRONG_BASES: Final = frozenset({"owner_correction", "controlled_replay", "deterministic_effect"})
# Grammar O (reference §1.1): no "/" at all, so no URI and no absolute path.
OPAQUE: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,199}")
_OBSERVATION_ID: Final = re.compile(r"muo_[0-9a-f]{64}")
_RECEIPT_ID: Final = re.compile(r"rma_[0-9a-f]{64}")


def _bad(message: str, path: str, code: str = "invalid_value") -> RecordValidationError:
    return RecordValidationError(message, path=path, code=code)


def check_opaque(value: Any, path: str = "$") -> str:
    """An opaque ref (grammar O), scanned for credentials like every identifier."""
    if not isinstance(value, str):
        raise _bad("must be an opaque ref (a string)", path, "wrong_type")
    if OPAQUE.fullmatch(value) is None:
        require_safe_characters(value, path=path, label="identifier")
        raise _bad("must be an opaque ref (no /, no URI, no path)", path, "invalid_format")
    return require_safe(value, path=path, label="identifier")


def _opaque(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    check_opaque(value, f"$.{attribute.name}")


def _list(check: Any, *, min_items: int, max_items: int) -> Any:
    """A field holding a sorted, duplicate-free list checked item by item."""

    def convert(value: Any, field: attrs.Attribute[Any]) -> tuple[str, ...]:
        path = f"$.{field.name}"
        if not isinstance(value, list | tuple):
            raise _bad("must be a list", path, "wrong_type")
        items = tuple(value)
        if not min_items <= len(items) <= max_items:
            raise _bad(f"must hold between {min_items} and {max_items} items", path)
        for index, item in enumerate(items):
            check(item, f"{path}[{index}]")
        if len(set(items)) != len(items):
            raise _bad("must not repeat an item", path, "duplicate_item")
        if list(items) != sorted(items):
            raise _bad("must be sorted", path)
        return items

    return attrs.field(converter=attrs.Converter(convert, takes_field=True))


@frozen(kw_only=True)
class UtilityScope:
    """Who evaluated what: agent, project, corpus and surface (opaque refs)."""

    agent_id: str = attrs.field(validator=_opaque)
    project_id: str = attrs.field(validator=_opaque)
    corpus_id: str = attrs.field(validator=_opaque)
    surface_id: str = attrs.field(validator=_opaque)


def observation_id_of(fields: dict[str, Any]) -> str:
    """``muo_`` + 64 hex over the evaluation key (label, confidence, reasons and time excluded)."""
    return "muo_" + digest_hex(
        {
            "schema_version": UTILITY_SCHEMA,
            "scope": fields["scope"],
            "application_receipt_id": fields["application_receipt_id"],
            "memory_ref_digests": list(fields["memory_ref_digests"]),
            "retrieval_snapshot_ref": fields["retrieval_snapshot_ref"],
            "policy_snapshot_ref": fields["policy_snapshot_ref"],
            "outcome_ref": fields["outcome_ref"],
            "attribution_level": fields["attribution_level"],
            "evidence_basis": fields["evidence_basis"],
            "evidence_refs": list(fields["evidence_refs"]),
            "evaluator_ref": fields["evaluator_ref"],
            "evaluation_version": fields["evaluation_version"],
        }
    )


def _confidence(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    path = f"$.{attribute.name}"
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _bad("must be a number", path, "wrong_type")
    if not (math.isfinite(value) and 0 <= value <= 1):
        raise _bad("must be between 0 and 1", path)


def _pattern(pattern: re.Pattern[str], what: str) -> Any:
    def validate(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
        if not isinstance(value, str) or pattern.fullmatch(value) is None:
            raise _bad(f"must be {what}", f"$.{attribute.name}", "invalid_format")

    return validate


@frozen(kw_only=True)
class UtilityObservation:
    """``memory_utility_observation_v0``: one evaluator proposal about one settlement."""

    schema_version: Literal["memory_utility_observation_v0"] = f.const(UTILITY_SCHEMA)
    observation_id: str = attrs.field(validator=_pattern(_OBSERVATION_ID, "muo_ and 64 hex"))
    scope: UtilityScope = attrs.field(validator=attrs.validators.instance_of(UtilityScope))
    application_receipt_id: str = attrs.field(validator=_pattern(_RECEIPT_ID, "rma_ and 64 hex"))
    memory_ref_digests: tuple[str, ...] = _list(check_digest, min_items=1, max_items=16)
    retrieval_snapshot_ref: str = attrs.field(validator=_opaque)
    policy_snapshot_ref: str = attrs.field(validator=_opaque)
    outcome_ref: str = attrs.field(validator=_opaque)
    utility_label: UtilityLabel = f.enum(*UTILITY_LABELS)
    attribution_level: AttributionLevel = f.enum(*ATTRIBUTION_LEVELS)
    evidence_basis: EvidenceBasis = f.enum(*EVIDENCE_BASES)
    confidence: float = attrs.field(validator=_confidence)
    reason_codes: tuple[str, ...] = _list(check_opaque, min_items=0, max_items=12)
    evidence_refs: tuple[str, ...] = _list(check_opaque, min_items=0, max_items=16)
    evaluator_ref: str = attrs.field(validator=_opaque)
    evaluation_version: str = attrs.field(validator=_opaque)
    created_at: str = f.timestamp()
    grants_new_action_authority: Literal[False] = f.const(False)
    provider_write_performed: Literal[False] = f.const(False)
    external_writes_performed: Literal[False] = f.const(False)
    raw_content_captured: Literal[False] = f.const(False)

    def __attrs_post_init__(self) -> None:
        label, basis, level = self.utility_label, self.evidence_basis, self.attribution_level
        if basis == "insufficient" and label != "unknown":
            raise _bad("insufficient evidence proposes no label but unknown", "$.utility_label")
        if level == "none" and label != "unknown":
            raise _bad("no attribution proposes no label but unknown", "$.utility_label")
        if (basis in STRONG_BASES or label != "unknown") and not self.evidence_refs:
            raise _bad(
                "a label other than unknown, or a strong evidence basis, names its evidence",
                "$.evidence_refs",
            )
        if level == "item" and len(self.memory_ref_digests) != 1:
            raise _bad("item-level attribution names exactly one memory", "$.memory_ref_digests")
        expected = observation_id_of(
            {
                "scope": {
                    "agent_id": self.scope.agent_id,
                    "project_id": self.scope.project_id,
                    "corpus_id": self.scope.corpus_id,
                    "surface_id": self.scope.surface_id,
                },
                "application_receipt_id": self.application_receipt_id,
                "memory_ref_digests": self.memory_ref_digests,
                "retrieval_snapshot_ref": self.retrieval_snapshot_ref,
                "policy_snapshot_ref": self.policy_snapshot_ref,
                "outcome_ref": self.outcome_ref,
                "attribution_level": level,
                "evidence_basis": basis,
                "evidence_refs": self.evidence_refs,
                "evaluator_ref": self.evaluator_ref,
                "evaluation_version": self.evaluation_version,
            }
        )
        if self.observation_id != expected:
            raise _bad("does not match the observation's evaluation key", "$.observation_id")
