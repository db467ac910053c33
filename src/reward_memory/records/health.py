"""Stage-1 corpus health records: the observation, the health packet, the request.

Health keeps inventory, retrieval, readback and use as distinct observations:
an empty corpus is not "unavailable", an index is not proof the content exists,
retrieval is not proof of readback, readback is not proof of use. An
observation that claims a later stage without the earlier one is contradictory
and is refused (code ``contradictory_observation``, field path named).

The packet (``reward_memory_corpus_health_v0``) never grants authority: even
``applied_verified`` carries ``memory_patch_authority: false`` and
``external_write_authorized: false``.
"""

from __future__ import annotations

from typing import Any, Final, Literal, get_args

import attrs

from reward_memory.errors import RecordValidationError
from reward_memory.records import _fields as f
from reward_memory.records.corpus import CorpusDeclaration
from reward_memory.records.envelope import CLASS_IDS, ClassId

__all__ = [
    "HEALTH_REQUEST_SCHEMA_VERSION",
    "HEALTH_SCHEMA_VERSION",
    "HEALTH_STATES",
    "MAY_APPLY_STATES",
    "REASON_CODES",
    "CorpusHealth",
    "FreshnessCheck",
    "HealthObservation",
    "HealthPipeline",
    "HealthRequest",
    "HealthState",
    "ScopeCheck",
]

HEALTH_SCHEMA_VERSION: Final = "reward_memory_corpus_health_v0"
HEALTH_REQUEST_SCHEMA_VERSION: Final = "reward_memory_corpus_health_request_v0"

HealthState = Literal[
    "wrong_project",
    "wrong_surface",
    "unavailable",
    "empty",
    "stale",
    "index_unavailable",
    "retrieval_failed",
    "readback_unverified",
    "applied_verified",
    "retrieval_verified",
]
# In precedence order (reference §1.8).
HEALTH_STATES: Final[tuple[HealthState, ...]] = get_args(HealthState)
# The reason codes each state may carry (exactly one per packet).
REASON_CODES: Final[dict[str, tuple[str, ...]]] = {
    "wrong_project": ("requested_project_outside_corpus_scope",),
    "wrong_surface": ("requested_surface_outside_corpus_scope",),
    "unavailable": ("provider_unavailable", "corpus_missing"),
    "empty": ("corpus_present_without_records",),
    "stale": (
        "lifecycle_superseded",
        "lifecycle_retired",
        "source_revision_mismatch_or_unverified",
        "freshness_window_unsatisfied",
    ),
    "index_unavailable": ("required_index_missing",),
    "retrieval_failed": ("retrieval_query_failed_or_not_run",),
    "readback_unverified": ("retrieval_result_not_read_back",),
    "applied_verified": ("verified_result_has_application_receipt",),
    "retrieval_verified": ("verified_result_not_yet_applied",),
}
MAY_APPLY_STATES: Final = frozenset({"retrieval_verified", "applied_verified"})


def _contradiction(field: str, message: str) -> RecordValidationError:
    return RecordValidationError(message, path=f"$.{field}", code="contradictory_observation")


@attrs.frozen(kw_only=True)
class HealthObservation:
    """What was observed about one corpus, each pipeline stage separately (reference §4)."""

    requested_project_ref: str = f.token()
    requested_surface: str = f.surface_id()
    current_source_revision: str | None = f.optional_token()
    freshness_window_satisfied: bool = f.strict_bool()
    provider_available: bool = f.strict_bool()
    corpus_present: bool = f.strict_bool()
    record_count: int = f.integer(minimum=0)
    index_present: bool = f.strict_bool()
    retrieval_query_succeeded: bool = f.strict_bool()
    result_readback_verified: bool = f.strict_bool()
    memory_applied_with_receipt: bool = f.strict_bool()

    def __attrs_post_init__(self) -> None:
        if self.record_count > 0 and not self.corpus_present:
            raise _contradiction(
                "record_count", "record_count must be zero when corpus_present is false"
            )
        if self.retrieval_query_succeeded and not self.provider_available:
            raise _contradiction(
                "retrieval_query_succeeded", "retrieval success requires an available provider"
            )
        if self.retrieval_query_succeeded and not self.corpus_present:
            raise _contradiction(
                "retrieval_query_succeeded", "retrieval success requires a present corpus"
            )
        if self.result_readback_verified and not self.retrieval_query_succeeded:
            raise _contradiction(
                "result_readback_verified", "verified readback requires retrieval success"
            )
        if self.memory_applied_with_receipt and not self.result_readback_verified:
            raise _contradiction(
                "memory_applied_with_receipt", "an application receipt requires verified readback"
            )


@attrs.frozen(kw_only=True)
class HealthRequest:
    """The input packet of a health check: one corpus declaration and one observation."""

    schema_version: Literal["reward_memory_corpus_health_request_v0"] = f.const(
        HEALTH_REQUEST_SCHEMA_VERSION
    )
    corpus: CorpusDeclaration = attrs.field(
        validator=attrs.validators.instance_of(CorpusDeclaration)
    )
    observation: HealthObservation = attrs.field(
        validator=attrs.validators.instance_of(HealthObservation)
    )


@attrs.frozen(kw_only=True)
class ScopeCheck:
    """Whether the requested project and surface are inside the corpus scope."""

    project_matches: bool = f.strict_bool()
    surface_matches: bool = f.strict_bool()


@attrs.frozen(kw_only=True)
class FreshnessCheck:
    """Lifecycle state, revision match and freshness window, as classified."""

    lifecycle_state: Literal["active", "superseded", "retired"] = f.enum(
        "active", "superseded", "retired"
    )
    source_revision_matches: bool = f.strict_bool()
    freshness_window_satisfied: bool = f.strict_bool()


@attrs.frozen(kw_only=True)
class HealthPipeline:
    """Every pipeline observation, echoed and never collapsed into one flag."""

    provider_available: bool = f.strict_bool()
    corpus_present: bool = f.strict_bool()
    record_count: int = f.integer(minimum=0)
    index_required: bool = f.strict_bool()
    index_present: bool = f.strict_bool()
    retrieval_query_succeeded: bool = f.strict_bool()
    result_readback_verified: bool = f.strict_bool()
    memory_applied_with_receipt: bool = f.strict_bool()


def _one_reason(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    path = f"$.{attribute.name}"
    if not isinstance(value, tuple) or len(value) != 1:
        raise RecordValidationError("must hold exactly one reason code", path=path)


def _reason_list(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


@attrs.frozen(kw_only=True)
class CorpusHealth:
    """The health packet: one state, one reason, the checks and the full pipeline."""

    ok: Literal[True] = f.const(True)
    schema_version: Literal["reward_memory_corpus_health_v0"] = f.const(HEALTH_SCHEMA_VERSION)
    corpus_id: str = f.corpus_id()
    class_id: ClassId = f.enum(*CLASS_IDS)
    health_state: HealthState = f.enum(*HEALTH_STATES)
    reason_codes: tuple[str, ...] = attrs.field(converter=_reason_list, validator=_one_reason)
    scope_check: ScopeCheck
    freshness_check: FreshnessCheck
    pipeline: HealthPipeline
    may_apply_memory: bool = f.strict_bool()
    memory_patch_authority: Literal[False] = f.const(False)
    external_write_authorized: Literal[False] = f.const(False)
    raw_memory_captured: Literal[False] = f.const(False)

    def __attrs_post_init__(self) -> None:
        if self.reason_codes[0] not in REASON_CODES[self.health_state]:
            raise RecordValidationError(
                f"is not a reason code of health_state {self.health_state}",
                path="$.reason_codes[0]",
                code="invalid_value",
            )
        if self.may_apply_memory != (self.health_state in MAY_APPLY_STATES):
            raise RecordValidationError(
                "is true exactly for retrieval_verified and applied_verified",
                path="$.may_apply_memory",
                code="invalid_value",
            )
