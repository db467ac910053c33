"""``reward-memory experiment-status --goal-id G --agent-id A [--activation FILE]``.

Resolves the goal and the agent through the activation file (default
``.reward-memory/activation.json``) and its config v1, and prints the
``reward_memory_experiment_status_v1`` packet: the config schema, corpus and
surface counts, recall-profile ids, the effective automatic policy, whether the
agent is allowlisted, the provider id and its health. It never prints a path or
a scope ref. An unknown goal, a disabled goal, an agent not on the allowlist,
a missing or invalid config are statuses (exit 0); an activation file that is
missing or invalid, or a malformed id, is an error packet (exit 2).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reward_memory.cli._common import add_activation_option

if TYPE_CHECKING:
    import argparse

    from reward_memory.cli._common import Outcome

__all__ = ["configure", "run"]


def configure(parser: argparse.ArgumentParser) -> None:
    """Add this verb's options."""
    parser.add_argument("--goal-id", required=True, metavar="G", help="the goal")
    parser.add_argument("--agent-id", required=True, metavar="A", help="the agent")
    add_activation_option(parser)


def run(args: argparse.Namespace) -> Outcome:
    """Resolve and report; the provider's failures are a ``provider_health`` status."""
    from reward_memory._activation_registry import config_root, load_activation_registry
    from reward_memory.cli._common import Outcome
    from reward_memory.errors import InputError, RecordValidationError
    from reward_memory.experiment import experiment_status, resolve_registry
    from reward_memory.records._plain import to_plain

    try:
        registry = load_activation_registry(args.activation)
    except InputError as exc:
        path = "--activation" if exc.path == "$" else exc.path
        raise RecordValidationError(exc.message, path=path, code=exc.code) from None
    try:
        runtime = resolve_registry(
            registry, config_root(args.activation), goal_id=args.goal_id, agent_id=args.agent_id
        )
    except RecordValidationError as exc:
        option = {"$.goal_id": "--goal-id", "$.agent_id": "--agent-id"}.get(exc.path, exc.path)
        raise RecordValidationError(exc.message, path=option, code=exc.code) from None
    status = experiment_status(runtime)
    lines = [
        f"  agent: {status.agent_id} allowlisted={status.configured_for_agent}",
        f"  automatic_recall={status.automatic_recall} automatic_ingest={status.automatic_ingest}",
    ]
    if status.reason_code:
        lines.append(f"  reason_code: {status.reason_code}")
    if status.provider_health is not None:
        lines.append(f"  provider: {status.provider_id} ({status.provider_health.status})")
    return Outcome(packet=to_plain(status), text_lines=tuple(lines))
