"""``reward-memory architecture``: print the Stage-0 contract."""

from __future__ import annotations

from typing import TYPE_CHECKING

from reward_memory.architecture import architecture_packet
from reward_memory.cli._common import Outcome

if TYPE_CHECKING:
    import argparse


def configure(parser: argparse.ArgumentParser) -> None:
    """No options beyond ``--format``."""
    del parser


def run(args: argparse.Namespace) -> Outcome:
    """Emit the constant contract; the text view lists the classes and precedence."""
    del args
    packet = architecture_packet()
    lines = ["  precedence:"]
    lines += [f"    {rank}. {item}" for rank, item in enumerate(packet["precedence"], start=1)]
    lines.append("  classes: " + ", ".join(spec["class_id"] for spec in packet["memory_classes"]))
    return Outcome(packet=packet, text_lines=tuple(lines))
