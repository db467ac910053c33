"""The one-pass JSON boundary (issue 11 item 2): same verdicts and errors as schema + record.

Contract: "validate JSON input once, at the boundary ... Whatever you choose, the
JSON Schemas stay the published contract and bad input still gets the same typed
errors with field paths." :func:`reward_memory._boundary.strict_record` builds the
record without ``jsonschema`` and consults the schema only to name an error; here
every key and item of every example input is deleted or replaced by values of the
wrong type, and the verdict, the record and the error (code and path) are held to
the two-pass reference: the published schema first, then the record.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from reward_memory import schemas
from reward_memory._boundary import strict_packet, strict_record
from reward_memory.adapters.issue_fix import IssueFixEvent
from reward_memory.errors import InputError, RecordValidationError
from reward_memory.jsonio import check_data
from reward_memory.records._plain import from_plain
from reward_memory.records.activation_registry import ActivationRegistry
from reward_memory.records.authority import AuthorityMapFile
from reward_memory.records.corpus import CorpusDeclaration
from reward_memory.records.dogfood import DogfoodInput
from reward_memory.records.experiment import ExperimentConfig
from reward_memory.records.health import HealthRequest
from reward_memory.records.ingest import IngestReceipt
from reward_memory.records.operator import OperatorControlRequest
from reward_memory.records.recall import ProviderBinding, RecallInput
from reward_memory.records.review import CandidateReviewRequest
from reward_memory.records.standing_policy import StandingPolicy

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
_DELETE = object()
_VALUES: tuple[Any, ...] = (
    _DELETE,
    None,
    0,
    1.5,
    -1,
    "",
    "Not A Token",
    [],
    {},
    True,
    False,
    "a" * 600,
    ["x"],
    ["x", "x"],
    [{}],
    121,
    10**6,
    "2026-13-45T99:00:00Z",
    "2026-03-01T12:00:00+01:00",
    "../escape.json",
    "workspace:other",
    "password=hunter22",
    "/home/alice/notes",
)


def _example(name: str) -> Any:
    return json.loads((EXAMPLES / name).read_text(encoding="utf-8"))


def _fixture_part(key: str) -> Any:
    return _example("experiment/ingest-fixture.json")[key]


# (record class, schema, definition, base document)
CASES: dict[str, tuple[type[Any], str, str | None, Any]] = {
    "recall input": (
        RecallInput,
        "reward_memory_recall_input_v0",
        None,
        _example("recall-input.json"),
    ),
    "health request": (
        HealthRequest,
        "reward_memory_corpus_health_request_v0",
        None,
        _example("health-request.json"),
    ),
    "candidate review": (
        CandidateReviewRequest,
        "reward_memory_candidate_review_request_v0",
        None,
        _example("candidate-review-request.json"),
    ),
    "authority map": (
        AuthorityMapFile,
        "reward_memory_authority_map_v0",
        None,
        _example("experiment/authority.json"),
    ),
    "activation registry": (
        ActivationRegistry,
        "reward_memory_activation_registry_v0",
        None,
        _example("experiment/activation.json"),
    ),
    "config v1": (
        ExperimentConfig,
        "reward_memory_experiment_config_v1",
        None,
        _example("experiment/config.json"),
    ),
    "issue fix event": (
        IssueFixEvent,
        "issue_fix_reward_memory_event_v0",
        None,
        _example("experiment/event.json"),
    ),
    "fixture standing policy": (
        StandingPolicy,
        "reward_memory_standing_policy_v0",
        None,
        _fixture_part("standing_policy"),
    ),
    "fixture corpus": (
        CorpusDeclaration,
        "reward_memory_corpus_registry_v0",
        "CorpusDeclaration",
        _fixture_part("corpus"),
    ),
    "fixture binding": (
        ProviderBinding,
        "reward_memory_recall_input_v0",
        "ProviderBinding",
        _fixture_part("provider_binding"),
    ),
    # The Stage-5 verbs read these in one strict pass too (operator-control, explain,
    # dogfood-evaluate).
    **{
        f"operator {action} request": (
            OperatorControlRequest,
            "reward_memory_operator_control_request_v0",
            None,
            _example(f"operator/{action}-request.json"),
        )
        for action in ("edit", "retire", "revoke", "purge")
    },
    "operator binding": (
        ProviderBinding,
        "reward_memory_recall_input_v0",
        "ProviderBinding",
        _example("operator/binding.json"),
    ),
    "ingest receipt (explain)": (
        IngestReceipt,
        "reward_memory_ingest_receipt_v0",
        None,
        _example("operator/ingest-receipt.json"),
    ),
    "dogfood input": (
        DogfoodInput,
        "reward_memory_dogfood_input_v1",
        None,
        _example("dogfood/dogfood-input.json"),
    ),
}


def _paths(document: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found: list[tuple[Any, ...]] = []
    if isinstance(document, dict):
        items: Any = document.items()
    elif isinstance(document, list):
        items = enumerate(document)
    else:
        return found
    for key, value in items:
        found.append((*path, key))
        found.extend(_paths(value, (*path, key)))
    return found


def _mutated(document: Any, path: tuple[Any, ...], value: Any) -> Any:
    clone = copy.deepcopy(document)
    parent = clone
    for key in path[:-1]:
        parent = parent[key]
    if value is _DELETE:
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return clone


def _reference(cls: type[Any], data: Any, schema: str, definition: str | None) -> Any:
    """The two-pass boundary this module replaces: the published schema, then the record."""
    if definition is None:
        schemas.validate(data, schema)
    else:
        schemas.validate_definition(data, schema, definition)
    return from_plain(cls, data)


def _outcome(load: Any) -> Any:
    try:
        return ("ok", load())
    except RecordValidationError as exc:
        return ("error", exc.code, exc.path)


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_mutation_gets_the_verdict_and_error_of_schema_then_record(case: str) -> None:
    """Refused exactly when schema + record refuse, with the same code and path."""
    cls, schema, definition, base = CASES[case]
    assert _outcome(lambda: strict_record(cls, base, schema, definition=definition))[0] == "ok"
    checked = 0
    for path in _paths(base):
        for value in _VALUES:
            data = _mutated(base, path, value)
            ours = _outcome(lambda: strict_record(cls, data, schema, definition=definition))  # noqa: B023
            reference = _outcome(lambda: _reference(cls, data, schema, definition))  # noqa: B023
            assert ours == reference, (case, path, value)
            checked += 1
    assert checked > 20


@settings(max_examples=150, deadline=None)
@given(
    case=st.sampled_from(sorted(CASES)),
    pick=st.integers(min_value=0),
    value=st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
        max_leaves=6,
    ),
)
def test_any_json_value_anywhere_gets_the_reference_verdict(
    case: str, pick: int, value: Any
) -> None:
    """Hypothesis: one arbitrary JSON value at one arbitrary place; same outcome."""
    cls, schema, definition, base = CASES[case]
    paths = _paths(base)
    data = _mutated(base, paths[pick % len(paths)], value)
    # strict_record takes parsed JSON (jsonio's bounds already met, as the CLI's reader
    # guarantees); data past them is jsonio's to refuse, tested there.
    try:
        check_data(data)
    except InputError:
        assume(False)
    ours = _outcome(lambda: strict_record(cls, data, schema, definition=definition))
    assert ours == _outcome(lambda: _reference(cls, data, schema, definition))


def test_a_packet_without_schema_version_says_so() -> None:
    """strict_packet keeps load_plain's first check (schema_version_missing)."""
    data = _example("health-request.json")
    del data["schema_version"]
    with pytest.raises(RecordValidationError) as caught:
        strict_packet(data, HealthRequest)
    assert (caught.value.code, caught.value.path) == ("schema_version_missing", "$.schema_version")
    with pytest.raises(RecordValidationError) as caught:
        strict_packet([], HealthRequest)
    assert caught.value.code == "wrong_type"


def test_valid_input_never_imports_jsonschema() -> None:
    """The point of the one pass: a valid file is built without the schema library."""
    probe = (
        "import json, sys\n"
        "from reward_memory._boundary import strict_record\n"
        "from reward_memory.records.recall import RecallInput\n"
        f"data = json.loads(open({str(EXAMPLES / 'recall-input.json')!r}).read())\n"
        "strict_record(RecallInput, data, 'reward_memory_recall_input_v0')\n"
        "assert 'jsonschema' not in sys.modules, 'jsonschema imported'\n"
        "data['limit'] = '3'\n"
        "try:\n"
        "    strict_record(RecallInput, data, 'reward_memory_recall_input_v0')\n"
        "except Exception:\n"
        "    pass\n"
        "assert 'jsonschema' in sys.modules, 'the error path names the schema error'\n"
    )
    subprocess.run([sys.executable, "-c", probe], check=True)


def test_the_schema_documents_are_read_where_the_schema_module_reads_them() -> None:
    """The required-keys walk reads the very files the published validator reads."""
    from reward_memory._boundary import _schema_dir

    assert Path(str(_schema_dir())).resolve() == Path(str(schemas.schema_dir())).resolve()


def test_a_record_that_breaks_on_odd_input_is_a_typed_refusal_never_a_crash(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Bad input gets a RecordValidationError, whatever a record's own rule raises on it:
    the schema's error when the schema refuses, else wrong_type at the root."""
    import reward_memory._boundary as boundary

    def breaks(cls: Any, data: Any) -> Any:
        raise ValueError("a cross-field rule met a value of the wrong type")

    monkeypatch.setattr(boundary, "from_plain", breaks)
    data = _example("health-request.json")
    with pytest.raises(RecordValidationError) as caught:
        strict_packet(data, HealthRequest)
    assert (caught.value.code, caught.value.path) == ("wrong_type", "$")
    data["observation"]["record_count"] = "one"
    with pytest.raises(RecordValidationError) as caught:
        strict_packet(data, HealthRequest)
    assert caught.value.path == "$.observation.record_count"
