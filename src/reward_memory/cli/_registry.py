"""``reward-memory corpus-registry``: print the Stage-1 reference corpus registry."""

from __future__ import annotations

from typing import TYPE_CHECKING

from reward_memory.cli._common import Outcome

if TYPE_CHECKING:
    import argparse


def configure(parser: argparse.ArgumentParser) -> None:
    """No options beyond ``--format``."""
    del parser


def run(args: argparse.Namespace) -> Outcome:
    """Emit the reference registry (seven families, all five classes covered)."""
    del args
    # Records are serialised directly (no cattrs, no jsonschema): the verb stays fast.
    from reward_memory.records._plain import to_plain as as_plain
    from reward_memory.registry import reference_registry

    registry = reference_registry()
    lines = [
        f"    {corpus.corpus_id} ({corpus.class_id}; {corpus.read_authority} / "
        f"{corpus.write_authority})"
        for corpus in registry.corpora
    ]
    return Outcome(packet=as_plain(registry), text_lines=("  corpora:", *lines))
