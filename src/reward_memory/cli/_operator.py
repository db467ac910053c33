"""``reward-memory operator-control --input FILE --action edit|retire|revoke|purge [--execute]``.

``FILE`` is a ``reward_memory_operator_control_request_v0`` (its ``action`` may be
left out: ``--action`` supplies it, and must agree when both are given). An
executed retire / revoke / purge also needs ``--provider URL`` and ``--binding
FILE`` (one ``ProviderBinding`` object: where the corpus lives; checked against
the corpus declaration as recall checks it, so a binding for another scope is
``guard_blocked``). A dry run (the default) makes zero provider calls and
prints ``control_ready``; an edit never writes (its replacement candidate goes
to review). Prints the ``reward_memory_operator_control_v0`` packet: a refused
checkpoint is ``guard_blocked`` with reason codes (exit 0); a provider that fails
is a status (exit 0, retry with the same input); bad input is an error packet
(exit 2). No path or scope ref is printed.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Final

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
    parser.add_argument(
        "--binding", metavar="FILE", help="the corpus's provider binding (required to execute)"
    )


def _bad(message: str, path: str, code: str = "invalid_value") -> Exception:
    from reward_memory.errors import RecordValidationError

    return RecordValidationError(message, path=path, code=code)


def run(args: argparse.Namespace) -> Outcome:
    """Validate the request, run the control, print the packet."""
    from reward_memory.cli._common import Outcome, read_json_object
    from reward_memory.operator import operator_control
    from reward_memory.records._plain import load_plain, to_plain
    from reward_memory.records.operator import OperatorControlRequest

    data = read_json_object(args.input)
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
    if writes and (args.binding is None or args.provider is None):
        raise _bad(
            "--execute needs --provider and --binding",
            "--provider" if args.provider is None else "--binding",
            "missing_field",
        )
    binding = None
    if args.binding is not None:
        from reward_memory.cli._explain import read_bindings

        found = read_bindings(args.binding)
        if len(found) != 1:
            raise _bad("--binding holds one provider binding", "--binding", "invalid_value")
        binding = found[0]
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
    packet = to_plain(control)
    if args.format == "json":
        return Outcome(packet=packet)
    # The shared summary would print the whole replacement review ("decision"): say less.
    import sys

    receipt = control.receipt
    lines = [
        control.schema_version,
        f"  status: {control.status}",
        f"  action: {control.action}",
        f"  reason_codes: {', '.join(control.reason_codes) or '-'}",
        f"  result_state: {receipt.result_state if receipt else '-'}",
        f"  next_step: {receipt.next_step if receipt else '-'}",
        f"  provider_call_count: {control.provider_call_count}",
    ]
    if control.decision is not None:
        lines.append(f"  replacement_candidate: {control.decision.record.candidate_ref}")
    sys.stdout.write("\n".join(lines) + "\n")
    return Outcome(packet=packet, printed=True)
