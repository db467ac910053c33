"""Text hygiene: control characters and lone surrogates, in records, schemas and the CLI.

Contract (issue item 9): "Lone surrogates and control characters are rejected in
every text field and identifier, and the JSON Schemas agree with the records:
`schema validate` must never call valid what the library then rejects or
crashes on." DESIGN.md §5: every string that can reach a provider or a public
packet is checked; §8 (CLI): bad input is an error packet and exit 2, never a
traceback.

The rule (reward_memory.text._UNSAFE_CHARACTER): C0 controls other than tab,
newline and carriage return, DEL, C1 controls (U+0080-U+009F) and lone
surrogates (U+D800-U+DFFF) are refused everywhere; tab, newline and carriage
return are whitespace that free text collapses to one space, and identifiers
refuse by grammar.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import random
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from _stage2 import checkpoint, proposal
from reward_memory import schemas, wire
from reward_memory.cli import main
from reward_memory.errors import RecordValidationError, UnsafeTextError
from reward_memory.grammars import (
    check_corpus_id,
    check_digest,
    check_surface_id,
    check_timestamp,
    check_token,
)
from reward_memory.records._memo import check_text_memo
from reward_memory.records._plain import to_plain
from reward_memory.text import _UNSAFE_CHARACTER, compact_text, find_unsafe, require_safe
from test_cli_packets import EXAMPLES, INVOCATIONS

UNSAFE = [
    *(chr(c) for c in range(0x09)),
    "\x0b",
    "\x0c",
    *(chr(c) for c in range(0x0E, 0x20)),
    "\x7f",
    *(chr(c) for c in range(0x80, 0xA0)),
    *(chr(c) for c in (0xD800, 0xDBFF, 0xDC00, 0xDFFF)),  # lone surrogates
]
# Allowed: the whitespace free text collapses, and ordinary Unicode (incl. astral).
SAFE = ["\t", "\n", "\r", " ", "\u00a0", "\u2028", "\u00e9", "\u200d", "\ufeff", "\U0001f600"]
IDENTIFIER_CHECKS = {
    "token": check_token,
    "surface_id": check_surface_id,
    "corpus_id": check_corpus_id,
    "digest": check_digest,
}
IDENTIFIER_SAMPLES = {
    "token": "github:user:maintainer",
    "surface_id": "issue_fix.patch_planning",
    "corpus_id": "scoped_preferences",
    "digest": "0f998976780e6786",
}


def _common_pattern(name: str) -> re.Pattern[str]:
    pattern = schemas.get_schema("common")["$defs"][name]["pattern"]
    assert isinstance(pattern, str)
    return re.compile(pattern)  # as jsonschema applies it: re.search


TEXT_PATTERN = _common_pattern("text")
COMPACT_PATTERN = _common_pattern("compact_text")
SAFE_PATTERN = _common_pattern("safe_string")


# -- the library refuses them ----------------------------------------------------------


def test_the_unsafe_set_is_exactly_controls_and_surrogates() -> None:
    """The rule is the documented set: every code point below U+E000 checked."""
    allowed = {"\t", "\n", "\r"}
    for code in range(0xE000):
        char = chr(code)
        expected = (
            (code < 0x20 and char not in allowed)
            or 0x7F <= code <= 0x9F
            or 0xD800 <= code <= 0xDFFF
        )
        assert (_UNSAFE_CHARACTER.search(char) is not None) == expected, hex(code)
    assert _UNSAFE_CHARACTER.search("\U0001f600\U0010ffff\ue000") is None


@pytest.mark.parametrize("char", UNSAFE, ids=lambda c: f"U+{ord(c):04X}")
def test_text_fields_refuse_unsafe_characters(char: str) -> None:
    """Every text field goes through compact_text; it refuses before collapsing."""
    value = f"Keep fixes{char}focused"
    with pytest.raises(UnsafeTextError) as caught:
        compact_text(value, limit=500, path="$.content_summary", label="content_summary")
    assert (caught.value.code, caught.value.path) == ("unsafe_character", "$.content_summary")
    assert char not in str(caught.value)
    assert find_unsafe(value) == "unsafe_character"
    with pytest.raises(UnsafeTextError):
        require_safe(value)


@pytest.mark.parametrize("char", SAFE, ids=lambda c: f"U+{ord(c):04X}")
def test_text_fields_keep_ordinary_unicode_and_collapse_whitespace(char: str) -> None:
    out = compact_text(f"Keep fixes{char}focused", limit=500)
    assert out in ("Keep fixes focused", f"Keep fixes{char}focused")
    assert find_unsafe(out) is None


@pytest.mark.parametrize("name", sorted(IDENTIFIER_CHECKS))
@pytest.mark.parametrize(
    "char", [*UNSAFE[::7], chr(0xDBFF), chr(0xDFFF)], ids=lambda c: f"U+{ord(c):04X}"
)
def test_identifiers_refuse_unsafe_characters(name: str, char: str) -> None:
    sample = IDENTIFIER_SAMPLES[name]
    for value in (sample + char, char + sample, sample[:3] + char + sample[3:]):
        with pytest.raises(RecordValidationError) as caught:
            IDENTIFIER_CHECKS[name](value, "$.scope.workspace_ref")
        assert (caught.value.code, caught.value.path) == (
            "unsafe_character",
            "$.scope.workspace_ref",
        )
        assert char not in str(caught.value)


@pytest.mark.parametrize("name", sorted(IDENTIFIER_CHECKS))
def test_identifiers_refuse_newline_tab_and_cr_by_grammar(name: str) -> None:
    for char in "\n\t\r":
        with pytest.raises(RecordValidationError) as caught:
            IDENTIFIER_CHECKS[name](IDENTIFIER_SAMPLES[name] + char, "$.x")
        assert caught.value.code == "invalid_format"
    with pytest.raises(RecordValidationError):
        check_timestamp("2026-11-01T12:00:00Z\n", "$.x")


_MIXED = st.text(
    alphabet=st.one_of(
        st.sampled_from(UNSAFE + SAFE + ["a", "Z", "0", ".", " "]),
        st.characters(codec="utf-8"),
    ),
    max_size=30,
)


@given(_MIXED)
@example("abc\n")
@example(" \u0085 ")
@example("\x1c")
def test_compact_text_refuses_exactly_the_unsafe_set(value: str) -> None:
    """No unsafe character survives into a record, whatever surrounds it."""
    has_unsafe = any(_UNSAFE_CHARACTER.search(c) for c in value)
    if has_unsafe:
        with pytest.raises(UnsafeTextError) as caught:
            compact_text(value, limit=500)
        assert caught.value.code == "unsafe_character"
        return
    try:
        out = compact_text(value, limit=500)
    except UnsafeTextError as refused:
        code = refused.code
    else:
        code = "ok"
        assert _UNSAFE_CHARACTER.search(out) is None
        out.encode("utf-8")  # no lone surrogate: always encodable
    assert code != "unsafe_character"


# -- the schemas say the same ------------------------------------------------------------


def _record_accepts_text(value: str) -> bool:
    try:
        compact_text(value, limit=10_000)
    except UnsafeTextError as caught:
        return caught.code not in ("unsafe_character", "empty_text", "wrong_type")
    return True


def _record_accepts_compact(value: str) -> bool:
    try:
        check_text_memo(value, 10_000, "$.x")
    except RecordValidationError as caught:
        return caught.code not in ("unsafe_character", "empty_text", "invalid_format")
    return True


@given(_MIXED)
@example("abc\n")
@example("   ")
@example("\n")
@example("a\x00")
@example("\ud800")
@example("a  b")
@example(" a")
@example("a\u00a0b")
def test_text_defs_agree_with_the_records(value: str) -> None:
    """`text` is what compact_text accepts (characters, blankness); `compact_text` what
    the already-compact fields (check_text_memo) accept; `safe_string` the characters."""
    assert (TEXT_PATTERN.search(value) is not None) == _record_accepts_text(value), repr(value)
    assert (COMPACT_PATTERN.search(value) is not None) == _record_accepts_compact(value), repr(
        value
    )
    # safe_string (error packets, which may be blank): exactly the character rule.
    assert (SAFE_PATTERN.search(value) is not None) == (find_unsafe(value) != "unsafe_character")


@pytest.mark.parametrize("name", ["text", "compact_text", "safe_string"])
@pytest.mark.parametrize(
    "value",
    ["a" * 30_000 + "\x00", " " * 30_000 + "\x00", "a " * 15_000 + "\x00", "a" + " " * 30_000],
    ids=["run-then-nul", "spaces-then-nul", "words-then-nul", "trailing-spaces"],
)
def test_text_defs_take_linear_time(name: str, value: str) -> None:
    """`schema validate` must not hang on a long bad value (jsonschema applies the
    pattern before maxLength can help): the patterns are unambiguous, so a refusal
    costs one pass. An ambiguous pattern takes seconds here (quadratic), this
    well under a millisecond."""
    pattern = _common_pattern(name)
    started = time.perf_counter()
    pattern.search(value)
    assert time.perf_counter() - started < 0.25


# -- packet level: every string leaf of real packets -------------------------------------


def _emitted_packets() -> list[dict[str, Any]]:
    packets: list[dict[str, Any]] = []
    for argv in INVOCATIONS:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            main([*argv, "--format", "json"])
        packets.append(json.loads(out.getvalue()))
    for path in sorted(EXAMPLES.glob("*.json")):
        packets.append(json.loads(path.read_text(encoding="utf-8")))
    packets.append(to_plain(proposal()))
    packets.append(to_plain(checkpoint()))
    return [packet for packet in packets if isinstance(packet.get("schema_version"), str)]


PACKETS = _emitted_packets()


def _string_leaves(node: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key != "schema_version":
                yield from _string_leaves(value, (*path, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _string_leaves(value, (*path, index))
    elif isinstance(node, str):
        yield path


def _replaced(packet: dict[str, Any], path: tuple[Any, ...], value: str) -> dict[str, Any]:
    copied = copy.deepcopy(packet)
    node: Any = copied
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    return copied


@contextlib.contextmanager
def _swapped(packet: dict[str, Any], path: tuple[Any, ...], value: str) -> Iterator[None]:
    """Set one leaf for the duration of a check (cheaper than a deep copy per mutation)."""
    node: Any = packet
    for part in path[:-1]:
        node = node[part]
    original = node[path[-1]]
    node[path[-1]] = value
    try:
        yield
    finally:
        node[path[-1]] = original


def _schema_accepts(packet: dict[str, Any]) -> bool:
    try:
        schemas.validate(packet)
    except RecordValidationError:
        return False
    return True


MUTATIONS = [
    lambda v: v + "\x00",
    lambda v: v[:1] + "\ud800" + v[1:],
    lambda v: "\x85" + v,
    lambda v: v + "\x1f",
    lambda v: v + "\x7f",
    lambda v: v + "\n",
    lambda v: "  ",
]


def test_there_are_packets_of_many_kinds() -> None:
    assert len({packet["schema_version"] for packet in PACKETS}) >= 10


@pytest.mark.parametrize(
    "packet", PACKETS, ids=[f"{i}-{p['schema_version']}" for i, p in enumerate(PACKETS)]
)
def test_schema_never_accepts_what_the_record_refuses(packet: dict[str, Any]) -> None:
    """Mutate every string leaf; whenever the schema still says valid, the record loads."""
    assert _schema_accepts(packet)
    packet = copy.deepcopy(packet)
    leaves = list(_string_leaves(packet))
    if len(leaves) > 40:  # the big static documents: a fixed sample of their leaves
        leaves = random.Random(9).sample(leaves, 40)
    for path in leaves:
        node: Any = packet
        for part in path:
            node = node[part]
        for mutate in MUTATIONS:
            with _swapped(packet, path, mutate(node)):
                if not _schema_accepts(packet):
                    continue
                try:
                    wire.load(packet)
                except RecordValidationError as caught:
                    pytest.fail(
                        f"schema accepts, record refuses at {caught.path}: {caught.message}"
                    )
                # Typed fields refuse them on both sides; the architecture contract's
                # free-form descriptive objects (a static document) constrain neither.
                if packet["schema_version"] != "reward_memory_architecture_v0" and (
                    _UNSAFE_CHARACTER.search(json.dumps(packet, ensure_ascii=False))
                ):
                    pytest.fail(f"an unsafe character passed the schema at {path}")


# -- the CLI -------------------------------------------------------------------------------


def _proposal_with(path: tuple[Any, ...], value: str) -> dict[str, Any]:
    return _replaced(to_plain(proposal()), path, value)


@pytest.mark.parametrize(
    ("path", "escaped", "code"),
    [
        (("content_summary",), "Keep \\ud800 focused", "unsafe_character"),
        (("content_summary",), "Keep \\u0000 focused", "unsafe_character"),
        (("reasoning", "summary"), "why \\u009b here", "unsafe_character"),
        (("source", "actor_ref"), "github:user:\\udc00", "unsafe_character"),
        (("scope", "workspace_ref"), "workspace:example\\n", "invalid_format"),
        (("scope", "surface_ids", 0), "issue_fix.patch_planning\\u0007", "unsafe_character"),
    ],
)
def test_schema_validate_refuses_unsafe_characters(
    path: tuple[Any, ...],
    escaped: str,
    code: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`reward-memory schema validate FILE`: exit 2 with an error packet that names the
    field and its code, and does not echo the value (a lone surrogate could not even
    be printed)."""
    marker = "__VALUE__"
    document = json.dumps(_proposal_with(path, marker)).replace(marker, escaped)
    target = tmp_path / "packet.json"
    target.write_text(document, encoding="utf-8")
    assert main(["schema", "validate", str(target), "--format", "json"]) == 2
    out = capsys.readouterr().out
    packet = json.loads(out)
    assert packet["schema_version"] == "reward_memory_error_v0"
    dotted = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)
    assert packet["field_path"] == dotted
    # A JSON reader that refuses lone surrogates itself may name that instead.
    surrogate = "\\ud" in escaped
    assert packet["error_code"] in ((code, "unpaired_surrogate") if surrogate else (code,))
    assert _UNSAFE_CHARACTER.search(out.encode("utf-8").decode("unicode_escape")) is None
    assert schemas.validate(packet) == "reward_memory_error_v0"


@pytest.mark.parametrize("key", ["bad\\u0000key", "bad\\ud800\\u0000key", "bad\\u001b[31mkey"])
def test_cli_survives_an_unsafe_field_name(key: str, tmp_path: Path) -> None:
    """An unknown key is echoed in the message: a lone surrogate or control in it must
    neither crash the printer (exit 1) nor reach stdout raw."""
    document = json.dumps(to_plain(proposal()))[:-1] + f', "{key}": 1}}'
    target = tmp_path / "packet.json"
    target.write_text(document, encoding="utf-8")
    # stdout as a real terminal would encode it: strict UTF-8.
    stream = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict")
    with contextlib.redirect_stdout(stream):
        code = main(["schema", "validate", str(target), "--format", "json"])
        stream.flush()
        raw = stream.buffer.getvalue()  # type: ignore[attr-defined]
    assert code == 2
    packet = json.loads(raw.decode("utf-8"))
    assert schemas.validate(packet) == "reward_memory_error_v0"
    # unknown_field; a JSON reader that refuses lone surrogates first may say so instead.
    assert packet["error_code"] in ("unknown_field", "unpaired_surrogate")
    shown = packet["message"] + (packet["field_path"] or "") + packet["error"]
    assert _UNSAFE_CHARACTER.search(shown) is None
