"""The dogfood batch: is a bounded Issue Fix pilot ready to try?

``ready_for_bounded_issue_fix_pilot`` only when the Stage-4 release gate still
passes and the batch holds at least one Issue Fix result, two distinct LoopX
domain results, all three dispositions (applied, not_applied, refuted) and both
operator controls (edit and retire) -- otherwise ``hold``, with the missing
conditions as ordered reason codes. A trial-readiness statement: semantic
uplift and production rollout stay unclaimed, and utility labels never count.

Every receipt is re-validated in full (exact key sets, derived disposition,
verification, ``receipt_id`` recomputed); nothing is counted twice (a receipt,
an application settlement, an operator control). The evaluation and the
operator-control receipts come from other seams and are checked here only for
what the batch relies on, without importing those seams.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

import attrs

from reward_memory.errors import RecordValidationError
from reward_memory.grammars import check_corpus_id, check_token
from reward_memory.records._plain import load_plain, to_plain
from reward_memory.records.dogfood import (
    CONTROL_ACTIONS,
    MAX_CONTROLS,
    MAX_RECEIPTS,
    READY,
    ControlSummary,
    DogfoodBatch,
    DogfoodReceipt,
    batch_metrics,
    check_unique,
    readiness_reasons,
)
from reward_memory.records.dogfood_batch import control_counts
from reward_memory.records.operator import (
    RECEIPT_STATUSES,
    RESULT_STATE_OF,
    OperatorControlReceipt,
)
from reward_memory.text import compact_text

__all__ = ["build_batch", "stage4_gate_verified", "summarize_control"]

EVALUATION_SCHEMA: Final = "reward_memory_evaluation_v0"
CONTROL_SCHEMA: Final = "reward_memory_operator_control_receipt_v0"
_GATE_READY: Final = "ready_for_bounded_dogfood"
_SHORT_HEX: Final = re.compile(r"[0-9a-f]{16}")
_CONTROL_TOKENS: Final = ("control_ref", "operator_ref", "authority_ref", "authority_source_ref")
_CONTROL_BOOLS: Final = ("authority_verified", "provider_write_performed", "readback_verified")
_CONTROL_FALSE: Final = (
    "grants_new_action_authority",
    "raw_content_captured",
    "external_writes_performed",
)
_CONTROL_KEYS: Final = frozenset(
    {
        "schema_version",
        "action",
        "effective_action",
        "corpus_id",
        "prior_record_digest",
        "result_record_digest",
        "result_state",
        "reasoning_summary",
        *_CONTROL_TOKENS,
        *_CONTROL_BOOLS,
        *_CONTROL_FALSE,
    }
)


# Keys only our receipts have (the original's has next_step too): a receipt with any of
# them is ours, and carries its status.
_OURS_ONLY: Final = frozenset(
    {"reason_codes", "record_ref", "deleted_count", "provider_call_count"}
)


def _receipt_keys() -> frozenset[str]:
    return frozenset(field.name for field in attrs.fields(OperatorControlReceipt))


def _bad(message: str, path: str, code: str = "invalid_value") -> RecordValidationError:
    return RecordValidationError(message, path=path, code=code)


def _plain(value: Any, what: str, path: str) -> dict[str, Any]:
    if isinstance(value, Mapping):
        return dict(value)
    if attrs.has(type(value)):
        # A record from another seam (the Stage-4 evaluation the CLI just ran):
        # its packet as wire.dump gives it, without importing the converter.
        dumped = to_plain(value)
        if isinstance(dumped, dict):
            return dumped
    raise _bad(f"must be {what} (a mapping or its record)", path, "wrong_type")


def stage4_gate_verified(evaluation: Any, *, path: str = "$.evaluation") -> bool:
    """Whether a ``reward_memory_evaluation_v0`` passed with its release gate open.

    Checked strictly for what the batch relies on: the schema version, the
    status, the gate status, and their agreement. A malformed or contradictory
    evaluation raises; a well-formed failed or held one answers ``False``, and so
    does no evaluation at all (``None``): an unproven gate is a closed one.
    """
    if evaluation is None:
        return False
    data = _plain(evaluation, EVALUATION_SCHEMA, path)
    if data.get("schema_version") != EVALUATION_SCHEMA:
        raise _bad(
            f"must be {EVALUATION_SCHEMA}", f"{path}.schema_version", "schema_version_unsupported"
        )
    status = data.get("status")
    if not isinstance(status, str) or status not in ("passed", "failed"):
        raise _bad("must be one of: passed, failed", f"{path}.status")
    gate = data.get("release_gate")
    if not isinstance(gate, Mapping):
        raise _bad("must be an object", f"{path}.release_gate", "wrong_type")
    gate_status = gate.get("status")
    if not isinstance(gate_status, str) or gate_status not in (_GATE_READY, "hold"):
        raise _bad(f"must be one of: {_GATE_READY}, hold", f"{path}.release_gate.status")
    if "ok" in data and data["ok"] is not (status == "passed"):
        raise _bad("must agree with the status", f"{path}.ok", "contradictory_observation")
    reasons = gate.get("reason_codes", [])
    if not isinstance(reasons, list | tuple):
        raise _bad("must be a list", f"{path}.release_gate.reason_codes", "wrong_type")
    ready = gate_status == _GATE_READY
    if ready and (status != "passed" or reasons):
        raise _bad(
            "an open gate needs a passed evaluation and no reasons",
            f"{path}.release_gate.status",
            "contradictory_observation",
        )
    for claim in ("semantic_uplift_claim_allowed", "production_rollout_allowed"):
        if claim in gate and gate[claim] is not False:
            raise _bad("must be false", f"{path}.release_gate.{claim}")
    return ready


def _open_gate_holds(evaluation: Any) -> bool:
    """An evaluation that says the gate is open, loaded whole: its cases and metrics must
    bear the gate out (the record re-derives it). A mapping that only says ``passed``, or
    a failed run edited to say so, proves nothing: the gate stays closed."""
    from reward_memory.records.evaluation import Evaluation  # noqa: PLC0415 - a mapping only

    if not isinstance(evaluation, Evaluation):
        try:
            evaluation = load_plain(
                dict(_plain(evaluation, EVALUATION_SCHEMA, "$.evaluation")), Evaluation
            )
        except RecordValidationError:
            return False  # an unproven gate is a closed one: the batch holds
    return bool(evaluation.status == "passed" and evaluation.release_gate.status == _GATE_READY)


def summarize_control(control: Any, *, path: str = "$") -> ControlSummary:
    """Check one ``reward_memory_operator_control_receipt_v0``; return what the batch keeps.

    The pinned shape is required; any other key must be one of the receipt's own
    (an unknown one is refused with its path). A receipt that has them all is
    loaded through its record, and one that carries its ``status`` keeps the
    record's rules whatever else it leaves out (``completed`` exactly when read
    back, reason codes exactly when it failed). The control counts
    towards readiness only when it did not fail (its ``status``, when it has one,
    is ``control_ready`` or ``completed``), its authority was verified and, if it
    performed a provider write, that write was read back.
    """
    data = _plain(control, CONTROL_SCHEMA, path)
    if data.get("schema_version") != CONTROL_SCHEMA:
        raise _bad(
            f"must be {CONTROL_SCHEMA}", f"{path}.schema_version", "schema_version_unsupported"
        )
    missing = sorted(_CONTROL_KEYS - set(data))
    if missing:
        raise _bad("required field is missing", f"{path}.{missing[0]}", "missing_field")
    receipt_keys = _receipt_keys()
    unknown = sorted(set(data) - receipt_keys)
    if unknown:
        raise _bad(f"unknown field: {unknown[0]}", f"{path}.{unknown[0]}", "unknown_field")
    if set(data) == receipt_keys:  # a whole receipt of ours: through its record
        try:
            load_plain(dict(data), OperatorControlReceipt)
        except RecordValidationError as exc:
            raise exc.rooted_at(path) from None
    for key in _CONTROL_TOKENS:
        check_token(data[key], f"{path}.{key}")
    check_corpus_id(data["corpus_id"], f"{path}.corpus_id")
    action = data["action"]
    if not isinstance(action, str) or action not in CONTROL_ACTIONS:
        raise _bad(f"must be one of: {', '.join(CONTROL_ACTIONS)}", f"{path}.action")
    if data["effective_action"] != action:
        raise _bad(
            "must be the declared action", f"{path}.effective_action", "contradictory_observation"
        )
    if data["result_state"] != RESULT_STATE_OF[action]:
        raise _bad(f"must be {RESULT_STATE_OF[action]} for {action}", f"{path}.result_state")
    for key in ("prior_record_digest", "result_record_digest"):
        value = data[key]
        if value is None and key == "result_record_digest" and action != "edit":
            continue
        if not isinstance(value, str) or _SHORT_HEX.fullmatch(value) is None:
            raise _bad("must be 16 lower-case hex", f"{path}.{key}", "invalid_format")
    for key in _CONTROL_BOOLS:
        if not isinstance(data[key], bool):
            raise _bad("must be a boolean", f"{path}.{key}", "wrong_type")
    for key in _CONTROL_FALSE:
        if data[key] is not False:
            raise _bad("must be false", f"{path}.{key}")
    compact_text(
        data["reasoning_summary"],
        limit=500,
        path=f"{path}.reasoning_summary",
        label="reasoning_summary",
    )
    # Ours carry the control's status (the original's have none): one that failed
    # (partial, provider_unavailable, readback_unverified, lineage_conflict) did
    # not perform the control, whatever else it says.
    status = data.get("status")
    if status is None:
        # The original's receipts have none of our keys: one that has any is ours, and
        # ours always say how the control ended (a failed one with its status taken out
        # would otherwise count as done).
        ours = sorted(set(data) & _OURS_ONLY)
        if ours:
            raise _bad(
                f"a receipt that carries {ours[0]} carries its status",
                f"{path}.status",
                "missing_field",
            )
    elif not isinstance(status, str) or status not in RECEIPT_STATUSES:
        raise _bad(f"must be one of: {', '.join(RECEIPT_STATUSES)}", f"{path}.status")
    _check_status_invariants(data, path)
    verified, wrote, read_back = (data[key] for key in _CONTROL_BOOLS)
    return ControlSummary(
        control_ref=data["control_ref"],
        action=action,
        result_state=data["result_state"],
        authority_verified=verified,
        provider_write_performed=wrote,
        readback_verified=read_back,
        counted=control_counts(status, verified, wrote, read_back),
        status=status,
    )


def _check_status_invariants(data: Mapping[str, Any], path: str) -> None:
    """A control that carries its status (ours do) keeps its receipt's rules, whichever
    of its other keys it carries: completed exactly when read back, and reason codes
    exactly when it failed."""
    status = data.get("status")
    if status is None:
        return
    if (status == "completed") != (data.get("readback_verified") is True):
        raise _bad(
            "a control is completed exactly when its outcome read back",
            f"{path}.readback_verified",
            "inconsistent_receipt",
        )
    if "reason_codes" in data:
        codes = data["reason_codes"]
        if not isinstance(codes, list | tuple):
            raise _bad("must be a list", f"{path}.reason_codes", "wrong_type")
        for index, code in enumerate(codes):
            check_token(code, f"{path}.reason_codes[{index}]")
        if (status in ("control_ready", "completed")) == bool(codes):
            raise _bad(
                "a failed control names why, a ready or completed one has no reason code",
                f"{path}.reason_codes",
                "inconsistent_receipt",
            )


def _receipt(value: Any, path: str) -> DogfoodReceipt:
    # A receipt record was validated when built; a mapping is re-validated in
    # full (schema, then the record's own checks, receipt_id recomputed).
    if isinstance(value, DogfoodReceipt):
        return value
    if not isinstance(value, Mapping):
        raise _bad("must be a reward_memory_dogfood_receipt_v1", path, "wrong_type")
    try:
        return load_plain(dict(value), DogfoodReceipt)
    except RecordValidationError as exc:
        raise exc.rooted_at(path) from None


def _bounded(values: Any, limit: int, minimum: int, path: str) -> Sequence[Any]:
    if not isinstance(values, list | tuple):
        raise _bad("must be a list", path, "wrong_type")
    if not minimum <= len(values) <= limit:
        raise _bad(f"must hold between {minimum} and {limit} items", path)
    return values


def build_batch(
    receipts: Sequence[DogfoodReceipt | Mapping[str, Any]],
    operator_controls: Sequence[Any],
    evaluation: Any,
) -> DogfoodBatch:
    """Build the ``reward_memory_dogfood_batch_v1`` and decide its readiness.

    Args:
        receipts: 1-24 dogfood receipts (records, or mappings re-validated in full).
        operator_controls: 0-8 ``reward_memory_operator_control_receipt_v0``
            mappings (or records of that seam).
        evaluation: the Stage-4 ``reward_memory_evaluation_v0`` (a mapping or
            its record), checked by :func:`stage4_gate_verified`; ``None``
            holds the batch (``stage4_release_gate_not_ready``).

    Raises:
        RecordValidationError: a malformed receipt, control or evaluation, a
            batch past its bounds, or one settlement or control counted twice.
    """
    given = _bounded(receipts, MAX_RECEIPTS, 1, "$.receipts")
    controls_given = _bounded(operator_controls, MAX_CONTROLS, 0, "$.operator_controls")
    checked = tuple(_receipt(item, f"$.receipts[{i}]") for i, item in enumerate(given))
    controls = tuple(
        summarize_control(item, path=f"$.operator_controls[{i}]")
        for i, item in enumerate(controls_given)
    )
    gate = stage4_gate_verified(evaluation)
    if gate:
        gate = _open_gate_holds(evaluation)
    check_unique(checked, controls, controls_path="$.operator_controls")
    reasons = readiness_reasons(gate, checked, controls)
    return DogfoodBatch(
        ok=not reasons,
        status=READY if not reasons else "hold",
        reason_codes=reasons,
        stage4_gate_verified=gate,
        loopx_domains=tuple(sorted({r.domain_id for r in checked if r.domain_family == "loopx"})),
        application_dispositions=tuple(sorted({r.application_disposition for r in checked})),
        operator_controls=tuple(sorted({c.action for c in controls if c.counted})),
        metrics=batch_metrics(checked, controls),
        receipts=checked,
        controls=controls,
    )
