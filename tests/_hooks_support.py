"""A three-corpus planning surface (memory providers) for the hook and author tests."""

from __future__ import annotations

from typing import Any

from _experiment_support import PLANNING, PROJECT, SCOPES, WORKSPACE, config_data, corpus, policy
from _ingest_support import NOW, OBSERVED, authority, hard_event
from reward_memory.experiment import CorpusRoute, ExperimentRuntime, runtime_from_records
from reward_memory.hooks import RecallContext
from reward_memory.records.activation_registry import ActivationGoal
from reward_memory.records.recall import ReadAuthorityCheckpoint
from reward_memory.testing import InMemoryProvider

__all__ = ["NOW", "OBSERVED", "authority", "hard_event"]

A, B, C = "issue_fix_policies", "issue_fix_policies_b", "issue_fix_policies_c"
SCOPE_C = "repository:example/reward-memory/issue-fix-policies-c"


def walk_config(
    *, recall: bool = True, ingest: bool = True, ingest_corpus: str = C
) -> dict[str, Any]:
    data = config_data()
    data["project_provider_binding"]["corpus_scopes"].append({"corpus_id": C, "scope_ref": SCOPE_C})
    entry = {
        "corpus": corpus(A, class_id="hard_policy", surfaces=[PLANNING]),
        "standing_policy": policy("policy:c2", class_id="hard_policy", surfaces=[PLANNING]),
    }
    from reward_memory.digests import short_digest

    entry["corpus"]["corpus_id"] = C
    entry["corpus"]["provider_scope_ref_digest"] = short_digest(SCOPE_C)
    data["corpora"].append(entry)
    planning = data["surfaces"][0]
    planning["corpus_ids"] = [A, B, C]
    planning["ingest_corpus_id"] = ingest_corpus
    data["automation"] = {"automatic_recall": recall, "automatic_ingest": ingest, "fail_open": True}
    assert SCOPES  # the other scopes come from the shared config
    return data


def goal(*, agents: tuple[str, ...] = ("agent:patcher",)) -> ActivationGoal:
    return ActivationGoal(
        goal_id="issue-fix",
        enabled=True,
        experimental=True,
        config_path="config.json",
        enabled_agents=agents,
    )


def runtime(agent: str = "agent:patcher", **config: Any) -> ExperimentRuntime:
    return runtime_from_records(goal(), walk_config(**config), agent_id=agent)


def read_checkpoint(route: CorpusRoute) -> ReadAuthorityCheckpoint:
    return ReadAuthorityCheckpoint(
        verified=True,
        corpus_id=route.corpus_id,
        workspace_ref=WORKSPACE,
        project_ref=PROJECT,
        surface_id=PLANNING,
        read_authority=route.corpus.read_authority,
        source_ref="repository:authority-map",
    )


def context() -> RecallContext:
    return RecallContext.current(workspace_ref=WORKSPACE, project_ref=PROJECT, now=NOW)


def seeded(rt: ExperimentRuntime) -> InMemoryProvider:
    """A memory provider holding one activated record in the surface's ingest corpus."""
    from reward_memory.hooks import automatic_ingest

    provider = InMemoryProvider()
    hook = automatic_ingest(
        rt,
        PLANNING,
        hard_event(),
        authority=authority(),
        observed_at=OBSERVED,
        execute=True,
        provider=provider,
        now=NOW,
    )
    assert hook.status == "activated", hook
    return provider


def applying(base: Any, items: tuple[Any, ...]) -> dict[str, Any]:
    return {
        "outcome": "applied",
        "output": {**base, "memory": True},
        "memory_refs": [items[0].memory_ref],
        "reasoning_summary": "The maintainer's scope correction applies to this plan.",
        "current_artifact_verified": True,
    }
