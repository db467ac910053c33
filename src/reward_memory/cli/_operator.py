"""``reward-memory operator-control --input FILE --action edit|retire|revoke|purge [--execute]``.

``FILE`` is a ``reward_memory_operator_control_request_v0`` (its ``action`` may be
left out: ``--action`` supplies it, and must agree when both are given), plus,
for an executed retire / revoke / purge, a top-level ``provider_binding`` (where
the corpus lives; checked against the corpus declaration as recall checks it)
and ``--provider URL``. A dry run (the default) makes zero provider calls and
prints ``control_ready``; an edit never writes (its replacement candidate goes
to review). Prints the ``reward_memory_operator_control_v0`` packet: a refused
checkpoint is ``guard_blocked`` with reason codes (exit 0); a provider that fails
is a status (exit 0, retry with the same input); bad input is an error packet
(exit 2). No path or scope ref is printed.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    import argparse

    from reward_memory.cli._common import Outcome

__all__ = ["configure", "run"]

ACTIONS: Final = ("edit", "retire", "revoke", "purge")
REQUEST_SCHEMA: Final = "reward_memory_operator_control_request_v0"


def configure(parser: argparse.ArgumentParser) -> None:
    """Add this verb's options."""
    parser.add_argument("--input", required=True, metavar="FILE", help="the control request")
    parser.add_argument("--action", required=True, choices=ACTIONS, help="the control")
    parser.add_argument(
        "--execute", action="store_true", help="write and read back (default: a dry run)"
    )
    parser.add_argument("--provider", metavar="URL", help="provider URL (required to execute)")


def _bad(message: str, path: str, code: str = "invalid_value") -> Exception:
    from reward_memory.errors import RecordValidationError

    return RecordValidationError(message, path=path, code=code)


def _binding(data: Any) -> Any:
    from reward_memory import schemas
    from reward_memory.errors import RecordValidationError
    from reward_memory.records._plain import from_plain
    from reward_memory.records.recall import ProviderBinding

    if not isinstance(data, dict):
        raise _bad("must be an object", "$.provider_binding", "wrong_type")
    try:
        schemas.validate_definition(data, "reward_memory_recall_input_v0", "ProviderBinding")
        return from_plain(ProviderBinding, data)
    except RecordValidationError as exc:
        path = exc.path if isinstance(exc.path, str) else "$"
        raise _bad(exc.message, "$.provider_binding" + path[1:], exc.code) from None


def run(args: argparse.Namespace) -> Outcome:
    """Validate the request, run the control, print the packet."""
    from reward_memory import wire
    from reward_memory.cli._common import Outcome, read_json_object
    from reward_memory.operator import operator_control
    from reward_memory.records._plain import load_plain
    from reward_memory.records.operator import OperatorControlRequest

    data = read_json_object(args.input)
    binding_data = data.pop("provider_binding", None)
    if data.setdefault("action", args.action) != args.action:
        raise _bad("the request's action is not --action", "$.action", "action_mismatch")
    if "schema_version" not in data:
        raise _bad("schema_version is missing", "$.schema_version", "schema_version_missing")
    if data["schema_version"] != REQUEST_SCHEMA:
        raise _bad(
            f"expected a {REQUEST_SCHEMA} object", "$.schema_version", "schema_version_unsupported"
        )
    request = load_plain(data, OperatorControlRequest)
    writes = args.execute and args.action != "edit"
    binding = None if binding_data is None else _binding(binding_data)
    if writes and (binding is None or args.provider is None):
        raise _bad(
            "--execute needs --provider and the input's provider_binding",
            "--provider" if args.provider is None else "$.provider_binding",
            "missing_field",
        )
    provider = None
    if writes:
        from reward_memory.cli._recall import _open

        provider = _open(args.provider)
    try:
        control = operator_control(
            request,
            provider=provider,  # type: ignore[arg-type]  # an unreachable stand-in fails open
            binding=binding,
            execute=args.execute,
        )
    finally:
        if provider is not None:
            with contextlib.suppress(Exception):
                provider.close()
    packet = wire.dump(control)
    receipt = packet.get("receipt") or {}
    lines = [
        f"  action: {control.action}",
        f"  result_state: {receipt.get('result_state', '-')}",
        f"  next_step: {receipt.get('next_step', '-')}",
        f"  provider_call_count: {control.provider_call_count}",
    ]
    return Outcome(packet=packet, text_lines=tuple(lines))
