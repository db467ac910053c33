"""Experiment config v1: strict loading, cross-record rules with field paths, no other versions.

Contract: issue 8 item 2 and the seeds ("Experimental activation"): "Config v1 declares one
project_provider_binding, its exact per-corpus scope references, the project corpus set,
module-owned surfaces, and an automation policy ... Corpora assigned to one surface must have
the same memory class, authority, privacy, freshness, and lifecycle. Scope digests and
provider/corpus identity are still checked independently for every corpus." and "The runtime
accepts only reward_memory_experiment_config_v1".
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import reward_memory as rm
from _experiment_support import PLANNING, SUMMARY, config_data
from reward_memory import schemas, wire
from reward_memory.digests import short_digest
from reward_memory.errors import InputError, RecordValidationError
from reward_memory.experiment import load_experiment_config
from reward_memory.records.experiment import AutomationPolicy, ExperimentConfig, RecallProfile

Mutation = Callable[[dict[str, Any]], None]
EXAMPLE_CONFIG = Path(__file__).resolve().parents[1] / "examples" / "experiment" / "config.json"


def _refused(data: dict[str, Any]) -> RecordValidationError:
    with pytest.raises(RecordValidationError) as info:
        load_experiment_config(data)
    return info.value


def test_the_valid_config_loads_and_round_trips() -> None:
    config = load_experiment_config(config_data())
    assert isinstance(config, ExperimentConfig)
    assert [s.surface_id for s in config.surfaces] == [PLANNING, SUMMARY]
    # corpus order on a surface is kept: it is the recall order
    assert config.surfaces[0].corpus_ids == ("issue_fix_policies", "issue_fix_policies_b")
    assert load_experiment_config(wire.dump(config)) == config
    schemas.validate(wire.dump(config))


def test_the_shipped_example_config_loads_from_its_file() -> None:
    config = load_experiment_config(EXAMPLE_CONFIG)
    assert config.project_provider_binding.provider_id == "sqlite"
    assert config.automation == AutomationPolicy(fail_open=True)


def test_each_corpus_gets_the_project_binding_plus_its_own_scope() -> None:
    config = load_experiment_config(config_data())
    binding = config.bindings["issue_fix_policies_b"]
    assert binding.provider_id == "memory"
    assert binding.namespace == "reward_memory"
    assert binding.corpus_id == "issue_fix_policies_b"
    assert binding.scope_ref.endswith("issue-fix-policies-b")


def test_automation_flags_default_false_but_fail_open_is_required() -> None:
    data = config_data()
    data["automation"] = {"fail_open": True}
    config = load_experiment_config(data)
    assert (config.automation.automatic_recall, config.automation.automatic_ingest) == (
        False,
        False,
    )
    data["automation"] = {}
    error = _refused(data)
    assert (error.path, error.code) == ("$.automation.fail_open", "missing_field")
    data["automation"] = {"fail_open": False}
    assert _refused(data).path == "$.automation.fail_open"


def test_a_config_built_in_code_is_held_to_fail_open_too() -> None:
    with pytest.raises(RecordValidationError) as info:
        AutomationPolicy(fail_open=False)  # type: ignore[arg-type]
    assert info.value.code == "fail_open_required"


@pytest.mark.parametrize(
    "version", ["reward_memory_experiment_config_v0", "reward_memory_experiment_config_v2"]
)
def test_other_versions_are_refused_with_a_migration_hint(version: str) -> None:
    data = config_data()
    data["schema_version"] = version
    error = _refused(data)
    assert (error.path, error.code) == ("$.schema_version", "config_version_unsupported")
    assert "migrate" in error.message


def test_a_missing_version_is_named() -> None:
    data = config_data()
    del data["schema_version"]
    assert _refused(data).code == "schema_version_missing"


def test_unreadable_or_non_object_files_are_input_errors(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text("{not json", encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_experiment_config(broken)
    assert info.value.code == "invalid_json"
    listed = tmp_path / "list.json"
    listed.write_text("[]", encoding="utf-8")
    with pytest.raises(RecordValidationError) as refused:
        load_experiment_config(listed)
    assert refused.value.code == "wrong_type"
    with pytest.raises(InputError) as missing:
        load_experiment_config(tmp_path / "absent.json")
    assert missing.value.code == "file_not_found"


def test_a_wrong_argument_type_is_a_programmer_error() -> None:
    with pytest.raises(TypeError):
        load_experiment_config(42)  # type: ignore[arg-type]


def _set(path: str, value: Any) -> Mutation:
    def mutate(data: dict[str, Any]) -> None:
        *parents, last = _parse(path)
        node: Any = data
        for key in parents:
            node = node[key]
        node[last] = value

    return mutate


def _parse(path: str) -> list[str | int]:
    parts: list[str | int] = []
    for chunk in path.split("."):
        name, _, rest = chunk.partition("[")
        if name:
            parts.append(name)
        while rest:
            index, _, rest = rest.partition("]")
            parts.append(int(index))
            rest = rest.removeprefix("[")
    return parts


def _both(*mutations: Mutation) -> Mutation:
    def mutate(data: dict[str, Any]) -> None:
        for mutation in mutations:
            mutation(data)

    return mutate


def _append(path: str, value: Any) -> Mutation:
    def mutate(data: dict[str, Any]) -> None:
        node: Any = data
        for key in _parse(path):
            node = node[key]
        node.append(value)

    return mutate


def _delete(path: str) -> Mutation:
    def mutate(data: dict[str, Any]) -> None:
        *parents, last = _parse(path)
        node: Any = data
        for key in parents:
            node = node[key]
        del node[last]

    return mutate


C0 = "corpora[0]"
C1 = "corpora[1]"
SCOPES = "project_provider_binding.corpus_scopes"
PEER_SCOPE = "repository:example/reward-memory/peers/alice/issue-fix-policies"

CASES: dict[str, tuple[Mutation, str, str]] = {
    "duplicate corpus id": (
        _set(f"{C1}.corpus.corpus_id", "issue_fix_policies"),
        "$.corpora[1].corpus.corpus_id",
        "duplicate_item",
    ),
    "corpus provider is not the binding's": (
        _set(f"{C0}.corpus.provider_id", "sqlite"),
        "$.corpora[0].corpus.provider_id",
        "provider_binding_provider_mismatch",
    ),
    "cross-project corpora": (
        _both(
            _set("corpora[2].corpus.scope.project_ref", "repository:other"),
            _set("corpora[2].standing_policy.scope.project_ref", "repository:other"),
        ),
        "$.corpora[2].corpus.scope.project_ref",
        "cross_project_config",
    ),
    "policy owner is not the corpus owner": (
        _set(f"{C0}.standing_policy.owner_ref", "github:user:someone"),
        "$.corpora[0].standing_policy.owner_ref",
        "standing_policy_owner_mismatch",
    ),
    "policy workspace is not the corpus's": (
        _set(f"{C0}.standing_policy.scope.workspace_ref", "workspace:other"),
        "$.corpora[0].standing_policy.scope.workspace_ref",
        "standing_policy_workspace_corpus_mismatch",
    ),
    "policy project is not the corpus's": (
        _set(f"{C0}.standing_policy.scope.project_ref", "repository:other"),
        "$.corpora[0].standing_policy.scope.project_ref",
        "standing_policy_project_corpus_mismatch",
    ),
    "policy identity is not the corpus's": (
        _set(f"{C0}.standing_policy.scope.user_ref", "user:someone"),
        "$.corpora[0].standing_policy.scope.user_ref",
        "standing_policy_user_corpus_mismatch",
    ),
    "policy surface beyond the corpus": (
        _set(f"{C0}.standing_policy.scope.surface_ids", [PLANNING, "other_module.surface"]),
        "$.corpora[0].standing_policy.scope.surface_ids[1]",
        "standing_policy_surface_exceeds_corpus",
    ),
    "policy allows more than the corpus class": (
        _set(f"{C0}.standing_policy.allowed_target_classes", ["hard_policy", "soft_preference"]),
        "$.corpora[0].standing_policy.allowed_target_classes",
        "standing_policy_class_not_exact_for_corpus",
    ),
    "a corpus with two scopes": (
        _append(SCOPES, {"corpus_id": "issue_fix_policies", "scope_ref": "x:y"}),
        "$.project_provider_binding.corpus_scopes[3].corpus_id",
        "duplicate_item",
    ),
    "a scope for an undeclared corpus": (
        _append(SCOPES, {"corpus_id": "ghost", "scope_ref": "x:y"}),
        "$.project_provider_binding.corpus_scopes[3].corpus_id",
        "unknown_reference",
    ),
    "a scope that does not hash to the corpus digest": (
        _set(f"{SCOPES}[0].scope_ref", "repository:example/reward-memory/elsewhere"),
        "$.project_provider_binding.corpus_scopes[0].scope_ref",
        "provider_binding_scope_digest_mismatch",
    ),
    "a peer scope without its actor peer": (
        _both(
            _set(f"{SCOPES}[0].scope_ref", PEER_SCOPE),
            _set(f"{C0}.corpus.provider_scope_ref_digest", short_digest(PEER_SCOPE)),
        ),
        "$.project_provider_binding.corpus_scopes[0].scope_ref",
        "provider_binding_actor_peer_missing",
    ),
    "a peer scope with another actor peer": (
        _both(
            _set(f"{SCOPES}[0].scope_ref", PEER_SCOPE),
            _set(f"{SCOPES}[0].actor_peer_id", "bob"),
            _set(f"{C0}.corpus.provider_scope_ref_digest", short_digest(PEER_SCOPE)),
        ),
        "$.project_provider_binding.corpus_scopes[0].scope_ref",
        "provider_binding_actor_peer_mismatch",
    ),
    "a corpus without a scope": (
        _delete(f"{SCOPES}[2]"),
        "$.corpora[2].corpus.corpus_id",
        "corpus_scope_missing",
    ),
    "duplicate surface": (
        lambda data: data["surfaces"].append(json.loads(json.dumps(data["surfaces"][0]))),
        "$.surfaces[2].surface_id",
        "duplicate_item",
    ),
    "a surface naming an undeclared corpus": (
        _set("surfaces[0].corpus_ids", ["issue_fix_policies", "ghost"]),
        "$.surfaces[0].corpus_ids[1]",
        "unknown_reference",
    ),
    "a surface whose corpus does not list it": (
        _set("surfaces[1].corpus_ids", ["review_prefs", "issue_fix_policies"]),
        "$.surfaces[1].corpus_ids[1]",
        "surface_not_in_corpus",
    ),
    "a surface whose corpus policy does not list it": (
        _both(
            _set("corpora[2].corpus.scope.surface_ids", [PLANNING, SUMMARY]),
            _set("surfaces[0].corpus_ids", ["issue_fix_policies", "review_prefs"]),
        ),
        "$.surfaces[0].corpus_ids[1]",
        "surface_not_in_standing_policy",
    ),
    "an ingest corpus outside the surface's corpora": (
        _set("surfaces[0].ingest_corpus_id", "review_prefs"),
        "$.surfaces[0].ingest_corpus_id",
        "unknown_reference",
    ),
    "a corpus assigned to no surface": (
        _delete("surfaces[1]"),
        "$.corpora[2].corpus.corpus_id",
        "corpus_unassigned",
    ),
    "function_boundary with two queries": (
        _set("surfaces[0].recall_profile.max_queries", 2),
        "$.surfaces[0].recall_profile.max_queries",
        "invalid_value",
    ),
    "more than three queries": (
        _both(
            _set("surfaces[0].recall_profile.mode", "bounded_agentic_search"),
            _set("surfaces[0].recall_profile.max_queries", 4),
        ),
        "$.surfaces[0].recall_profile.max_queries",
        "invalid_value",
    ),
    "a limit over 8": (
        _set("surfaces[0].recall_profile.limit", 9),
        "$.surfaces[0].recall_profile.limit",
        "invalid_value",
    ),
    "an unknown adapter": (
        _set("surfaces[0].adapter", "semantic_router"),
        "$.surfaces[0].adapter",
        "invalid_value",
    ),
    "a repeated corpus id on a surface": (
        _set("surfaces[0].corpus_ids", ["issue_fix_policies", "issue_fix_policies"]),
        "$.surfaces[0].corpus_ids",
        "invalid_value",
    ),
    "a provider_binary named by a local path": (
        _set("project_provider_binding.provider_binary", "/usr/local/bin/openviking"),
        "$.project_provider_binding.provider_binary",
        "unsafe_text",
    ),
    "an unknown top-level field": (
        _set("adapter", "scoped_feedback"),
        "$.adapter",
        "unknown_field",
    ),
    "an unknown nested field": (
        _set("surfaces[0].recall_profile.scan_all_corpora", True),
        "$.surfaces[0].recall_profile.scan_all_corpora",
        "unknown_field",
    ),
    "no corpora": (_set("corpora", []), "$.corpora", "invalid_value"),
    "a non-boolean automation flag": (
        _set("automation.automatic_recall", 1),
        "$.automation.automatic_recall",
        "wrong_type",
    ),
    "a raw-content corpus": (
        _set(f"{C0}.corpus.privacy.raw_content_in_registry", True),
        "$.corpora[0].corpus.privacy.raw_content_in_registry",
        "invalid_value",
    ),
    "a policy with write authority": (
        _set(f"{C0}.standing_policy.allowed_action_scopes", ["repository:write"]),
        "$.corpora[0].standing_policy.allowed_action_scopes[0]",
        "authority_expansion_forbidden",
    ),
}


def test_the_originals_cli_adapter_fields_are_read_and_carried_to_every_binding() -> None:
    """Reference 10.2 lists provider_binary and minimum_provider_version in the strict
    project binding: a config written as the original's is accepted (interop), and
    each corpus's materialised binding carries them (reference 7.2)."""
    data = config_data()
    data["project_provider_binding"]["provider_binary"] = "ov"
    data["project_provider_binding"]["minimum_provider_version"] = "0.5.2"
    config = rm.load_experiment_config(data)
    binding = config.project_provider_binding
    assert (binding.provider_binary, binding.minimum_provider_version) == ("ov", "0.5.2")
    scope = binding.corpus_scopes[0]
    assert binding.binding_for(scope).provider_binary == "ov"


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_rule_is_refused_with_its_field_path(case: str) -> None:
    mutation, path, code = CASES[case]
    data = config_data()
    mutation(data)
    error = _refused(data)
    assert (error.path, error.code) == (path, code), error.message


INCOMPATIBLE: dict[str, Mutation] = {
    "class": _both(
        _set(f"{C1}.corpus.class_id", "procedural_experience"),
        _set(f"{C1}.standing_policy.allowed_target_classes", ["procedural_experience"]),
    ),
    "owner": _both(
        _set(f"{C1}.corpus.owner_ref", "repository:example:other-team"),
        _set(f"{C1}.standing_policy.owner_ref", "repository:example:other-team"),
    ),
    "read authority": _set(f"{C1}.corpus.read_authority", "module_scoped"),
    "write authority": _set(f"{C1}.corpus.write_authority", "append_only_overlay"),
    "authority source": _set(f"{C1}.standing_policy.authority_source_ref", "other:authority"),
    "privacy": _set(f"{C1}.corpus.privacy.visibility", "workspace"),
    "freshness": _set(f"{C1}.corpus.freshness", {"mode": "time_bound", "max_age_seconds": 60}),
    "lifecycle": _set(f"{C1}.corpus.lifecycle", {"state": "retired", "retirement_reason": "old"}),
}


@pytest.mark.parametrize("what", sorted(INCOMPATIBLE))
def test_corpora_on_one_surface_must_agree(what: str) -> None:
    data = config_data()
    INCOMPATIBLE[what](data)
    error = _refused(data)
    assert (error.path, error.code) == (
        "$.surfaces[0].corpus_ids[1]",
        "surface_corpora_incompatible",
    )


def test_a_peer_scoped_corpus_with_its_actor_peer_loads() -> None:
    data = config_data()
    _set(f"{SCOPES}[0].scope_ref", PEER_SCOPE)(data)
    _set(f"{SCOPES}[0].actor_peer_id", "alice")(data)
    _set(f"{C0}.corpus.provider_scope_ref_digest", short_digest(PEER_SCOPE))(data)
    config = load_experiment_config(data)
    assert config.bindings["issue_fix_policies"].actor_peer_id == "alice"
    assert config.bindings["issue_fix_policies_b"].actor_peer_id is None


def test_a_bounded_agentic_profile_allows_up_to_three_queries() -> None:
    profile = RecallProfile(profile_id="p", mode="bounded_agentic_search", max_queries=3, limit=8)
    assert profile.max_queries == 3
    with pytest.raises(RecordValidationError) as info:
        attrs.evolve(profile, mode="function_boundary")
    assert info.value.path == "$.max_queries"


# -- any mutation: valid, or a typed error naming a field ---------------------------------


def _paths(node: Any, path: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    found = [path]
    if isinstance(node, dict):
        for key, value in node.items():
            found.extend(_paths(value, (*path, key)))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found.extend(_paths(value, (*path, index)))
    return found


PATHS = [p for p in _paths(config_data()) if p]
JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30)
    | st.sampled_from(["hard_policy", "function_boundary", "memory", "issue_fix_policies"]),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=6,
)


@settings(max_examples=300)
@given(
    edits=st.lists(
        st.tuples(st.sampled_from(PATHS), st.sampled_from(["set", "delete", "add"]), JSON_VALUES),
        min_size=1,
        max_size=3,
    )
)
def test_any_mutation_is_valid_or_refused_with_a_typed_error_naming_a_field(
    edits: list[tuple[tuple[str | int, ...], str, Any]],
) -> None:
    data = config_data()
    for path, action, value in edits:
        node: Any = data
        try:
            for key in path[:-1]:
                node = node[key]
            last = path[-1]
            if action == "set":
                node[last] = value
            elif action == "delete":
                del node[last]
            elif isinstance(node[last], dict):
                node[last]["extra_field"] = value
            elif isinstance(node[last], list):
                node[last].append(value)
        except (KeyError, IndexError, TypeError):
            continue  # an earlier edit removed this path
    outcome: ExperimentConfig | RecordValidationError
    try:
        outcome = load_experiment_config(data)
    except RecordValidationError as exc:
        outcome = exc
    if isinstance(outcome, RecordValidationError):
        assert outcome.path.startswith("$"), outcome.path
        assert outcome.code
    else:
        assert outcome.automation.fail_open is True


@pytest.mark.parametrize(
    ("where", "value"),
    [
        (("surfaces", 0, "recall_profile", "limit"), 4.0),
        (("surfaces", 0, "recall_profile", "max_queries"), 1.0),
    ],
)
def test_an_integral_float_is_refused_from_a_file_and_from_a_mapping(
    tmp_path: Path, where: tuple[Any, ...], value: float
) -> None:
    """One answer whichever way the data comes (cattrs would have truncated it)."""
    data = config_data()
    node: Any = data
    for step in where[:-1]:
        node = node[step]
    node[where[-1]] = value
    path = "$." + ".".join(
        f"{step}" if isinstance(step, str) else f"[{step}]" for step in where
    ).replace(".[", "[")
    file = tmp_path / "config.json"
    file.write_text(json.dumps(data), encoding="utf-8")
    for source in (data, file):
        with pytest.raises(RecordValidationError) as caught:
            load_experiment_config(source)
        assert (caught.value.code, caught.value.path) == ("wrong_type", path)
