"""The compiled schema checks (reward_memory._schema_check) against the reference validator.

Issue 11 item 2: JSON input is validated once, at the boundary, by a compiled
validator kept equal to the published schemas. The compiled check may only
answer "valid" where the reference path (``jsonio.check_data`` + jsonschema)
does; otherwise ``schemas.validate`` would accept what the contract refuses.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import _recall_support as recall_support
import _stage2 as s2
from reward_memory import jsonio, schemas, wire
from reward_memory._schema_check import compile_node
from reward_memory.activation import activate
from reward_memory.candidates import propose, review
from reward_memory.errors import RecordValidationError

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
ARCHITECTURE = (
    Path(__file__).resolve().parents[1] / "src" / "reward_memory" / "data" / "architecture_v0.json"
)
# Schemas that take the reference path on every call (none today).
UNCOMPILED: set[str] = set()


def _reference_accepts(instance: Any, name: str) -> bool:
    try:
        jsonio.check_data(instance)
    except RecordValidationError:
        return False
    return next(iter(schemas.validator_for(name).iter_errors(instance)), None) is None


def _samples() -> list[dict[str, Any]]:
    proposal = s2.proposal()
    packet = propose(proposal, s2.checkpoint(), now=s2.NOW)
    accepted = review(packet, s2.decision("accept"), now=s2.NOW)
    edited = review(
        packet, s2.decision("edit", edited_content_summary="Keep fixes scoped."), now=s2.NOW
    )
    record = activate(
        accepted, s2.corpus_for("hard_policy"), checkpoint=s2.checkpoint(), now=s2.NOW
    )
    plain = [
        wire.dump_packet(item)
        for item in (proposal, s2.checkpoint(), packet, accepted, edited, record)
    ]
    plain.append(wire.dump_packet(recall_support.active_record(3, expires_at="2027-01-01T00:00Z")))
    plain.append(wire.dump_packet(recall_support.active_record(4, revoked=True)))
    for path in [*sorted(EXAMPLES.rglob("*.json")), ARCHITECTURE]:
        data = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(data, dict) and data.get("schema_version") in schemas.schema_names():
            plain.append(data)
    return plain


SAMPLES = _samples()


def test_every_packet_schema_compiles_but_the_named_ones() -> None:
    compiled = {name for name in schemas.schema_names() if schemas._compiled(name) is not None}
    assert set(schemas.schema_names()) - compiled == UNCOMPILED


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda sample: sample["schema_version"])
def test_valid_packets_take_the_compiled_path(sample: dict[str, Any]) -> None:
    name = sample["schema_version"]
    check = schemas._compiled(name)
    assert check is not None
    assert check(sample) is True
    assert _reference_accepts(sample, name)


# Values that probe every keyword: wrong types, edge strings, numbers out of range.
_ODD_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**60), max_value=2**60),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(
        [
            "",
            " ",
            "x",
            "a" * 201,
            "a" * 501,
            "token:ok",
            "Bad token",
            "\ud800",
            "line\nbreak",
            "ctl\x01",
            "2026-02-30T00:00:00Z",
            "2026-02-01T00:00:00Z",
            "issue_fix.patch_planning",
            "hard_policy",
            "active",
            "accept",
            "review_policy",
        ]
    ),
    st.text(max_size=12),
    st.lists(st.sampled_from(["a:b", "a:b", "c.d", "x"]), max_size=4),
    st.dictionaries(st.sampled_from(["a", "level", "state"]), st.none(), max_size=2),
)


def _paths(node: Any, trail: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [trail]
    if isinstance(node, dict):
        for key, value in node.items():
            found.extend(_paths(value, (*trail, key)))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found.extend(_paths(value, (*trail, index)))
    return found


@st.composite
def _mutated(draw: st.DrawFn) -> tuple[str, Any]:
    sample = copy.deepcopy(draw(st.sampled_from(SAMPLES)))
    name = sample["schema_version"]
    for _ in range(draw(st.integers(min_value=1, max_value=2))):
        trail = draw(st.sampled_from(_paths(sample)[1:]))
        parent = sample
        for step in trail[:-1]:
            parent = parent[step]
        action = draw(st.sampled_from(["replace", "delete", "add"]))
        if action == "replace":
            parent[trail[-1]] = draw(_ODD_VALUES)
        elif action == "delete":
            del parent[trail[-1]]
            if not sample:
                break
        elif isinstance(parent, dict):
            parent[draw(st.sampled_from(["extra", "level", "ok", 1]))] = draw(_ODD_VALUES)
        else:
            parent.append(draw(_ODD_VALUES))
        if "schema_version" not in sample:
            break
    return name, sample


@settings(max_examples=600, suppress_health_check=[HealthCheck.too_slow])
@given(_mutated())
def test_the_compiled_check_never_accepts_what_the_reference_refuses(
    case: tuple[str, Any],
) -> None:
    name, instance = case
    check = schemas._compiled(name)
    assert check is not None
    reference = _reference_accepts(instance, name)
    if check(instance):
        assert reference, "the compiled check accepted what the published schema refuses"
    # And validate() answers as the reference does, whichever path it took.
    try:
        schemas.validate(instance, name)
    except RecordValidationError:
        assert not reference
    else:
        assert reference


def test_conservative_answers_fall_back_to_the_reference() -> None:
    # A tuple is not a JSON array to the compiled check; the reference path then decides.
    sample = copy.deepcopy(SAMPLES[0])
    check = schemas._compiled(sample["schema_version"])
    assert check is not None
    sample["requested_action_scopes"] = tuple(sample["requested_action_scopes"])
    assert check(sample) is False
    with pytest.raises(RecordValidationError) as caught:
        schemas.validate(sample)
    assert caught.value.path == "$.requested_action_scopes"
    assert caught.value.code == "wrong_type"


def test_definitions_compile_and_agree() -> None:
    record = SAMPLES[0]["scope"]
    check = schemas._compiled("reward_memory_durable_envelope_v0", "RecordScope")
    assert check is not None
    assert check(record)
    schemas.validate_definition(record, "reward_memory_durable_envelope_v0", "RecordScope")
    bad = {**record, "surface_ids": ["Not A Surface"]}
    assert not check(bad)
    with pytest.raises(RecordValidationError) as caught:
        schemas.validate_definition(bad, "reward_memory_durable_envelope_v0", "RecordScope")
    assert caught.value.path == "$.surface_ids[0]"


def test_valid_input_never_imports_jsonschema(tmp_path: Path) -> None:
    """Start-up: a verb that checks a valid file pays for its compiled checks only."""
    packet = tmp_path / "proposal.json"
    packet.write_text(json.dumps(SAMPLES[0]), encoding="utf-8")
    script = (
        "import json, sys\n"
        "from reward_memory import schemas\n"
        f"schemas.validate(json.load(open({str(packet)!r})))\n"
        "assert 'jsonschema' not in sys.modules and 'referencing' not in sys.modules\n"
        "data = json.load(open(" + repr(str(packet)) + "))\n"
        "data['content_summary'] = 7\n"
        "try:\n"
        "    schemas.validate(data)\n"
        "except Exception as exc:\n"
        "    print(type(exc).__name__, exc.path, exc.code)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.split() == ["RecordValidationError", "$.content_summary", "wrong_type"]


# -- open content: where a schema lets any JSON through, check_data's bounds still hold ------

_OPEN_DOCUMENT = {
    "$id": "https://reward-memory.dev/schemas/open_test.schema.json",
    "type": "object",
    "additionalProperties": False,
    "required": ["free", "bag", "items"],
    "properties": {
        "free": {"description": "anything"},
        "bag": {"type": ["object", "null"]},
        "items": {"type": "array"},
    },
}


def _nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


_DEEP = _nested(70)  # past check_data's depth limit (64)


def _open_check() -> Any:
    check = compile_node({"open_test": _OPEN_DOCUMENT}, _OPEN_DOCUMENT)
    assert check is not None
    return check


@pytest.mark.parametrize(
    ("changes", "valid"),
    [
        ({}, True),
        ({"free": float("nan")}, False),
        ({"bag": {"x": float("inf")}}, False),
        ({"items": [1, 2**60]}, False),
        ({"bag": {"k": "\ud800"}}, False),
        ({"bag": {1: "non-string key"}}, False),
        ({"free": _DEEP}, False),
        ({"free": {"any": ["json", 1, 2.5, None, True]}}, True),
    ],
)
def test_open_content_is_held_to_the_json_bounds(changes: dict[str, Any], valid: bool) -> None:
    instance = {"free": "x", "bag": None, "items": [1, "two"], **changes}
    try:
        jsonio.check_data(instance)
        reference = jsonschema.Draft202012Validator(_OPEN_DOCUMENT).is_valid(instance)
    except RecordValidationError:
        reference = False
    assert reference is valid
    assert _open_check()(instance) is valid


_MAP_DOCUMENT = {
    "$id": "https://reward-memory.dev/schemas/map_test.schema.json",
    "type": "object",
    "minProperties": 1,
    "maxProperties": 2,
    "propertyNames": {"type": "string", "pattern": "^[a-z]+$(?!\\n)"},
    "additionalProperties": {"type": "integer", "minimum": 0},
}


@pytest.mark.parametrize(
    "instance",
    [{"a": 1}, {"a": 1, "b": 2}, {}, {"a": 1, "b": 2, "c": 3}, {"A": 1}, {"a": -1}, {"a": "1"}],
)
def test_property_names_and_counts_agree_with_the_reference(instance: dict[str, Any]) -> None:
    check = compile_node({"map_test": _MAP_DOCUMENT}, _MAP_DOCUMENT)
    assert check is not None
    assert check(instance) is jsonschema.Draft202012Validator(_MAP_DOCUMENT).is_valid(instance)
