"""Stage-1 corpus declarations and the registry packet (reference §3)."""

from __future__ import annotations

import copy
import hashlib
import json
from typing import Any

import attrs
import pytest

from reward_memory import schemas, wire
from reward_memory.errors import RecordValidationError, UnsafeTextError
from reward_memory.records._plain import to_plain as as_plain
from reward_memory.records.corpus import (
    ClassCoverage,
    CorpusDeclaration,
    CorpusFreshness,
    CorpusLifecycle,
    CorpusMaintenance,
    CorpusPrivacy,
    CorpusRegistry,
    CorpusRetrieval,
    CorpusScope,
)
from reward_memory.registry import (
    REFERENCE_CORPUS_IDS,
    build_registry,
    reference_corpora,
    reference_corpus,
    reference_registry,
    semantic_preference_registry,
)

CLASSES = (
    "run_bound_reward",
    "hard_policy",
    "soft_preference",
    "procedural_experience",
    "working_context",
)

# Reference §3.3, restated independently of the implementation:
# id: (class, provider, owner = retirement authority, source of truth, read, write, surface,
#      freshness mode, source revision, index/readback/receipt, sorted triggers, closure)
REFERENCE: dict[str, tuple[Any, ...]] = {
    "run_reward_overlays": (
        "run_bound_reward", "loopx_control_plane", "loopx_reward_ledger",
        "human_reward_event_ledger", "goal_run_scoped", "append_only_overlay",
        "control_plane.reward_review", "source_truth_bound", None, (False, True, False),
        ["correction_or_revocation", "explicit_human_reward"], "append_event_then_readback",
    ),
    "authority_policy_sources": (
        "hard_policy", "loopx_control_plane", "canonical_authority_sources",
        "user_repository_operator_authority", "authority_scoped", "authorized_policy_source",
        "control_plane.action_gate", "source_truth_bound", None, (False, True, False),
        ["authority_source_changed", "expiry_reached", "verified_contributor_policy_derived"],
        "verified_actor_scope_then_canonical_policy_readback",
    ),
    "scoped_preferences": (
        "soft_preference", "configured_memory_provider", "provider_scope_owner",
        "explicit_reviewed_feedback", "module_scoped", "provider_managed", "module.owned_surface",
        "source_truth_bound", None, (True, True, True),
        ["explicit_feedback", "source_truth_changed"],
        "provider_write_index_read_and_scoped_recall",
    ),
    "execution_trajectories": (
        "procedural_experience", "configured_memory_provider", "provider_scope_owner",
        "revision_stamped_execution", "module_scoped", "provider_managed", "issue_fix.diagnosis",
        "revision_bound", "revision:observed", (True, True, True), ["validated_execution"],
        "provider_write_then_revision_verified_read",
    ),
    "distilled_experiences": (
        "procedural_experience", "configured_memory_provider", "provider_scope_owner",
        "reviewed_revision_lineage", "module_scoped", "provider_managed", "issue_fix.routing",
        "revision_bound", "revision:observed", (True, True, True),
        ["reviewed_candidate", "source_truth_changed"],
        "provider_write_then_revision_verified_read",
    ),
    "session_working_memory": (
        "working_context", "configured_session_provider", "session_owner",
        "completed_session_archive", "session_scoped", "provider_managed", "session.continuation",
        "session_archive_bound", "archive:completed", (False, True, False),
        ["completed_session_archive"], "completed_archive_then_direct_read",
    ),
    "fresh_execution_context": (
        "working_context", "loopx_runtime", "current_execution",
        "registry_todo_checkout_observation", "actor_scoped", "ephemeral_runtime",
        "control_plane.current_execution", "execution_bound", None, (False, True, False),
        ["fresh_source_observed"], "fresh_read_replaces_prior_context",
    ),
}  # fmt: skip


def _packet() -> dict[str, Any]:
    return as_plain(reference_registry())  # type: ignore[no-any-return]


def _declaration(corpus_id: str = "alpha", **changes: Any) -> CorpusDeclaration:
    return attrs.evolve(reference_corpus("scoped_preferences"), corpus_id=corpus_id, **changes)


def _error(exc: pytest.ExceptionInfo[RecordValidationError]) -> tuple[str, str]:
    return exc.value.code, exc.value.path


# -- the reference registry ------------------------------------------------------------------


def test_reference_registry_lists_the_seven_families_in_order() -> None:
    packet = _packet()
    assert [c["corpus_id"] for c in packet["corpora"]] == list(REFERENCE)
    assert tuple(REFERENCE) == REFERENCE_CORPUS_IDS
    assert packet["corpus_count"] == 7
    assert packet["status"] == "reference_registry"
    assert packet["ok"] is True
    assert packet["registry_role"] == "stateless_read_model_not_memory_source_of_truth"


@pytest.mark.parametrize("corpus_id", list(REFERENCE))
def test_reference_family_values_are_exact(corpus_id: str) -> None:
    (
        class_id, provider, owner, source, read, write, surface, mode, revision,
        (index, readback, receipt), triggers, closure,
    ) = REFERENCE[corpus_id]  # fmt: skip
    corpus = next(c for c in _packet()["corpora"] if c["corpus_id"] == corpus_id)
    assert corpus == {
        "corpus_id": corpus_id,
        "class_id": class_id,
        "provider_id": provider,
        "owner_ref": owner,
        "source_of_truth": source,
        "read_authority": read,
        "write_authority": write,
        "scope": {
            "workspace_ref": "workspace:exact",
            "project_ref": "project:exact",
            "surface_ids": [surface],
            "user_ref": None,
            "peer_ref": None,
            "session_ref": "session:exact" if corpus_id == "session_working_memory" else None,
        },
        "freshness": {"mode": mode, "source_revision": revision, "max_age_seconds": None},
        "lifecycle": {
            "state": "active",
            "supersedes": [],
            "superseded_by": None,
            "retirement_reason": None,
        },
        "retrieval": {
            "index_required": index,
            "readback_required": readback,
            "application_receipt_required": receipt,
        },
        "maintenance": {
            "writeback_triggers": triggers,
            "closure_policy": closure,
            "retirement_authority": owner,
        },
        "privacy": {"visibility": "private", "raw_content_in_registry": False},
    }


def test_reference_class_coverage_has_every_class() -> None:
    coverage = _packet()["class_coverage"]
    assert list(coverage) == list(CLASSES)
    assert coverage == {
        "run_bound_reward": ["run_reward_overlays"],
        "hard_policy": ["authority_policy_sources"],
        "soft_preference": ["scoped_preferences"],
        "procedural_experience": ["distilled_experiences", "execution_trajectories"],
        "working_context": ["fresh_execution_context", "session_working_memory"],
    }


def test_reference_registry_constants() -> None:
    packet = _packet()
    assert packet["maintenance_contract"] == {
        "inventory_owner": "provider_or_canonical_source_owner",
        "write_rule": "write_only_through_declared_write_authority",
        "freshness_rule": "verify_source_truth_revision_or_archive_before_use",
        "supersession_rule": "preserve_lineage_and_stop_recalling_inactive_items",
        "retirement_rule": "retain_compact_reason_without_raw_content",
        "scope_rule": "fail_closed_on_project_or_surface_mismatch",
    }
    assert packet["provider_alignment"] == {
        "openviking": {
            "content_source_of_truth": "agfs_content",
            "index_role": "derived_retrieval_reference",
            "preferences": "scoped_preferences",
            "trajectories": "execution_trajectories",
            "experiences": "distilled_experiences",
            "working_memory": "session_working_memory",
            "cases": "evaluation_fixture_not_registered_as_executable_memory",
        }
    }
    for flag in (
        "raw_memory_captured",
        "registry_persisted",
        "provider_write_performed",
        "external_writes_performed",
    ):
        assert packet[flag] is False
    # Bridge keys appear only on a bridged registry; absent optional keys are omitted.
    assert "bridge_schema_version" not in packet
    assert "source_inventory_schema" not in packet
    assert all("provider_scope_ref_digest" not in c for c in packet["corpora"])
    assert all("read_role" not in c for c in packet["corpora"])


def test_reference_registry_validates_and_round_trips() -> None:
    registry = reference_registry()
    packet = as_plain(registry)
    assert schemas.validate(packet) == "reward_memory_corpus_registry_v0"
    assert wire.dump(registry) == packet
    assert wire.load(json.loads(json.dumps(packet)), CorpusRegistry) == registry


def test_reference_corpus_unknown_id() -> None:
    with pytest.raises(RecordValidationError):
        reference_corpus("nope")


def test_reference_corpora_are_fresh_records_each_call() -> None:
    assert reference_corpora() == reference_corpora()
    assert reference_corpus("distilled_experiences") == reference_corpora()[4]


# -- build_registry ---------------------------------------------------------------------------


def test_build_registry_is_registered_and_valid() -> None:
    registry = build_registry([_declaration("alpha"), _declaration("beta")])
    packet = as_plain(registry)
    assert packet["status"] == "registered"
    assert packet["corpus_count"] == 2
    assert packet["class_coverage"]["soft_preference"] == ["alpha", "beta"]
    # A class no corpus holds is still a key, with an empty list.
    assert packet["class_coverage"]["hard_policy"] == []
    schemas.validate(packet)


def test_build_registry_keeps_the_given_order_and_sorts_coverage() -> None:
    registry = build_registry([_declaration("zeta"), _declaration("alpha")])
    assert [c.corpus_id for c in registry.corpora] == ["zeta", "alpha"]
    assert registry.class_coverage.soft_preference == ("alpha", "zeta")


@pytest.mark.parametrize("count", [0, 51])
def test_build_registry_bounds(count: int) -> None:
    corpora = [_declaration(f"c{index}") for index in range(count)]
    with pytest.raises(RecordValidationError) as info:
        build_registry(corpora)
    assert info.value.path in {"$.corpora", "$.corpus_count"}


def test_build_registry_accepts_fifty() -> None:
    assert build_registry([_declaration(f"c{i}") for i in range(50)]).corpus_count == 50


def test_build_registry_rejects_duplicate_ids() -> None:
    with pytest.raises(RecordValidationError) as info:
        build_registry([_declaration("alpha"), _declaration("beta"), _declaration("alpha")])
    assert _error(info) == ("duplicate_item", "$.corpora[2].corpus_id")


def test_build_registry_rejects_non_declarations() -> None:
    with pytest.raises(RecordValidationError) as info:
        build_registry([_declaration("alpha"), {"corpus_id": "beta"}])  # type: ignore[list-item]
    assert _error(info) == ("wrong_type", "$.corpora[1]")
    with pytest.raises(RecordValidationError):
        build_registry("alpha")  # type: ignore[arg-type]


def test_lifecycle_lineage_inside_the_registry() -> None:
    old = _declaration("old", lifecycle=CorpusLifecycle(state="superseded", superseded_by="new"))
    new = _declaration("new", lifecycle=CorpusLifecycle(state="active", supersedes=("old",)))
    registry = build_registry([old, new])
    assert registry.corpora[0].lifecycle.superseded_by == "new"
    schemas.validate(as_plain(registry))


def test_lifecycle_reference_to_a_missing_corpus() -> None:
    new = _declaration("new", lifecycle=CorpusLifecycle(state="active", supersedes=("a", "ghost")))
    with pytest.raises(RecordValidationError) as info:
        build_registry([_declaration("a"), new])
    assert _error(info) == ("unknown_reference", "$.corpora[1].lifecycle.supersedes[1]")
    old = _declaration("old", lifecycle=CorpusLifecycle(state="superseded", superseded_by="gone"))
    with pytest.raises(RecordValidationError) as info:
        build_registry([old])
    assert _error(info) == ("unknown_reference", "$.corpora[0].lifecycle.superseded_by")


@pytest.mark.parametrize(
    ("lifecycle", "where"),
    [
        ({"state": "active", "supersedes": ["alpha"]}, "$.lifecycle.supersedes[0]"),
        ({"state": "superseded", "superseded_by": "alpha"}, "$.lifecycle.superseded_by"),
    ],
)
def test_lifecycle_never_names_itself(lifecycle: dict[str, Any], where: str) -> None:
    with pytest.raises(RecordValidationError) as info:
        _declaration("alpha", lifecycle=CorpusLifecycle(**lifecycle))
    assert info.value.path == where


def test_loaded_registry_is_held_to_the_same_invariants() -> None:
    base = _packet()
    cases: list[tuple[Any, str, str]] = [
        (lambda p: p["corpora"][1].update(corpus_id="run_reward_overlays"),
         "duplicate_item", "$.corpora[1].corpus_id"),
        (lambda p: p["corpora"][0]["lifecycle"].update(supersedes=["ghost"]),
         "unknown_reference", "$.corpora[0].lifecycle.supersedes[0]"),
        (lambda p: p["class_coverage"].update(hard_policy=[]), "invalid_value", "$.class_coverage"),
        (lambda p: p.update(corpus_count=6), "invalid_value", "$.corpus_count"),
        (lambda p: p["maintenance_contract"].update(scope_rule="anything_goes"),
         "invalid_value", "$.maintenance_contract.scope_rule"),
        (lambda p: p.update(registry_persisted=True), "invalid_value", "$.registry_persisted"),
        (lambda p: p.update(bridge_schema_version=(
            "reward_memory_semantic_preference_registry_bridge_v0")),
         "invalid_value", "$.source_inventory_schema"),
    ]  # fmt: skip
    for mutate, code, path in cases:
        packet = copy.deepcopy(base)
        mutate(packet)
        with pytest.raises(RecordValidationError) as info:
            wire.load(packet)
        assert _error(info) == (code, path)


# -- declaration records ------------------------------------------------------------------------


def test_freshness_rules() -> None:
    for mode in ("revision_bound", "session_archive_bound"):
        with pytest.raises(RecordValidationError) as info:
            CorpusFreshness(mode=mode)
        assert _error(info) == ("missing_field", "$.source_revision")
    with pytest.raises(RecordValidationError) as info:
        CorpusFreshness(mode="time_bound")
    assert _error(info) == ("missing_field", "$.max_age_seconds")
    assert CorpusFreshness(mode="time_bound", max_age_seconds=60).max_age_seconds == 60
    for bad in (0, -1, True, 1.5, "60"):
        with pytest.raises(RecordValidationError) as info:
            CorpusFreshness(mode="time_bound", max_age_seconds=bad)  # type: ignore[arg-type]
        assert info.value.path == "$.max_age_seconds"
    with pytest.raises(RecordValidationError):
        CorpusFreshness(mode="forever")  # type: ignore[arg-type]


def test_lifecycle_rules() -> None:
    with pytest.raises(RecordValidationError) as info:
        CorpusLifecycle(state="superseded")
    assert _error(info) == ("missing_field", "$.superseded_by")
    with pytest.raises(RecordValidationError) as info:
        CorpusLifecycle(state="retired")
    assert _error(info) == ("missing_field", "$.retirement_reason")
    retired = CorpusLifecycle(state="retired", retirement_reason="owner_request")
    assert retired.retirement_reason == "owner_request"
    assert CorpusLifecycle(state="active", supersedes=("b", "a")).supersedes == ("a", "b")
    with pytest.raises(RecordValidationError) as info:
        CorpusLifecycle(state="active", supersedes=("a", "a"))
    assert _error(info) == ("duplicate_item", "$.supersedes[1]")
    with pytest.raises(RecordValidationError):
        CorpusLifecycle(state="active", supersedes=("Not_A_Corpus",))


def test_privacy_never_holds_raw_content() -> None:
    with pytest.raises(RecordValidationError, match="raw memory content") as info:
        CorpusPrivacy(visibility="private", raw_content_in_registry=True)  # type: ignore[arg-type]
    assert info.value.path == "$.raw_content_in_registry"
    with pytest.raises(RecordValidationError) as info:
        CorpusPrivacy(visibility="private", raw_content_in_registry=0)  # type: ignore[arg-type]
    assert info.value.code == "wrong_type"
    with pytest.raises(RecordValidationError):
        CorpusPrivacy(visibility="everyone", raw_content_in_registry=False)  # type: ignore[arg-type]


@pytest.mark.parametrize("value", [1, 0, "true", None])
def test_retrieval_flags_are_strict_booleans(value: Any) -> None:
    with pytest.raises(RecordValidationError) as info:
        CorpusRetrieval(
            index_required=value, readback_required=True, application_receipt_required=True
        )
    assert _error(info) == ("wrong_type", "$.index_required")


def test_scope_surfaces() -> None:
    scope = CorpusScope(
        workspace_ref="w", project_ref="p", surface_ids=("b.x", "a.y"), user_ref="user:1"
    )
    assert scope.surface_ids == ("a.y", "b.x")
    for bad in ([], ["a.y", "a.y"], ["single"], [f"m.s{i}" for i in range(21)], "a.b"):
        with pytest.raises(RecordValidationError) as info:
            CorpusScope(workspace_ref="w", project_ref="p", surface_ids=bad)  # type: ignore[arg-type]
        assert info.value.path.startswith("$.surface_ids")


def test_maintenance_triggers_bounded_and_sorted() -> None:
    maintenance = CorpusMaintenance(
        writeback_triggers=("z", "a"), closure_policy="c", retirement_authority="r"
    )
    assert maintenance.writeback_triggers == ("a", "z")
    with pytest.raises(RecordValidationError):
        CorpusMaintenance(
            writeback_triggers=tuple(f"t{i}" for i in range(11)),
            closure_policy="c",
            retirement_authority="r",
        )


def test_declaration_tokens_are_scanned_for_paths_and_secrets() -> None:
    with pytest.raises(UnsafeTextError) as info:
        _declaration(owner_ref="x:/home/someone/notes")
    assert info.value.path == "$.owner_ref"
    with pytest.raises(UnsafeTextError):
        _declaration(provider_id="ghp_" + "a1" * 15)


def test_provider_scope_ref_digest_must_be_a_digest() -> None:
    assert _declaration(provider_scope_ref_digest="0123456789abcdef").provider_scope_ref_digest
    with pytest.raises(RecordValidationError) as info:
        _declaration(provider_scope_ref_digest="viking://user/x/memories")
    assert info.value.path == "$.provider_scope_ref_digest"


def test_declaration_optional_keys_appear_only_when_present() -> None:
    plain = as_plain(_declaration(read_role="primary"))
    assert plain["read_role"] == "primary"
    assert "provider_scope_ref_digest" not in plain


def test_class_coverage_of_is_sorted_per_class() -> None:
    corpora = reference_corpora()
    coverage = ClassCoverage.of(corpora)
    assert coverage.working_context == ("fresh_execution_context", "session_working_memory")


# -- strictness through the wire (unknown fields rejected, path named) ---------------------------


@pytest.mark.parametrize(
    ("where", "path"),
    [
        ((), "$.surprise"),
        (("corpora", 0), "$.corpora[0].surprise"),
        (("corpora", 3, "scope"), "$.corpora[3].scope.surprise"),
        (("corpora", 2, "freshness"), "$.corpora[2].freshness.surprise"),
        (("corpora", 6, "privacy"), "$.corpora[6].privacy.surprise"),
        (("class_coverage",), "$.class_coverage.surprise"),
        (("provider_alignment", "openviking"), "$.provider_alignment.openviking.surprise"),
    ],
)
def test_unknown_fields_are_rejected_with_their_path(where: tuple[Any, ...], path: str) -> None:
    packet = _packet()
    node: Any = packet
    for step in where:
        node = node[step]
    node["surprise"] = "raw chat"
    with pytest.raises(RecordValidationError) as info:
        wire.load(packet)
    assert _error(info) == ("unknown_field", path)


def test_missing_privacy_flag_is_refused() -> None:
    packet = _packet()
    del packet["corpora"][0]["privacy"]["raw_content_in_registry"]
    with pytest.raises(RecordValidationError) as info:
        wire.load(packet)
    assert _error(info) == ("missing_field", "$.corpora[0].privacy.raw_content_in_registry")


# -- the semantic-preference inventory bridge ---------------------------------------------------

SCOPE_URI = "viking://user/example/peers/project-0123/memories/preferences"


def _inventory(**changes: Any) -> list[dict[str, Any]]:
    item: dict[str, Any] = {
        "corpus_id": "project_peer_preferences",
        "scope_ref": SCOPE_URI,
        "read_role": "primary",
        "write_mode": "provider_managed",
        "write_actor_ref": "peer:project",
        "source_of_truth": "repository_revision_and_explicit_feedback",
        "writeback_triggers": ["source_truth_changed", "explicit_feedback"],
        "closure_policy": "write_wait_l2_read_scoped_recall",
    }
    item.update(changes)
    return [item]


def _bridge(inventory: Any = None, **kwargs: Any) -> CorpusRegistry:
    args: dict[str, Any] = {
        "provider_id": "openviking",
        "workspace_ref": "workspace:example",
        "project_ref": "project:example",
        "surface": "issue_fix.pr_description",
    }
    args.update(kwargs)
    return semantic_preference_registry(_inventory() if inventory is None else inventory, **args)


def test_bridge_maps_inventory_to_soft_preference_corpora() -> None:
    registry = _bridge(source_revision="revision:abc123")
    packet = as_plain(registry)
    schemas.validate(packet)
    assert packet["status"] == "registered"
    assert packet["bridge_schema_version"] == "reward_memory_semantic_preference_registry_bridge_v0"
    assert packet["source_inventory_schema"] == "semantic_preference_provider_response_v0"
    (corpus,) = packet["corpora"]
    assert corpus["class_id"] == "soft_preference"
    assert corpus["read_authority"] == "module_scoped"
    assert corpus["write_authority"] == "provider_managed"
    assert corpus["owner_ref"] == corpus["maintenance"]["retirement_authority"] == "peer:project"
    assert corpus["scope"]["project_ref"] == "project:example"
    assert corpus["scope"]["surface_ids"] == ["issue_fix.pr_description"]
    assert corpus["freshness"]["mode"] == "revision_bound"
    assert corpus["freshness"]["source_revision"] == "revision:abc123"
    assert corpus["retrieval"] == {
        "index_required": True,
        "readback_required": True,
        "application_receipt_required": True,
    }
    assert corpus["maintenance"]["writeback_triggers"] == [
        "explicit_feedback",
        "source_truth_changed",
    ]
    assert corpus["read_role"] == "primary"
    digest = hashlib.sha256(SCOPE_URI.encode()).hexdigest()[:16]
    assert corpus["provider_scope_ref_digest"] == digest
    serialized = json.dumps(packet)
    assert SCOPE_URI not in serialized
    assert "viking://" not in serialized
    assert wire.load(json.loads(serialized)) == registry


def test_bridge_without_revision_and_without_writer() -> None:
    registry = _bridge(_inventory(write_actor_ref=None, write_mode="read_only"))
    (corpus,) = registry.corpora
    assert corpus.freshness.mode == "source_truth_bound"
    assert corpus.owner_ref == "openviking"
    assert corpus.write_authority == "read_only"


@pytest.mark.parametrize(
    ("inventory", "code", "path"),
    [
        (_inventory(raw_comment="hi"), "unknown_field", "$.inventory[0].raw_comment"),
        (_inventory(write_mode="publish"), "invalid_value", "$.inventory[0].write_mode"),
        (_inventory(corpus_id="Bad"), "invalid_format", "$.inventory[0].corpus_id"),
        (_inventory(scope_ref="has space"), "invalid_format", "$.inventory[0].scope_ref"),
        (_inventory(closure_policy=7), "wrong_type", "$.inventory[0].closure_policy"),
        (_inventory(writeback_triggers="x"), "wrong_type", "$.inventory[0].writeback_triggers"),
        (_inventory(writeback_triggers=["ok", "no way"]), "invalid_format",
         "$.inventory[0].writeback_triggers[1]"),
        ([{"corpus_id": "x"}], "missing_field", "$.inventory[0].scope_ref"),
        (["not an object"], "wrong_type", "$.inventory[0]"),
        ([], "invalid_value", "$.inventory"),
        ("inventory", "wrong_type", "$.inventory"),
    ],
)  # fmt: skip
def test_bridge_rejects_bad_inventory(inventory: Any, code: str, path: str) -> None:
    with pytest.raises(RecordValidationError) as info:
        _bridge(inventory)
    assert _error(info) == (code, path)


def test_bridge_checks_its_arguments() -> None:
    with pytest.raises(RecordValidationError) as info:
        _bridge(surface="nosurface")
    assert info.value.path == "$.surface"
    with pytest.raises(RecordValidationError) as info:
        _bridge(project_ref="x:/home/u/project")
    assert info.value.path == "$.project_ref"


def test_bridge_rejects_duplicate_corpora() -> None:
    with pytest.raises(RecordValidationError) as info:
        _bridge(_inventory() + _inventory())
    assert _error(info) == ("duplicate_item", "$.inventory[1].corpus_id")


def _pair() -> tuple[CorpusDeclaration, CorpusDeclaration]:
    first = reference_corpus("distilled_experiences")
    second = attrs.evolve(reference_corpus("execution_trajectories"), scope=first.scope)
    return first, second


@pytest.mark.parametrize(
    ("first_lifecycle", "second_lifecycle", "path"),
    [
        # A supersedes B while B stays active: B would go on influencing recall.
        (
            {"state": "active", "supersedes": ("execution_trajectories",)},
            {"state": "active"},
            "$.corpora[1].lifecycle.state",
        ),
        # Each supersedes the other, both active.
        (
            {"state": "active", "supersedes": ("execution_trajectories",)},
            {"state": "active", "supersedes": ("distilled_experiences",)},
            "$.corpora[1].lifecycle.state",
        ),
        # Each superseded by the other: a chain of successors with no end.
        (
            {"state": "superseded", "superseded_by": "execution_trajectories"},
            {"state": "superseded", "superseded_by": "distilled_experiences"},
            "$.corpora[0].lifecycle.superseded_by",
        ),
    ],
)
def test_a_registrys_lineage_agrees_with_itself(
    first_lifecycle: dict[str, Any], second_lifecycle: dict[str, Any], path: str
) -> None:
    first, second = _pair()
    with pytest.raises(RecordValidationError) as info:
        build_registry(
            [
                attrs.evolve(first, lifecycle=CorpusLifecycle(**first_lifecycle)),
                attrs.evolve(second, lifecycle=CorpusLifecycle(**second_lifecycle)),
            ]
        )
    assert _error(info) == ("invalid_state", path)


def test_a_consistent_supersession_is_registered() -> None:
    first, second = _pair()
    registry = build_registry(
        [
            attrs.evolve(
                first, lifecycle=CorpusLifecycle(state="active", supersedes=(second.corpus_id,))
            ),
            attrs.evolve(
                second,
                lifecycle=CorpusLifecycle(state="superseded", superseded_by=first.corpus_id),
            ),
        ]
    )
    assert [c.lifecycle.state for c in registry.corpora] == ["active", "superseded"]


def test_the_reference_status_is_only_the_reference_registrys() -> None:
    """``reference_registry`` says "no corpora were given": a custom registry saying so
    is refused (reference 3.2)."""
    data = as_plain(build_registry([reference_corpus("distilled_experiences")]))
    data["status"] = "reference_registry"
    with pytest.raises(RecordValidationError) as info:
        wire.load(data)
    assert _error(info) == ("invalid_value", "$.status")
    assert wire.load(as_plain(reference_registry())) == reference_registry()


def _bridge_item(**changes: Any) -> dict[str, Any]:
    item: dict[str, Any] = {
        "corpus_id": "prefs",
        "scope_ref": "viking://u/peers/p/memories/preferences",
        "read_role": "preference_reader",
        "write_mode": "provider_managed",
        "source_of_truth": "explicit_reviewed_feedback",
        "closure_policy": "close",
    }
    item.update(changes)
    return item


def test_the_bridge_needs_a_read_role_and_names_duplicates_where_written() -> None:
    from reward_memory.registry import semantic_preference_registry

    where = {
        "provider_id": "openviking",
        "workspace_ref": "ws",
        "project_ref": "proj",
        "surface": "issue_fix.routing",
    }
    with pytest.raises(RecordValidationError) as info:
        semantic_preference_registry([_bridge_item(read_role=None)], **where)
    assert _error(info) == ("wrong_type", "$.inventory[0].read_role")
    with pytest.raises(RecordValidationError) as info:
        semantic_preference_registry(
            [_bridge_item(), _bridge_item(scope_ref="viking://other")], **where
        )
    assert _error(info) == ("duplicate_item", "$.inventory[1].corpus_id")
