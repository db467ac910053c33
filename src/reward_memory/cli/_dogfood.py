"""``reward-memory dogfood-evaluate --input FILE``: Stage-5 dogfood receipts and batch readiness.

FILE is a ``reward_memory_dogfood_input_v1`` object: 1-24 compact real-module
observations (each over a Stage-3 application receipt), 0-8 operator-control
receipts and, optionally, a Stage-4 evaluation. The original's file, the same
object without ``schema_version``, is read too. The Stage-4 suite is always run
afresh (``reward_memory.evaluation``), so "the gate still passes" is checked now,
not remembered: an evaluation in the file is data, and can only close the gate
(a failed or held one is reported as the reason), never open it.

Prints the ``reward_memory_dogfood_batch_v1`` packet. Exit 0 when the batch is
``ready_for_bounded_issue_fix_pilot``, 2 when it holds (the packet says why) or
the input is bad (an error packet naming the field).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from reward_memory.cli._common import Outcome, read_json_object

if TYPE_CHECKING:
    import argparse


_LEGACY_KEYS = frozenset({"observations", "operator_controls", "evaluation"})


def configure(parser: argparse.ArgumentParser) -> None:
    """``--input FILE`` (``-`` for stdin)."""
    parser.add_argument(
        "--input",
        required=True,
        metavar="FILE",
        help="a reward_memory_dogfood_input_v1 JSON file (- for stdin)",
    )


def _fresh_evaluation() -> Any:
    import importlib

    from reward_memory.errors import RewardMemoryError

    try:
        # Looked up by name: the Stage-4 suite is its own seam, imported only here.
        evaluate = importlib.import_module("reward_memory.evaluation").evaluate
    except (ImportError, AttributeError):
        raise RewardMemoryError(
            "the Stage-4 evaluation is not installed: put an evaluation in the input",
            code="evaluation_unavailable",
        ) from None
    return evaluate()


def run(args: argparse.Namespace) -> Outcome:
    """Validate the input, build every receipt, then the batch; print the batch."""
    from reward_memory._boundary import strict_record
    from reward_memory._dogfood_batch import stage4_gate_verified
    from reward_memory.dogfood import build_batch, build_receipt
    from reward_memory.errors import RecordValidationError
    from reward_memory.records._plain import to_plain
    from reward_memory.records.dogfood import INPUT_SCHEMA, READY, DogfoodInput

    data = read_json_object(args.input)
    if "schema_version" not in data and data and set(data) <= _LEGACY_KEYS:
        # The original's input file ({observations, operator_controls}) carries no
        # schema_version; its shape is this one's, so it is read as one.
        data = {"schema_version": INPUT_SCHEMA, **data}
    if "schema_version" not in data:
        raise RecordValidationError(
            "schema_version is missing", path="$.schema_version", code="schema_version_missing"
        )
    if data["schema_version"] != INPUT_SCHEMA:
        raise RecordValidationError(
            f"expected a {INPUT_SCHEMA} object",
            path="$.schema_version",
            code="schema_version_unsupported",
        )
    # One strict pass; the schema runs only to name an error (reward_memory._boundary).
    given: DogfoodInput = strict_record(DogfoodInput, data, INPUT_SCHEMA)
    receipts = []
    for index, observation in enumerate(given.observations):
        try:
            receipts.append(build_receipt(observation))
        except RecordValidationError as exc:
            raise _under(exc, f"$.observations[{index}]") from None
    # "The gate still passes" is checked now: the suite always runs afresh. An
    # evaluation in the file is data, not a verdict: it can only close the gate.
    evaluation = _fresh_evaluation()
    if given.evaluation is not None and not stage4_gate_verified(given.evaluation):
        evaluation = given.evaluation
    try:
        batch = build_batch(receipts, list(given.operator_controls), evaluation)
    except RecordValidationError as exc:
        # The batch names receipts by position; so does the input's observation list.
        raise _under(exc, "$", rename=("$.receipts", "$.observations")) from None
    metrics = batch.metrics
    lines = [
        f"  receipts: {metrics.receipt_count} "
        f"(applied {metrics.applied_count}, not_applied {metrics.not_applied_count}, "
        f"refuted {metrics.refuted_count})",
        f"  loopx_domains: {', '.join(batch.loopx_domains) or '-'}",
        f"  operator_controls: {', '.join(batch.operator_controls) or '-'}",
        f"  stage4_gate_verified: {str(batch.stage4_gate_verified).lower()}",
    ]
    return Outcome(
        packet=to_plain(batch),
        exit_code=0 if batch.status == READY else 2,
        text_lines=tuple(lines),
    )


def _under(exc: Any, root: str, *, rename: tuple[str, str] | None = None) -> Any:
    path: str = exc.path
    if rename is not None and path.startswith(rename[0]):
        path = rename[1] + path[len(rename[0]) :]
    clone = exc.under("$")
    clone.path = root + (path[1:] if path.startswith("$") else path)
    return clone
