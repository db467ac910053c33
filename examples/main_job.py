"""The main job, end to end, through the public API on the embedded SQLite store.

    python3 dev.py demo                                  # the default store location
    REWARD_MEMORY_SQLITE_PATH=$(mktemp -d)/m.db python3 dev.py demo   # a throw-away store
    .venv/bin/python examples/main_job.py --store sqlite:///tmp/demo.db --format json

1. ``configure_goal`` enables the ``issue-fix`` goal for ``agent:patcher`` over
   ``examples/experiment/config.json`` (config v1; its binding names ``sqlite``).
   The activation file it writes lives in a temporary directory, so a run never
   changes the repository; ``examples/experiment/activation.json`` is the same file.
2. ``open_experiment`` opens it with the caller's authority map
   (``examples/experiment/authority.json``): the verified maintainer who may speak
   for the project, and the agent that may read its policies. No provider scope,
   binding or checkpoint is built by hand.
3. ``ingest`` takes the compact, already-distilled maintainer correction
   (``examples/experiment/event.json``) to the surface's ingest corpus, under its
   standing policy: activated only after an exact readback. The first observation
   time is fixed, so a second run is the same candidate and target: ``deduplicated``.
4. At the ``issue_fix.patch_planning`` boundary, ``recall`` finds it under the read
   checkpoint the map answers, and the module's model decides to apply it; the
   ``boundary`` decorator does the same for a plain function.
5. The experiment's status and the corpus health; then a recall observed in another
   project is stopped by the guards with zero provider calls.

Only public-safe packets are printed: hashed references, counts and reasons.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import reward_memory as rm
from reward_memory import jsonio, wire

HERE = Path(__file__).resolve().parent / "experiment"
GOAL = "issue-fix"
AGENT = "agent:patcher"
SURFACE = "issue_fix.patch_planning"
# When the correction was first observed. Replays reuse it, so a replay is the same
# candidate, the same active record and the same provider target (idempotent).
FIRST_OBSERVED = "2026-11-01T12:00:00Z"


def narrow_the_plan(base_output: dict[str, Any], items: Any) -> dict[str, Any]:
    """The module's model (deterministic here): it reads the policy and applies it."""
    policy = items[0]
    return {
        "outcome": "applied",
        "output": {**base_output, "files": ["src/parser/module.py"], "scope": "affected_module"},
        "memory_refs": [policy.memory_ref],
        "reasoning_summary": "The maintainer's policy fits: the bug is local to the parser module.",
        "current_artifact_verified": True,
    }


def base_plan(issue: str) -> dict[str, Any]:
    """What the planner proposes without memory (an over-broad patch)."""
    return {"issue": issue, "files": ["src/parser/module.py", "src/generic/listing.py"]}


def run(store: str | None, state: Path) -> dict[str, Any]:
    # 1. configure: the activation file points at a config beside it (relative, no "..").
    shutil.copyfile(HERE / "config.json", state / "config.json")
    activation = state / "activation.json"
    change = rm.configure_goal(
        activation, goal_id=GOAL, config_path="config.json", agents=[AGENT], execute=True
    )

    # 2. open: goal + agent + the caller's authority source. The provider is the config's
    # ("sqlite": $REWARD_MEMORY_SQLITE_PATH, else the default location) unless --store;
    # the demo builds it itself only to show the store's inventory (health) at the end.
    spec = store or rm.resolve_experiment(activation, goal_id=GOAL, agent_id=AGENT).provider_id
    provider = rm.get_provider(spec or "sqlite")
    memory = rm.open_experiment(
        activation,
        goal_id=GOAL,
        agent_id=AGENT,
        authority=HERE / "authority.json",
        provider=provider,
    )
    with memory:
        # 3. ingest the compact event: write, exact readback, one verification recall.
        event = jsonio.read(str(HERE / "event.json"))
        ingested = memory.ingest(event, observed_at=FIRST_OBSERVED, execute=True)

        # 4. recall at the function boundary and let the module's model apply it.
        issue = "github:example/repository#42"
        outcome = memory.recall(
            SURFACE,
            queries=["keep focused fixes within the affected module"],
            base_output=base_plan(issue),
            apply_memory=narrow_the_plan,
            application_id="application:example:42",
            artifact_ref="revision:abc123",
        )

        @memory.boundary(
            SURFACE,
            queries=lambda issue: ["keep focused fixes within the affected module"],
            apply_memory=narrow_the_plan,
            application_id="application:example:43",
        )
        def plan_patch(issue: str) -> dict[str, Any]:
            return base_plan(issue)

        decorated = plan_patch(issue)

        # 5. status, corpus health, and a recall the guards stop before the provider.
        status = memory.status()
        health = corpus_health(memory, provider, outcome)
        elsewhere = rm.RecallContext.current(
            workspace_ref="workspace:example", project_ref="repository:other"
        )
        blocked = memory.recall(
            SURFACE,
            queries=["keep focused fixes within the affected module"],
            base_output=base_plan(issue),
            apply_memory=narrow_the_plan,
            application_id="application:example:44",
            context=elsewhere,
        )
    provider.close()  # ours: the experiment closes only a provider it built itself
    return {
        "configure": {"status": change.status, "config_status": change.config_status},
        "ingest": wire.dump(ingested),
        "recall": wire.dump(outcome.packet),
        "output": outcome.output,
        "decorated_output": decorated,
        "status": wire.dump(status),
        "health": wire.dump(health),
        "blocked_recall": {
            "status": blocked.status,
            "reason_code": blocked.packet.reason_code,
            "provider_call_count": blocked.packet.telemetry.provider_call_count,
            "output_is_base": blocked.fail_open_preserved_base,
        },
    }


def corpus_health(memory: rm.Experiment, provider: rm.Provider, outcome: Any) -> Any:
    """Classify the ingest corpus's health from the store's inventory and the recall."""
    route = memory.runtime.surface(SURFACE).ingest
    inventory = provider.inventory(scope=route.binding.provider_scope)
    return rm.classify_health(
        route.corpus,
        rm.HealthObservation(
            requested_project_ref=route.corpus.scope.project_ref,
            requested_surface=SURFACE,
            freshness_window_satisfied=True,
            provider_available=inventory.available,
            corpus_present=inventory.corpus_present,
            record_count=inventory.record_count,
            index_present=inventory.index_present,
            retrieval_query_succeeded=outcome.packet.hit_corpus_id is not None,
            result_readback_verified=outcome.packet.telemetry.result_readback_verified,
            memory_applied_with_receipt=outcome.status == "applied",
        ),
    )


def print_text(result: dict[str, Any]) -> None:
    ingest, receipt = result["ingest"], result["ingest"]["receipt"]
    recall, application = result["recall"], result["recall"]["application"] or {}
    blocked = result["blocked_recall"]
    print(
        f"configure      {result['configure']['status']} "
        f"(config {result['configure']['config_status']})"
    )
    print(
        f"ingest         {ingest['status']}  deduplicated={receipt['deduplicated']}  "
        f"exact readback={receipt['exact_readback_verified']}  {receipt['record_ref']}"
    )
    print(
        f"recall         {recall['status']} from {recall['hit_corpus_id']}, "
        f"{recall['telemetry']['provider_call_count']} provider call(s)"
    )
    print(f"application    {application.get('outcome')}: {application.get('reasoning_summary')}")
    print(f"plan           {result['output']['files']}")
    print(f"decorated      {result['decorated_output']['files']}")
    health = result["health"]
    print(f"health         {health['health_state']} ({', '.join(health['reason_codes'])})")
    status = result["status"]
    print(f"experiment     {status['status']}, provider {status['provider_health']['status']}")
    print(
        f"other project  {blocked['status']} ({blocked['reason_code']}), "
        f"{blocked['provider_call_count']} provider calls, "
        f"base output kept: {blocked['output_is_base']}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", help="provider URL (default: the config's, i.e. sqlite)")
    parser.add_argument("--format", choices=("json", "text"), default="text")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="reward-memory-demo-") as state:
        result = run(args.store, Path(state))
    if args.format == "json":
        print(json.dumps(result, indent=2, ensure_ascii=False))
    else:
        print_text(result)
    ok = (
        result["ingest"]["status"] == "activated"
        and result["recall"]["status"] == "applied"
        and result["blocked_recall"]["provider_call_count"] == 0
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
