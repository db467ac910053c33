"""``reward-memory explain RECEIPT_FILE [--provider URL] [--config FILE] [--binding FILE]``.

Prints the ``reward_memory_explain_v0`` lineage of any receipt explain knows
(ingest receipt, recall packet, application receipt or packet, operator-control
receipt or packet). Without ``--provider`` every stored link is ``not_checked``.
Receipts name corpora, never scopes: ``--config`` (an experiment config v1)
and/or ``--binding`` (one ``ProviderBinding`` object, or a list of them) say
where each corpus lives. A provider that fails is a status (exit 0); bad input
is an error packet (exit 2). No content, path or scope ref is printed.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import argparse

    from reward_memory.cli._common import Outcome

__all__ = ["configure", "run"]


def configure(parser: argparse.ArgumentParser) -> None:
    """Add this verb's options."""
    parser.add_argument("receipt", metavar="RECEIPT_FILE", help="the receipt (- for stdin)")
    parser.add_argument("--provider", metavar="URL", help="provider URL to check links against")
    parser.add_argument("--config", metavar="FILE", help="an experiment config v1 (its bindings)")
    parser.add_argument("--binding", metavar="FILE", help="a provider binding, or a list of them")


def read_bindings(name: str | None) -> list[Any]:
    """The ``--binding`` file: one ProviderBinding object or a list of them (at most 50)."""
    if name is None:
        return []
    from reward_memory._boundary import strict_record
    from reward_memory.cli._common import read_json_input
    from reward_memory.errors import RecordValidationError
    from reward_memory.records.recall import ProviderBinding

    data = read_json_input(name, option="--binding")
    items = data if isinstance(data, list) else [data]
    found = []
    if len(items) > 50:
        raise RecordValidationError("at most 50 bindings", path="--binding", code="invalid_value")
    for index, item in enumerate(items):
        where = f"--binding[{index}]" if isinstance(data, list) else "--binding"
        if not isinstance(item, dict):
            raise RecordValidationError("must be an object", path=where, code="wrong_type")
        try:
            found.append(
                strict_record(
                    ProviderBinding,
                    item,
                    "reward_memory_recall_input_v0",
                    definition="ProviderBinding",
                )
            )
        except RecordValidationError as exc:
            # The field inside the file, as every file option names it ($[1].x in a list).
            path = exc.path if not isinstance(data, list) else f"$[{index}]{exc.path[1:]}"
            raise RecordValidationError(exc.message, path=path, code=exc.code) from None
    return found


def run(args: argparse.Namespace) -> Outcome:
    """Load the receipt (and where corpora live), explain it, print the lineage."""
    from reward_memory.cli._common import Outcome, read_json_object
    from reward_memory.lineage import explain
    from reward_memory.records._plain import to_plain

    data = read_json_object(args.receipt, option="RECEIPT_FILE")
    config = None
    if args.config is not None:
        from reward_memory._boundary import strict_packet
        from reward_memory.records.experiment import ExperimentConfig

        config = strict_packet(read_json_object(args.config, option="--config"), ExperimentConfig)
    bindings = read_bindings(args.binding)
    provider = None
    if args.provider is not None:
        from reward_memory.cli._recall import _open

        provider = _open(args.provider)
    try:
        explanation = explain(
            data,
            provider=provider,  # type: ignore[arg-type]  # an unreachable stand-in fails open
            config=config,
            bindings=bindings,
        )
    finally:
        if provider is not None:
            with contextlib.suppress(Exception):
                provider.close()
    packet = to_plain(explanation)
    lines = tuple(
        f"  {link.stage}: {link.status}" + (f" ({link.reason_code})" if link.reason_code else "")
        for link in explanation.links
    )
    return Outcome(packet=packet, text_lines=lines)
