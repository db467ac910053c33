"""The activation registry and ``configure``: relative pointers, allowlists, preview, atomic write.

Contract: seeds, "Experimental activation": "The registry retains only enabled, experimental, an
ignored repo-relative config pointer, and the explicit agent allowlist. Provider-specific
choices therefore stay local and private." and "Preview first; add --execute only after
checking the boundary change." (issue 8 item 1: relative path, no '..', agents required to
enable; written atomically with --execute).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from _experiment_support import activation_data, config_data, write_json
from reward_memory import schemas, wire
from reward_memory._activation_registry import (
    config_root,
    configure_goal,
    load_activation_registry,
    plan_change,
)
from reward_memory.errors import InputError, RecordValidationError
from reward_memory.records.activation_registry import (
    ActivationGoal,
    ActivationRegistry,
    check_agent_id,
    check_config_pointer,
)


def _goal(**changes: Any) -> ActivationGoal:
    fields: dict[str, Any] = {
        "goal_id": "issue-fix",
        "enabled": True,
        "experimental": True,
        "config_path": "config/experiment.json",
        "enabled_agents": ("agent:patcher",),
    }
    fields.update(changes)
    return ActivationGoal(**fields)


# -- the pointer and the agent ids ----------------------------------------------------------


@pytest.mark.parametrize(
    ("pointer", "code"),
    [
        ("/etc/reward-memory/experiment.json", "config_path_absolute"),
        ("\\\\server\\share\\experiment.json", "config_path_absolute"),
        ("C:/configs/experiment.json", "config_path_absolute"),
        ("~/experiment.json", "config_path_absolute"),
        ("../experiment.json", "config_path_traversal"),
        ("config/../../experiment.json", "config_path_traversal"),
        ("./experiment.json", "config_path_traversal"),
        ("config\\..\\experiment.json", "config_path_traversal"),
        ("config/experiment.yaml", "invalid_format"),
        ("config//experiment.json", "invalid_format"),
        ("config/exp eriment.json", "invalid_format"),
        ("", "invalid_format"),
        # Written to the activation file: a credential-shaped name is refused too.
        ("ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8" + ".json", "unsafe_text"),
    ],
)
def test_config_pointers_are_relative_without_dot_segments(pointer: str, code: str) -> None:
    with pytest.raises(RecordValidationError) as info:
        check_config_pointer(pointer, "$.config_path")
    assert (info.value.path, info.value.code) == ("$.config_path", code)


@pytest.mark.parametrize(
    "pointer", ["experiment.json", ".reward-memory/experiment.json", "config/a-b_c.1.json"]
)
def test_plain_relative_pointers_are_accepted(pointer: str) -> None:
    assert check_config_pointer(pointer) == pointer
    assert _goal(config_path=pointer).config_path == pointer


@given(st.text(max_size=40))
def test_a_pointer_is_accepted_only_when_it_cannot_leave_the_root(text: str) -> None:
    try:
        check_config_pointer(text)
    except RecordValidationError:
        return
    parts = text.split("/")
    assert not text.startswith("/")
    assert ".." not in parts
    assert "." not in parts
    assert text.endswith(".json")


@pytest.mark.parametrize("agent", ["Agent:Patcher", "9agent", "agent patcher", "", "a" * 81])
def test_agent_ids_follow_grammar_a(agent: str) -> None:
    with pytest.raises(RecordValidationError) as info:
        check_agent_id(agent, "$.agent_id")
    assert info.value.code == "invalid_format"


def test_an_enabled_goal_needs_an_agent() -> None:
    with pytest.raises(RecordValidationError) as info:
        _goal(enabled_agents=())
    assert (info.value.path, info.value.code) == ("$.enabled_agents", "agents_required")
    assert _goal(enabled=False, enabled_agents=()).enabled_agents == ()


def test_effective_enablement_needs_all_three() -> None:
    assert _goal().enabled_for("agent:patcher")
    assert not _goal().enabled_for("agent:other")
    assert not _goal(experimental=False).enabled_for("agent:patcher")
    assert not _goal(enabled=False).enabled_for("agent:patcher")


@pytest.mark.parametrize(
    ("mutate", "path", "code"),
    [
        (lambda d: d["goals"].append(d["goals"][0]), "$.goals[1].goal_id", "duplicate_item"),
        (
            lambda d: d["goals"][0].update(provider_id="sqlite"),
            "$.goals[0].provider_id",
            "unknown_field",
        ),
        (
            lambda d: d["goals"][0].update(scope_ref="viking://x"),
            "$.goals[0].scope_ref",
            "unknown_field",
        ),
        (
            lambda d: d["goals"][0].update(config_path="../x.json"),
            "$.goals[0].config_path",
            "invalid_format",
        ),
        (
            lambda d: d["goals"][0].update(enabled_agents=[]),
            "$.goals[0].enabled_agents",
            "agents_required",
        ),
        (
            lambda d: d["goals"][0].update(enabled_agents=["agent:a", "agent:a"]),
            "$.goals[0].enabled_agents",
            "invalid_value",
        ),
        (lambda d: d["goals"][0].update(enabled="yes"), "$.goals[0].enabled", "wrong_type"),
        (lambda d: d["goals"][0].pop("experimental"), "$.goals[0].experimental", "missing_field"),
        (
            lambda d: d.update(schema_version="reward_memory_activation_registry_v9"),
            "$.schema_version",
            "schema_version_unsupported",
        ),
    ],
)
def test_the_registry_file_is_strict(tmp_path: Path, mutate: Any, path: str, code: str) -> None:
    data = activation_data()
    mutate(data)
    target = write_json(tmp_path / "activation.json", data)
    with pytest.raises(RecordValidationError) as info:
        load_activation_registry(target)
    assert (info.value.path, info.value.code) == (path, code)


def test_the_registry_never_holds_provider_choices() -> None:
    """The seeds: only enabled, experimental, the pointer and the allowlist."""
    assert set(wire.dump(_goal())) == {
        "goal_id",
        "enabled",
        "experimental",
        "config_path",
        "enabled_agents",
    }


# -- plan_change --------------------------------------------------------------------------


def test_planning_a_new_goal_needs_a_config_and_an_agent() -> None:
    empty = ActivationRegistry()
    with pytest.raises(RecordValidationError) as info:
        plan_change(empty, goal_id="g", agents=("agent:a",))
    assert (info.value.path, info.value.code) == ("$.config_path", "missing_field")
    with pytest.raises(RecordValidationError) as info:
        plan_change(empty, goal_id="g", config_path="c.json")
    assert (info.value.path, info.value.code) == ("$.enabled_agents", "agents_required")
    before, after, updated = plan_change(
        empty, goal_id="g", config_path="c.json", agents=("agent:a", "agent:b", "agent:a")
    )
    assert before is None
    assert after is not None
    assert after.enabled_agents == ("agent:a", "agent:b")  # de-duplicated, in order
    assert (after.enabled, after.experimental) == (True, True)
    assert updated.goals == (after,)


def test_planning_keeps_what_is_not_supplied_and_replaces_what_is() -> None:
    registry = ActivationRegistry(goals=(_goal(),))
    _, after, _ = plan_change(registry, goal_id="issue-fix", agents=("agent:other",))
    assert after is not None
    assert after.config_path == "config/experiment.json"
    assert after.enabled_agents == ("agent:other",)
    _, after, _ = plan_change(registry, goal_id="issue-fix", config_path="new.json")
    assert after is not None
    assert after.enabled_agents == ("agent:patcher",)


def test_clear_removes_the_goal_and_takes_nothing_else() -> None:
    registry = ActivationRegistry(goals=(_goal(), _goal(goal_id="other")))
    before, after, updated = plan_change(registry, goal_id="issue-fix", clear=True)
    assert (before, after) == (_goal(), None)
    assert [g.goal_id for g in updated.goals] == ["other"]
    with pytest.raises(RecordValidationError) as info:
        plan_change(registry, goal_id="issue-fix", clear=True, agents=("agent:a",))
    assert (info.value.path, info.value.code) == ("$.clear", "conflict")


def test_planning_checks_every_agent_id() -> None:
    with pytest.raises(RecordValidationError) as info:
        plan_change(
            ActivationRegistry(), goal_id="g", config_path="c.json", agents=("agent:a", "Bad")
        )
    assert info.value.path == "$.enabled_agents[1]"


# -- configure_goal: preview, execute, atomicity ------------------------------------------


def test_preview_writes_nothing(tmp_path: Path) -> None:
    target = tmp_path / ".reward-memory" / "activation.json"
    change = configure_goal(target, goal_id="g", config_path="c.json", agents=("agent:a",))
    assert (change.status, change.changed, change.activation_written) == ("preview", True, False)
    assert not target.exists()
    assert not target.parent.exists()


def test_execute_writes_and_a_repeat_is_unchanged(tmp_path: Path) -> None:
    write_json(tmp_path / "c.json", config_data())
    target = tmp_path / ".reward-memory" / "activation.json"
    change = configure_goal(
        target, goal_id="g", config_path="c.json", agents=("agent:a",), execute=True
    )
    assert (change.status, change.activation_written, change.config_status) == (
        "written",
        True,
        "valid",
    )
    registry = load_activation_registry(target)
    assert registry.goal("g") == ActivationGoal(
        goal_id="g",
        enabled=True,
        experimental=True,
        config_path="c.json",
        enabled_agents=("agent:a",),
    )
    again = configure_goal(
        target, goal_id="g", config_path="c.json", agents=("agent:a",), execute=True
    )
    assert (again.status, again.changed, again.activation_written) == ("unchanged", False, False)
    assert list(tmp_path.joinpath(".reward-memory").iterdir()) == [target]  # no temp left


def test_the_change_packet_shows_no_path(tmp_path: Path) -> None:
    change = configure_goal(
        tmp_path / "activation.json",
        goal_id="g",
        config_path="secret-dir/c.json",
        agents=("agent:a",),
    )
    text = json.dumps(wire.dump(change))
    assert "secret-dir" not in text
    assert change.after is not None
    assert change.after.config_pointer_registered


@pytest.mark.parametrize(
    ("content", "status", "reason"),
    [
        (None, "missing", "config_missing"),
        (
            {"schema_version": "reward_memory_experiment_config_v0"},
            "invalid",
            "config_version_unsupported",
        ),
        ({"schema_version": "reward_memory_experiment_config_v1"}, "invalid", "missing_field"),
    ],
)
def test_the_preview_says_whether_the_config_loads(
    tmp_path: Path, content: Any, status: str, reason: str
) -> None:
    if content is not None:
        write_json(tmp_path / "c.json", content)
    change = configure_goal(
        tmp_path / "activation.json", goal_id="g", config_path="c.json", agents=("agent:a",)
    )
    assert (change.config_status, change.config_reason_code) == (status, reason)


def test_the_pointer_is_relative_to_the_project_root(tmp_path: Path) -> None:
    """`.reward-memory/activation.json` + `config/x.json` names `./config/x.json`."""
    assert config_root(tmp_path / ".reward-memory" / "activation.json") == tmp_path
    assert config_root(tmp_path / "examples" / "activation.json") == tmp_path / "examples"
    write_json(tmp_path / "config" / "x.json", config_data())
    change = configure_goal(
        tmp_path / ".reward-memory" / "activation.json",
        goal_id="g",
        config_path="config/x.json",
        agents=("agent:a",),
    )
    assert change.config_status == "valid"


def test_an_invalid_activation_file_is_never_overwritten(tmp_path: Path) -> None:
    target = tmp_path / "activation.json"
    target.write_text("{broken", encoding="utf-8")
    with pytest.raises(InputError):
        configure_goal(target, goal_id="g", config_path="c.json", agents=("agent:a",), execute=True)
    assert target.read_text(encoding="utf-8") == "{broken"


def test_a_crash_before_the_rename_leaves_the_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "activation.json"
    configure_goal(target, goal_id="g", config_path="c.json", agents=("agent:a",), execute=True)
    old = target.read_bytes()

    def crash(*_: Any) -> None:
        raise KeyboardInterrupt  # the process dies between the fsync and the rename

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(KeyboardInterrupt):
        configure_goal(
            target, goal_id="g", config_path="other.json", agents=("agent:b",), execute=True
        )
    assert target.read_bytes() == old
    assert sorted(p.name for p in tmp_path.iterdir()) == ["activation.json"]  # temp removed


def test_an_unwritable_directory_is_a_typed_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "activation.json"

    def refuse(*_: Any) -> None:
        raise PermissionError(13, "denied")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(InputError) as info:
        configure_goal(target, goal_id="g", config_path="c.json", agents=("agent:a",), execute=True)
    assert info.value.code == "file_unwritable"
    assert not target.exists()


def test_goals_are_written_sorted_and_clear_removes_one(tmp_path: Path) -> None:
    target = tmp_path / "activation.json"
    for goal in ("zeta", "alpha"):
        configure_goal(
            target, goal_id=goal, config_path="c.json", agents=("agent:a",), execute=True
        )
    assert [g.goal_id for g in load_activation_registry(target).goals] == ["alpha", "zeta"]
    change = configure_goal(target, goal_id="zeta", clear=True, execute=True)
    assert (change.status, change.after, change.config_status) == ("written", None, "not_checked")
    assert [g.goal_id for g in load_activation_registry(target).goals] == ["alpha"]


def test_agents_must_be_a_sequence_not_a_string(tmp_path: Path) -> None:
    with pytest.raises(TypeError):
        configure_goal(tmp_path / "a.json", goal_id="g", config_path="c.json", agents="agent:a")


def _configure_at_once(paths: list[Path], count: int) -> None:
    """``count`` real ``configure --execute`` processes at once, goal ``goal-NN`` each,
    through ``paths`` in turn; every one must exit 0."""
    import subprocess
    import sys

    runs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "reward_memory",
                "configure",
                "--goal-id",
                f"goal-{index:02d}",
                "--config",
                "c.json",
                "--agent",
                "agent:a",
                "--execute",
                "--activation",
                str(paths[index % len(paths)]),
            ],
            stdout=subprocess.DEVNULL,
        )
        for index in range(count)
    ]
    assert [run.wait(timeout=120) for run in runs] == [0] * count


def test_concurrent_configure_runs_lose_no_goal(tmp_path: Path) -> None:
    """Eight real processes, one activation file: every goal is there at the end."""
    target = tmp_path / ".reward-memory" / "activation.json"
    _configure_at_once([target], 8)
    goals = [goal.goal_id for goal in load_activation_registry(target).goals]
    assert goals == [f"goal-{index:02d}" for index in range(8)]
    assert sorted(p.name for p in target.parent.iterdir()) == ["activation.json"]


def test_configure_runs_through_a_link_and_its_target_lose_no_goal(tmp_path: Path) -> None:
    """One file named by two paths (a symlink and the file it names) is one lock."""
    (tmp_path / "real").mkdir()
    (tmp_path / "proj").mkdir()
    link = tmp_path / "proj" / "activation.json"
    link.symlink_to(Path("..") / "real" / "activation.json")
    paths = [tmp_path / "real" / "activation.json", link]
    _configure_at_once(paths, 16)
    goals = [goal.goal_id for goal in load_activation_registry(paths[0]).goals]
    assert goals == [f"goal-{index:02d}" for index in range(16)]
    assert link.is_symlink()


@pytest.mark.parametrize("linked", ["file", "directory"])
def test_a_pointer_that_leads_outside_the_root_through_a_symlink_is_refused(
    tmp_path: Path, linked: str
) -> None:
    """The no-`..` rule is about where the pointer leads: a symlink on the way to a config
    outside the project root makes it invalid (configure) and unavailable (runtime)."""
    from reward_memory.experiment import resolve_experiment

    root, outside = tmp_path / "project", tmp_path / "outside"
    write_json(outside / "config.json", config_data())
    root.mkdir()
    if linked == "file":
        (root / "link.json").symlink_to(outside / "config.json")
        pointer = "link.json"
    else:
        (root / "config").symlink_to(outside, target_is_directory=True)
        pointer = "config/config.json"
    activation = root / "activation.json"
    change = configure_goal(
        activation, goal_id="g", config_path=pointer, agents=("agent:a",), execute=True
    )
    assert (change.config_status, change.config_reason_code) == ("invalid", "config_path_traversal")
    runtime = resolve_experiment(activation, goal_id="g", agent_id="agent:a")
    assert not runtime.available
    assert runtime.reason_code == "config_unavailable_or_invalid"


def test_a_symlink_that_stays_inside_the_root_is_followed(tmp_path: Path) -> None:
    from reward_memory.experiment import resolve_experiment

    write_json(tmp_path / "configs" / "real.json", config_data())
    (tmp_path / "current.json").symlink_to(tmp_path / "configs" / "real.json")
    activation = tmp_path / "activation.json"
    change = configure_goal(
        activation, goal_id="g", config_path="current.json", agents=("agent:a",), execute=True
    )
    assert change.config_status == "valid"
    assert resolve_experiment(activation, goal_id="g", agent_id="agent:a").available


def test_a_symlinked_activation_file_is_written_through_its_link(tmp_path: Path) -> None:
    """The link stays a link and names the updated registry (no stale copy beside it)."""
    from reward_memory._activation_registry import load_activation_registry

    write_json(tmp_path / "c.json", config_data())
    real = tmp_path / "shared" / "activation.json"
    configure_goal(real, goal_id="g", config_path="c.json", agents=("agent:a",), execute=True)
    link = tmp_path / "activation.json"
    link.symlink_to(real)
    configure_goal(link, goal_id="h", config_path="c.json", agents=("agent:b",), execute=True)
    assert link.is_symlink()
    goals = {goal.goal_id for goal in load_activation_registry(real).goals}
    assert goals == {"g", "h"}


@pytest.mark.parametrize("agent", ["codex@ci-runner", "agent:patcher@host-1"])
def test_an_agent_id_with_at_is_grammar_a(tmp_path: Path, agent: str) -> None:
    """Grammar A admits ``@``: configure writes it and experiment-status reports it."""
    from reward_memory.experiment import experiment_status, resolve_experiment

    target = tmp_path / "activation.json"
    write_json(tmp_path / "c.json", config_data())
    change = configure_goal(
        target, goal_id="g", config_path="c.json", agents=(agent,), execute=True
    )
    assert change.status == "written"
    assert load_activation_registry(target).goals[0].enabled_agents == (agent,)
    runtime = resolve_experiment(target, goal_id="g", agent_id=agent)
    status = experiment_status(runtime, check_provider=False)
    assert status.agent_id == agent
    assert status.configured_for_agent is True
    schemas.validate(wire.dump(status))


@pytest.mark.parametrize(
    "pointer",
    [
        "config.json",
        "cfg/config.json",
        "a\\b.json",
        ".json",
        "cfg/.json",
        "x" * 95 + ".json",
        "x" * 96 + ".json",
        "a/" + "y" * 100 + "/c.json",
        "..\\up.json",
    ],
)
def test_the_pointer_grammar_is_the_schemas(pointer: str) -> None:
    """The loader and the published schema accept exactly the same config pointers."""
    goal = {
        "goal_id": "g",
        "enabled": True,
        "experimental": True,
        "config_path": pointer,
        "enabled_agents": ["agent:a"],
    }
    data = {"schema_version": "reward_memory_activation_registry_v0", "goals": [goal]}
    schema_ok = next(iter(schemas.validator_for(data["schema_version"]).iter_errors(data)), None)
    try:
        check_config_pointer(pointer, "$.config_path")
        loader_ok = True
    except RecordValidationError:
        loader_ok = False
    assert (schema_ok is None) is loader_ok


def test_the_schema_states_the_one_query_rule() -> None:
    """A function-boundary profile asks one query: in the schema too. (Enabling with no
    agent stays the record's rule, so its error keeps the code ``agents_required``.)"""
    config = config_data()
    config["surfaces"][0]["recall_profile"].update(mode="function_boundary", max_queries=3)
    assert next(iter(schemas.validator_for(config["schema_version"]).iter_errors(config)), None)
