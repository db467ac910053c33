"""The malformed-input suite: every file-reading verb, dozens of bad inputs, one answer.

Contract (DESIGN.md §8): "Bad input of any kind (missing file, invalid JSON, wrong
schema_version, unknown field, unsafe text) prints an error packet naming the
problem and exits 2 — never a traceback." Issue item 10: JSON nested past the
documented depth, files over the documented size, endless streams and duplicate
object keys each give an error packet and exit 2 from every file-reading verb;
exit 1 stays for genuine internal errors, and no input may reach it.

Each case runs through the real CLI entry (``reward_memory.cli.main``) and must
exit 2 with a schema-valid ``reward_memory_error_v0`` packet on stdout whose
``error_code`` and ``field_path`` name the problem, and nothing on stderr. The
stream cases (``/dev/zero``, FIFOs, an endless stdin) also run as real processes.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reward_memory import jsonio, schemas
from reward_memory.cli import main

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
SCRIPT = Path(sys.executable).with_name("reward-memory")

# verb -> (argv before the file, the option the error names, the example it mutates)
VERBS: dict[str, tuple[tuple[str, ...], str, str]] = {
    "health-check": (("health-check", "--input"), "--input", "health-request.json"),
    "candidate-review": (
        ("candidate-review", "--input"),
        "--input",
        "candidate-review-request.json",
    ),
    "recall": (("recall", "--input"), "--input", "recall-input.json"),
    "schema-validate": (("schema", "validate"), "FILE", "health-request.json"),
    # The full-packet (dry-run evaluation) form of ingest-event.
    "ingest-event": (("ingest-event", "--input"), "--input", "experiment/ingest-fixture.json"),
}
WHOLE = "<option>"  # stands for the verb's option: the error is about the whole document


@attrs.frozen
class Case:
    id: str
    content: bytes | None  # None: the file is not created
    code: str
    path: str


def example(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((EXAMPLES / name).read_text(encoding="utf-8"))
    return data


_DELETE = object()  # a row's value: delete the member instead of replacing it
_STEP = re.compile(r"\.?([A-Za-z_]+)|\[(\d+)\]")


def _steps(dotted: str) -> list[str | int]:
    """``"a.b[0].c"`` -> ``["a", "b", 0, "c"]``."""
    return [name or int(index) for name, index in _STEP.findall(dotted)]


def _set(doc: dict[str, Any], dotted: str, value: Any) -> dict[str, Any]:
    changed = copy.deepcopy(doc)
    *parents, last = _steps(dotted)
    target: Any = changed
    for key in parents:
        target = target[key]
    if value is _DELETE:
        del target[last]
    else:
        target[last] = value
    return changed


# A row: (id, member, value, code) or (id, member, value, code, path named instead).
Row = tuple[Any, ...]


def _mutations(base: dict[str, Any], rows: list[Row]) -> list[Case]:
    """The example with one member replaced (or deleted); the error names that member,
    or the given path where the record names the field it checks against."""
    cases = []
    for name, member, value, code, *path in rows:
        content = json.dumps(_set(base, member, value)).encode()
        cases.append(Case(name, content, code, path[0] if path else f"$.{member}"))
    return cases


def _raw(name: str, base: dict[str, Any], old: str, new: str, code: str, path: str) -> Case:
    """The example's JSON text with one literal rewritten (what json.dumps cannot write)."""
    text = json.dumps(base)
    assert old in text, old
    return Case(name, text.replace(old, new, 1).encode(), code, path)


# --- bad documents every verb must refuse the same way ------------------------------


def _deep(opener: str, closer: str, depth: int, inner: str = "1") -> bytes:
    return (opener * depth + inner + closer * depth).encode()


def generic_cases() -> list[Case]:
    big = jsonio.MAX_INPUT_BYTES
    too_deep = jsonio.MAX_JSON_DEPTH + 1
    return [
        # missing / empty
        Case("missing-file", None, "file_not_found", WHOLE),
        Case("empty", b"", "empty_input", WHOLE),
        Case("whitespace-only", b" \n\t\r\n ", "empty_input", WHOLE),
        Case("bom-only", b"\xef\xbb\xbf", "empty_input", WHOLE),
        # not JSON
        Case("truncated", b'{"schema_version": "reward_memory_', "invalid_json", WHOLE),
        Case("unclosed-object", b"{", "invalid_json", WHOLE),
        Case("trailing-comma", b'{"a": 1,}', "invalid_json", WHOLE),
        Case("single-quotes", b"{'a': 1}", "invalid_json", WHOLE),
        Case("two-documents", b'{"a": 1} {"b": 2}', "invalid_json", WHOLE),
        Case("comment", b"// note\n{}", "invalid_json", WHOLE),
        Case("undefined", b'{"a": undefined}', "invalid_json", WHOLE),
        Case("hex-number", b'{"a": 0x10}', "invalid_json", WHOLE),
        Case("leading-zero", b'{"a": 01}', "invalid_json", WHOLE),
        Case("raw-control-in-string", b'{"a": "x\x01y"}', "invalid_json", WHOLE),
        Case("bad-escape", b'{"a": "\\x41"}', "invalid_json", WHOLE),
        Case("double-bom", b"\xef\xbb\xbf\xef\xbb\xbf{}", "invalid_json", WHOLE),
        Case("nan", b'{"a": NaN}', "invalid_json", WHOLE),
        Case("infinity", b'{"a": Infinity}', "invalid_json", WHOLE),
        Case("minus-infinity", b"[-Infinity]", "invalid_json", WHOLE),
        # not UTF-8
        Case("latin-1", b'{"a": "caf\xe9"}', "not_utf8", WHOLE),
        Case("stray-byte", b"\xff{}", "not_utf8", WHOLE),
        Case("overlong-utf8", b'{"a": "\xc0\xaf"}', "not_utf8", WHOLE),
        Case("encoded-surrogate", b'{"a": "\xed\xa0\x80"}', "not_utf8", WHOLE),
        Case("truncated-utf8", b'{"a": "\xe2\x82"}', "not_utf8", WHOLE),
        Case("utf16", "{}".encode("utf-16"), "not_utf8", WHOLE),
        # too deep (refused before the parser recurses)
        Case("deep-arrays", _deep("[", "]", too_deep), "input_too_deep", WHOLE),
        Case("deep-objects", _deep('{"a": ', "}", too_deep), "input_too_deep", WHOLE),
        Case("deep-100000", _deep("[", "]", 100_000), "input_too_deep", WHOLE),
        Case("deep-objects-100000", _deep('{"a":', "}", 100_000), "input_too_deep", WHOLE),
        Case("deep-unclosed", b"[" * 100_000, "input_too_deep", WHOLE),
        Case(
            "deep-inside-field",
            b'{"schema_version": ' + _deep("[", "]", too_deep) + b"}",
            "input_too_deep",
            WHOLE,
        ),
        # too large (at most limit + 1 bytes are read)
        Case("over-size", b'{"a": "' + b"x" * big + b'"}', "input_too_large", WHOLE),
        Case("one-byte-over", b"{}" + b" " * (big - 1), "input_too_large", WHOLE),
        # members the parser refuses, named by their path
        Case(
            "duplicate-top-key",
            b'{"schema_version": "a", "schema_version": "b"}',
            "duplicate_key",
            "$.schema_version",
        ),
        Case(
            "duplicate-nested-key",
            b'{"x": [{"k": 1}, {"k": 1, "k": 2}]}',
            "duplicate_key",
            "$.x[1].k",
        ),
        Case("huge-integer", b'{"n": 1' + b"0" * 30 + b"}", "number_out_of_range", "$.n"),
        Case("integer-5000-digits", b'{"n": ' + b"9" * 5000 + b"}", "number_out_of_range", "$.n"),
        Case("float-overflow", b'{"n": [1e400]}', "number_out_of_range", "$.n[0]"),
        Case("lone-surrogate", b'{"s": "\\ud800"}', "unpaired_surrogate", "$.s"),
        Case("lone-low-surrogate", b'{"s": ["ok", "\\udfff x"]}', "unpaired_surrogate", "$.s[1]"),
        # not an object where a packet is needed
        Case("top-array", b"[]", "wrong_type", "$"),
        Case("top-string", b'"reward_memory_recall_input_v0"', "wrong_type", "$"),
        Case("top-number", b"42", "wrong_type", "$"),
        Case("top-null", b"null", "wrong_type", "$"),
        Case("top-true", b"true", "wrong_type", "$"),
    ]


# --- bad packets: the verb's own example, mutated ------------------------------------

UNSAFE_CREDENTIAL = "use password=hunter2 here"
UNSAFE_PATH = "see /home/alice/x for details"
GITHUB_TOKEN = "token ghp_abcdefghijklmnopqrstuvwxyz0123456789"
UNSUPPORTED = "schema_version_unsupported"

SCHEMA_VERSION_ROWS: list[Row] = [
    ("no-schema-version", "schema_version", _DELETE, "schema_version_missing"),
    ("other-schema-version", "schema_version", "reward_memory_error_v0", UNSUPPORTED),
    ("unknown-schema-version", "schema_version", "reward_memory_nope_v9", UNSUPPORTED),
    ("numeric-schema-version", "schema_version", 0, UNSUPPORTED),
    ("unknown-top-field", "raw_comment", "x", "unknown_field"),
]


def health_cases() -> list[Case]:
    base = example("health-request.json")
    rows: list[Row] = [
        *SCHEMA_VERSION_ROWS,
        ("unknown-nested-field", "corpus.scope.tenant_ref", "t", "unknown_field"),
        ("missing-observation", "observation", _DELETE, "missing_field"),
        ("missing-nested", "corpus.privacy.visibility", _DELETE, "missing_field"),
        ("corpus-is-string", "corpus", "distilled_experiences", "wrong_type"),
        ("count-is-string", "observation.record_count", "1", "wrong_type"),
        ("surfaces-is-string", "corpus.scope.surface_ids", "issue_fix.routing", "wrong_type"),
        ("surface-is-number", "corpus.scope.surface_ids[0]", 7, "wrong_type"),
        ("bool-as-string", "observation.provider_available", "true", "wrong_type"),
        ("bool-as-number", "corpus.retrieval.index_required", 1, "wrong_type"),
        ("count-negative", "observation.record_count", -1, "invalid_value"),
        ("count-fraction", "observation.record_count", 1.5, "wrong_type"),
        ("count-beyond-2-53", "observation.record_count", 2**53, "number_out_of_range"),
        ("unknown-enum", "corpus.class_id", "gossip", "invalid_value"),
        ("token-credential", "corpus.owner_ref", "password=hunter2", "invalid_format"),
        ("token-local-path", "corpus.owner_ref", "/home/alice/x", "invalid_format"),
        ("token-over-long", "corpus.owner_ref", "a" * 201, "invalid_format"),
        ("reason-credential", "corpus.lifecycle.retirement_reason", UNSAFE_CREDENTIAL,
         "invalid_format"),
        # A later stage claimed without the one before it; the error names the claim.
        ("contradictory", "observation.retrieval_query_succeeded", False,
         "contradictory_observation", "$.observation.result_readback_verified"),
    ]  # fmt: skip
    return [
        *_mutations(base, rows),
        _raw("age-overflow", base, '"max_age_seconds": null', '"max_age_seconds": 1e999',
             "number_out_of_range", "$.corpus.freshness.max_age_seconds"),
        _raw("duplicate-corpus-id", base, '"corpus_id": "distilled_experiences"',
             '"corpus_id": "distilled_experiences", "corpus_id": "x"', "duplicate_key",
             "$.corpus.corpus_id"),
    ]  # fmt: skip


def candidate_review_cases() -> list[Case]:
    base = example("candidate-review-request.json")
    summary = "proposal.content_summary"
    rows: list[Row] = [
        *SCHEMA_VERSION_ROWS,
        # A nested packet's tag is one more constant of the outer schema.
        ("nested-schema-version", "proposal.schema_version", "reward_memory_candidate_v0",
         "invalid_value"),
        ("unknown-nested-field", "proposal.source.email", "a", "unknown_field"),
        ("unknown-review-field", "reviews[0].score", 1, "unknown_field"),
        ("missing-proposal", "proposal", _DELETE, "missing_field"),
        ("missing-nested", "proposal.reasoning.confidence", _DELETE, "missing_field"),
        ("proposal-is-list", "proposal", [], "wrong_type"),
        ("reviews-is-object", "reviews", {}, "wrong_type"),
        ("scopes-item-number", "proposal.requested_action_scopes[0]", 3, "wrong_type"),
        ("bool-as-string", "authority_checkpoint.verified", "true", "wrong_type"),
        ("raw-content-captured", "proposal.raw_content_captured", True, "invalid_value"),
        ("summary-credential", summary, UNSAFE_CREDENTIAL, "unsafe_text"),
        ("summary-local-path", summary, UNSAFE_PATH, "unsafe_text"),
        ("summary-github-token", summary, GITHUB_TOKEN, "unsafe_text"),
        ("review-credential", "reviews[0].reasoning_summary", "api_key=abc123def456",
         "unsafe_text"),
        ("summary-over-long", summary, "x" * 5000, "text_too_long"),
        ("now-words", "now", "yesterday", "invalid_format"),
        ("now-no-offset", "now", "2026-11-01T12:00:00", "invalid_format"),
        ("now-month-13", "now", "2026-13-01T12:00:00Z", "invalid_format"),
        ("now-feb-30", "now", "2026-02-30T12:00:00Z", "invalid_format"),
        # `now` is a timestamp or null: the schema reports the failed alternative.
        ("now-number", "now", 1764590400, "invalid_value"),
        ("unknown-decision", "reviews[0].decision", "maybe", "invalid_value"),
        ("no-reviews", "reviews", [], "invalid_value"),
        ("unknown-confidence", "proposal.reasoning.confidence", "certain", "invalid_value"),
    ]  # fmt: skip
    return [
        *_mutations(base, rows),
        _raw("duplicate-decision", base, '"decision": "accept"',
             '"decision": "accept", "decision": "reject"', "duplicate_key",
             "$.reviews[0].decision"),
    ]  # fmt: skip


def recall_cases() -> list[Case]:
    base = example("recall-input.json")
    query = "request.queries[0].query"
    rows: list[Row] = [
        *SCHEMA_VERSION_ROWS,
        ("unknown-nested-field", "request.freshness_context.hint", 1, "unknown_field"),
        ("missing-binding", "provider_binding", _DELETE, "missing_field"),
        ("missing-nested", "request.surface_id", _DELETE, "missing_field"),
        ("request-is-string", "request", "recall", "wrong_type"),
        ("queries-is-object", "request.queries", {}, "wrong_type"),
        ("query-is-number", query, 5, "wrong_type"),
        ("limit-as-string", "request.limit", "5", "wrong_type"),
        ("limit-zero", "request.limit", 0, "invalid_value"),
        ("limit-huge", "request.limit", 10**6, "invalid_value"),
        ("timeout-negative", "provider_binding.timeout_seconds", -1, "invalid_value"),
        ("bool-as-string", "read_authority_checkpoint.verified", "true", "wrong_type"),
        ("raw-content-captured", "request.raw_content_captured", True, "invalid_value"),
        ("query-credential", query, "password=hunter2", "unsafe_text"),
        ("query-local-path", query, "/home/alice/x", "unsafe_text"),
        ("query-over-long", "request.queries[0].query_summary", "x" * 5000, "text_too_long"),
        ("scope-ref-local-path", "provider_binding.scope_ref", "/home/alice/x", "invalid_format"),
        ("observed-at-words", "request.observed_at", "noon", "invalid_format"),
        ("observed-at-no-offset", "request.observed_at", "2026-03-01T11:59:00", "invalid_format"),
        ("digest-not-hex", "corpus.provider_scope_ref_digest", "zz", "invalid_format"),
        ("age-beyond-2-53", "request.freshness_context.age_seconds", -(2**60),
         "number_out_of_range"),
    ]  # fmt: skip
    return [
        *_mutations(base, rows),
        _raw("duplicate-surface", base, '"surface_id": "reviewer_artifact.summary"',
             '"surface_id": "x.y", "surface_id": "x.z"', "duplicate_key",
             "$.request.surface_id"),
    ]  # fmt: skip


def schema_validate_cases() -> list[Case]:
    # `schema validate` takes any packet: the three example inputs, each mutated.
    # A packet relabelled as another is checked against that other schema.
    base = example("health-request.json")
    (relabelled,) = _mutations(
        base,
        [("other-schema-version", "schema_version", "reward_memory_error_v0", "unknown_field",
          "$.corpus")],
    )  # fmt: skip
    picked = {relabelled.id: relabelled}
    for case in [*health_cases(), *candidate_review_cases(), *recall_cases()]:
        picked.setdefault(case.id, case)
    return list(picked.values())


def ingest_event_cases() -> list[Case]:
    # An unmodelled or unsafe *event* is a guard_blocked receipt (exit 0, by the
    # seeds); the corpus, standing policy, binding and the document itself are
    # programmer input and must be refused with exit 2.
    base = example("experiment/ingest-fixture.json")
    rows: list[Row] = [
        ("unknown-top-level-field", "extra", 1, "unknown_field"),
        ("missing-corpus", "corpus", _DELETE, "missing_field"),
        ("missing-policy", "standing_policy", _DELETE, "missing_field"),
        ("missing-binding", "provider_binding", _DELETE, "missing_field"),
        ("unknown-adapter", "adapter", "semantic_router", "invalid_value"),
        ("corpus-is-list", "corpus", [], "wrong_type"),
        ("binding-is-string", "provider_binding", "sqlite://", "wrong_type"),
        ("corpus-owner-number", "corpus.owner_ref", 12345, "wrong_type"),
        ("corpus-unknown-field", "corpus.notes", "x", "unknown_field"),
        ("corpus-bad-class", "corpus.class_id", "everything", "invalid_value"),
        # Identifiers refuse "=" and a leading "/" by grammar, before any scan.
        ("corpus-owner-credential", "corpus.owner_ref", "password=hunter2", "invalid_format"),
        ("corpus-owner-local-path", "corpus.owner_ref", "/home/alice/x", "invalid_format"),
        ("binding-namespace-number", "provider_binding.namespace", 777, "wrong_type"),
        ("binding-timeout-string", "provider_binding.timeout_seconds", "5", "wrong_type"),
        ("binding-timeout-huge", "provider_binding.timeout_seconds", 10**6, "invalid_value"),
        ("binding-unknown-field", "provider_binding.retries", 3, "unknown_field"),
        ("policy-unknown-field", "standing_policy.notes", "x", "unknown_field"),
        ("policy-enabled-string", "standing_policy.enabled", "true", "wrong_type"),
        ("policy-raw-content", "standing_policy.raw_content_captured", True, "invalid_value"),
        ("policy-write-scope", "standing_policy.allowed_action_scopes", ["repository:write"],
         "authority_expansion_forbidden", "$.standing_policy.allowed_action_scopes[0]"),
        ("policy-schema-version", "standing_policy.schema_version",
         "reward_memory_standing_policy_v9", "schema_version_unsupported"),
        ("policy-missing-scope", "standing_policy.scope", _DELETE, "missing_field"),
        ("observed-at-words", "observed_at", "noon", "invalid_format"),
    ]  # fmt: skip
    return _mutations(base, rows)


PACKET_CASES: dict[str, Callable[[], list[Case]]] = {
    "ingest-event": ingest_event_cases,
    "health-check": health_cases,
    "candidate-review": candidate_review_cases,
    "recall": recall_cases,
    "schema-validate": schema_validate_cases,
}


def cases_for(verb: str) -> list[Case]:
    return [*generic_cases(), *PACKET_CASES[verb]()]


ALL = [(verb, case) for verb in VERBS for case in cases_for(verb)]


# --- the runner ----------------------------------------------------------------------


def assert_error_packet(out: str, err: str, code: str, path: str) -> dict[str, Any]:
    assert "Traceback" not in err
    assert err == ""
    packet: dict[str, Any] = json.loads(out)
    assert schemas.validate(packet) == "reward_memory_error_v0"
    assert packet["ok"] is False
    assert packet["error_code"] == code, packet
    assert packet["field_path"] == path, packet
    return packet


@pytest.mark.parametrize(("verb", "case"), ALL, ids=[f"{verb}:{case.id}" for verb, case in ALL])
def test_bad_input_exits_2_with_a_packet_naming_the_problem(
    verb: str, case: Case, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv, option, _ = VERBS[verb]
    target = tmp_path / "input.json"
    if case.content is not None:
        target.write_bytes(case.content)
    exit_code = main([*argv, str(target), "--format", "json"])
    captured = capsys.readouterr()
    path = option if case.path == WHOLE else case.path
    assert exit_code == 2, captured.out
    packet = assert_error_packet(captured.out, captured.err, case.code, path)
    assert str(tmp_path) not in captured.out  # local paths never reach the packet
    assert "hunter2" not in captured.out
    assert "/home/alice" not in captured.out
    assert packet["message"]


@pytest.mark.parametrize("verb", list(VERBS))
def test_every_verb_gets_at_least_40_distinct_bad_inputs(verb: str) -> None:
    """Issue item 10, done-when: at least 40 bad inputs per file-reading verb."""
    cases = cases_for(verb)
    assert len(cases) >= 40
    assert len({case.id for case in cases}) == len(cases)
    assert len({case.content for case in cases}) == len(cases)
    codes = {case.code for case in cases}
    for required in (
        "input_too_deep",
        "input_too_large",
        "duplicate_key",
        "invalid_json",
        "not_utf8",
        "wrong_type",
        "unknown_field",
        "missing_field",
        "schema_version_unsupported",
        "number_out_of_range",
    ):
        assert required in codes, required
    assert codes & {"unsafe_text", "invalid_format"}


@pytest.mark.parametrize("verb", list(VERBS))
def test_a_directory_is_refused(
    verb: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv, option, _ = VERBS[verb]
    assert main([*argv, str(tmp_path), "--format", "json"]) == 2
    captured = capsys.readouterr()
    assert_error_packet(captured.out, captured.err, "file_unreadable", option)


@pytest.mark.parametrize("verb", list(VERBS))
def test_the_unmutated_example_is_accepted(verb: str, capsys: pytest.CaptureFixture[str]) -> None:
    """The mutations above fail because of the mutation, not because the base is bad."""
    argv, _, name = VERBS[verb]
    code = main([*argv, str(EXAMPLES / name), "--format", "json"])
    assert code == 0, capsys.readouterr().out


# --- no input reaches exit 1 (property) ----------------------------------------------

_LEAF = (
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30)
    | st.sampled_from(["password=hunter2", "/home/alice/x", "2026-02-30T00:00:00Z", "\u0000"])
)
_VALUES = st.recursive(
    _LEAF,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=10,
)


def _members(value: Any, prefix: str = "") -> list[str]:
    """Every member of the document, as the dotted paths ``_set`` takes."""
    found: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            path = f"{prefix}.{key}" if prefix else key
            found.append(path)
            found.extend(_members(item, path))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            path = f"{prefix}[{index}]"
            found.append(path)
            found.extend(_members(item, path))
    return found


@settings(max_examples=150)
@given(data=st.data(), verb=st.sampled_from(list(VERBS)))
def test_no_mutation_of_an_example_reaches_exit_1(data: st.DataObject, verb: str) -> None:
    """Exit 1 is for our bugs only: any member of a valid input, replaced by any JSON
    value (or deleted), is an answer (0) or an error packet (2), never a crash."""
    argv, _, name = VERBS[verb]
    base = example(name)
    member = data.draw(st.sampled_from(_members(base)), label="member")
    value = data.draw(_VALUES | st.just(_DELETE), label="value")
    changed = _set(base, member, value)
    with tempfile.TemporaryDirectory() as folder:
        target = Path(folder) / "input.json"
        target.write_text(json.dumps(changed), encoding="utf-8")
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = main([*argv, str(target), "--format", "json"])
    packet = json.loads(out.getvalue())
    assert code in (0, 2), packet
    if code == 2:
        assert schemas.validate(packet) == "reward_memory_error_v0"
        assert packet["error_code"] != "internal_error"


# --- the error packet itself stays valid and public-safe ----------------------------

HOSTILE_KEYS = {
    "long-key": ["k" * 2000],
    "many-keys": [f"key_{index:03d}_{'x' * 30}" for index in range(60)],
    "control-key": ["bell\u0007key"],
    "ansi-key": ["\u001b[2Jcleared"],
    "bidi-key": ["\u202eevil"],
    "credential-key": ["password=hunter2"],
    "path-key": ["/home/alice/x"],
    "path-key-nested": ["nested:/home/alice/.ssh/id_rsa"],
}


@pytest.mark.parametrize("verb", list(VERBS))
@pytest.mark.parametrize("hostile", list(HOSTILE_KEYS))
def test_unknown_keys_never_break_or_leak_through_the_packet(
    verb: str, hostile: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An unknown-field packet names the key, so hostile keys reach the message and the
    path: the packet must still validate against its own schema (lengths), carry no
    control or bidi characters, and withhold a key shaped like a secret or local path."""
    argv, _, name = VERBS[verb]
    data = example(name)
    for key in HOSTILE_KEYS[hostile]:
        data[key] = 1
    target = tmp_path / "input.json"
    target.write_text(json.dumps(data))
    assert main([*argv, str(target), "--format", "json"]) == 2
    captured = capsys.readouterr()
    packet = json.loads(captured.out)
    assert schemas.validate(packet) == "reward_memory_error_v0"
    assert packet["error_code"] == "unknown_field"
    shown = packet["message"] + packet["field_path"] + packet["error"]
    assert not any(ord(char) < 0x20 or 0x202A <= ord(char) <= 0x202E for char in shown)
    assert "hunter2" not in captured.out
    assert "/home/alice" not in captured.out


# --- text hygiene (record level) ------------------------------------------------------


@pytest.mark.parametrize(
    "text", ["nul\u0000byte", "bell\u0007", "escape\u001b[31m red"], ids=["nul", "bell", "ansi"]
)
def test_control_characters_in_text_are_refused(
    text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue: "control characters are rejected in every text field" (exit 2, named)."""
    base = example("candidate-review-request.json")
    target = tmp_path / "input.json"
    target.write_text(json.dumps(_set(base, "proposal.content_summary", text)))
    code = main(["candidate-review", "--input", str(target), "--format", "json"])
    assert code == 2
    packet = json.loads(capsys.readouterr().out)
    assert packet["error_code"] == "unsafe_character"
    assert packet["field_path"] == "$.proposal.content_summary"


# --- streams, as real processes ------------------------------------------------------


def _cli(*argv: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPT), *argv, "--format", "json"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        **kwargs,
    )


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
@pytest.mark.parametrize("verb", list(VERBS))
def test_dev_zero_ends_quickly_as_too_large(verb: str) -> None:
    argv, option, _ = VERBS[verb]
    started = time.monotonic()
    result = _cli(*argv, "/dev/zero")
    assert time.monotonic() - started < 30
    assert result.returncode == 2
    assert_error_packet(result.stdout, result.stderr, "input_too_large", option)


def test_an_endless_stdin_is_too_large() -> None:
    # Unbuffered, so closing our end never flushes into a pipe the reader left.
    with subprocess.Popen(
        [str(SCRIPT), "recall", "--input", "-", "--format", "json"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        bufsize=0,
    ) as process:
        stdin, stdout, stderr = process.stdin, process.stdout, process.stderr
        assert stdin is not None
        assert stdout is not None
        assert stderr is not None

        def flood() -> None:
            try:
                while True:
                    stdin.write(b" " * 65536)
            except OSError:  # the reader went away (broken pipe): done
                return

        writer = threading.Thread(target=flood, daemon=True)
        writer.start()
        out, err = stdout.read().decode(), stderr.read().decode()
        assert process.wait(timeout=60) == 2
        writer.join(timeout=10)
    assert_error_packet(out, err, "input_too_large", "--input")


needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")


@needs_fifo
def test_a_fifo_with_an_endless_writer_is_too_large(tmp_path: Path) -> None:
    fifo = tmp_path / "stream"
    os.mkfifo(fifo)

    def flood() -> None:
        try:
            with fifo.open("wb") as stream:
                while True:
                    stream.write(b"[" * 65536)
        except OSError:  # the reader went away: done
            return

    writer = threading.Thread(target=flood, daemon=True)
    writer.start()
    result = _cli("schema", "validate", str(fifo))
    writer.join(timeout=10)
    assert result.returncode == 2
    assert_error_packet(result.stdout, result.stderr, "input_too_large", "FILE")


@needs_fifo
def test_a_fifo_nobody_writes_to_times_out(tmp_path: Path) -> None:
    """A FIFO with no writer must not hang: the idle deadline refuses it."""
    fifo = tmp_path / "silent"
    os.mkfifo(fifo)
    started = time.monotonic()
    result = _cli("health-check", "--input", str(fifo))
    elapsed = time.monotonic() - started
    assert result.returncode == 2
    assert_error_packet(result.stdout, result.stderr, "input_timeout", "--input")
    assert jsonio.INPUT_IDLE_TIMEOUT <= elapsed < jsonio.INPUT_IDLE_TIMEOUT + 20


@needs_fifo
@pytest.mark.parametrize("verb", list(VERBS))
def test_a_silent_fifo_times_out_in_process(
    verb: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(jsonio, "INPUT_IDLE_TIMEOUT", 0.05)
    fifo = tmp_path / "silent"
    os.mkfifo(fifo)
    argv, option, _ = VERBS[verb]
    assert main([*argv, str(fifo), "--format", "json"]) == 2
    captured = capsys.readouterr()
    assert_error_packet(captured.out, captured.err, "input_timeout", option)


@needs_fifo
def test_a_fifo_with_a_real_document_is_read(tmp_path: Path) -> None:
    """The deadline is for silence, not for FIFOs: a writer that writes is read."""
    fifo = tmp_path / "doc"
    os.mkfifo(fifo)
    document = (EXAMPLES / "health-request.json").read_bytes()

    def write() -> None:
        with fifo.open("wb") as stream:
            stream.write(document)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    result = _cli("health-check", "--input", str(fifo))
    writer.join(timeout=10)
    assert result.returncode == 0, result.stdout
    assert json.loads(result.stdout)["schema_version"] == "reward_memory_corpus_health_v0"


def test_a_deep_document_on_stdin_is_refused_as_a_process() -> None:
    result = _cli("schema", "validate", "-", input="[" * 100_000 + "]" * 100_000)
    assert result.returncode == 2
    assert_error_packet(result.stdout, result.stderr, "input_too_deep", "FILE")


@pytest.mark.parametrize("output_format", ["json", "text"])
def test_a_stdout_that_is_not_utf8_never_turns_an_answer_into_exit_1(
    output_format: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PYTHONIOENCODING=ascii or a legacy console: non-ASCII text is escaped, not a crash."""
    base = example("candidate-review-request.json")
    changed = _set(base, "proposal.content_summary", "Keep fixes small — café rule ✓.")
    target = tmp_path / "input.json"
    target.write_text(json.dumps(changed), encoding="utf-8")
    raw = io.BytesIO()
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(raw, encoding="ascii"))
    code = main(["candidate-review", "--input", str(target), "--format", output_format])
    sys.stdout.flush()
    assert code == 0
    shown = raw.getvalue().decode("ascii")
    if output_format == "json":
        assert json.loads(shown)["record"]["content_summary"] == "Keep fixes small — café rule ✓."


@settings(max_examples=300)
@given(
    code=st.text(max_size=80),
    message=st.text(min_size=0, max_size=2000),
    path=st.none() | st.text(max_size=800),
)
def test_any_error_packet_validates_against_its_schema(
    code: str, message: str, path: str | None
) -> None:
    """Whatever a message or path holds (input keys reach both), the printed packet
    validates, so a caller's parser of error packets never meets a malformed one."""
    from reward_memory.cli._common import emit_error

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        emit_error(code, message, path)
    text = out.getvalue()
    text.encode("utf-8")  # writable as UTF-8: no unpaired surrogate survived
    packet = json.loads(text)
    assert schemas.validate(packet) == "reward_memory_error_v0"
    if path is None:
        assert packet["field_path"] is None


def _path_verdict(path: str) -> bool:
    """The error packet's path check, as it ran before the shortcuts: every path scanned
    whole and glued (the root ``$`` included)."""
    from reward_memory.cli._common import _PATH_GLUE
    from reward_memory.text import find_unsafe

    return find_unsafe(path) is not None or find_unsafe(_PATH_GLUE.sub(" ", path)) is not None


# Keys from anywhere (an input's keys reach the path), shapes near the root "$" included.
_KEY_PARTS = st.sampled_from(
    [
        "${home}/",
        "$home/",
        "home/",
        "{home}/",
        "~/",
        "/home/x",
        "x.ssh/",
        "ssh/",
        "k-",
        "sk-",
        "password: ",
        ":",
        "=",
        "-",
        "--",
        "_",
        ".",
        "[0]",
        "[",
        "]",
        "$",
        "%tmp%",
        "..",
        "\\",
        " ",
    ]
)
_KEYS = st.lists(_KEY_PARTS | st.text(max_size=12), max_size=6).map("".join)


@settings(max_examples=400)
@given(root=st.sampled_from(["$.", "$[", "$", ""]), key=_KEYS)
def test_the_root_of_a_path_is_not_rescanned_and_the_verdict_is_unchanged(
    root: str, key: str
) -> None:
    """Contract (DESIGN.md §8, the error packet): a path with a credential or local-path
    shape is withheld. The root "$" of "$." / "$[" is left out of the scan (alone it
    would compile the full secret scan for every error packet): the verdict stays the
    same for every path."""
    from reward_memory.cli._common import _PATH_GLUE, _path_body
    from reward_memory.text import find_unsafe

    path = root + key
    shortcut = find_unsafe(_path_body(path)) is not None or (
        find_unsafe(_PATH_GLUE.sub(" ", path)) is not None
    )
    assert shortcut == _path_verdict(path)


def test_an_error_packet_with_a_field_path_compiles_no_full_secret_scan() -> None:
    """Start-up (issue 11 item 4): an error packet naming "$.record.record_ref" or one
    of the verbs' own options needs no full secret scan (a fresh process, where the
    scan is compiled on first use), and still withholds an unsafe path."""
    probe = (
        "import io, contextlib, reward_memory.text as t\n"
        "from reward_memory.cli._common import emit_error\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        "    emit_error('invalid_format', 'does not match', '$.record.record_ref')\n"
        "    emit_error('invalid_json', 'not valid JSON', '--input')\n"
        "print(t._unsafe.cache_info().currsize, out.getvalue().count('record_ref'))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["0", "2"]
    out = io.StringIO()
    from reward_memory.cli._common import emit_error

    with contextlib.redirect_stdout(out):
        emit_error("invalid_format", "does not match", "$.${HOME}/.ssh/id_rsa")
    assert json.loads(out.getvalue())["field_path"] == "$"


def test_the_verbs_own_options_pass_the_secret_scan() -> None:
    """The options an error packet names unscanned are words the scan passes, and they
    are every option a verb module names as an error path."""
    from reward_memory.cli._common import OWN_OPTIONS

    assert not any(_path_verdict(option) for option in OWN_OPTIONS)
    named = set()
    for module in (Path(__file__).resolve().parents[1] / "src/reward_memory/cli").glob("*.py"):
        source = module.read_text(encoding="utf-8")
        named |= set(re.findall(r'path="(--[a-z-]+)"', source))
        named |= set(re.findall(r'option="(--[a-z-]+)"', source))
        named |= set(re.findall(r'_bad\([^)]*?"(--[a-z-]+)",\s*"[a-z_]+"\)', source, re.S))
    assert named
    assert named <= OWN_OPTIONS
