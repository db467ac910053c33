"""The attrs field helpers every record is built from (records/_fields.py)."""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from reward_memory.errors import RecordValidationError, UnsafeTextError
from reward_memory.records import _fields as f


@attrs.frozen(kw_only=True)
class Sample:
    ref: str = f.token()
    surface: str = f.surface_id()
    corpus: str = f.corpus_id()
    observed_at: str = f.timestamp()
    summary: str = f.text(40)
    note: str | None = f.optional_text(20)
    maybe_ref: str | None = f.optional_token()
    maybe_corpus: str | None = f.optional_corpus_id()
    expires_at: str | None = f.optional_timestamp()
    scopes: tuple[str, ...] = f.token_list(max_items=3)
    ordered: tuple[str, ...] = f.token_list(keep_order=True)
    surfaces: tuple[str, ...] = f.surface_list(max_items=2)
    corpora: tuple[str, ...] = f.corpus_id_list(max_items=2)
    confidence: str = f.enum("low", "medium", "high", default="low")
    schema_version: str = f.const("sample_v0")
    raw_content_captured: bool = f.const(False)
    verified: bool = f.strict_bool(default=False)
    count: int = f.integer(minimum=1, maximum=8, default=1)
    age: int | None = f.integer(minimum=0, default=None)


VALID: dict[str, Any] = {
    "ref": "github:example/repository#42",
    "surface": "issue_fix.patch_planning",
    "corpus": "openviking-issue-fix",
    "observed_at": "2026-11-01T12:00:00Z",
    "summary": "  Keep focused\n fixes. ",
    "surfaces": ["issue_fix.patch_planning"],
}


def make(**changes: Any) -> Sample:
    return Sample(**{**VALID, **changes})


def rejected(**changes: Any) -> RecordValidationError:
    with pytest.raises(RecordValidationError) as caught:
        make(**changes)
    return caught.value


def test_valid_sample_and_defaults() -> None:
    sample = make()
    assert sample.summary == "Keep focused fixes."
    assert sample.note is None
    assert sample.maybe_ref is None
    assert sample.scopes == ()
    assert sample.ordered == ()
    assert sample.corpora == ()
    assert sample.schema_version == "sample_v0"
    assert sample.raw_content_captured is False
    assert sample.count == 1
    assert sample.age is None


@pytest.mark.parametrize(
    ("field", "value", "code"),
    [
        ("ref", "", "invalid_format"),
        ("ref", None, "wrong_type"),
        ("ref", "has space", "invalid_format"),
        ("surface", "issue_fix", "invalid_format"),
        ("corpus", "Upper", "invalid_format"),
        ("observed_at", "2026-11-01T12:00:00", "invalid_format"),
        ("maybe_ref", "-x", "invalid_format"),
        ("maybe_corpus", "a.b", "invalid_format"),
        ("expires_at", "tomorrow", "invalid_format"),
    ],
)
def test_scalar_grammars_name_the_field(field: str, value: Any, code: str) -> None:
    error = rejected(**{field: value})
    assert error.path == f"$.{field}"
    assert error.code == code


def test_identifiers_are_scanned() -> None:
    error = rejected(ref="x:/home/u/y")
    assert isinstance(error, UnsafeTextError)
    assert error.path == "$.ref"
    assert "/home" not in str(error)


def test_text_is_collapsed_and_limited() -> None:
    assert make(summary="a" * 40).summary == "a" * 40
    error = rejected(summary="a" * 41)
    assert error.code == "text_too_long"
    assert error.path == "$.summary"
    assert str(error).startswith("summary is 41 characters")
    assert rejected(summary="   ").code == "empty_text"
    assert rejected(summary=7).code == "wrong_type"
    unsafe = rejected(summary="see password=hunter22")
    assert unsafe.code == "unsafe_text"
    assert "hunter22" not in str(unsafe)


def test_optional_text() -> None:
    assert make(note=None).note is None
    assert make(note=" short\tnote ").note == "short note"
    assert rejected(note="n" * 21).path == "$.note"


def test_token_list_sorts_and_keeps_order() -> None:
    sample = make(scopes=["b:2", "a:1"], ordered=["z", "a"])
    assert sample.scopes == ("a:1", "b:2")
    assert sample.ordered == ("z", "a")
    assert make(scopes=("x",)).scopes == ("x",)


def test_token_list_rejects_duplicates_with_the_item_path() -> None:
    error = rejected(scopes=["a", "b", "a"])
    assert error.code == "duplicate_item"
    assert error.path == "$.scopes[2]"


def test_token_list_names_the_bad_item() -> None:
    error = rejected(scopes=["ok", "not ok"])
    assert error.path == "$.scopes[1]"
    assert rejected(scopes=["ok", 3]).code == "wrong_type"


def test_token_list_bounds() -> None:
    assert rejected(scopes=["a", "b", "c", "d"]).code == "invalid_value"
    assert rejected(surfaces=[]).code == "invalid_value"
    assert rejected(corpora=["a", "b", "c"]).code == "invalid_value"


@pytest.mark.parametrize(
    "value", ["a", b"a", {"a": 1}, {"a"}, frozenset({"a"}), iter(["a"]), None, 3]
)
def test_lists_must_be_real_sequences(value: Any) -> None:
    error = rejected(scopes=value)
    assert error.code == "wrong_type"
    assert error.path == "$.scopes"


def test_surface_and_corpus_lists() -> None:
    sample = make(surfaces=["b.c", "a.b"], corpora=["z", "a"])
    assert sample.surfaces == ("a.b", "b.c")
    assert sample.corpora == ("a", "z")
    assert rejected(surfaces=["issue_fix"]).path == "$.surfaces[0]"
    assert rejected(corpora=["a", "A"]).path == "$.corpora[1]"


@pytest.mark.parametrize("value", ["LOW", "", None, 1, ["low"], {"low": 1}])
def test_enum_rejects_other_values(value: Any) -> None:
    error = rejected(confidence=value)
    assert error.code == "invalid_value"
    assert error.path == "$.confidence"
    assert "low, medium, high" in str(error)


def test_const_compares_by_type_and_value() -> None:
    decoded = "".join(["sample", "_v0"])  # equal to, not identical with, the constant
    assert make(schema_version=decoded).schema_version == "sample_v0"
    for bad in ("sample_v1", None, b"sample_v0"):
        assert rejected(schema_version=bad).path == "$.schema_version"
    for bad_flag in (0, None, "false", []):
        error = rejected(raw_content_captured=bad_flag)
        assert error.path == "$.raw_content_captured"
        assert str(error).startswith("must be false @")
    assert str(rejected(schema_version="x")).startswith("must be 'sample_v0' @")


@pytest.mark.parametrize("value", [0, 1, "true", None])
def test_strict_bool(value: Any) -> None:
    assert rejected(verified=value).code == "wrong_type"
    assert make(verified=True).verified is True


@pytest.mark.parametrize(
    ("value", "code"),
    [
        (True, "wrong_type"),
        (1.0, "wrong_type"),
        ("2", "wrong_type"),
        (0, "invalid_value"),
        (9, "invalid_value"),
        (None, "wrong_type"),
    ],
)
def test_integer(value: Any, code: str) -> None:
    error = rejected(count=value)
    assert error.code == code
    assert error.path == "$.count"


def test_optional_integer() -> None:
    assert make(age=None).age is None
    assert make(age=0).age == 0
    assert rejected(age=-1).code == "invalid_value"


def test_evolve_revalidates() -> None:
    sample = make()
    assert attrs.evolve(sample, count=3).count == 3
    with pytest.raises(RecordValidationError):
        attrs.evolve(sample, ref="bad ref")
