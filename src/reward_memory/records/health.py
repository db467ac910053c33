"""Stage-1 corpus health records: the observation, the health packet, the request.

Health keeps inventory, retrieval, readback and use as distinct observations:
an empty corpus is not "unavailable", an index is not proof the content exists,
retrieval is not proof of readback, readback is not proof of use. An
observation that claims a later stage without the earlier one is contradictory
and is refused (code ``contradictory_observation``, field path named):

- ``provider_available: false`` with anything the provider would have had to
  answer: ``corpus_present``, ``record_count > 0``, ``index_present``,
  retrieval, readback or application (an unreachable provider has no inventory);
- ``record_count > 0`` while ``corpus_present`` is false;
- retrieval success while the provider is unavailable or the corpus absent;
- verified readback without retrieval success, or with ``record_count`` 0
  (there is no record to have read back);
- an application receipt without verified readback;
- more ``record_expires_at`` entries than ``record_count``.

An index without the corpus is *not* contradictory (an index is derived and
may outlive its content), and nor is retrieval success while a required index
is absent (the precedence reports ``index_unavailable`` first) or a successful
query over an empty corpus.

Time (new in this library; all optional, so older observations stay valid):
``source_observed_at`` is when the source of truth was last observed, judged
against the corpus ``freshness.max_age_seconds`` at the classifier's ``now``;
``record_expires_at`` lists the expiry times of the counted records that have
one. ``freshness_window_satisfied`` (the caller's own verdict) is optional
when ``source_observed_at`` is given; one of the two is required.

The packet (``reward_memory_corpus_health_v0``) never grants authority: even
``applied_verified`` carries ``memory_patch_authority: false`` and
``external_write_authorized: false``. A packet built from data is held to the
same rules as the classifier that emits it: its pipeline is free of the
contradictions above, its state and reason are the ones its own scope, freshness
and pipeline fields lead to (reference §4 precedence; only ``readback_required``
is not in the packet, so a retrieved-but-not-read-back pipeline may be
``readback_unverified`` or ``retrieval_verified``), and ``may_apply_memory`` is
true exactly for ``retrieval_verified`` / ``applied_verified`` of an active
corpus whose class recall serves (never ``run_bound_reward`` or
``working_context``) after a verified readback (:func:`may_apply`). A
contradiction is ``contradictory_observation`` at the field's path.
"""

from __future__ import annotations

from typing import Any, ClassVar, Final, Literal, get_args

import attrs

from reward_memory._frozen import frozen
from reward_memory.errors import RecordValidationError
from reward_memory.grammars import check_timestamp
from reward_memory.records import _fields as f
from reward_memory.records.corpus import CorpusDeclaration
from reward_memory.records.envelope import CLASS_IDS, ClassId

__all__ = [
    "HEALTH_REQUEST_SCHEMA_VERSION",
    "HEALTH_SCHEMA_VERSION",
    "HEALTH_STATES",
    "MAX_RECORD_EXPIRIES",
    "MAY_APPLY_STATES",
    "NON_RECALL_CLASSES",
    "REASON_CODES",
    "CorpusHealth",
    "FreshnessCheck",
    "HealthObservation",
    "HealthPipeline",
    "HealthRequest",
    "HealthState",
    "ScopeCheck",
    "expected_states",
    "may_apply",
    "pipeline_contradiction",
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
# The classes recall refuses (reward_memory.guards.recall.NON_RECALL_CLASSES;
# a test pins the two together). Restated so the health-check verb does not
# import the recall records at start-up.
NON_RECALL_CLASSES: Final = frozenset({"run_bound_reward", "working_context"})
MAX_RECORD_EXPIRIES: Final = 10_000
# What an unreachable provider cannot have reported, in pipeline order.
_AFTER_PROVIDER: Final = (
    "corpus_present",
    "record_count",
    "index_present",
    "retrieval_query_succeeded",
    "result_readback_verified",
    "memory_applied_with_receipt",
)


def _contradiction(field: str, message: str) -> RecordValidationError:
    return RecordValidationError(message, path=f"$.{field}", code="contradictory_observation")


def pipeline_contradiction(pipeline: HealthObservation | HealthPipeline) -> tuple[str, str] | None:
    """The first contradiction between pipeline observations: ``(field, message)``, or None.

    Shared by the observation and the packet (whose ``pipeline`` echoes it).
    """
    provider = pipeline.provider_available
    present = pipeline.corpus_present
    count = pipeline.record_count
    retrieved = pipeline.retrieval_query_succeeded
    read_back = pipeline.result_readback_verified
    if not provider:
        for name in _AFTER_PROVIDER:
            if getattr(pipeline, name):
                return name, f"{name} cannot be observed while provider_available is false"
    if count > 0 and not present:
        return "record_count", "record_count must be zero when corpus_present is false"
    if retrieved and not present:
        return "retrieval_query_succeeded", "retrieval success requires a present corpus"
    if read_back and not retrieved:
        return "result_readback_verified", "verified readback requires retrieval success"
    if read_back and count == 0:
        return "result_readback_verified", "verified readback requires at least one record"
    if pipeline.memory_applied_with_receipt and not read_back:
        return "memory_applied_with_receipt", "an application receipt requires verified readback"
    return None


def _optional_bool(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is not None and not isinstance(value, bool):
        raise RecordValidationError(
            "must be a boolean", path=f"$.{attribute.name}", code="wrong_type"
        )


def _timestamps(value: Any, field: attrs.Attribute[Any]) -> tuple[str, ...] | None:
    if value is None:
        return None
    path = f"$.{field.name}"
    if not isinstance(value, list | tuple):
        raise RecordValidationError("must be a list", path=path, code="wrong_type")
    if len(value) > MAX_RECORD_EXPIRIES:
        raise RecordValidationError(
            f"must hold at most {MAX_RECORD_EXPIRIES} items", path=path, code="invalid_value"
        )
    return tuple(check_timestamp(item, f"{path}[{index}]") for index, item in enumerate(value))


def _timestamp_list() -> Any:
    """An optional list of timestamps (kept as given)."""
    return attrs.field(default=None, converter=attrs.Converter(_timestamps, takes_field=True))


def _is_record(cls: type[Any]) -> Any:
    """Validator: the field holds a ``cls`` record (a dict is refused)."""

    def validate(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
        if not isinstance(value, cls):
            raise RecordValidationError(
                f"must be a {cls.__name__}", path=f"$.{attribute.name}", code="wrong_type"
            )

    return validate


@frozen(kw_only=True)
class HealthObservation:
    """What was observed about one corpus, each pipeline stage separately (reference §4).

    ``record_count`` counts the records present; the classifier counts as
    present and fresh only those not expired at its ``now`` (``record_expires_at``).
    """

    # Optional keys are left out of the wire form when absent (older packets).
    __rm_omit_none__: ClassVar[bool] = True

    requested_project_ref: str = f.token()
    requested_surface: str = f.surface_id()
    current_source_revision: str | None = f.optional_token()
    freshness_window_satisfied: bool | None = attrs.field(default=None, validator=_optional_bool)
    source_observed_at: str | None = f.optional_timestamp()
    provider_available: bool = f.strict_bool()
    corpus_present: bool = f.strict_bool()
    record_count: int = f.integer(minimum=0)
    record_expires_at: tuple[str, ...] | None = _timestamp_list()
    index_present: bool = f.strict_bool()
    retrieval_query_succeeded: bool = f.strict_bool()
    result_readback_verified: bool = f.strict_bool()
    memory_applied_with_receipt: bool = f.strict_bool()

    def __attrs_post_init__(self) -> None:
        found = pipeline_contradiction(self)
        if found is not None:
            raise _contradiction(*found)
        if self.record_expires_at and len(self.record_expires_at) > self.record_count:
            raise _contradiction(
                "record_expires_at", "lists more expiry times than record_count counts records"
            )
        if self.freshness_window_satisfied is None and self.source_observed_at is None:
            raise RecordValidationError(
                "freshness evidence is required: freshness_window_satisfied or source_observed_at",
                path="$.freshness_window_satisfied",
                code="missing_field",
            )


@frozen(kw_only=True)
class HealthRequest:
    """The input packet of a health check: one corpus, one observation, optionally ``now``.

    ``now`` (a timestamp) is the time the observation is judged at, for a
    reproducible check; the classifier's own ``now=`` argument wins over it.
    """

    __rm_omit_none__: ClassVar[bool] = True  # ``now`` is left out when absent

    schema_version: Literal["reward_memory_corpus_health_request_v0"] = f.const(
        HEALTH_REQUEST_SCHEMA_VERSION
    )
    corpus: CorpusDeclaration = attrs.field(validator=_is_record(CorpusDeclaration))
    observation: HealthObservation = attrs.field(validator=_is_record(HealthObservation))
    now: str | None = f.optional_timestamp()


@frozen(kw_only=True)
class ScopeCheck:
    """Whether the requested project and surface are inside the corpus scope."""

    project_matches: bool = f.strict_bool()
    surface_matches: bool = f.strict_bool()


@frozen(kw_only=True)
class FreshnessCheck:
    """Lifecycle state, revision match and freshness window, as classified."""

    lifecycle_state: Literal["active", "superseded", "retired"] = f.enum(
        "active", "superseded", "retired"
    )
    source_revision_matches: bool = f.strict_bool()
    freshness_window_satisfied: bool = f.strict_bool()


@frozen(kw_only=True)
class HealthPipeline:
    """Every pipeline observation, echoed and never collapsed.

    ``record_count`` is the number of records present and fresh at the
    classifier's ``now``; readback and application count only while one is.
    """

    provider_available: bool = f.strict_bool()
    corpus_present: bool = f.strict_bool()
    record_count: int = f.integer(minimum=0)
    index_required: bool = f.strict_bool()
    index_present: bool = f.strict_bool()
    retrieval_query_succeeded: bool = f.strict_bool()
    result_readback_verified: bool = f.strict_bool()
    memory_applied_with_receipt: bool = f.strict_bool()

    def __attrs_post_init__(self) -> None:
        found = pipeline_contradiction(self)
        if found is not None:
            raise _contradiction(*found)


def expected_states(
    scope: ScopeCheck, freshness: FreshnessCheck, pipeline: HealthPipeline
) -> tuple[tuple[HealthState, str], ...]:
    """The (state, reason) pairs reference §4's precedence allows for these fields.

    One pair, except when retrieval succeeded without readback: whether that is
    ``readback_unverified`` depends on the corpus's ``readback_required``.
    """
    lifecycle = freshness.lifecycle_state
    if not scope.project_matches:
        return (("wrong_project", "requested_project_outside_corpus_scope"),)
    if not scope.surface_matches:
        return (("wrong_surface", "requested_surface_outside_corpus_scope"),)
    if not pipeline.provider_available:
        return (("unavailable", "provider_unavailable"),)
    if not pipeline.corpus_present:
        return (("unavailable", "corpus_missing"),)
    if pipeline.record_count == 0:
        return (("empty", "corpus_present_without_records"),)
    if lifecycle != "active":
        return (("stale", f"lifecycle_{lifecycle}"),)
    if not freshness.source_revision_matches:
        return (("stale", "source_revision_mismatch_or_unverified"),)
    if not freshness.freshness_window_satisfied:
        return (("stale", "freshness_window_unsatisfied"),)
    if pipeline.index_required and not pipeline.index_present:
        return (("index_unavailable", "required_index_missing"),)
    if not pipeline.retrieval_query_succeeded:
        return (("retrieval_failed", "retrieval_query_failed_or_not_run"),)
    if not pipeline.result_readback_verified:
        return (
            ("readback_unverified", "retrieval_result_not_read_back"),
            ("retrieval_verified", "verified_result_not_yet_applied"),
        )
    if pipeline.memory_applied_with_receipt:
        return (("applied_verified", "verified_result_has_application_receipt"),)
    return (("retrieval_verified", "verified_result_not_yet_applied"),)


def may_apply(state: str, class_id: str, lifecycle_state: str, pipeline: HealthPipeline) -> bool:
    """Whether memory is eligible for advisory use: only where recall would serve it.

    A retrieval_verified or applied_verified state, of an active corpus whose
    class recall serves, with a verified readback (recall never serves what it
    did not read back, even from a corpus that does not require readback).
    """
    return (
        state in MAY_APPLY_STATES
        and class_id not in NON_RECALL_CLASSES
        and lifecycle_state == "active"
        and pipeline.result_readback_verified
    )


def _one_reason(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    path = f"$.{attribute.name}"
    if not isinstance(value, tuple) or len(value) != 1:
        raise RecordValidationError("must hold exactly one reason code", path=path)


def _reason_list(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


@frozen(kw_only=True)
class CorpusHealth:
    """The health packet: one state, one reason, the checks and the full pipeline."""

    ok: Literal[True] = f.const(True)
    schema_version: Literal["reward_memory_corpus_health_v0"] = f.const(HEALTH_SCHEMA_VERSION)
    corpus_id: str = f.corpus_id()
    class_id: ClassId = f.enum(*CLASS_IDS)
    health_state: HealthState = f.enum(*HEALTH_STATES)
    reason_codes: tuple[str, ...] = attrs.field(converter=_reason_list, validator=_one_reason)
    scope_check: ScopeCheck = attrs.field(validator=_is_record(ScopeCheck))
    freshness_check: FreshnessCheck = attrs.field(validator=_is_record(FreshnessCheck))
    pipeline: HealthPipeline = attrs.field(validator=_is_record(HealthPipeline))
    may_apply_memory: bool = f.strict_bool()
    memory_patch_authority: Literal[False] = f.const(False)
    external_write_authorized: Literal[False] = f.const(False)
    raw_memory_captured: Literal[False] = f.const(False)

    def __attrs_post_init__(self) -> None:
        state = self.health_state
        reason = self.reason_codes[0]
        if reason not in REASON_CODES[state]:
            raise RecordValidationError(
                f"is not a reason code of health_state {state}",
                path="$.reason_codes[0]",
                code="invalid_value",
            )
        allowed = expected_states(self.scope_check, self.freshness_check, self.pipeline)
        if (state, reason) not in allowed:
            field = (
                "reason_codes[0]"
                if any(state == expected for expected, _ in allowed)
                else "health_state"
            )
            raise _contradiction(
                field,
                f"contradicts the packet's own scope, freshness and pipeline fields, "
                f"which lead to {allowed[0][0]} ({allowed[0][1]})",
            )
        if self.may_apply_memory != may_apply(
            state, self.class_id, self.freshness_check.lifecycle_state, self.pipeline
        ):
            raise _contradiction(
                "may_apply_memory",
                "is true exactly for retrieval_verified and applied_verified of an active "
                "corpus whose class recall serves, after a verified readback",
            )
