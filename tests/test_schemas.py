"""The bundled schemas: valid, strict, offline, in agreement with the records, shipped."""

from __future__ import annotations

import json
import subprocess
import sys
import types
import typing
import zipfile
from pathlib import Path
from typing import Any

import attrs
import pytest
from jsonschema import Draft202012Validator

from reward_memory import schemas, wire
from reward_memory.errors import RecordValidationError, SchemaError

ROOT = Path(__file__).resolve().parents[1]
SCHEMA_DIR = ROOT / "schemas"
FILES = sorted(SCHEMA_DIR.glob("*.schema.json"))


def test_there_are_schemas() -> None:
    assert len(FILES) >= 5


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_schema_is_valid_2020_12(path: Path) -> None:
    document = json.loads(path.read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(document)
    assert document["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert document["$id"] == schemas.SCHEMA_BASE_URI + path.name


def _objects(node: Any, where: str) -> typing.Iterator[tuple[str, dict[str, Any]]]:
    if isinstance(node, dict):
        if node.get("type") == "object" and "properties" in node:
            yield where, node
        for key, value in node.items():
            yield from _objects(value, f"{where}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _objects(value, f"{where}/{index}")


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_object_with_properties_is_closed(path: Path) -> None:
    document = json.loads(path.read_text(encoding="utf-8"))
    for where, node in _objects(document, "#"):
        assert node.get("additionalProperties") is False, f"{path.name}{where} is open"


def _strings(node: Any, where: str) -> typing.Iterator[tuple[str, dict[str, Any]]]:
    if isinstance(node, dict):
        if node.get("type") == "string":
            yield where, node
        for key, value in node.items():
            if key != "then":  # a refinement of a property constrained beside it
                yield from _strings(value, f"{where}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _strings(value, f"{where}/{index}")


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_string_is_constrained_and_anchored(path: Path) -> None:
    """Issue item 9: the schemas agree with the records on characters. A bare
    string would admit controls and lone surrogates the records refuse; a pattern
    ending in a bare `$` admits a trailing newline under Python's `re.search`
    (which jsonschema uses)."""
    document = json.loads(path.read_text(encoding="utf-8"))
    for where, node in _strings(document, "#"):
        assert "pattern" in node or "enum" in node or "const" in node, f"{path.name}{where}"
    for where, pattern in _walk_patterns(document, "#"):
        assert pattern.startswith("^"), f"{path.name}{where}"
        assert pattern.endswith("$(?!\\n)"), f"{path.name}{where}"


def test_text_fields_carry_the_common_text_patterns() -> None:
    """The text patterns are inlined in each packet schema (a `$ref` per text field
    costs the hot path a resolver lookup); they must stay the common defs verbatim."""
    defs = schemas.get_schema("common")["$defs"]
    allowed = {defs[name]["pattern"] for name in ("text", "compact_text", "safe_string")}
    inline = 0
    for path in FILES:
        document = json.loads(path.read_text(encoding="utf-8"))
        for where, pattern in _walk_patterns(document, "#"):
            if "\\u0000" in pattern:
                assert pattern in allowed, f"{path.name}{where}"
                inline += 1
    assert inline >= 30


def _walk_patterns(node: Any, where: str) -> typing.Iterator[tuple[str, str]]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "pattern" and isinstance(value, str):
                yield f"{where}/pattern", value
            elif key == "patternProperties":
                yield from ((f"{where}/{key}", name) for name in value)
                yield from _walk_patterns(value, f"{where}/{key}")
            else:
                yield from _walk_patterns(value, f"{where}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _walk_patterns(value, f"{where}/{index}")


def test_schema_names_match_the_packet_table() -> None:
    assert set(schemas.schema_names()) == set(wire.PACKET_TYPES)


def test_get_schema_unknown_name_is_a_schema_error() -> None:
    with pytest.raises(SchemaError, match="no bundled schema"):
        schemas.get_schema("reward_memory_nope_v0")


def test_refs_resolve_offline_only() -> None:
    # Every $ref must land inside the bundled registry: resolving all of them
    # through it proves no schema would reach for the network.
    registry = schemas._registry()
    for name in [*schemas.schema_names(), "common"]:
        document = schemas.get_schema(name)
        resolver = registry.resolver(base_uri=document["$id"])
        for _, node in _walk_refs(document):
            resolver.lookup(node)


def _walk_refs(node: Any) -> typing.Iterator[tuple[str, str]]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref":
                yield key, value
            else:
                yield from _walk_refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _walk_refs(value)


# -- schema <-> record agreement ------------------------------------------------------


def _resolve(node: dict[str, Any], base: str) -> tuple[dict[str, Any], str]:
    """Follow $ref (and a nullable anyOf around one) to the object schema it names."""
    registry = schemas._registry()
    while True:
        if "$ref" in node:
            resolved = registry.resolver(base_uri=base).lookup(node["$ref"])
            node, base = resolved.contents, resolved.resolver._base_uri
            continue
        if "anyOf" in node:
            branches = [b for b in node["anyOf"] if b.get("type") != "null"]
            assert len(branches) == 1, "only nullable unions map onto records"
            node = branches[0]
            continue
        if node.get("type") == "array" and "items" in node:
            node = node["items"]
            continue
        return node, base


def _record_of(annotation: Any) -> type[Any] | None:
    """The attrs class inside an annotation such as ``X``, ``X | None``, ``tuple[X, ...]``."""
    if isinstance(annotation, type) and attrs.has(annotation):
        return annotation
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType, tuple):
        found = [r for arg in typing.get_args(annotation) if (r := _record_of(arg))]
        return found[0] if found else None
    return None


def _agree(cls: type[Any], node: dict[str, Any], base: str, seen: set[type[Any]]) -> None:
    if cls in seen:
        return
    seen.add(cls)
    node, base = _resolve(node, base)
    fields = attrs.fields(cls)
    names = {field.name for field in fields}
    properties = node.get("properties", {})
    assert names == set(properties), (
        f"{cls.__name__}: record-only {sorted(names - set(properties))}, "
        f"schema-only {sorted(set(properties) - names)}"
    )
    required = set(node.get("required", []))
    assert required <= names
    mandatory = {field.name for field in fields if field.default is attrs.NOTHING}
    assert mandatory <= required, f"{cls.__name__}: not required in schema {mandatory - required}"
    hints = typing.get_type_hints(cls)
    for field in fields:
        inner = _record_of(hints[field.name])
        if inner is not None:
            _agree(inner, properties[field.name], base, seen)


@pytest.mark.parametrize("name", sorted(wire.PACKET_TYPES))
def test_schema_and_record_agree_field_for_field(name: str) -> None:
    cls = wire.packet_type(name)
    document = schemas.get_schema(name)
    _agree(cls, document, document["$id"], set())


# -- validation behaviour ------------------------------------------------------------------


def test_validate_requires_schema_version() -> None:
    with pytest.raises(RecordValidationError) as info:
        schemas.validate({"ok": True})
    assert info.value.code == "schema_version_missing"
    assert info.value.path == "$.schema_version"


@pytest.mark.parametrize("version", ["reward_memory_nope_v0", "common", 7, None])
def test_validate_rejects_unknown_schema_version(version: object) -> None:
    with pytest.raises(RecordValidationError) as info:
        schemas.validate({"schema_version": version})
    assert info.value.code in {"schema_version_unsupported", "schema_version_missing"}


def test_validate_names_an_unknown_field() -> None:
    packet = {
        "ok": False,
        "schema_version": "reward_memory_error_v0",
        "status": "invalid_request",
        "error_code": "x",
        "field_path": None,
        "message": "m",
        "error": "e",
        "comment_body": "raw",
    }
    with pytest.raises(RecordValidationError) as info:
        schemas.validate(packet)
    assert (info.value.code, info.value.path) == ("unknown_field", "$.comment_body")


def test_validate_rejects_non_objects() -> None:
    with pytest.raises(RecordValidationError, match="JSON object"):
        schemas.validate(["schema_version"])


# -- the wheel ships the same schemas ------------------------------------------------------


@pytest.fixture(scope="session")
def built_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(out),
            str(ROOT),
        ],
        check=True,
    )
    (wheel,) = out.glob("reward_memory-*.whl")
    return wheel


@pytest.mark.slow
def test_wheel_schemas_equal_the_canonical_copy(built_wheel: Path) -> None:
    with zipfile.ZipFile(built_wheel) as archive:
        shipped = {
            Path(name).name: archive.read(name)
            for name in archive.namelist()
            if name.startswith("reward_memory/schemas/") and name.endswith(".schema.json")
        }
        assert "reward_memory/data/architecture_v0.json" in archive.namelist()
        assert "reward_memory/py.typed" in archive.namelist()
    canonical = {path.name: path.read_bytes() for path in FILES}
    assert shipped == canonical


def test_no_schema_allows_a_list_longer_than_the_early_bound() -> None:
    """MAX_LIST_ITEMS is the largest maxItems of the bundled schemas (the early refusal
    never refuses what a schema allows)."""
    import re
    from pathlib import Path

    from reward_memory.schemas import MAX_LIST_ITEMS

    folder = Path(__file__).resolve().parents[1] / "schemas"
    bounds = [
        int(found)
        for path in folder.glob("*.schema.json")
        for found in re.findall(r'"maxItems":\s*(\d+)', path.read_text("utf-8"))
    ]
    assert max(bounds) == MAX_LIST_ITEMS
