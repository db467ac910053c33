"""Bounded JSON input for the library: ``reward_memory.jsonio`` and the wire loaders.

Issue item 10: JSON nested past a documented depth, input over a documented
size, endless streams and duplicate object keys each give a typed error from
the library loaders (DESIGN.md §4: "Programmer errors ... raise typed errors
early, with the field path named"). No input may raise anything else
(``RecursionError``, ``JSONDecodeError``, ``UnicodeDecodeError``, ...).
"""

from __future__ import annotations

import io
import json
import math
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reward_memory import jsonio, wire
from reward_memory.errors import InputError, RecordValidationError
from reward_memory.records.health import HealthRequest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
HEALTH = (EXAMPLES / "health-request.json").read_bytes()


def code_of(data: Any, **kwargs: Any) -> tuple[str, str]:
    with pytest.raises(InputError) as caught:
        jsonio.parse(data, **kwargs)
    return caught.value.code, caught.value.path


def test_the_limits_are_the_documented_ones() -> None:
    """The documented defaults: 4 MiB, depth 64, exact integers (2**53 - 1)."""
    assert jsonio.MAX_INPUT_BYTES == 4 * 1024 * 1024
    assert jsonio.MAX_JSON_DEPTH == 64
    assert jsonio.MAX_JSON_INTEGER == 2**53 - 1
    assert 0 < jsonio.INPUT_IDLE_TIMEOUT <= 10


def test_input_error_is_a_record_validation_error() -> None:
    """The CLI's one handler for bad input (exit 2) catches it; so can a library caller."""
    assert issubclass(InputError, RecordValidationError)
    assert issubclass(InputError, ValueError)


# --- size ----------------------------------------------------------------------------


def test_size_limit_is_inclusive_and_counts_utf8_bytes() -> None:
    exact = b'"' + b"x" * 98 + b'"'  # 100 bytes
    assert jsonio.parse(exact, max_bytes=100) == "x" * 98
    assert code_of(exact + b" ", max_bytes=100) == ("input_too_large", "$")
    # Text is measured in UTF-8: 40 'é' are 80 bytes, plus two quotes.
    text = '"' + "é" * 40 + '"'
    assert jsonio.parse(text, max_bytes=82) == "é" * 40
    assert code_of(text, max_bytes=81) == ("input_too_large", "$")


def test_a_file_over_the_limit_is_refused_without_reading_it(tmp_path: Path) -> None:
    target = tmp_path / "sparse.json"
    with target.open("wb") as stream:
        stream.truncate(64 * 1024 * 1024 * 1024)  # 64 GiB, sparse: nothing is written
    started = time.monotonic()
    with pytest.raises(InputError) as caught:
        jsonio.read(target, where="--input")
    assert time.monotonic() - started < 1
    assert (caught.value.code, caught.value.path) == ("input_too_large", "--input")


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_dev_zero_reads_at_most_limit_plus_one() -> None:
    with pytest.raises(InputError) as caught:
        jsonio.read_bytes("/dev/zero", max_bytes=1000)
    assert caught.value.code == "input_too_large"


def test_an_in_memory_stdin_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    class Stdin:
        buffer = io.BytesIO(b" " * 5000)

    monkeypatch.setattr(sys, "stdin", Stdin())
    with pytest.raises(InputError) as caught:
        jsonio.read_bytes("-", max_bytes=1000, where="--input")
    assert (caught.value.code, caught.value.path) == ("input_too_large", "--input")
    assert Stdin.buffer.tell() == 1001  # never more than limit + 1


# --- sources that are not regular files ----------------------------------------------


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("missing.json", "file_not_found"),
        ("missing-dir/x.json", "file_not_found"),
        (".", "file_unreadable"),
        ("", "missing_input"),
        ("nul\x00byte.json", "file_not_found"),
    ],
)
def test_unreadable_sources(tmp_path: Path, name: str, code: str) -> None:
    source = str(tmp_path / name) if name else ""
    with pytest.raises(InputError) as caught:
        jsonio.read(source, where="FILE")
    assert (caught.value.code, caught.value.path) == (code, "FILE")
    assert str(tmp_path) not in caught.value.message


def test_none_is_missing_input() -> None:
    with pytest.raises(InputError) as caught:
        jsonio.read(None)
    assert caught.value.code == "missing_input"


needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")


@needs_fifo
def test_a_fifo_without_a_writer_meets_the_idle_deadline(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    started = time.monotonic()
    with pytest.raises(InputError) as caught:
        jsonio.read_bytes(fifo, idle_timeout=0.2)
    assert caught.value.code == "input_timeout"
    assert 0.2 <= time.monotonic() - started < 5


@needs_fifo
def test_a_fifo_writer_that_goes_silent_meets_the_idle_deadline(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    release = threading.Event()

    def writer() -> None:
        with fifo.open("wb") as stream:
            stream.write(b'{"a": ')
            stream.flush()
            release.wait(10)

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    try:
        with pytest.raises(InputError) as caught:
            jsonio.read_bytes(fifo, idle_timeout=0.3)
        assert caught.value.code == "input_timeout"
    finally:
        release.set()
        thread.join(10)


@needs_fifo
def test_a_fifo_writer_that_never_stops_is_too_large(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)

    def writer() -> None:
        try:
            with fifo.open("wb") as stream:
                while True:
                    stream.write(b"x" * 4096)
        except OSError:  # the reader left: done
            return

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    with pytest.raises(InputError) as caught:
        jsonio.read_bytes(fifo, max_bytes=100_000)
    assert caught.value.code == "input_too_large"
    thread.join(10)


@needs_fifo
def test_a_fifo_that_delivers_a_document_is_read(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)

    def writer() -> None:
        with fifo.open("wb") as stream:
            for start in range(0, len(HEALTH), 100):  # in pieces, with pauses
                stream.write(HEALTH[start : start + 100])
                stream.flush()
                time.sleep(0.001)

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    assert jsonio.read(fifo) == json.loads(HEALTH)
    thread.join(10)


# --- text ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (b"", "empty_input"),
        (" \t\r\n", "empty_input"),
        (b"\xef\xbb\xbf", "empty_input"),
        (b"\xff", "not_utf8"),
        (b'"\xed\xa0\x80"', "not_utf8"),  # a surrogate, encoded: not UTF-8
        (b'"\xc0\xaf"', "not_utf8"),  # an overlong encoding
        ("{", "invalid_json"),
        ("NaN", "invalid_json"),
        ("[Infinity]", "invalid_json"),
        ('{"a": -Infinity}', "invalid_json"),
        ("\ufeff\ufeff{}", "invalid_json"),
        ('"\x00"', "invalid_json"),  # raw control characters are not JSON strings
        (12, "wrong_type"),
    ],
)
def test_malformed_text(data: Any, code: str) -> None:
    assert code_of(data) == (code, "$")


def test_one_leading_bom_is_ignored() -> None:
    """RFC 8259 §8.1: a parser may ignore a byte order mark; editors write one."""
    assert jsonio.parse(b"\xef\xbb\xbf" + HEALTH) == json.loads(HEALTH)
    assert jsonio.parse("\ufeff[1]") == [1]


def test_the_where_label_names_whole_document_problems_only() -> None:
    assert code_of("{", where="--input") == ("invalid_json", "--input")
    assert code_of('{"a": 1, "a": 2}', where="--input") == ("duplicate_key", "$.a")


# --- depth ---------------------------------------------------------------------------


def _nest(depth: int, kinds: list[bool]) -> str:
    """Containers ``depth`` deep; kinds[i] picks an object (True) or an array."""
    text = "0"
    for level in range(depth):
        text = '{"k": ' + text + "}" if kinds[level % len(kinds)] else "[" + text + "]"
    return text


@given(depth=st.integers(1, 20), kinds=st.lists(st.booleans(), min_size=1, max_size=5))
def test_depth_limit_is_exact(depth: int, kinds: list[bool]) -> None:
    """Accepted iff nested no deeper than the limit, whatever mixes arrays and objects."""
    text = _nest(depth, kinds)
    if depth <= 10:
        assert jsonio.parse(text, max_depth=10) == json.loads(text)
    else:
        assert code_of(text, max_depth=10) == ("input_too_deep", "$")


def test_default_depth_limit_boundary() -> None:
    assert jsonio.parse("[" * 64 + "]" * 64) is not None
    assert code_of("[" * 65 + "]" * 65) == ("input_too_deep", "$")


@pytest.mark.parametrize(
    "text",
    [
        "[" * 100_000 + "]" * 100_000,
        '{"a":' * 100_000 + "1" + "}" * 100_000,
        "[" * 1_000_000,  # never closed
        '[{"a": [' * 30_000,
    ],
    ids=["arrays", "objects", "unclosed", "mixed"],
)
def test_very_deep_text_is_refused_quickly(text: str) -> None:
    """Before the parser can recurse: no RecursionError, and well under a second."""
    started = time.monotonic()
    assert code_of(text) == ("input_too_deep", "$")
    assert time.monotonic() - started < 2


@given(st.text(alphabet='[]{}"\\ a', max_size=200))
def test_brackets_inside_strings_do_not_count(body: str) -> None:
    """A string full of brackets and escapes is one value at depth 1."""
    text = json.dumps({"s": "[" * 100 + body + "{" * 100})
    assert jsonio.parse(text) == json.loads(text)


def test_escaped_quotes_do_not_end_a_string_for_the_depth_scan() -> None:
    text = json.dumps(['\\"' + "[" * 100, '"' + "{" * 100])
    assert jsonio.parse(text) == json.loads(text)


def test_the_depth_scan_is_linear_on_adversarial_strings() -> None:
    # Many unterminated-looking strings: a backtracking scan would be quadratic.
    text = '["' + '\\"' * 1_000_000 + "[" * 100
    started = time.monotonic()
    with pytest.raises(InputError):
        jsonio.parse(text)
    assert time.monotonic() - started < 2


# --- members: duplicate keys, numbers, surrogates ------------------------------------


keys = st.text(alphabet="abcxyz_", min_size=1, max_size=6)


@given(
    path=st.lists(st.one_of(keys, st.integers(0, 2)), max_size=6),
    key=keys,
)
def test_a_duplicate_key_is_named_by_its_path(path: list[str | int], key: str) -> None:
    """Wherever an object repeats a key, the error's path ends in that key."""
    inner = '{"' + key + '": 1, "' + key + '": 2}'
    expected = "$"
    for step in reversed(path):
        if isinstance(step, int):
            inner = "[" + "0, " * step + inner + "]"
        else:
            inner = '{"' + step + '": ' + inner + "}"
    for step in path:
        expected += f"[{step}]" if isinstance(step, int) else f".{step}"
    assert code_of(inner) == ("duplicate_key", f"{expected}.{key}")


@pytest.mark.parametrize(
    ("literal", "ok"),
    [
        (str(2**53 - 1), True),
        (str(-(2**53 - 1)), True),
        (str(2**53), False),
        (str(-(2**53)), False),
        ("1" + "0" * 30, False),
        ("9" * 5000, False),  # past Python's own int-parsing limit: still our error
        ("1.7976931348623157e308", True),
        ("1e309", False),
        ("-1e400", False),
        ("1e-400", True),  # underflows to 0.0: finite
        ("0.1", True),
    ],
)
def test_numbers_must_be_interoperable(literal: str, *, ok: bool) -> None:
    """I-JSON (RFC 7493 §2.2): exact integers and finite floats only."""
    text = '{"n": [' + literal + "]}"
    if ok:
        assert jsonio.parse(text) == json.loads(text)
    else:
        assert code_of(text) == ("number_out_of_range", "$.n[0]")


@pytest.mark.parametrize(
    ("text", "path"),
    [
        ('{"s": "\\ud800"}', "$.s"),
        ('{"s": "\\uDC00 tail"}', "$.s"),
        ('["ok", {"t": "a\\udbff"}]', "$[1].t"),
        ('{"\\ud800": 1}', "$"),  # a key cannot be printed: its object is named
    ],
)
def test_unpaired_surrogates_are_refused(text: str, path: str) -> None:
    """I-JSON (RFC 7493 §2.1); the error packet could not even be written as UTF-8."""
    assert code_of(text) == ("unpaired_surrogate", path)


def test_paired_surrogates_are_one_character() -> None:
    assert jsonio.parse('"\\ud83d\\ude00"') == "\U0001f600"
    # A literal backslash before "ud800" is not an escape.
    assert jsonio.parse('"\\\\ud800"') == "\\ud800"


@settings(max_examples=300)
@given(st.binary(max_size=300))
def test_any_bytes_parse_or_raise_a_typed_error(data: bytes) -> None:
    """The invariant behind exit 2: nothing but InputError escapes the parser."""
    error: InputError | None = None
    try:
        jsonio.parse(data)
    except InputError as caught:
        error = caught
    if error is not None:
        assert error.code
        assert error.path.startswith("$")


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**60), 2**60)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(keys, children, max_size=3),
    max_leaves=30,
)


@settings(max_examples=300)
@given(json_values)
def test_valid_json_round_trips_or_names_its_out_of_range_number(value: Any) -> None:
    text = json.dumps(value)
    try:
        parsed = jsonio.parse(text)
    except InputError as caught:
        parsed = caught
    if isinstance(parsed, InputError):
        assert parsed.code == "number_out_of_range"
    else:
        assert parsed == json.loads(text)


# --- Python-built data (wire.load) ---------------------------------------------------


def _deep_dict(depth: int) -> dict[str, Any]:
    root: dict[str, Any] = {}
    node = root
    for _ in range(depth):
        child: dict[str, Any] = {}
        node["a"] = child
        node = child
    return root


def _health(**changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(HEALTH)
    data.update(changes)
    return data


def _cycle() -> dict[str, Any]:
    loop: dict[str, Any] = {}
    loop["again"] = loop
    return loop


@pytest.mark.parametrize(
    ("data", "code", "path"),
    [
        (_health(observation=_deep_dict(100_000)), "input_too_deep", "$.observation" + ".a" * 63),
        (_health(observation=_cycle()), "input_too_deep", "$.observation" + ".again" * 63),
        (_health(observation={1: "x"}), "wrong_type", "$.observation"),
        (_health(observation={"record_count": math.nan}), "number_out_of_range", None),
        (_health(observation={"record_count": 2**64}), "number_out_of_range", None),
        (_health(observation={"record_count": {1, 2}}), "wrong_type", None),
        (_health(observation={"record_count": b"1"}), "wrong_type", None),
        (_health(note="\ud800"), "unpaired_surrogate", "$.note"),
    ],
    ids=["deep", "cycle", "int-key", "nan", "huge-int", "set", "bytes", "surrogate"],
)
def test_wire_load_holds_python_data_to_the_same_bounds(
    data: dict[str, Any], code: str, path: str | None
) -> None:
    with pytest.raises(InputError) as caught:
        wire.load(data)
    assert caught.value.code == code
    assert caught.value.path == (path or "$.observation.record_count")


def test_wire_load_still_loads_a_good_packet() -> None:
    record = wire.load(json.loads(HEALTH), HealthRequest)
    assert isinstance(record, HealthRequest)


def test_wire_loads_reads_text_and_bytes() -> None:
    assert isinstance(wire.loads(HEALTH, HealthRequest), HealthRequest)
    assert isinstance(wire.loads(HEALTH.decode(), HealthRequest), HealthRequest)


@pytest.mark.parametrize(
    ("data", "code", "path"),
    [
        ("[" * 100_000, "input_too_deep", "$"),
        (b"\xff", "not_utf8", "$"),
        ('{"schema_version": 1, "schema_version": 2}', "duplicate_key", "$.schema_version"),
        ("{", "invalid_json", "$"),
        ("[]", "wrong_type", "$"),
        (
            HEALTH.decode().replace('"record_count": 1', '"record_count": 1e999'),
            "number_out_of_range",
            "$.observation.record_count",
        ),
        (
            HEALTH.decode().replace('"record_count": 1', '"record_count": 1, "extra": 0'),
            "unknown_field",
            "$.observation.extra",
        ),
    ],
)
def test_wire_loads_raises_typed_errors(data: str | bytes, code: str, path: str) -> None:
    with pytest.raises(RecordValidationError) as caught:
        wire.loads(data)
    assert (caught.value.code, caught.value.path) == (code, path)


def test_wire_loads_checks_the_expected_type() -> None:
    from reward_memory.records.recall import RecallInput

    with pytest.raises(RecordValidationError) as caught:
        wire.loads(HEALTH, RecallInput)
    assert caught.value.code == "schema_version_unsupported"


def test_wire_load_file(tmp_path: Path) -> None:
    good = tmp_path / "good.json"
    good.write_bytes(HEALTH)
    assert isinstance(wire.load_file(good, HealthRequest), HealthRequest)
    with pytest.raises(InputError) as caught:
        wire.load_file(tmp_path / "absent.json")
    assert caught.value.code == "file_not_found"
    big = tmp_path / "big.json"
    big.write_bytes(b" " * (jsonio.MAX_INPUT_BYTES + 1))
    with pytest.raises(InputError) as caught:
        wire.load_file(big)
    assert caught.value.code == "input_too_large"


def test_bounds_cost_little_on_a_normal_document() -> None:
    """The hot path stays fast: a few-KiB document parses in well under a millisecond."""
    text = (EXAMPLES / "recall-input.json").read_bytes()
    started = time.perf_counter()
    for _ in range(200):
        jsonio.parse(text)
    assert (time.perf_counter() - started) / 200 < 0.002


# --- validation stays linear in the input ---------------------------------------------


def test_unique_items_is_linear_for_objects() -> None:
    """jsonschema compares objects pairwise; 20 000 distinct ones would take minutes.

    Bounded input is bounded in time too: a few-hundred-KiB file cannot stall a verb.
    """
    from reward_memory import schemas

    request = json.loads((EXAMPLES / "candidate-review-request.json").read_bytes())
    request["proposal"]["requested_action_scopes"] = [{"a": index} for index in range(20_000)]
    started = time.monotonic()
    with pytest.raises(RecordValidationError):
        schemas.validate(request)
    assert time.monotonic() - started < 10


@pytest.mark.parametrize(
    ("items", "unique"),
    [
        (["a", "b"], True),
        (["a", "a"], False),
        ([1, 1.0], False),  # one JSON number
        ([1, True], True),  # a number and a boolean
        ([0, False], True),
        ([{"a": 1, "b": [1]}, {"b": [1.0], "a": 1}], False),  # key order is not data
        ([[1, 2], [2, 1]], True),  # element order is
        ([{"a": True}, {"a": 1}], True),
        ([None, None], False),
    ],
)
def test_unique_items_keeps_json_equality(items: list[Any], *, unique: bool) -> None:
    from reward_memory import schemas

    validator = schemas.validator_for("reward_memory_authority_checkpoint_v0")
    errors = [
        error
        for error in validator.iter_errors({"action_scopes": items})
        if error.validator == "uniqueItems"
    ]
    assert (not errors) is unique


def test_validation_time_does_not_grow_with_the_number_of_bad_items() -> None:
    """A 4 MiB list of bad items must not cost one error object per item (10**5 of them)."""
    from reward_memory import schemas

    request = json.loads((EXAMPLES / "candidate-review-request.json").read_bytes())
    request["authority_checkpoint"]["action_scopes"] = list(range(300_000))
    started = time.monotonic()
    with pytest.raises(RecordValidationError) as caught:
        schemas.validate(request)
    assert time.monotonic() - started < 5
    assert caught.value.path.startswith("$.authority_checkpoint.action_scopes")


def _review_request(**proposal_changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((EXAMPLES / "candidate-review-request.json").read_bytes())
    data["proposal"].update(proposal_changes)
    return data


def _deep_list(depth: int) -> list[Any]:
    root: list[Any] = []
    node = root
    for _ in range(depth):
        child: list[Any] = []
        node.append(child)
        node = child
    return root


@pytest.mark.parametrize(
    "value", [_deep_dict(100_000), _cycle(), _deep_list(70)], ids=["deep", "cycle", "deep-list"]
)
def test_every_mapping_entry_point_refuses_pathological_data(value: Any) -> None:
    """propose / review / activate take a mapping where a record is expected; each goes
    through the one schema boundary, which must answer with a typed error: jsonschema
    would recurse into the value (or repr() it) and raise RecursionError."""
    from reward_memory import schemas
    from reward_memory.candidates import propose
    from reward_memory.records._plain import load_plain
    from reward_memory.records.review import CandidateReviewRequest

    request = _review_request(content_summary=value)
    checkpoint = request["authority_checkpoint"]
    for attempt in (
        lambda: schemas.validate(request),
        lambda: load_plain(request, CandidateReviewRequest),
        lambda: wire.load(request),
        lambda: propose(request["proposal"], checkpoint),
    ):
        with pytest.raises(InputError) as caught:
            attempt()
        assert caught.value.code == "input_too_deep"


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_a_symlink_loop_is_unreadable(tmp_path: Path) -> None:
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    with pytest.raises(InputError) as caught:
        jsonio.read(tmp_path / "a")
    assert caught.value.code == "file_unreadable"
    assert str(tmp_path) not in caught.value.message


@pytest.mark.skipif(sys.platform == "win32", reason="needs Unix sockets")
def test_a_unix_socket_is_unreadable(tmp_path: Path) -> None:
    import socket

    path = tmp_path / "s"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(path))
        with pytest.raises(InputError) as caught:
            jsonio.read(path)
    assert caught.value.code == "file_unreadable"
