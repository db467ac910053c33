"""``reward-memory configure``: preview or write one goal's experimental activation.

    reward-memory configure --goal-id G --config PATH --agent ID [--agent ID ...]
                            [--clear] [--execute] [--activation FILE]

Without ``--execute`` nothing is written: the ``reward_memory_activation_change_v0``
packet shows the goal's entry before and after. With ``--execute`` the activation
file (default ``.reward-memory/activation.json`` in the current directory) is
written atomically. ``PATH`` is relative to the project root (the directory that
holds ``.reward-memory/``, so: as typed from there; for an activation file
elsewhere, its own directory), has no ``..`` segment and ends in ``.json``;
enabling needs at least one agent;
``--clear`` removes the goal and takes neither ``--config`` nor ``--agent``. The
packet never shows the config path (only a digest of it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reward_memory.cli._common import add_activation_option

if TYPE_CHECKING:
    import argparse

    from reward_memory.cli._common import Outcome

__all__ = ["configure", "run"]

# Record paths -> the option that supplied the value.
_OPTIONS = {
    "$.goal_id": "--goal-id",
    "$.config_path": "--config",
    "$.enabled_agents": "--agent",
    "$.clear": "--clear",
}


def configure(parser: argparse.ArgumentParser) -> None:
    """Add this verb's options."""
    parser.add_argument("--goal-id", required=True, metavar="G", help="the goal to configure")
    parser.add_argument(
        "--config",
        metavar="PATH",
        help="the config v1 file, relative to the project root (the directory holding "
        ".reward-memory/; else the activation file's directory); no '..'",
    )
    parser.add_argument(
        "--agent",
        action="append",
        default=[],
        metavar="ID",
        help="an allowlisted agent id (repeat for more; replaces the goal's allowlist)",
    )
    parser.add_argument("--clear", action="store_true", help="remove the goal's activation")
    parser.add_argument(
        "--execute", action="store_true", help="write the change (default: preview only)"
    )
    add_activation_option(parser)


def _option_path(path: str) -> str:
    for prefix, option in _OPTIONS.items():
        if path == prefix or path.startswith((prefix + "[", prefix + ".")):
            return option
    return path


def run(args: argparse.Namespace) -> Outcome:
    """Preview or write the change; bad input is an error packet naming the option."""
    from reward_memory._activation_registry import configure_goal
    from reward_memory.cli._common import Outcome
    from reward_memory.errors import InputError, RecordValidationError
    from reward_memory.records._plain import to_plain

    try:
        change = configure_goal(
            args.activation,
            goal_id=args.goal_id,
            config_path=args.config,
            agents=tuple(args.agent),
            clear=args.clear,
            execute=args.execute,
        )
    except InputError as exc:
        # A whole-file problem (missing, unreadable, not JSON) names the option.
        path = "--activation" if exc.path == "$" else exc.path
        raise RecordValidationError(exc.message, path=path, code=exc.code) from None
    except RecordValidationError as exc:
        raise RecordValidationError(
            exc.message, path=_option_path(exc.path), code=exc.code
        ) from None
    lines = [f"  goal_id: {change.goal_id}", f"  config_status: {change.config_status}"]
    if change.status == "preview":
        lines.append("  nothing written: add --execute to write this change")
    if change.after is not None:
        lines.append(f"  enabled_agents: {', '.join(change.after.enabled_agents)}")
    return Outcome(packet=to_plain(change), text_lines=tuple(lines))
