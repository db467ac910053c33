"""What a CLI verb pays for at start-up (issue 8, issue 11: every verb <= 0.15 s wall).

Each test runs a verb in a fresh interpreter and asserts which costly
mechanisms it did *not* trigger: the provider entry-point scan
(``importlib.metadata``), the tagged union of every packet (``wire.load``), and
the big secret-scan alternation of :mod:`reward_memory.text` (compiled only
when the prefilter lets text through). No timing is asserted here; the times
are ``benchmarks/bench_cli.py``'s job.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reward_memory import schemas, wire
from reward_memory._activation_registry import load_activation_registry
from reward_memory.cli import main
from reward_memory.errors import RecordValidationError, RewardMemoryError
from reward_memory.experiment import load_experiment_config
from reward_memory.records.activation_registry import ActivationRegistry

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
ACTIVATION = str(EXAMPLES / "experiment" / "activation.json")

# Runs the verb in-process, then reports the mechanisms it triggered on stderr.
_PROBE = """
import contextlib, io, json, sys
from reward_memory.cli import main
with contextlib.redirect_stdout(io.StringIO()) as out:
    code = main({argv!r})
report = {{"code": code, "packet": json.loads(out.getvalue())}}
report["metadata"] = "importlib.metadata" in sys.modules
report["cattrs"] = "cattrs" in sys.modules
report["candidate_records"] = "reward_memory.records.candidate" in sys.modules
wire = sys.modules.get("reward_memory.wire")
report["union"] = wire is not None and wire._packet_union.cache_info().currsize > 0
text = sys.modules.get("reward_memory.text")
report["big_scan"] = text is not None and text._unsafe.cache_info().currsize > 0
sys.stderr.write(json.dumps(report))
"""


def _probe(argv: list[str], cwd: Path) -> dict[str, object]:
    result = subprocess.run(
        [sys.executable, "-c", _PROBE.format(argv=argv)],
        capture_output=True,
        text=True,
        check=True,
        cwd=cwd,
    )
    report: dict[str, object] = json.loads(result.stderr)
    return report


VERBS = {
    "experiment-status": [
        "experiment-status",
        "--goal-id",
        "issue-fix",
        "--agent-id",
        "agent:patcher",
        "--activation",
        ACTIVATION,
        "--format",
        "json",
    ],
    "configure": [
        "configure",
        "--goal-id",
        "issue-fix",
        "--config",
        "config.json",
        "--agent",
        "agent:patcher",
        "--activation",
        ACTIVATION,
        "--format",
        "json",
    ],
    "recall": [
        "recall",
        "--input",
        str(EXAMPLES / "recall-input.json"),
        "--provider",
        "sqlite://{db}",
        "--format",
        "json",
    ],
}


@pytest.mark.parametrize("verb", sorted(VERBS))
def test_a_verb_naming_a_built_in_provider_skips_the_scan_and_the_union(
    verb: str, tmp_path: Path
) -> None:
    """A built-in provider loads without the entry-point scan; one schema, one record."""
    argv = [arg.format(db=tmp_path / "bench.db") for arg in VERBS[verb]]
    report = _probe(argv, tmp_path)
    assert report["code"] == 0, report["packet"]
    assert report["metadata"] is False
    assert report["union"] is False
    # Their input holds no credential-like text: the prefilter answers alone.
    assert report["big_scan"] is False


@pytest.mark.parametrize("verb", ["configure", "experiment-status"])
def test_the_experiment_verbs_do_not_import_the_converter(verb: str, tmp_path: Path) -> None:
    """Files are built and packets dumped by records._plain, not by cattrs.

    A config's standing policy needs the candidate classes, not the candidate
    records (records._candidate_class).
    """
    report = _probe(VERBS[verb], tmp_path)
    assert report["code"] == 0, report["packet"]
    assert report["cattrs"] is False
    assert report["candidate_records"] is False


FILE_VERBS = {
    **VERBS,
    "health-check --input": [
        "health-check",
        "--input",
        str(EXAMPLES / "health-request.json"),
        "--format",
        "json",
    ],
    "candidate-review --input": [
        "candidate-review",
        "--input",
        str(EXAMPLES / "candidate-review-request.json"),
        "--format",
        "json",
    ],
    "ingest-event (configured)": [
        "ingest-event",
        "--input",
        str(EXAMPLES / "experiment" / "event.json"),
        "--goal-id",
        "issue-fix",
        "--agent-id",
        "agent:patcher",
        "--activation",
        ACTIVATION,
        "--authority",
        str(EXAMPLES / "experiment" / "authority.json"),
        "--format",
        "json",
    ],
    "ingest-event (full packet)": [
        "ingest-event",
        "--input",
        str(EXAMPLES / "experiment" / "ingest-fixture.json"),
        "--authority",
        str(EXAMPLES / "experiment" / "authority.json"),
        "--format",
        "json",
    ],
}

_SCHEMA_PROBE = _PROBE.replace(
    "sys.stderr.write(json.dumps(report))",
    'report["jsonschema"] = "jsonschema" in sys.modules\nsys.stderr.write(json.dumps(report))',
)


@pytest.mark.parametrize("verb", sorted(FILE_VERBS))
def test_valid_files_are_read_in_one_strict_pass_without_jsonschema_or_cattrs(
    verb: str, tmp_path: Path
) -> None:
    """Issue 11 items 2 and 4: valid input is validated once (the strict record walk,
    held to the schema by tests/test_boundary.py); jsonschema and the cattrs converter,
    a third of a verb's start-up budget, are never imported for it."""
    argv = [arg.format(db=tmp_path / "bench.db") for arg in FILE_VERBS[verb]]
    result = subprocess.run(
        [sys.executable, "-c", _SCHEMA_PROBE.format(argv=argv)],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    )
    report = json.loads(result.stderr)
    assert report["code"] == 0, report["packet"]
    assert report["jsonschema"] is False
    assert report["cattrs"] is False


def test_an_invalid_file_still_gets_the_schemas_error(tmp_path: Path) -> None:
    """The error path consults the published schema: its code and field path."""
    bad = json.loads((EXAMPLES / "recall-input.json").read_text(encoding="utf-8"))
    bad["request"]["limit"] = "3"
    target = tmp_path / "bad.json"
    target.write_text(json.dumps(bad), encoding="utf-8")
    argv = ["recall", "--input", str(target), "--provider", "memory://", "--format", "json"]
    result = subprocess.run(
        [sys.executable, "-c", _SCHEMA_PROBE.format(argv=argv)],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    )
    report = json.loads(result.stderr)
    assert report["code"] == 2
    assert report["packet"]["schema_version"] == "reward_memory_error_v0"
    assert report["packet"]["field_path"] == "$.request.limit"
    assert report["jsonschema"] is True


def test_experiment_status_still_reports_the_sqlite_provider_healthy(tmp_path: Path) -> None:
    """The fast path loads the same built-in class the entry point names."""
    report = _probe(VERBS["experiment-status"], tmp_path)
    packet = report["packet"]
    assert isinstance(packet, dict)
    assert (packet["provider_id"], packet["status"]) == ("sqlite", "available")


def test_the_fast_path_gives_way_once_the_process_has_scanned() -> None:
    """After a scan, a built-in id is looked up through it (conflicts are seen)."""
    probe = (
        "import sys\n"
        "from reward_memory.providers import discovery\n"
        "first = discovery.load_provider_class('memory')\n"
        "assert 'importlib.metadata' not in sys.modules\n"
        "assert discovery._scan.cache_info().currsize == 0\n"
        "discovery.provider_ids()\n"
        "again = discovery.load_provider_class('memory')\n"
        "assert again is first\n"
        "assert discovery._scan.cache_info().hits >= 1\n"
        "discovery.rescan()\n"
        "discovery.load_provider_class('sqlite')\n"
        "assert discovery._scan.cache_info().currsize == 1  # rescan() cleared it\n"
    )
    subprocess.run([sys.executable, "-c", probe], check=True)


def test_the_big_scan_is_compiled_when_the_prefilter_fires() -> None:
    """Lazy compilation changes when the pattern is built, never what it finds."""
    probe = (
        "from reward_memory import text\n"
        "assert text._unsafe.cache_info().currsize == 0\n"
        "assert text.find_unsafe('a plain summary of the fix') is None\n"
        "assert text._unsafe.cache_info().currsize == 0\n"
        "assert text.find_unsafe('password=hunter22') == 'credential'\n"
        "assert text.find_unsafe('see /home/alice/notes') == 'local_path'\n"
        "assert text.find_unsafe('AKIAABCDEFGHIJKLMNOP') == 'credential'\n"
        "assert text._unsafe.cache_info().currsize == 1\n"
        "assert text._UNSAFE is text._unsafe() and text._TRIGGER is text._trigger()\n"
    )
    subprocess.run([sys.executable, "-c", probe], check=True)


# -- the converter-free twin builds, refuses and dumps exactly as the converter --------


def _outcome(load: object) -> object:
    try:
        return ("ok", load())  # type: ignore[operator]
    except RewardMemoryError as exc:
        return (type(exc).__name__, exc.code, getattr(exc, "path", None), exc.message)


def _mutations(document: object, path: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    """Every key and item path of a JSON document."""
    found: list[tuple[object, ...]] = []
    items = (
        document.items()
        if isinstance(document, dict)
        else enumerate(document)
        if isinstance(document, list)
        else ()
    )
    for key, value in items:
        found.append((*path, key))
        found.extend(_mutations(value, (*path, key)))
    return found


def _mutated(document: object, path: tuple[object, ...], value: object) -> object:
    clone = copy.deepcopy(document)
    parent: object = clone
    for key in path[:-1]:
        parent = parent[key]  # type: ignore[index]
    if value is _DELETE:
        del parent[path[-1]]  # type: ignore[attr-defined]
    else:
        parent[path[-1]] = value  # type: ignore[index]
    return clone


_DELETE = object()
_VALUES = (_DELETE, None, 0, "", "Not A Token", [], {}, True, "a" * 600)


def test_a_config_file_loads_as_a_mapping_does(tmp_path: Path) -> None:
    """Same record, same error (code, path, message) for every mutated config v1."""
    base = json.loads((EXAMPLES / "experiment" / "config.json").read_text(encoding="utf-8"))
    target = tmp_path / "config.json"
    for path in _mutations(base):
        for value in _VALUES:
            document = _mutated(base, path, value)
            target.write_text(json.dumps(document), encoding="utf-8")
            from_file = _outcome(lambda: load_experiment_config(target))
            from_mapping = _outcome(lambda: load_experiment_config(copy.deepcopy(document)))  # noqa: B023
            assert from_file == from_mapping, (path, value)


def test_an_activation_file_loads_as_the_converter_builds_it(tmp_path: Path) -> None:
    """Same record, same error as schema + cattrs for every mutated activation file."""
    base = json.loads(Path(ACTIVATION).read_text(encoding="utf-8"))
    target = tmp_path / "activation.json"

    def converter() -> ActivationRegistry:
        data = json.loads(target.read_text(encoding="utf-8"))
        schemas.validate(data, "reward_memory_activation_registry_v0")
        return wire.structure(data, ActivationRegistry)

    for path in _mutations(base):
        for value in (*_VALUES, "../c.json", "c.txt", ["agent:a", "agent:a"]):
            target.write_text(json.dumps(_mutated(base, path, value)), encoding="utf-8")
            assert _outcome(lambda: load_activation_registry(target)) == _outcome(converter)


@pytest.mark.parametrize(
    "extra",
    [
        ["--goal-id", "issue-fix", "--agent-id", "agent:patcher"],
        ["--goal-id", "issue-fix", "--agent-id", "agent:stranger"],
        ["--goal-id", "unknown-goal", "--agent-id", "agent:patcher"],
    ],
)
def test_the_status_packet_is_what_the_converter_dumps(
    extra: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """experiment-status prints exactly wire.dump of its record (and it loads back)."""
    main(["experiment-status", *extra, "--activation", ACTIVATION, "--format", "json"])
    packet = json.loads(capsys.readouterr().out)
    record = wire.load(packet)
    assert wire.dump(record) == packet


def test_the_change_packet_is_what_the_converter_dumps(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """configure (preview and --execute) prints wire.dump of its record; the file too."""
    activation = tmp_path / ".reward-memory" / "activation.json"
    argv = ["configure", "--goal-id", "g", "--config", "c.json", "--agent", "agent:a"]
    for execute in ([], ["--execute"]):
        main([*argv, *execute, "--activation", str(activation), "--format", "json"])
        packet = json.loads(capsys.readouterr().out)
        assert wire.dump(wire.load(packet)) == packet
    written = json.loads(activation.read_text(encoding="utf-8"))
    assert wire.dump(wire.load(written)) == written


# -- every verb: what its valid path must not load (structural, not timing) ------------

OPERATOR = EXAMPLES / "operator"
_EVERY_PROBE = """
import contextlib, io, json, sys
from reward_memory.cli import main
with contextlib.redirect_stdout(io.StringIO()) as out:
    code = main({argv!r})
schemas = sys.modules.get("reward_memory.schemas")
text = sys.modules.get("reward_memory.text")
wire = sys.modules.get("reward_memory.wire")
sys.stderr.write(json.dumps({{
    "code": code,
    "packet": json.loads(out.getvalue()) if out.getvalue().startswith("{{") else None,
    "modules": sorted(name for name in sys.modules if name.split(".")[0] in
                      ("reward_memory", "jsonschema", "referencing", "cattrs", "importlib")),
    "compiled_schemas": schemas is not None and schemas._compiled.cache_info().currsize > 0,
    "big_scan": text is not None and text._unsafe.cache_info().currsize > 0,
    "union": wire is not None and wire._packet_union.cache_info().currsize > 0,
}}))
"""
# Loaded by no valid path: the schema library, the converter, the entry-point scan.
_NEVER = ("jsonschema", "referencing", "cattrs", "importlib.metadata")
_RECALL_FAMILY = ("reward_memory.records.recall", "reward_memory.records.active")
_STAGE4 = ("reward_memory.evaluation",)
_CANDIDATE = ("reward_memory.records.candidate",)


def _observation(tmp: Path) -> str:
    from reward_memory.records._plain import to_plain
    from reward_memory.routing import PR_3237_OBSERVATION

    target = tmp / "observation.json"
    target.write_text(json.dumps(to_plain(PR_3237_OBSERVATION)), encoding="utf-8")
    return str(target)


def _no_evaluation(tmp: Path) -> str:
    data = json.loads((EXAMPLES / "dogfood" / "dogfood-input.json").read_text(encoding="utf-8"))
    del data["evaluation"]
    target = tmp / "dogfood.json"
    target.write_text(json.dumps(data), encoding="utf-8")
    return str(target)


# verb -> (argv, record families and seams it has no business loading). {tmp} is a
# fresh directory; {observation} and {no_evaluation} files written there.
EVERY_VERB: dict[str, tuple[list[str], tuple[str, ...]]] = {
    "architecture": (["architecture"], (*_RECALL_FAMILY, *_CANDIDATE, *_STAGE4)),
    "corpus-registry": (["corpus-registry"], (*_RECALL_FAMILY, *_CANDIDATE, *_STAGE4)),
    "health-check --case": (
        ["health-check", "--case", "wrong-project"],
        (*_RECALL_FAMILY, *_CANDIDATE, *_STAGE4),
    ),
    "health-check --input": (
        ["health-check", "--input", str(EXAMPLES / "health-request.json")],
        (*_RECALL_FAMILY, *_CANDIDATE, *_STAGE4),
    ),
    "candidate-review --input": (
        ["candidate-review", "--input", str(EXAMPLES / "candidate-review-request.json")],
        (*_RECALL_FAMILY, *_STAGE4),
    ),
    "recall": (
        [
            "recall",
            "--input",
            str(EXAMPLES / "recall-input.json"),
            "--provider",
            "sqlite://{tmp}/r.db",
        ],
        (*_CANDIDATE, *_STAGE4),
    ),
    "ingest-event (configured)": (FILE_VERBS["ingest-event (configured)"][:-2], _STAGE4),
    # The full packet names no configured route: no activation registry to read.
    "ingest-event (full packet)": (
        FILE_VERBS["ingest-event (full packet)"][:-2],
        (
            *_STAGE4,
            "reward_memory._activation_registry",
            "reward_memory.records.activation_registry",
        ),
    ),
    "experiment-status": (VERBS["experiment-status"][:-2], (*_CANDIDATE, *_STAGE4)),
    "configure": (VERBS["configure"][:-2], (*_CANDIDATE, *_STAGE4)),
    "route-check --case": (
        ["route-check", "--case", "pr-3237"],
        (*_RECALL_FAMILY, *_CANDIDATE, *_STAGE4, "reward_memory.jsonio"),
    ),
    "route-check --input": (
        ["route-check", "--input", "{observation}"],
        (*_RECALL_FAMILY, *_CANDIDATE, *_STAGE4),
    ),
    "route-check (flags)": (
        ["route-check", "--named-reproduction"],
        (*_RECALL_FAMILY, *_CANDIDATE, *_STAGE4),
    ),
    # The Stage-4 suite always runs afresh (an evaluation in the file is data, not the
    # gate: it can only close it), but without the schema library or the converter.
    "dogfood-evaluate (evaluation given)": (
        ["dogfood-evaluate", "--input", str(EXAMPLES / "dogfood" / "dogfood-input.json")],
        (),
    ),
    "dogfood-evaluate (suite run afresh)": (
        ["dogfood-evaluate", "--input", "{no_evaluation}"],
        (),
    ),
    **{
        f"operator-control {action}": (
            [
                "operator-control",
                "--input",
                str(OPERATOR / f"{action}-request.json"),
                "--action",
                action,
            ],
            (*_STAGE4, "reward_memory.providers.sqlite", "reward_memory._operator_provider"),
        )
        for action in ("edit", "retire", "revoke", "purge")
    },
    "operator-control retire --execute": (
        [
            "operator-control",
            "--input",
            str(OPERATOR / "retire-request.json"),
            "--action",
            "retire",
            "--execute",
            "--provider",
            "sqlite://{tmp}/op.db",
            "--binding",
            str(OPERATOR / "binding.json"),
        ],
        _STAGE4,
    ),
    "explain": (
        ["explain", str(OPERATOR / "ingest-receipt.json")],
        (*_CANDIDATE, *_STAGE4, "reward_memory.providers.sqlite"),
    ),
    "explain --provider": (
        [
            "explain",
            str(OPERATOR / "ingest-receipt.json"),
            "--provider",
            "sqlite://{tmp}/ex.db",
            "--binding",
            str(OPERATOR / "binding.json"),
        ],
        (*_CANDIDATE, *_STAGE4),
    ),
    "evaluate": (["evaluate"], ("reward_memory.providers.sqlite",)),
    "evaluate --provider sqlite": (["evaluate", "--provider", "sqlite://{tmp}/ev.db"], ()),
    "providers": (["providers"], (*_RECALL_FAMILY, *_CANDIDATE, *_STAGE4)),
    "schema list": (["schema", "list"], (*_RECALL_FAMILY, *_CANDIDATE, *_STAGE4)),
    "schema show": (
        ["schema", "show", "reward_memory_recall_v0"],
        (*_RECALL_FAMILY, *_CANDIDATE, *_STAGE4),
    ),
}


@pytest.mark.parametrize("verb", sorted(EVERY_VERB))
def test_every_verb_s_valid_path_leaves_the_heavy_machinery_unloaded(
    verb: str, tmp_path: Path
) -> None:
    """Issue 11 item 4 (every verb <= 0.15 s): on a valid input no verb imports the
    JSON Schema library, the cattrs converter or the entry-point scan, compiles a
    schema check, builds the packet union or compiles the big secret scan, and none
    loads the record families or seams it does not use."""
    argv, unrelated = EVERY_VERB[verb]
    argv = [
        arg.format(
            tmp=tmp_path,
            observation=_observation(tmp_path) if "{observation}" in arg else "",
            no_evaluation=_no_evaluation(tmp_path) if "{no_evaluation}" in arg else "",
        )
        for arg in argv
    ]
    result = subprocess.run(
        [sys.executable, "-c", _EVERY_PROBE.format(argv=[*argv, "--format", "json"])],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    )
    report = json.loads(result.stderr)
    packet = report["packet"]
    assert packet is not None
    assert packet.get("schema_version") != "reward_memory_error_v0", packet
    loaded = set(report["modules"])
    # Listing the installed providers is the entry-point scan; nothing else scans.
    never = set(_NEVER) - ({"importlib.metadata"} if verb == "providers" else set())
    assert loaded.isdisjoint(never), sorted(loaded & never)
    assert not any(
        name == family or name.startswith(family + ".") for name in loaded for family in unrelated
    ), sorted(name for name in loaded for family in unrelated if name.startswith(family))
    assert report["compiled_schemas"] is False
    assert report["union"] is False
    assert report["big_scan"] is False


def test_the_table_covers_every_verb() -> None:
    """A new verb gets a row above (and one in benchmarks/bench_cli.py)."""
    from reward_memory.cli import VERBS as TABLE

    covered = {row.split(" ")[0] for row in EVERY_VERB}
    assert covered == set(TABLE)


def test_the_stage5_seams_are_public_and_lazy() -> None:
    """``explain`` and ``operator_control`` are on the package surface, and importing
    the package loads neither seam until a name is used."""
    probe = (
        "import sys, reward_memory\n"
        "assert 'reward_memory.lineage' not in sys.modules\n"
        "assert 'reward_memory.operator' not in sys.modules\n"
        "from reward_memory.lineage import explain\n"
        "from reward_memory.operator import operator_control\n"
        "assert reward_memory.explain is explain\n"
        "assert reward_memory.operator_control is operator_control\n"
        "assert {'explain', 'operator_control'} <= set(reward_memory.__all__)\n"
    )
    subprocess.run([sys.executable, "-c", probe], check=True)


# -- the error path: a file of another kind is named without jsonschema ---------------


@pytest.mark.parametrize(
    ("verb", "schema"),
    [
        ("health-check", "reward_memory_corpus_health_request_v0"),
        ("candidate-review", "reward_memory_candidate_review_request_v0"),
    ],
)
def test_a_file_of_another_kind_is_refused_without_jsonschema(
    verb: str, schema: str, tmp_path: Path
) -> None:
    """DESIGN.md §8 (wrong schema_version: an error packet naming the problem, exit 2),
    at issue 11's start-up cost: the schema's answer for another packet's kind is fixed
    (schemas._check_version), so jsonschema (~40 ms) is not imported to give it."""
    target = tmp_path / "wrong-kind.json"
    target.write_text(json.dumps({"schema_version": "reward_memory_corpus_registry_v0"}))
    argv = [verb, "--input", str(target)]
    result = subprocess.run(
        [sys.executable, "-c", _SCHEMA_PROBE.format(argv=argv)],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    )
    report = json.loads(result.stderr)
    assert report["code"] == 2
    assert report["packet"]["error_code"] == "schema_version_unsupported"
    assert report["packet"]["field_path"] == "$.schema_version"
    assert report["packet"]["message"] == f"must be one of: {json.dumps(schema)}"
    assert report["jsonschema"] is False


def _reference_error(instance: object, name: str) -> tuple[str, str | None, str] | None:
    """What the jsonschema path alone names (schemas.reference_check without the shortcut)."""
    import itertools

    errors = itertools.islice(
        schemas.validator_for(name).iter_errors(instance), schemas._MAX_ERRORS
    )
    error = next(iter(sorted(errors, key=schemas._error_order)), None)
    if error is None:
        return None
    translated = schemas._translate(error)
    return translated.code, translated.path, translated.message


_VERSIONS = st.one_of(
    st.sampled_from([*schemas.schema_names(), "common", ""]),
    st.text(max_size=12),
    st.integers(-3, 3),
    st.none(),
    st.booleans(),
    st.lists(st.integers(0, 2), max_size=2),
)
_OTHER = st.dictionaries(
    st.sampled_from(["ok", "status", "x", "request", "corpus", "record", "zz"]),
    st.one_of(st.none(), st.integers(0, 3), st.text(max_size=4), st.just({})),
    max_size=3,
)


@settings(max_examples=300, deadline=None)
@given(name=st.sampled_from(schemas.schema_names()), version=_VERSIONS, other=_OTHER)
def test_the_kind_shortcut_names_the_error_jsonschema_names(
    name: str, version: object, other: dict[str, object]
) -> None:
    """Issue 11 item 2 (bad input still gets the same typed errors with field paths):
    wherever the shortcut answers, its code, path and message are the reference
    path's; where the version is right it leaves the answer to jsonschema."""
    instance = {**other, "schema_version": version}
    decided = version != name and schemas._version_const(name) is not schemas._NO_CONST
    if not decided:
        schemas._check_version(instance, name)  # left to the reference path
        return
    with pytest.raises(RecordValidationError) as raised:
        schemas._check_version(instance, name)
    found = (raised.value.code, raised.value.path, raised.value.message)
    assert found == _reference_error(instance, name)


def test_the_shortcut_covers_every_bundled_packet_schema() -> None:
    """Every published packet schema but two has the shape the shortcut may decide (their
    ``ok`` is a $ref); another shape is only slower (the reference path), never wrong."""
    left = {name for name in schemas.schema_names() if schemas._version_const(name) != name}
    assert left == {"reward_memory_activation_change_v0", "reward_memory_experiment_status_v1"}
    assert all(schemas._version_const(name) is schemas._NO_CONST for name in left)


def test_an_unlisted_shape_takes_the_reference_path() -> None:
    """A schema whose schema_version says more than const is left to jsonschema."""
    assert schemas._plain("object")
    assert schemas._plain(False)
    assert schemas._plain(["a"])
    assert not schemas._plain({"type": "string"})
    assert schemas._scalar({"type": "boolean", "const": True})
    assert not schemas._scalar({"type": "object"})
    assert not schemas._scalar({"$ref": "common.schema.json#/$defs/Ref"})


def test_the_cli_names_the_registry_s_default_activation_path() -> None:
    """The verbs' --activation default is the library's (kept in cli._common so that
    parsing options does not import the activation registry)."""
    from reward_memory._activation_registry import DEFAULT_ACTIVATION_PATH
    from reward_memory.cli import _common

    assert _common.DEFAULT_ACTIVATION_PATH == DEFAULT_ACTIVATION_PATH
