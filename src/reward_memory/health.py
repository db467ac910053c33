"""Stage-1 corpus health: a pure, deterministic classifier and its fixtures.

:func:`classify_health` applies the 13-rule precedence of reference §4, first
match wins, one reason code per result:

=====  ================================  ===================  ==============================
rule   condition                         health_state         reason code
=====  ================================  ===================  ==============================
1      requested project not the         wrong_project        requested_project_outside_
       corpus project                                         corpus_scope
2      requested surface not a corpus    wrong_surface        requested_surface_outside_
       surface                                                corpus_scope
3      provider unavailable              unavailable          provider_unavailable
4      corpus absent                     unavailable          corpus_missing
5      no record present and fresh       empty                corpus_present_without_records
       at ``now``
6      lifecycle not active              stale                lifecycle_superseded,
                                                              lifecycle_retired
7      declared revision not current     stale                source_revision_mismatch_or_
       (an absent current revision too)                       unverified
8      freshness window unsatisfied      stale                freshness_window_unsatisfied
       at ``now``
9      index required and absent         index_unavailable    required_index_missing
10     retrieval did not succeed         retrieval_failed     retrieval_query_failed_or_
                                                              not_run
11     readback required, not verified   readback_unverified  retrieval_result_not_read_back
12     applied with a receipt            applied_verified     verified_result_has_
                                                              application_receipt
13     otherwise                         retrieval_verified   verified_result_not_yet_applied
=====  ================================  ===================  ==============================

Time. Every check is judged at ``now`` (keyword ``now=``, an aware datetime;
default the current UTC time; a naive one is refused), and agrees with recall,
which never serves expired material:

- a record whose ``record_expires_at`` entry is at or before ``now`` is not
  present and fresh: it does not count toward the packet's ``record_count``.
  When no record is left, the corpus is ``empty``, and the readback and
  application observed earlier no longer stand (they were of material recall
  would now refuse): the packet reports them false.
- the freshness window is satisfied when every piece of evidence given holds:
  the caller's ``freshness_window_satisfied`` verdict, and, when the
  observation carries ``source_observed_at`` and the corpus declares
  ``freshness.max_age_seconds``, ``0 <= now - source_observed_at <=
  max_age_seconds`` (a source observed after ``now`` is not evidence of
  currency). A corpus without ``max_age_seconds`` has no window for
  ``source_observed_at`` to miss.

Corpus or index presence never implies retrieval health, and no state grants
authority: ``memory_patch_authority`` and ``external_write_authorized`` are
always false. ``may_apply_memory`` only makes memory eligible for advisory use,
and only where recall would serve it: never for a class recall refuses
(``run_bound_reward``, ``working_context``) or a corpus that is not active,
whatever the pipeline says, and never without a verified readback (a corpus
that does not require readback still reaches ``retrieval_verified`` without
one, as in the reference, but recall never serves unread material). No
provider is called and nothing is read or written here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

import attrs

from reward_memory.errors import RecordValidationError
from reward_memory.grammars import check_surface_id, check_token, parse_timestamp, resolve_now
from reward_memory.records.health import (
    CorpusHealth,
    FreshnessCheck,
    HealthObservation,
    HealthPipeline,
    HealthRequest,
    HealthState,
    ScopeCheck,
    may_apply,
)
from reward_memory.registry import reference_corpus

if TYPE_CHECKING:
    from datetime import datetime

    from reward_memory.records.corpus import CorpusDeclaration

__all__ = ["HEALTH_CASES", "classify_health", "classify_request", "health_case"]

# Fixture case names (hyphenated, as on the command line), in reference order.
HEALTH_CASES: Final[tuple[str, ...]] = (
    "unavailable",
    "empty",
    "stale",
    "wrong-project",
    "wrong-surface",
    "index-unavailable",
    "retrieval-failed",
    "readback-unverified",
    "retrieval-verified",
    "applied-verified",
)
_FIXTURE_CORPUS: Final = "distilled_experiences"
_BASE_OBSERVATION: Final[dict[str, object]] = {
    "requested_project_ref": "project:exact",
    "requested_surface": "issue_fix.routing",
    "current_source_revision": "revision:observed",
    "freshness_window_satisfied": True,
    "provider_available": True,
    "corpus_present": True,
    "record_count": 1,
    "index_present": True,
    "retrieval_query_succeeded": True,
    "result_readback_verified": True,
    "memory_applied_with_receipt": False,
}
_CASE_CHANGES: Final[dict[str, dict[str, object]]] = {
    "unavailable": {
        "provider_available": False,
        "corpus_present": False,
        "record_count": 0,
        "index_present": False,
        "retrieval_query_succeeded": False,
        "result_readback_verified": False,
    },
    # Retrieval may run over an empty corpus; nothing can have been read back.
    "empty": {"record_count": 0, "result_readback_verified": False},
    "stale": {"current_source_revision": "revision:newer"},
    "wrong-project": {"requested_project_ref": "project:other"},
    "wrong-surface": {"requested_surface": "content_ops.draft"},
    "index-unavailable": {
        "index_present": False,
        "retrieval_query_succeeded": False,
        "result_readback_verified": False,
    },
    "retrieval-failed": {"retrieval_query_succeeded": False, "result_readback_verified": False},
    "readback-unverified": {"result_readback_verified": False},
    "retrieval-verified": {},
    "applied-verified": {"memory_applied_with_receipt": True},
}


def _state(
    corpus: CorpusDeclaration,
    observation: HealthObservation,
    checks: tuple[bool, bool],
    pipeline: HealthPipeline,
) -> tuple[HealthState, str]:
    revision_matches, window_satisfied = checks
    scope = corpus.scope
    if observation.requested_project_ref != scope.project_ref:
        return "wrong_project", "requested_project_outside_corpus_scope"
    if observation.requested_surface not in scope.surface_ids:
        return "wrong_surface", "requested_surface_outside_corpus_scope"
    if not pipeline.provider_available:
        return "unavailable", "provider_unavailable"
    if not pipeline.corpus_present:
        return "unavailable", "corpus_missing"
    if pipeline.record_count == 0:
        return "empty", "corpus_present_without_records"
    if corpus.lifecycle.state != "active":
        return "stale", f"lifecycle_{corpus.lifecycle.state}"
    if not revision_matches:
        return "stale", "source_revision_mismatch_or_unverified"
    if not window_satisfied:
        return "stale", "freshness_window_unsatisfied"
    if pipeline.index_required and not pipeline.index_present:
        return "index_unavailable", "required_index_missing"
    if not pipeline.retrieval_query_succeeded:
        return "retrieval_failed", "retrieval_query_failed_or_not_run"
    if corpus.retrieval.readback_required and not pipeline.result_readback_verified:
        return "readback_unverified", "retrieval_result_not_read_back"
    if pipeline.memory_applied_with_receipt:
        return "applied_verified", "verified_result_has_application_receipt"
    return "retrieval_verified", "verified_result_not_yet_applied"


def _window(corpus: CorpusDeclaration, observation: HealthObservation, now: datetime) -> bool:
    """Every piece of freshness evidence holds at ``now`` (see the module docstring)."""
    if observation.freshness_window_satisfied is False:
        return False
    max_age = corpus.freshness.max_age_seconds
    observed = observation.source_observed_at
    if observed is None or max_age is None:
        return True  # the caller's verdict, or no declared window to miss
    age = (now - parse_timestamp(observed)).total_seconds()
    return 0 <= age <= max_age


def _fresh_count(observation: HealthObservation, now: datetime) -> int:
    expiries = observation.record_expires_at or ()
    expired = sum(1 for value in expiries if parse_timestamp(value) <= now)
    return observation.record_count - expired


def _pipeline(
    corpus: CorpusDeclaration, observation: HealthObservation, now: datetime
) -> HealthPipeline:
    count = observation.record_count
    read_back = observation.result_readback_verified
    applied = observation.memory_applied_with_receipt
    if observation.record_expires_at:
        count = _fresh_count(observation, now)
        if count == 0:
            # Nothing recall would still serve: no current result stands read back or applied.
            read_back = applied = False
    return HealthPipeline(
        provider_available=observation.provider_available,
        corpus_present=observation.corpus_present,
        record_count=count,
        index_required=corpus.retrieval.index_required,
        index_present=observation.index_present,
        retrieval_query_succeeded=observation.retrieval_query_succeeded,
        result_readback_verified=read_back,
        memory_applied_with_receipt=applied,
    )


def classify_health(
    corpus: CorpusDeclaration,
    observation: HealthObservation,
    *,
    requested_project_ref: str | None = None,
    requested_surface: str | None = None,
    now: datetime | None = None,
) -> CorpusHealth:
    """Classify one corpus from one observation at ``now`` (reference §4); pure, deterministic.

    Args:
        corpus: the corpus declaration.
        observation: what was observed; contradictory observations were already
            refused when it was built.
        requested_project_ref: overrides the observation's requested project.
        requested_surface: overrides the observation's requested surface.
        now: when the observation is judged (aware; default the current UTC
            time): record expiry and the freshness window are decided at ``now``.

    Returns:
        The ``reward_memory_corpus_health_v0`` packet as a record; it never
        grants patch authority or an external write.

    Raises:
        RecordValidationError: ``now`` is not an aware datetime (``$.now``), or
            an override is not a token / surface id.
    """
    from reward_memory.records.corpus import CorpusDeclaration  # noqa: PLC0415 - loaded already

    _require(corpus, CorpusDeclaration, "$.corpus")
    _require(observation, HealthObservation, "$.observation")
    at = resolve_now(now)
    if requested_project_ref is not None:
        observation = attrs.evolve(
            observation,
            requested_project_ref=check_token(requested_project_ref, "$.requested_project_ref"),
        )
    if requested_surface is not None:
        observation = attrs.evolve(
            observation,
            requested_surface=check_surface_id(requested_surface, "$.requested_surface"),
        )
    declared = corpus.freshness.source_revision
    revision_matches = declared is None or observation.current_source_revision == declared
    window = _window(corpus, observation, at)
    pipeline = _pipeline(corpus, observation, at)
    state, reason = _state(corpus, observation, (revision_matches, window), pipeline)
    return CorpusHealth(
        corpus_id=corpus.corpus_id,
        class_id=corpus.class_id,
        health_state=state,
        reason_codes=(reason,),
        scope_check=ScopeCheck(
            project_matches=observation.requested_project_ref == corpus.scope.project_ref,
            surface_matches=observation.requested_surface in corpus.scope.surface_ids,
        ),
        freshness_check=FreshnessCheck(
            lifecycle_state=corpus.lifecycle.state,
            source_revision_matches=revision_matches,
            freshness_window_satisfied=window,
        ),
        pipeline=pipeline,
        may_apply_memory=may_apply(state, corpus.class_id, corpus.lifecycle.state, pipeline),
    )


def classify_request(request: HealthRequest, *, now: datetime | None = None) -> CorpusHealth:
    """Classify a ``reward_memory_corpus_health_request_v0`` packet (already loaded).

    ``now`` defaults to the request's own ``now``, then to the current UTC time.
    """
    _require(request, HealthRequest, "$")
    if now is None and request.now is not None:
        now = parse_timestamp(request.now, "$.now")
    return classify_health(request.corpus, request.observation, now=now)


def _require(value: object, kind: type, path: str) -> None:
    # A mapping where a record belongs is the caller's mistake: a typed error, not
    # an AttributeError from deep inside (load a mapping with wire.load first).
    if not isinstance(value, kind):
        raise RecordValidationError(
            f"must be a {kind.__name__} record (load a mapping with wire.load)",
            path=path,
            code="wrong_type",
        )


def health_case(name: str) -> HealthRequest:
    """The fixture request for one health state (reference §4 fixture table).

    The corpus is the ``distilled_experiences`` reference family; ``name`` is
    one of :data:`HEALTH_CASES` (hyphenated), and classifying the request
    yields the state of the same name with ``-`` replaced by ``_``.
    """
    changes = _CASE_CHANGES.get(name) if isinstance(name, str) else None
    if changes is None:
        raise RecordValidationError(
            f"unknown reward-memory health case; choose from: {', '.join(HEALTH_CASES)}",
            path="$.case",
            code="invalid_value",
        )
    return HealthRequest(
        corpus=reference_corpus(_FIXTURE_CORPUS),
        observation=HealthObservation(**(_BASE_OBSERVATION | changes)),  # type: ignore[arg-type]
    )
