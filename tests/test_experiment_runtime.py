"""Resolving an experiment at run time, and its status packet.

Contract: seeds, "Experimental activation": "Invalid or non-v1 configuration resolves
unavailable with both automatic flags false."; "experiment-status reports the v1 config
schema, corpus/surface counts, recall-profile ids, and the effective automatic policy without
exposing scope refs"; DESIGN.md §4: "no exception from a provider escapes"; reference §10.3:
a surface lists its corpora, "LoopX never discovers routes by scanning all corpora".
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _experiment_support import (
    PLANNING,
    SCOPES,
    SUMMARY,
    activation_data,
    config_data,
    experiment_dir,
    write_json,
)
from reward_memory import schemas, wire
from reward_memory.errors import RecordValidationError
from reward_memory.experiment import (
    ExperimentRuntime,
    experiment_status,
    load_experiment_config,
    resolve_experiment,
    runtime_from_records,
)
from reward_memory.providers.spi import Inventory
from reward_memory.records.activation_registry import ActivationGoal, ExperimentStatus
from reward_memory.records.recall import ProviderBinding
from reward_memory.testing import InMemoryProvider

AGENT = "agent:patcher"


def _resolve(activation: Path, *, goal_id: str = "issue-fix", agent_id: str = AGENT) -> Any:
    return resolve_experiment(activation, goal_id=goal_id, agent_id=agent_id)


def _unavailable(runtime: ExperimentRuntime, reason: str, status: str) -> None:
    assert (runtime.available, runtime.reason_code, runtime.status) == (False, reason, status)
    assert (runtime.automatic_recall, runtime.automatic_ingest, runtime.fail_open) == (
        False,
        False,
        True,
    )
    assert runtime.config is None
    assert (runtime.surface_ids, runtime.provider_id) == ((), None)
    with pytest.raises(RecordValidationError) as info:
        runtime.surface(PLANNING)
    assert info.value.code == "experiment_unavailable"
    packet = experiment_status(runtime)
    assert (packet.available, packet.automatic_recall, packet.automatic_ingest) == (
        False,
        False,
        False,
    )
    assert packet.provider_health is None
    schemas.validate(wire.dump(packet))


def test_an_available_experiment_resolves(tmp_path: Path) -> None:
    runtime = _resolve(experiment_dir(tmp_path))
    assert (runtime.available, runtime.status, runtime.reason_code) == (True, "available", None)
    # the config turns automatic recall on and leaves ingest off
    assert (runtime.automatic_recall, runtime.automatic_ingest) == (True, False)
    assert runtime.surface_ids == (PLANNING, SUMMARY)
    assert runtime.provider_id == "memory"


def test_the_missing_activation_file_is_unavailable(tmp_path: Path) -> None:
    _unavailable(_resolve(tmp_path / "none.json"), "activation_missing", "disabled")


def test_an_invalid_activation_file_is_unavailable(tmp_path: Path) -> None:
    target = tmp_path / "activation.json"
    target.write_text('{"schema_version": "reward_memory_activation_registry_v0", "x": 1}')
    _unavailable(_resolve(target), "activation_invalid", "disabled")


def test_an_unknown_goal_is_unavailable(tmp_path: Path) -> None:
    _unavailable(
        _resolve(experiment_dir(tmp_path), goal_id="other-goal"), "goal_not_configured", "disabled"
    )


def test_a_disabled_goal_is_unavailable(tmp_path: Path) -> None:
    _unavailable(_resolve(experiment_dir(tmp_path, enabled=False)), "goal_disabled", "disabled")


def test_a_non_experimental_goal_is_unavailable(tmp_path: Path) -> None:
    _unavailable(
        _resolve(experiment_dir(tmp_path, experimental=False)), "goal_not_experimental", "disabled"
    )


def test_an_agent_off_the_allowlist_is_unavailable(tmp_path: Path) -> None:
    runtime = _resolve(experiment_dir(tmp_path), agent_id="agent:intruder")
    _unavailable(runtime, "agent_not_allowlisted", "agent_not_enabled")
    assert experiment_status(runtime).configured_for_agent is False


def test_a_missing_config_is_unavailable(tmp_path: Path) -> None:
    activation = write_json(tmp_path / "activation.json", activation_data())
    _unavailable(_resolve(activation), "config_missing", "config_missing")


def test_a_v0_config_is_unavailable(tmp_path: Path) -> None:
    data = config_data()
    data["schema_version"] = "reward_memory_experiment_config_v0"
    runtime = _resolve(experiment_dir(tmp_path, config=data))
    _unavailable(runtime, "config_version_unsupported", "config_invalid")
    assert experiment_status(runtime).readback_status == "rejected"


@pytest.mark.parametrize(
    "broken", ["not json", "[]", '{"schema_version": "reward_memory_experiment_config_v1"}']
)
def test_an_invalid_config_is_unavailable_with_both_flags_false(
    tmp_path: Path, broken: str
) -> None:
    activation = experiment_dir(tmp_path)
    (tmp_path / "config.json").write_text(broken, encoding="utf-8")
    _unavailable(_resolve(activation), "config_unavailable_or_invalid", "config_invalid")


def test_a_config_that_breaks_a_rule_is_unavailable(tmp_path: Path) -> None:
    data = config_data()
    data["automation"]["fail_open"] = False  # and automatic_recall is on
    _unavailable(
        _resolve(experiment_dir(tmp_path, config=data)),
        "config_unavailable_or_invalid",
        "config_invalid",
    )


def test_a_provider_url_naming_a_local_path_makes_the_config_invalid(tmp_path: Path) -> None:
    """``sqlite:///home/...`` is a local path: it may not reach the public status packet."""
    text = json.dumps(config_data()).replace('"memory"', '"sqlite:///home/alice/m.db"')
    runtime = _resolve(experiment_dir(tmp_path, config=json.loads(text)))
    _unavailable(runtime, "config_unavailable_or_invalid", "config_invalid")
    assert "/home/alice" not in json.dumps(wire.dump(experiment_status(runtime)))


def test_the_status_names_the_provider_by_its_id_only(tmp_path: Path) -> None:
    text = json.dumps(config_data()).replace('"memory"', '"memory://"')
    packet = experiment_status(_resolve(experiment_dir(tmp_path, config=json.loads(text))))
    assert packet.available
    assert packet.provider_id == "memory"


def test_programmer_errors_still_raise(tmp_path: Path) -> None:
    activation = experiment_dir(tmp_path)
    with pytest.raises(TypeError):
        resolve_experiment(activation, goal_id=1, agent_id=AGENT)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        resolve_experiment(None, goal_id="g", agent_id=AGENT)  # type: ignore[arg-type]
    with pytest.raises(RecordValidationError) as info:
        resolve_experiment(activation, goal_id="issue-fix", agent_id="Not An Agent")
    assert info.value.path == "$.agent_id"


# -- surfaces ------------------------------------------------------------------------------


def test_a_surface_resolves_to_its_corpora_in_configured_order(tmp_path: Path) -> None:
    route = _resolve(experiment_dir(tmp_path)).surface(PLANNING)
    assert [c.corpus_id for c in route.corpora] == ["issue_fix_policies", "issue_fix_policies_b"]
    assert route.ingest.corpus_id == "issue_fix_policies"
    assert route.ingest.standing_policy.policy_id == "policy:a"
    assert route.adapter == "issue_fix_maintainer_feedback"
    assert route.recall_profile.profile_id == "planning_v1"
    binding = route.corpora[1].binding
    assert binding == ProviderBinding(
        corpus_id="issue_fix_policies_b",
        provider_id="memory",
        namespace="reward_memory",
        scope_ref=SCOPES["issue_fix_policies_b"],
    )


def test_no_other_surface_or_adapter_is_inferred(tmp_path: Path) -> None:
    runtime = _resolve(experiment_dir(tmp_path))
    with pytest.raises(RecordValidationError) as info:
        runtime.surface("semantic_preference.recall")
    assert info.value.code == "surface_not_configured"
    with pytest.raises(RecordValidationError) as info:
        runtime.surface(PLANNING, adapter="scoped_feedback")
    assert info.value.code == "adapter_route_mismatch"
    assert runtime.surface(SUMMARY, adapter="scoped_feedback").surface_id == SUMMARY


def test_a_runtime_from_records_in_code() -> None:
    goal = ActivationGoal(
        goal_id="issue-fix",
        enabled=True,
        experimental=True,
        config_path="unused.json",
        enabled_agents=(AGENT,),
    )
    config = load_experiment_config(config_data())
    runtime = runtime_from_records(goal, config, agent_id=AGENT)
    assert runtime.available
    assert runtime.config is config
    assert runtime_from_records(goal, None, agent_id=AGENT).reason_code == "config_missing"
    broken = config_data()
    del broken["surfaces"]
    assert (
        runtime_from_records(goal, broken, agent_id=AGENT).reason_code
        == "config_unavailable_or_invalid"
    )
    assert (
        runtime_from_records(None, config, agent_id=AGENT, goal_id="issue-fix").reason_code
        == "goal_not_configured"
    )


# -- status --------------------------------------------------------------------------------


def test_the_status_of_an_available_experiment(tmp_path: Path) -> None:
    provider = InMemoryProvider()
    packet = experiment_status(_resolve(experiment_dir(tmp_path)), provider=provider)
    assert isinstance(packet, ExperimentStatus)
    assert (packet.status, packet.available, packet.configured_for_agent) == (
        "available",
        True,
        True,
    )
    assert packet.config_schema_version == "reward_memory_experiment_config_v1"
    assert (packet.corpus_count, packet.surface_count) == (3, 2)
    assert packet.corpus_ids == ("issue_fix_policies", "issue_fix_policies_b", "review_prefs")
    assert packet.recall_profile_ids == ("planning_v1", "summary_v1")
    assert (packet.automatic_recall, packet.automatic_ingest, packet.fail_open) == (
        True,
        False,
        True,
    )
    assert packet.provider_id == "memory"
    assert packet.provider_health is not None
    assert packet.provider_health.status == "available"
    assert [c.record_count for c in packet.provider_health.corpora] == [0, 0, 0]
    assert provider.call_count("inventory") == 3
    assert provider.call_count("write") == 0
    dumped = wire.dump(packet)
    schemas.validate(dumped)
    assert wire.load(dumped) == packet


def test_the_status_never_shows_a_path_or_a_scope_ref(tmp_path: Path) -> None:
    activation = experiment_dir(tmp_path / "private-place")
    for runtime in (_resolve(activation), _resolve(activation, agent_id="agent:other")):
        text = json.dumps(wire.dump(experiment_status(runtime, provider=InMemoryProvider())))
        assert "private-place" not in text
        assert "config.json" not in text
        assert str(tmp_path) not in text
        for scope_ref in SCOPES.values():
            assert scope_ref not in text
        assert "scope_ref" not in text
        assert "policy:a" not in text  # nor the standing policies


@pytest.mark.parametrize(
    ("fault", "status"),
    [("unavailable", "provider_unavailable"), ("times_out", "provider_timeout")],
)
def test_provider_failures_are_a_health_status(tmp_path: Path, fault: str, status: str) -> None:
    provider = InMemoryProvider()
    runtime = _resolve(experiment_dir(tmp_path))
    with provider.set_faults(**{fault: True}):
        packet = experiment_status(runtime, provider=provider)
    assert packet.available  # the experiment is configured; the store is not reachable
    assert packet.provider_health is not None
    assert packet.provider_health.status == status
    assert packet.provider_health.corpora == ()


def test_a_provider_that_raises_anything_is_failed_not_a_crash(tmp_path: Path) -> None:
    class Broken(InMemoryProvider):
        def inventory(self, **_: Any) -> Any:
            raise RuntimeError("boom")

    packet = experiment_status(_resolve(experiment_dir(tmp_path)), provider=Broken())
    assert packet.provider_health is not None
    assert packet.provider_health.status == "failed"


@pytest.mark.parametrize(
    "answer",
    [
        None,
        "available",
        {"available": True},
        Inventory(
            provider_id="memory",
            available=True,
            corpus_present=True,
            record_count="many",  # type: ignore[arg-type]
            index_present=True,
        ),
        Inventory(
            provider_id="memory",
            available=1,
            corpus_present=True,
            record_count=1,
            index_present=True,
        ),  # type: ignore[arg-type]
        Inventory(
            provider_id="memory",
            available=True,
            corpus_present=True,
            record_count=-1,
            index_present=True,
        ),
    ],
    ids=["none", "str", "dict", "count-str", "available-int", "count-negative"],
)
def test_a_malformed_inventory_answer_is_failed_not_a_crash(tmp_path: Path, answer: Any) -> None:
    class Malformed(InMemoryProvider):
        def inventory(self, **_: Any) -> Any:
            return answer

    packet = experiment_status(_resolve(experiment_dir(tmp_path)), provider=Malformed())
    assert packet.provider_health is not None
    assert packet.provider_health.status == "failed"
    assert packet.provider_health.corpora == ()


def test_an_uninstalled_provider_is_load_failed(tmp_path: Path) -> None:
    data = json.loads(json.dumps(config_data()).replace('"memory"', '"not-installed"'))
    packet = experiment_status(_resolve(experiment_dir(tmp_path, config=data)))
    assert packet.provider_id == "not-installed"
    assert packet.provider_health is not None
    assert packet.provider_health.status == "load_failed"


def test_discovery_builds_the_configured_provider(tmp_path: Path) -> None:
    packet = experiment_status(_resolve(experiment_dir(tmp_path)))
    assert packet.provider_health is not None
    assert packet.provider_health.status == "available"
    skipped = experiment_status(_resolve(experiment_dir(tmp_path)), check_provider=False)
    assert skipped.provider_health is not None
    assert skipped.provider_health.status == "not_checked"


def test_the_status_packet_refuses_flags_on_when_unavailable() -> None:
    with pytest.raises(RecordValidationError):
        ExperimentStatus(
            goal_id="g",
            agent_id=AGENT,
            status="disabled",
            available=False,
            experimental=True,
            enabled=False,
            configured_for_agent=False,
            config_pointer_registered=True,
            automatic_recall=True,
        )


JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=10), inner, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=150)
@given(
    activation=st.one_of(st.binary(max_size=60), JSONISH.map(lambda v: json.dumps(v).encode())),
    config=st.one_of(st.binary(max_size=60), JSONISH.map(lambda v: json.dumps(v).encode())),
)
def test_no_file_content_makes_resolution_raise(activation: bytes, config: bytes) -> None:
    """Fail-open: whatever the two files hold, the runtime is available or says why not."""
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        (root / "activation.json").write_bytes(activation)
        (root / "config.json").write_bytes(config)
        runtime = resolve_experiment(root / "activation.json", goal_id="issue-fix", agent_id=AGENT)
    assert runtime.reason_code in {"activation_invalid", "goal_not_configured"}
    assert (runtime.automatic_recall, runtime.automatic_ingest) == (False, False)


@settings(max_examples=100)
@given(config=JSONISH)
def test_no_config_content_makes_a_configured_goal_raise(config: Any) -> None:
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        write_json(root / "activation.json", activation_data())
        write_json(root / "config.json", config)
        runtime = resolve_experiment(root / "activation.json", goal_id="issue-fix", agent_id=AGENT)
    assert runtime.reason_code in {"config_unavailable_or_invalid", "config_version_unsupported"}
    assert (runtime.automatic_recall, runtime.automatic_ingest) == (False, False)


# -- config_runtime_route and the single-surface fields (reference 10.4, the seeds) -------


def test_the_status_names_its_runtime_route_without_a_path(tmp_path: Path) -> None:
    """Seeds: "Their compact config_runtime_route names the registry role and
    project/shared runtime scope, and marks exact config readback without exposing
    either local path"."""
    packet = experiment_status(_resolve(experiment_dir(tmp_path)))
    route = packet.config_runtime_route
    assert route is not None
    assert (route.registry_role, route.runtime_scope) == ("project-local", "project_runtime")
    assert (route.readback_status, route.exact_readback_verified) == ("verified", True)
    plain = wire.dump(packet)
    assert plain["config_runtime_route"]["schema_version"] == (
        "reward_memory_config_runtime_route_v0"
    )
    assert str(tmp_path) not in json.dumps(plain)
    schemas.validate(plain)
    assert wire.load(plain) == packet


@pytest.mark.parametrize(("broken", "readback"), [("{}", "rejected"), (None, "not_attempted")])
def test_an_unavailable_status_says_how_far_the_readback_got(
    tmp_path: Path, broken: str | None, readback: str
) -> None:
    activation = experiment_dir(tmp_path)
    if broken is None:
        activation.unlink()
    else:
        (tmp_path / "config.json").write_text(broken, encoding="utf-8")
    packet = experiment_status(_resolve(activation))
    assert packet.config_runtime_route is not None
    assert packet.config_runtime_route.readback_status == readback
    assert packet.config_runtime_route.exact_readback_verified is False
    schemas.validate(wire.dump(packet))


def test_one_surface_names_its_adapter_and_ingest_corpus(tmp_path: Path) -> None:
    many = experiment_status(_resolve(experiment_dir(tmp_path / "many")))
    assert many.surface_count > 1
    assert (many.adapter, many.corpus_id) == (None, None)
    data = config_data()
    keep = data["surfaces"][0]
    data["surfaces"] = [keep]
    used = set(keep["corpus_ids"])
    data["corpora"] = [c for c in data["corpora"] if c["corpus"]["corpus_id"] in used]
    scopes = data["project_provider_binding"]["corpus_scopes"]
    data["project_provider_binding"]["corpus_scopes"] = [
        s for s in scopes if s["corpus_id"] in used
    ]
    one = experiment_status(_resolve(experiment_dir(tmp_path / "one", config=data)))
    assert one.available, one.reason_code
    assert (one.adapter, one.corpus_id) == (keep["adapter"], keep["ingest_corpus_id"])
    schemas.validate(wire.dump(one))


def test_a_route_that_contradicts_the_status_is_refused() -> None:
    from reward_memory.records.activation_registry import ConfigRuntimeRoute

    with pytest.raises(RecordValidationError) as caught:
        ExperimentStatus(
            goal_id="g",
            agent_id=AGENT,
            status="disabled",
            available=False,
            experimental=True,
            enabled=False,
            configured_for_agent=False,
            config_pointer_registered=True,
            config_runtime_route=ConfigRuntimeRoute(
                readback_status="verified", exact_readback_verified=True
            ),
        )
    assert caught.value.path == "$.config_runtime_route"


def test_a_status_written_before_the_route_was_added_still_reads(tmp_path: Path) -> None:
    plain = wire.dump(experiment_status(_resolve(experiment_dir(tmp_path))))
    del plain["config_runtime_route"]
    del plain["adapter"]
    del plain["corpus_id"]
    schemas.validate(plain)
    loaded = wire.load(plain)
    assert loaded.config_runtime_route is not None
