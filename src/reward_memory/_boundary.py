"""One strict pass at the JSON boundary: the record walk first, the schema only to name an error.

A file or packet from outside is built into its record by the strict walk of
:mod:`reward_memory.records._plain` (exact key sets, objects and lists only
where declared, every grammar rule the records' own validators), and the built
record is then held to its declared field types (a nested record where one is
declared, exact scalars: ``1`` is no ``True``, ``"777"`` no ``777``; ``None``
only where the type says ``| None``), which a field without a validator would
not check, and every key the schema requires must be present (a field with a
default may be absent from a record, not from every schema: the keys are read
from the schema documents, a few small JSON files, without ``jsonschema``).
Together they refuse what the published JSON Schema refuses
(``tests/test_boundary.py`` mutates every field of the example inputs and holds
the two to that), so valid input is validated once and never pays for
``jsonschema`` (~25-60 ms to import and compile at a verb's start-up).

Invalid input is the rare path: there the schema runs too, so the error a
caller sees is the one the published contract gives (the schema's code and
field path) whenever the schema refuses the input, and the record's own error
(the cross-field rules no schema states) otherwise.
"""

from __future__ import annotations

import types
import typing
from typing import Any, Final, Literal, TypeVar, Union, cast

import attrs

from reward_memory.errors import RecordValidationError
from reward_memory.records._plain import from_plain

__all__ = ["strict_packet", "strict_record"]

T = TypeVar("T")


def strict_record(cls: type[T], data: Any, schema: str, *, definition: str | None = None) -> T:
    """Build ``cls`` from parsed JSON ``data``; on refusal, raise the schema's error if it has one.

    ``schema`` is the published schema the data claims (``definition`` one of its
    ``$defs``, for a record embedded without a ``schema_version`` of its own).
    ``data`` must be parsed JSON (plain dicts, lists, scalars, within the bounds
    of :mod:`reward_memory.jsonio`).

    Raises:
        RecordValidationError: the schema's error (field path named) when the
            schema refuses ``data``, else the record's.
    """
    try:
        record: T = from_plain(cls, data)
        wrong = _mistyped(record, data, schema, definition)
    except _SchemaDecides:
        _schema_error(data, schema, definition)
        return record  # the schema holds it: a value the record derives or tidies
    except RecordValidationError:
        _schema_error(data, schema, definition)
        raise
    except Exception:  # noqa: BLE001 - e.g. a cross-field rule met a field of the wrong type
        wrong = "$"  # never a crash: the schema names the error, else a typed refusal
    if wrong is not None:
        _schema_error(data, schema, definition)
        raise RecordValidationError("has the wrong type", path=wrong, code="wrong_type")
    return record


def _schema_error(data: Any, schema: str, definition: str | None) -> None:
    """Raise the schema's error for ``data`` if the schema refuses it (the error path only)."""
    from reward_memory import schemas  # noqa: PLC0415 - never imported for valid input

    if definition is None and not isinstance(data, dict):  # validate()'s first check
        raise RecordValidationError("a packet must be a JSON object", code="wrong_type")
    # The walk refused (or doubted) the data: straight to the reference path, the
    # schema's compiled fast check would only be built to say "no".
    schemas.reference_check(data, schema, definition)


# -- the schema documents (read as data, without jsonschema) ---------------------------

_SUFFIX: Final = ".schema.json"


def _document(name: str) -> dict[str, Any]:
    """One bundled schema document by file stem (read once; ``common`` included)."""
    from reward_memory.schemas import _one  # noqa: PLC0415 - a few small JSON files, no jsonschema

    return _one(name)


def _schema_dir() -> Any:
    """Where the documents are read from (:func:`reward_memory.schemas._directory`)."""
    from reward_memory.schemas import _directory  # noqa: PLC0415

    return _directory()


def _resolved(node: Any, here: str) -> tuple[Any, str]:
    """Follow ``$ref`` chains (``file.schema.json#/$defs/X`` or ``#/$defs/X``)."""
    while isinstance(node, dict) and "$ref" in node:
        target, _, pointer = node["$ref"].partition("#")
        if target:
            here = target.removesuffix(_SUFFIX)
        node = _document(here)
        for part in pointer.split("/")[1:]:
            node = node[part]
    return node, here


def _branch(node: Any, here: str, keyword: str) -> tuple[Any, str]:
    """The one branch of ``node`` that has ``keyword`` (``properties`` or ``items``), or none.

    A nullable record is ``anyOf: [{"$ref": ...}, {"type": "null"}]``; a node with
    several such branches is ambiguous and left to the records (which the
    mutation tests hold to the schema).
    """
    node, here = _resolved(node, here)
    if not isinstance(node, dict):
        return None, here
    if keyword in node:
        return node, here
    found = [
        _resolved(branch, here)
        for branch in (*node.get("anyOf", ()), *node.get("oneOf", ()))
        if isinstance(_resolved(branch, here)[0], dict) and keyword in _resolved(branch, here)[0]
    ]
    return found[0] if len(found) == 1 else (None, here)


# -- the gate: declared types and the schema's required keys, compiled per record class ---

# (value built, the JSON it was built from) -> None when it holds, else the path of
# the offence relative to the value ("" for the value itself, ".x[0]" below it).
_Check = typing.Callable[[Any, Any], "str | None"]
_SCALARS: Final = frozenset({str, int, float, bool, type(None)})
_ABSENT: Final = object()


class _Gate:
    """What one record class, read against one schema node, must satisfy beyond its walk.

    ``required``: the keys the schema requires that the record would let default
    (every other required key the strict walk asks for itself); ``fields``: the
    declared type of each field, nested records by their own gate.
    """

    __slots__ = ("fields", "required")

    def __init__(self, fields: tuple[tuple[str, _Check], ...], required: tuple[str, ...]) -> None:
        self.fields = fields
        self.required = required

    def __call__(self, record: Any, data: Any) -> str | None:
        if type(data) is not dict:
            return ""
        for key in self.required:
            if key not in data:
                return f".{key}"
        for name, check in self.fields:
            given = data.get(name, _ABSENT)
            if given is _ABSENT:
                continue  # the field's default, built by the record itself
            wrong = check(getattr(record, name), given)
            if wrong is not None:
                return f".{name}{wrong}"
        return None


_GATES: Final[dict[tuple[type[Any], int], _Gate]] = {}


def _mistyped(record: Any, data: Any, schema: str, definition: str | None) -> str | None:
    """The path of the first offence of ``record`` (built from ``data``), or ``None``."""
    node: Any = _document(schema)
    if definition is not None:
        node = node["$defs"][definition]
    wrong = _gate(type(record), node, schema)(record, data)
    return None if wrong is None else "$" + wrong


def _gate(cls: type[Any], node: Any, here: str) -> _Gate:
    """The gate of ``cls`` read against the (resolved) schema ``node`` (``None``: types only)."""
    key = (cls, id(node))
    known = _GATES.get(key)
    if known is not None:
        return known
    hints = typing.get_type_hints(cls)
    fields = attrs.fields(cls)
    properties = node.get("properties", {}) if isinstance(node, dict) else {}
    defaulted = {field.name for field in fields if field.default is not attrs.NOTHING}
    required = node.get("required", ()) if isinstance(node, dict) else ()
    gate = _Gate(
        tuple(
            (field.name, _check_of(hints[field.name], properties.get(field.name), here))
            for field in fields
        ),
        tuple(name for name in required if name in defaulted),
    )
    _GATES[key] = gate  # the schema documents stay loaded, so id(node) stays theirs
    return gate


def _check_of(hint: Any, node: Any, here: str) -> _Check:
    """A checker for one declared type (``node``: the field's schema, if known)."""
    origin = typing.get_origin(hint)
    if hint is Any or hint is object:
        return _anything
    if hint in _SCALARS:
        return _exactly(hint)
    if origin is Literal:
        allowed = tuple((type(arg), arg) for arg in typing.get_args(hint))
        return lambda value, data: None if (type(value), value) in allowed else ""
    if origin is Union or origin is types.UnionType:
        branches = tuple(_check_of(arg, node, here) for arg in typing.get_args(hint))
        return lambda value, data: (
            None if any(branch(value, data) is None for branch in branches) else ""
        )
    if origin is tuple:
        args = typing.get_args(hint)
        items, there = _branch(node, here, "items")
        item = _check_of(args[0], items["items"] if items else None, there) if args else _anything
        return lambda value, data: _items(value, data, item)
    if origin is dict or origin is typing.Mapping or hint is dict:
        return lambda value, data: None if isinstance(value, dict) else ""
    if isinstance(hint, type) and attrs.has(hint):
        inner, there = _branch(node, here, "properties")
        gate = _gate(hint, inner, there)
        return lambda value, data: gate(value, data) if type(value) is hint else ""
    return _anything  # a type no JSON value builds (the record's own validator decides)


def _anything(value: Any, data: Any) -> str | None:
    del value, data
    return None


class _SchemaDecides(Exception):
    """A built value differs from the one given: only the schema can judge the given one."""


def _exactly(kind: type[Any]) -> _Check:
    if kind is float:  # JSON has one number type; an integer is a valid float
        return lambda value, data: None if type(value) in (int, float) else ""
    if kind is str:
        return _string
    return lambda value, data: None if type(value) is kind else ""


def _string(value: Any, data: Any) -> str | None:
    """A string field; one the record rewrote (a derived ref given as ``""``, ...) holds
    only if the schema accepts what was given, which the walk alone cannot tell."""
    if type(value) is not str:
        return ""
    if value != data:
        raise _SchemaDecides
    return None


def _items(value: Any, data: Any, item: _Check) -> str | None:
    if type(value) is not tuple:
        return ""
    given = data if type(data) is list and len(data) == len(value) else [None] * len(value)
    for index, element in enumerate(value):
        wrong = item(element, given[index])
        if wrong is not None:
            return f"[{index}]{wrong}"
    return None


def strict_packet(data: Any, cls: type[T]) -> T:
    """:func:`~reward_memory.records._plain.load_plain` in one strict pass: a packet of
    ``cls`` (its ``schema_version`` names the schema), built by :func:`strict_record`.

    Raises:
        RecordValidationError: not an object, no ``schema_version``, or the
            schema's (else the record's) first error, with its field path.
    """
    expected = str(attrs.fields_dict(cast("type[Any]", cls))["schema_version"].default)
    if not isinstance(data, dict):
        raise RecordValidationError("a packet must be a JSON object", code="wrong_type")
    if "schema_version" not in data:
        raise RecordValidationError(
            "schema_version is missing", path="$.schema_version", code="schema_version_missing"
        )
    return strict_record(cls, data, expected)
