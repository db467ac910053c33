"""Utility attribution: build and re-validate a ``memory_utility_observation_v0``.

Proposal-only and default off. An evaluator (a model, a maintainer, a replay)
*proposes* a utility label for a settled application; deterministic code binds
that proposal to the trusted facts -- the application receipt, the verified
module outcome, and the attribution context from the execution boundary --
and refuses any echo that disagrees. The result is an observation: nothing
is persisted, nothing reduced, no disposition or readiness changes, and no
authority follows from it. Set-level credit is never copied to single items.

Every problem raises :class:`~reward_memory.errors.RecordValidationError`
(the dogfood receipt turns that into a ``rejected`` utility evaluation).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, cast

from reward_memory.digests import digest_hex
from reward_memory.errors import RecordValidationError
from reward_memory.records._plain import from_plain, load_plain, to_plain
from reward_memory.records.application import ApplicationReceipt
from reward_memory.records.utility import UtilityObservation, UtilityScope, observation_id_of

__all__ = [
    "application_receipt_id",
    "build_utility_observation",
    "validate_utility_observation",
]

_OUTCOME_KEYS: Final = frozenset({"verified", "outcome_ref", "artifact_ref", "outcome_status"})
_CONTEXT_KEYS: Final = frozenset({"scope", "retrieval_snapshot_ref", "policy_snapshot_ref"})
_PROPOSAL_KEYS: Final = frozenset(
    {
        "scope",
        "application_id",
        "artifact_ref",
        "outcome_ref",
        "outcome_status",
        "retrieval_snapshot_ref",
        "policy_snapshot_ref",
        "memory_ref_digests",
        "utility_label",
        "attribution_level",
        "evidence_basis",
        "confidence",
        "reason_codes",
        "evidence_refs",
        "evaluator_ref",
        "evaluation_version",
    }
)
# The proposal's own judgement; everything else it holds must echo trusted facts.
_JUDGEMENT: Final = (
    "utility_label",
    "attribution_level",
    "evidence_basis",
    "confidence",
    "reason_codes",
    "evidence_refs",
    "evaluator_ref",
    "evaluation_version",
)


def _bad(message: str, path: str, code: str = "invalid_value") -> RecordValidationError:
    return RecordValidationError(message, path=path, code=code)


def _receipt(value: Any, path: str) -> ApplicationReceipt:
    if isinstance(value, ApplicationReceipt):
        return value
    if isinstance(value, Mapping):
        try:
            return load_plain(dict(value), ApplicationReceipt)
        except RecordValidationError as exc:
            raise _reroot(exc, path) from None
    raise _bad("must be a reward_memory_application_receipt_v0", path, "wrong_type")


def _reroot(exc: RecordValidationError, path: str) -> RecordValidationError:
    clone = exc.under("$")
    clone.path = path + (exc.path[1:] if exc.path.startswith("$") else exc.path)
    return clone


def application_receipt_id(receipt: ApplicationReceipt) -> str:
    """``rma_`` + 64 hex over the whole application receipt's canonical JSON."""
    return "rma_" + digest_hex(to_plain(receipt))


def _exact(value: Any, keys: frozenset[str], path: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise _bad("must be an object", path, "wrong_type")
    given = set(value)
    if not given <= keys:
        extra = sorted(str(key) for key in given - keys)
        raise _bad(f"unknown field: {', '.join(extra)}", f"{path}.{extra[0]}", "unknown_field")
    if not keys <= given:
        missing = sorted(keys - given)
        raise _bad("required field is missing", f"{path}.{missing[0]}", "missing_field")
    return dict(value)


def _scope(value: Any, path: str) -> UtilityScope:
    data = dict(value) if isinstance(value, Mapping) else value
    return cast("UtilityScope", from_plain(UtilityScope, data, path))


def _outcome(value: Any, receipt: ApplicationReceipt, path: str) -> dict[str, Any]:
    outcome = _exact(value, _OUTCOME_KEYS, path)
    if outcome["verified"] is not True:
        raise _bad("must be true", f"{path}.verified")
    if outcome["artifact_ref"] != receipt.artifact_ref or receipt.artifact_ref is None:
        raise _bad("must be the application receipt's artifact", f"{path}.artifact_ref")
    return outcome


def _context(value: Any, receipt: ApplicationReceipt, path: str) -> dict[str, Any]:
    context = _exact(value, _CONTEXT_KEYS, path)
    scope = _scope(context["scope"], f"{path}.scope")
    if scope.corpus_id != receipt.corpus_id:
        raise _bad("must be the application receipt's corpus", f"{path}.scope.corpus_id")
    if scope.surface_id != receipt.surface_id:
        raise _bad("must be the application receipt's surface", f"{path}.scope.surface_id")
    context["scope"] = to_plain(scope)
    return context


def _subject(level: Any, digests: tuple[str, ...], settled: tuple[str, ...], path: str) -> None:
    if level == "item":
        if len(digests) != 1 or digests[0] not in settled:
            raise _bad("item-level credit names one memory this receipt settled", path)
    elif digests != settled:
        raise _bad("set-level credit names the receipt's whole set, never a part", path)


def _sorted(value: Any, path: str) -> tuple[Any, ...]:
    # Lists of refs are sets: stored (and hashed into the id) in sorted order, so
    # the order an evaluator happened to list them in changes nothing.
    if not isinstance(value, list | tuple):
        raise _bad("must be a list", path, "wrong_type")
    if all(type(item) is str for item in value):
        return tuple(sorted(value))
    return tuple(value)  # the record names the offending item


def build_utility_observation(
    application_receipt: ApplicationReceipt | Mapping[str, Any],
    verified_outcome: Mapping[str, Any],
    attribution_context: Mapping[str, Any],
    evaluator_proposal: Mapping[str, Any],
    created_at: str,
) -> UtilityObservation:
    """Bind an evaluator's proposal to the trusted facts; return the observation.

    Args:
        application_receipt: the settled Stage-3 receipt (a record or its wire
            mapping); it must name at least one memory.
        verified_outcome: ``{verified: true, outcome_ref, artifact_ref, outcome_status}``.
        attribution_context: from the execution boundary (trusted):
            ``{scope{agent_id, project_id, corpus_id, surface_id},
            retrieval_snapshot_ref, policy_snapshot_ref}``.
        evaluator_proposal: the evaluator's echo of those facts plus its
            judgement (label, level, basis, confidence, reasons, evidence).
        created_at: when the evaluator made it (ISO-8601 with offset).

    Raises:
        RecordValidationError: any key missing or unknown, any echo that does
            not match the trusted facts, any typed or subject rule broken.
    """
    receipt = _receipt(application_receipt, "$.application_receipt")
    if not receipt.memory_ref_digests:
        raise _bad(
            "a utility attribution needs a receipt that names memory",
            "$.application_receipt.memory_ref_digests",
        )
    outcome = _outcome(verified_outcome, receipt, "$.verified_outcome")
    context = _context(attribution_context, receipt, "$.attribution_context")
    path = "$.evaluator_proposal"
    proposal = _exact(evaluator_proposal, _PROPOSAL_KEYS, path)
    trusted = {
        "scope": context["scope"],
        "application_id": receipt.application_id,
        "artifact_ref": receipt.artifact_ref,
        "outcome_ref": outcome["outcome_ref"],
        "outcome_status": outcome["outcome_status"],
        "retrieval_snapshot_ref": context["retrieval_snapshot_ref"],
        "policy_snapshot_ref": context["policy_snapshot_ref"],
    }
    for key, value in trusted.items():
        given = proposal[key]
        if key == "scope" and isinstance(given, Mapping):
            given = dict(given)
        if type(given) is not type(value) or given != value:
            raise _bad("does not match trusted context", f"{path}.{key}")
    fields: dict[str, Any] = {
        "scope": context["scope"],
        "application_receipt_id": application_receipt_id(receipt),
        "memory_ref_digests": proposal["memory_ref_digests"],
        "retrieval_snapshot_ref": context["retrieval_snapshot_ref"],
        "policy_snapshot_ref": context["policy_snapshot_ref"],
        "outcome_ref": outcome["outcome_ref"],
        **{key: proposal[key] for key in _JUDGEMENT},
    }
    for key in ("memory_ref_digests", "reason_codes", "evidence_refs"):
        fields[key] = _sorted(fields[key], f"{path}.{key}")
    _subject(
        fields["attribution_level"],
        fields["memory_ref_digests"],
        receipt.memory_ref_digests,
        f"{path}.memory_ref_digests",
    )
    try:
        key = observation_id_of(fields)
    except (TypeError, ValueError):
        raise _bad("holds a value JSON cannot carry", path, "wrong_type") from None
    return cast(
        "UtilityObservation",
        from_plain(
            UtilityObservation,
            {
                **{k: list(v) if isinstance(v, tuple) else v for k, v in fields.items()},
                "schema_version": "memory_utility_observation_v0",
                "observation_id": key,
                "created_at": created_at,
            },
            path,
        ),
    )


def validate_utility_observation(
    observation: UtilityObservation | Mapping[str, Any],
    application_receipt: ApplicationReceipt | Mapping[str, Any] | None = None,
    verified_outcome: Mapping[str, Any] | None = None,
    attribution_context: Mapping[str, Any] | None = None,
) -> UtilityObservation:
    """Re-validate an observation (structure and ``observation_id``, always).

    With all three trusted facts it is re-bound to them as well; with only some
    of them it is an error (a partial re-binding would look like a full one).
    """
    if isinstance(observation, UtilityObservation):
        record = observation
    elif isinstance(observation, Mapping):
        record = load_plain(dict(observation), UtilityObservation)
    else:
        raise _bad("must be a memory_utility_observation_v0", "$", "wrong_type")
    trusted = (application_receipt, verified_outcome, attribution_context)
    if all(part is None for part in trusted):
        return record
    if any(part is None for part in trusted):
        raise _bad(
            "re-binding needs the application receipt, the verified outcome and the context",
            "$",
            "missing_field",
        )
    receipt = _receipt(application_receipt, "$.application_receipt")
    outcome = _outcome(verified_outcome, receipt, "$.verified_outcome")
    context = _context(attribution_context, receipt, "$.attribution_context")
    checks = (
        ("application_receipt_id", application_receipt_id(receipt), record.application_receipt_id),
        ("outcome_ref", outcome["outcome_ref"], record.outcome_ref),
        ("scope", context["scope"], to_plain(record.scope)),
        (
            "retrieval_snapshot_ref",
            context["retrieval_snapshot_ref"],
            record.retrieval_snapshot_ref,
        ),
        ("policy_snapshot_ref", context["policy_snapshot_ref"], record.policy_snapshot_ref),
    )
    for key, expected, given in checks:
        if expected != given:
            raise _bad("does not match trusted context", f"$.{key}")
    _subject(
        record.attribution_level,
        record.memory_ref_digests,
        receipt.memory_ref_digests,
        "$.memory_ref_digests",
    )
    return record
