"""A valid two-surface experiment config (as JSON data) and helpers to write it to disk."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from reward_memory.digests import short_digest

WORKSPACE = "workspace:example"
PROJECT = "repository:example"
PLANNING = "issue_fix.patch_planning"
SUMMARY = "reviewer_artifact.summary"
SCOPES = {
    "issue_fix_policies": "repository:example/reward-memory/issue-fix-policies",
    "issue_fix_policies_b": "repository:example/reward-memory/issue-fix-policies-b",
    "review_prefs": "repository:example/reward-memory/review-prefs",
}


def corpus(corpus_id: str, *, class_id: str, surfaces: list[str]) -> dict[str, Any]:
    return {
        "corpus_id": corpus_id,
        "class_id": class_id,
        "provider_id": "memory",
        "owner_ref": "repository:example:maintainers",
        "source_of_truth": "verified_contributor_corrections",
        "read_authority": "authority_scoped",
        "write_authority": "authorized_policy_source",
        "scope": {"workspace_ref": WORKSPACE, "project_ref": PROJECT, "surface_ids": surfaces},
        "freshness": {"mode": "source_truth_bound"},
        "lifecycle": {"state": "active"},
        "retrieval": {
            "index_required": True,
            "readback_required": True,
            "application_receipt_required": True,
        },
        "maintenance": {
            "writeback_triggers": ["verified_contributor_policy_derived"],
            "closure_policy": "verified_actor_scope_then_canonical_policy_readback",
            "retirement_authority": "repository:example:maintainers",
        },
        "privacy": {"visibility": "private", "raw_content_in_registry": False},
        "provider_scope_ref_digest": short_digest(SCOPES[corpus_id]),
    }


def policy(policy_id: str, *, class_id: str, surfaces: list[str]) -> dict[str, Any]:
    return {
        "schema_version": "reward_memory_standing_policy_v0",
        "policy_id": policy_id,
        "owner_ref": "repository:example:maintainers",
        "reviewer_ref": "github:user:maintainer",
        "authority_source_ref": "repository:authority-map",
        "enabled": True,
        "auto_activate": True,
        "scope": {"workspace_ref": WORKSPACE, "project_ref": PROJECT, "surface_ids": surfaces},
        "allowed_target_classes": [class_id],
        "allowed_source_kinds": ["maintainer_correction"],
        "allowed_actor_roles": ["verified_repository_core_contributor"],
        "allowed_action_scopes": ["issue_fix:scope_selection"],
        "raw_content_captured": False,
    }


def surface(surface_id: str, corpus_ids: list[str], *, profile: str) -> dict[str, Any]:
    return {
        "surface_id": surface_id,
        "adapter": "issue_fix_maintainer_feedback" if surface_id == PLANNING else "scoped_feedback",
        "corpus_ids": corpus_ids,
        "ingest_corpus_id": corpus_ids[0],
        "recall_profile": {
            "profile_id": profile,
            "mode": "function_boundary",
            "max_queries": 1,
            "limit": 4,
        },
    }


_CONFIG: dict[str, Any] = {
    "schema_version": "reward_memory_experiment_config_v1",
    "project_provider_binding": {
        "provider_id": "memory",
        "namespace": "reward_memory",
        "corpus_scopes": [
            {"corpus_id": corpus_id, "scope_ref": scope_ref}
            for corpus_id, scope_ref in SCOPES.items()
        ],
    },
    "corpora": [
        {
            "corpus": corpus("issue_fix_policies", class_id="hard_policy", surfaces=[PLANNING]),
            "standing_policy": policy("policy:a", class_id="hard_policy", surfaces=[PLANNING]),
        },
        {
            "corpus": corpus("issue_fix_policies_b", class_id="hard_policy", surfaces=[PLANNING]),
            "standing_policy": policy("policy:b", class_id="hard_policy", surfaces=[PLANNING]),
        },
        {
            "corpus": corpus("review_prefs", class_id="soft_preference", surfaces=[SUMMARY]),
            "standing_policy": policy("policy:c", class_id="soft_preference", surfaces=[SUMMARY]),
        },
    ],
    "surfaces": [
        surface(PLANNING, ["issue_fix_policies", "issue_fix_policies_b"], profile="planning_v1"),
        surface(SUMMARY, ["review_prefs"], profile="summary_v1"),
    ],
    "automation": {"automatic_recall": True, "automatic_ingest": False, "fail_open": True},
}


def config_data() -> dict[str, Any]:
    """A fresh copy of the valid config (three corpora, two surfaces, memory provider)."""
    return copy.deepcopy(_CONFIG)


def write_json(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return path


def activation_data(
    *,
    goal_id: str = "issue-fix",
    agents: list[str] | None = None,
    config_path: str = "config.json",
    enabled: bool = True,
    experimental: bool = True,
) -> dict[str, Any]:
    return {
        "schema_version": "reward_memory_activation_registry_v0",
        "goals": [
            {
                "goal_id": goal_id,
                "enabled": enabled,
                "experimental": experimental,
                "config_path": config_path,
                "enabled_agents": ["agent:patcher"] if agents is None else agents,
            }
        ],
    }


def experiment_dir(tmp_path: Path, config: Any = None, **activation: Any) -> Path:
    """A directory with activation.json and config.json; returns the activation path."""
    write_json(tmp_path / "config.json", config_data() if config is None else config)
    return write_json(tmp_path / "activation.json", activation_data(**activation))


EXAMPLE_EXPERIMENT = Path(__file__).resolve().parents[1] / "examples" / "experiment"


def open_example(tmp_path: Path, provider: Any) -> Any:
    """The shipped example experiment (its config, activated for ``agent:patcher`` the way
    ``configure`` writes it, its authority map) opened over ``provider``."""
    import shutil

    import reward_memory as rm

    shutil.copyfile(EXAMPLE_EXPERIMENT / "config.json", tmp_path / "config.json")
    rm.configure_goal(
        tmp_path / "activation.json",
        goal_id="issue-fix",
        config_path="config.json",
        agents=["agent:patcher"],
        execute=True,
    )
    return rm.open_experiment(
        tmp_path / "activation.json",
        goal_id="issue-fix",
        agent_id="agent:patcher",
        authority=EXAMPLE_EXPERIMENT / "authority.json",
        provider=provider,
    )
