"""The pilot/meta route check: every rule of the seeds' "Pilot/meta delegation" contract.

Each test names the contract sentence it protects. The observation builder
starts from a pilot-sized change (a confirmed bug on one bounded surface, named
reproduction and validation, effect evidence) and changes one thing at a time.
"""

from __future__ import annotations

import json
from typing import Any

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from reward_memory import schemas, wire
from reward_memory.errors import RecordValidationError
from reward_memory.records.route import EVIDENCE_KINDS, RouteCheck, RouteObservation
from reward_memory.routing import (
    PR_3237_OBSERVATION,
    meta_reasons,
    required_evidence,
    route_check,
)

FLAG_NAMES = (
    "semantic_contract_change",
    "generic_boundary_for_specific_policy",
    "user_visible_behavior_change",
    "hot_path_or_storage_change",
    "retrieval_or_memory_quality_claim",
    "named_reproduction",
    "named_validation",
    "effect_evidence",
    "ux_evidence",
    "benchmark_evidence",
    "performance_evidence",
)
PILOT_REASONS = (
    "confirmed_bug_semantics",
    "single_bounded_surface",
    "no_semantic_contract_change",
    "no_generic_boundary_for_specific_policy",
    "edge_case_complexity_low",
    "reproduction_validation_and_relevant_evidence_present",
)


def observation(**changes: Any) -> RouteObservation:
    """A pilot-sized observation, with changes."""
    values: dict[str, Any] = {
        "case_ref": "fixture:bounded-bug",
        "behavior_status": "bug_confirmed",
        "surface_count": 1,
        "edge_case_complexity": "low",
        "semantic_contract_change": False,
        "generic_boundary_for_specific_policy": False,
        "user_visible_behavior_change": False,
        "hot_path_or_storage_change": False,
        "retrieval_or_memory_quality_claim": False,
        "named_reproduction": True,
        "named_validation": True,
        "effect_evidence": True,
        "ux_evidence": False,
        "benchmark_evidence": False,
        "performance_evidence": False,
    }
    values.update(changes)
    return RouteObservation(**values)


def data(**changes: Any) -> dict[str, Any]:
    plain: dict[str, Any] = wire.dump(observation())
    plain.update(changes)
    return plain


# -- the PR #3237 regression ------------------------------------------------------------


def test_pr_3237_routes_to_the_meta_design_gate() -> None:
    """'The stable expectation is meta_design_gate, not pilot_fix.'"""
    route = route_check(PR_3237_OBSERVATION)
    assert route.decision == "meta_design_gate"
    assert route.reason_codes == (
        "semantics_by_design",
        "semantic_contract_change",
        "cross_surface_change",
        "generic_boundary_for_specific_policy",
        "high_edge_case_complexity",
        "missing_effect_evidence",
        "missing_ux_evidence",
        "missing_performance_evidence",
    )
    assert route.pilot_authorized is False
    assert route.meta_review_required is True
    assert route.memory_patch_authority is False
    assert route.external_write_authorized is False


def test_pr_3237_needs_no_benchmark_evidence() -> None:
    """'Benchmark evidence is not required by this regression because it made no
    retrieval or memory-quality claim.'"""
    route = route_check(PR_3237_OBSERVATION)
    assert route.required_evidence == ("effect", "ux", "performance")
    assert route.missing_required_evidence == ("effect", "ux", "performance")


def test_pr_3237_observation_is_the_seeds_description() -> None:
    """By-design behaviour, backend and Web Studio, a generic contract for one edge case,
    metadata reads on a listing path, no effect/UX/performance evidence."""
    o = PR_3237_OBSERVATION
    assert o.case_ref == "https://github.com/volcengine/OpenViking/pull/3237"
    assert (o.behavior_status, o.surface_count, o.edge_case_complexity) == ("by_design", 2, "high")
    flags = {name: getattr(o, name) for name in FLAG_NAMES}
    assert flags == {
        "semantic_contract_change": True,
        "generic_boundary_for_specific_policy": True,
        "user_visible_behavior_change": True,
        "hot_path_or_storage_change": True,
        "retrieval_or_memory_quality_claim": False,
        "named_reproduction": True,
        "named_validation": True,
        "effect_evidence": False,
        "ux_evidence": False,
        "benchmark_evidence": False,
        "performance_evidence": False,
    }


def test_full_evidence_does_not_let_pr_3237_past_the_gate() -> None:
    """A meta trigger is not cured by evidence: 'the pilot cannot bypass the design gate'."""
    evidenced = attrs.evolve(
        PR_3237_OBSERVATION, effect_evidence=True, ux_evidence=True, performance_evidence=True
    )
    route = route_check(evidenced)
    assert route.decision == "meta_design_gate"
    assert route.missing_required_evidence == ()
    assert route.reason_codes[-1] == "high_edge_case_complexity"


# -- pilot_fix ------------------------------------------------------------------------------


@pytest.mark.parametrize("complexity", ["low", "medium"])
def test_a_bounded_confirmed_bug_with_evidence_is_pilot_sized(complexity: str) -> None:
    """'The pilot may take a fix only when behavior is a confirmed bug, scope is one bounded
    surface, ... reproduction and validation are named, edge-case complexity is low or
    medium, and all relevant evidence is present.'"""
    route = route_check(observation(edge_case_complexity=complexity))
    assert route.decision == "pilot_fix"
    assert route.pilot_authorized is True
    assert route.meta_review_required is False
    assert route.reason_codes == (
        *PILOT_REASONS[:4],
        f"edge_case_complexity_{complexity}",
        PILOT_REASONS[5],
    )
    assert route.required_evidence == ("effect",)
    assert route.missing_required_evidence == ()
    # Pilot-sized is still no authority.
    assert route.memory_patch_authority is False
    assert route.external_write_authorized is False


def test_a_bounded_bug_in_a_core_module_stays_pilot_sized() -> None:
    """'This allows a bounded bug inside a core module to remain pilot-sized': a hot-path
    change with its performance evidence is not escalated."""
    route = route_check(observation(hot_path_or_storage_change=True, performance_evidence=True))
    assert route.decision == "pilot_fix"
    assert route.required_evidence == ("effect", "performance")


# -- meta_design_gate: each trigger alone ----------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"behavior_status": "by_design"}, "semantics_by_design"),
        ({"behavior_status": "uncertain"}, "semantics_uncertain"),
        ({"semantic_contract_change": True}, "semantic_contract_change"),
        ({"surface_count": 2}, "cross_surface_change"),
        ({"surface_count": 20}, "cross_surface_change"),
        ({"generic_boundary_for_specific_policy": True}, "generic_boundary_for_specific_policy"),
        ({"edge_case_complexity": "high"}, "high_edge_case_complexity"),
    ],
)
def test_each_meta_trigger_alone_requires_design_review(
    changes: dict[str, Any], reason: str
) -> None:
    """'Meta design review is required for by-design or uncertain semantics, a
    semantic-contract change, cross-surface change, generic-boundary leakage, or high
    edge-case complexity.'"""
    route = route_check(observation(**changes))
    assert route.decision == "meta_design_gate"
    assert route.reason_codes == (reason,)
    assert route.meta_review_required is True
    assert route.pilot_authorized is False


def test_meta_reasons_keep_their_fixed_order() -> None:
    every = observation(
        behavior_status="uncertain",
        semantic_contract_change=True,
        surface_count=3,
        generic_boundary_for_specific_policy=True,
        edge_case_complexity="high",
    )
    assert meta_reasons(every) == (
        "semantics_uncertain",
        "semantic_contract_change",
        "cross_surface_change",
        "generic_boundary_for_specific_policy",
        "high_edge_case_complexity",
    )


def test_meta_lists_missing_evidence_but_not_missing_reproduction() -> None:
    route = route_check(
        observation(
            surface_count=2,
            effect_evidence=False,
            named_reproduction=False,
            named_validation=False,
        )
    )
    assert route.reason_codes == ("cross_surface_change", "missing_effect_evidence")


# -- hold_for_evidence ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "reasons", "required"),
    [
        ({"effect_evidence": False}, ("missing_effect_evidence",), ("effect",)),
        (
            {"user_visible_behavior_change": True},
            ("missing_ux_evidence",),
            ("effect", "ux"),
        ),
        (
            {"retrieval_or_memory_quality_claim": True},
            ("missing_benchmark_evidence",),
            ("effect", "benchmark"),
        ),
        (
            {"hot_path_or_storage_change": True},
            ("missing_performance_evidence",),
            ("effect", "performance"),
        ),
        ({"named_reproduction": False}, ("missing_named_reproduction",), ("effect",)),
        ({"named_validation": False}, ("missing_named_validation",), ("effect",)),
    ],
)
def test_missing_required_evidence_without_a_meta_trigger_holds(
    changes: dict[str, Any], reasons: tuple[str, ...], required: tuple[str, ...]
) -> None:
    """'Missing required evidence without a meta trigger produces hold_for_evidence.'"""
    route = route_check(observation(**changes))
    assert route.decision == "hold_for_evidence"
    assert route.reason_codes == reasons
    assert route.required_evidence == required
    assert route.pilot_authorized is False
    assert route.meta_review_required is False


def test_hold_reasons_keep_their_fixed_order() -> None:
    route = route_check(
        observation(
            effect_evidence=False,
            user_visible_behavior_change=True,
            retrieval_or_memory_quality_claim=True,
            hot_path_or_storage_change=True,
            named_reproduction=False,
            named_validation=False,
        )
    )
    assert route.reason_codes == (
        "missing_effect_evidence",
        "missing_ux_evidence",
        "missing_benchmark_evidence",
        "missing_performance_evidence",
        "missing_named_reproduction",
        "missing_named_validation",
    )
    assert route.missing_required_evidence == EVIDENCE_KINDS


@pytest.mark.parametrize("kind", ["ux", "benchmark", "performance"])
def test_irrelevant_evidence_is_never_required(kind: str) -> None:
    """'Evidence requirements are relevance-gated instead of using a blanket rule.'"""
    route = route_check(observation(**{f"{kind}_evidence": False}))
    assert kind not in route.required_evidence
    assert route.decision == "pilot_fix"


def test_effect_evidence_is_always_required() -> None:
    """'Effect evidence is always required.'"""
    assert required_evidence(observation()) == ("effect",)
    assert route_check(observation(effect_evidence=False)).decision == "hold_for_evidence"


# -- invariants ------------------------------------------------------------------------------

OBSERVATIONS = st.builds(
    RouteObservation,
    behavior_status=st.sampled_from(["bug_confirmed", "by_design", "uncertain"]),
    surface_count=st.integers(min_value=1, max_value=20),
    edge_case_complexity=st.sampled_from(["low", "medium", "high"]),
    **{name: st.booleans() for name in FLAG_NAMES},
)


@given(OBSERVATIONS)
def test_pilot_only_when_every_pilot_condition_holds(o: RouteObservation) -> None:
    """Pilot exactly when the seeds' pilot conditions all hold; meta exactly when a trigger
    fires; hold otherwise. A route check never grants authority."""
    route = route_check(o)
    trigger = (
        o.behavior_status != "bug_confirmed"
        or o.semantic_contract_change
        or o.surface_count > 1
        or o.generic_boundary_for_specific_policy
        or o.edge_case_complexity == "high"
    )
    evidence_ok = (
        o.effect_evidence
        and (o.ux_evidence or not o.user_visible_behavior_change)
        and (o.benchmark_evidence or not o.retrieval_or_memory_quality_claim)
        and (o.performance_evidence or not o.hot_path_or_storage_change)
    )
    if trigger:
        assert route.decision == "meta_design_gate"
    elif evidence_ok and o.named_reproduction and o.named_validation:
        assert route.decision == "pilot_fix"
    else:
        assert route.decision == "hold_for_evidence"
    assert route.pilot_authorized is (route.decision == "pilot_fix")
    assert set(route.missing_required_evidence) <= set(route.required_evidence)
    assert route.required_evidence[0] == "effect"
    assert route.memory_patch_authority is False
    assert route.external_write_authorized is False
    schemas.validate(wire.dump(route))


@given(OBSERVATIONS)
def test_the_mapping_and_the_record_route_alike(o: RouteObservation) -> None:
    plain = wire.dump(o)
    del plain["schema_version"]
    assert route_check(plain) == route_check(o)


# -- strict input -----------------------------------------------------------------------------


def test_a_mapping_may_omit_schema_version_and_case_ref() -> None:
    plain = data()
    del plain["schema_version"], plain["case_ref"]
    assert route_check(plain).case_ref == "manual_observation"


@pytest.mark.parametrize(
    ("changes", "path", "code"),
    [
        ({"comment_body": "x"}, "$.comment_body", "unknown_field"),
        ({"surface_count": True}, "$.surface_count", None),
        ({"surface_count": "2"}, "$.surface_count", None),
        ({"surface_count": 0}, "$.surface_count", None),
        ({"surface_count": 21}, "$.surface_count", None),
        ({"surface_count": 1.0}, "$.surface_count", None),
        ({"named_validation": 1}, "$.named_validation", None),
        ({"effect_evidence": "true"}, "$.effect_evidence", None),
        ({"behavior_status": "bug"}, "$.behavior_status", None),
        ({"edge_case_complexity": "extreme"}, "$.edge_case_complexity", None),
        ({"schema_version": "reward_memory_pilot_meta_route_v0"}, "$.schema_version", None),
        ({"case_ref": "/home/alice/issue.md"}, "$.case_ref", None),
        ({"case_ref": "~/notes"}, "$.case_ref", None),
        ({"case_ref": "x" * 241}, "$.case_ref", None),
        ({"case_ref": "token ghp_" + "a" * 36}, "$.case_ref", None),
    ],
)
def test_an_invalid_observation_names_the_field(
    changes: dict[str, Any], path: str, code: str | None
) -> None:
    with pytest.raises(RecordValidationError) as caught:
        route_check(data(**changes))
    assert caught.value.path == path
    if code is not None:
        assert caught.value.code == code


def test_a_missing_field_is_named() -> None:
    plain = data()
    del plain["named_reproduction"]
    with pytest.raises(RecordValidationError) as caught:
        route_check(plain)
    assert caught.value.path == "$.named_reproduction"


@pytest.mark.parametrize("value", [None, [], "pr-3237", 3])
def test_anything_but_an_observation_is_refused(value: Any) -> None:
    with pytest.raises(RecordValidationError) as caught:
        route_check(value)
    assert caught.value.code == "wrong_type"


def test_the_record_refuses_a_local_path_case_ref() -> None:
    with pytest.raises(RecordValidationError) as caught:
        observation(case_ref="/etc/passwd")
    assert caught.value.path == "$.case_ref"


# -- the packet -----------------------------------------------------------------------------


def test_the_packet_validates_and_round_trips() -> None:
    route = route_check(PR_3237_OBSERVATION)
    plain = wire.dump(route)
    schemas.validate(plain)
    assert wire.load(json.loads(json.dumps(plain))) == route
    observed = wire.dump(PR_3237_OBSERVATION)
    schemas.validate(observed)
    assert wire.load(observed) == PR_3237_OBSERVATION


@pytest.mark.parametrize(
    ("changes", "path"),
    [
        ({"pilot_authorized": True}, "$.pilot_authorized"),
        ({"meta_review_required": False}, "$.meta_review_required"),
        ({"missing_required_evidence": ("benchmark",)}, "$.missing_required_evidence"),
        ({"required_evidence": ("ux", "effect")}, "$.required_evidence"),
        ({"memory_patch_authority": True}, "$.memory_patch_authority"),
    ],
)
def test_a_route_packet_cannot_claim_what_its_decision_does_not_give(
    changes: dict[str, Any], path: str
) -> None:
    """A loaded packet is data: a hand-edited verdict or an authority flag is refused."""
    route = route_check(PR_3237_OBSERVATION)
    with pytest.raises(RecordValidationError) as caught:
        attrs.evolve(route, **changes)
    assert caught.value.path == path


def test_a_pilot_packet_cannot_list_missing_evidence() -> None:
    route = route_check(observation())
    with pytest.raises(RecordValidationError) as caught:
        attrs.evolve(route, missing_required_evidence=("effect",))
    assert caught.value.path == "$.missing_required_evidence"
    assert isinstance(route, RouteCheck)


# The record is the whole boundary for a mapping; it must accept exactly what the schema does
# (but for 1.0 as a count: strict types, reference §1.3).
JSON_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-3, max_value=25),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(
        ["bug_confirmed", "by_design", "uncertain", "low", "medium", "high", "x", "", "1", "/tmp/a"]
    ),
    st.lists(st.booleans(), max_size=2),
    st.dictionaries(st.just("k"), st.booleans(), max_size=1),
)


@given(
    st.sampled_from(sorted(attrs.fields_dict(RouteObservation))),
    JSON_VALUES,
    st.booleans(),
)
def test_the_record_and_the_schema_agree_on_every_mapping(
    field: str, value: Any, drop: bool
) -> None:
    plain = data()
    if drop:
        del plain[field]
    else:
        plain[field] = value
    try:
        schemas.validate(plain, "reward_memory_pilot_meta_route_observation_v0")
        schema_ok = True
    except RecordValidationError:
        schema_ok = False
    try:
        route_check(plain)
        record_ok = True
    except RecordValidationError:
        record_ok = False
    # The record also refuses path- and credential-shaped text the schema cannot see.
    if not drop and field == "case_ref" and isinstance(value, str) and value.startswith("/"):
        assert not record_ok
        return
    if drop and field == "schema_version":
        return
    if type(value) is float and field == "surface_count" and value.is_integer():
        # JSON Schema counts 1.0 as an integer; the library's strict types do not.
        assert not record_ok
        return
    assert record_ok == schema_ok, (field, value, drop)


def test_an_unknown_field_beside_a_missing_one_is_still_refused() -> None:
    plain = data(extra=1)
    del plain["named_validation"]
    with pytest.raises(RecordValidationError):
        route_check(plain)


@pytest.mark.parametrize("codes", [("granted_by_memory_hit",), (), ("cross_surface_change",) * 2])
def test_a_route_packet_holds_only_route_reason_codes(codes: tuple[str, ...]) -> None:
    """A route check's vocabulary is closed: no code from elsewhere (a memory hit, say)."""
    route = route_check(PR_3237_OBSERVATION)
    with pytest.raises(RecordValidationError) as caught:
        attrs.evolve(route, reason_codes=codes)
    assert caught.value.path.startswith("$.reason_codes")
    plain = wire.dump(route)
    plain["reason_codes"] = list(codes)
    with pytest.raises(RecordValidationError):
        schemas.validate(plain)
