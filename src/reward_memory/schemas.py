"""The bundled JSON Schemas (Draft 2020-12), resolved offline.

The canonical copy lives in the repository's top-level ``schemas/`` and ships
inside the wheel as ``reward_memory/schemas``. One :class:`referencing.Registry`
is built on first use from those files alone, so a ``$ref`` can never reach
the network; validators are compiled once per schema and cached.

A schema's file name is ``<schema_version>.schema.json``; ``common.schema.json``
holds the shared value grammars (``$defs``) the packet schemas refer to.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import json
import os
import re
from typing import TYPE_CHECKING, Any, Final

from reward_memory.errors import RecordValidationError, SchemaError, join_path

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping
    from importlib.resources.abc import Traversable

    import jsonschema
    import referencing

__all__ = [
    "SCHEMA_BASE_URI",
    "get_schema",
    "schema_dir",
    "schema_names",
    "validate",
    "validate_definition",
    "validator_for",
]

SCHEMA_BASE_URI: Final = "https://reward-memory.dev/schemas/"
_SUFFIX: Final = ".schema.json"
_SCHEMA_VERSION_PATH: Final = "$.schema_version"
_MAX_ERRORS: Final = 1000
_NAME: Final = re.compile(r"[a-z][a-z0-9_]*")
_FILE_REF: Final = re.compile(r"[a-z][a-z0-9_]*\.schema\.json")


def schema_dir() -> Traversable:
    """Where the bundled schemas are read from.

    An installed wheel carries them as package data; an editable install of a
    source checkout reads the top-level ``schemas/`` it was installed from. The
    file system is asked first: ``importlib.resources`` (and the ``zipfile`` it
    imports) costs a verb ~7 ms of start-up, and only a zipped install needs it.
    """
    from pathlib import Path  # noqa: PLC0415 - off the import path (urllib.parse, ipaddress)

    package = Path(__file__).resolve().parent
    for candidate in (package / "schemas", package.parents[1] / "schemas"):
        if candidate.is_dir():
            return candidate
    from importlib import resources  # noqa: PLC0415 - a zipped install only

    packaged = resources.files("reward_memory").joinpath("schemas")
    if packaged.is_dir():
        return packaged
    raise SchemaError("the bundled JSON Schemas are missing from this installation")


@functools.cache
def _directory() -> Any:
    """:func:`schema_dir` found with ``os.path`` (a ``str``), else its ``Traversable``.

    ``pathlib`` (with the ``urllib.parse`` and ``ipaddress`` it imports) costs a
    verb ~3 ms of start-up: the documents are read without it.
    """
    package = os.path.dirname(os.path.realpath(__file__))  # noqa: PTH120 - no pathlib
    for candidate in (package, os.path.dirname(os.path.dirname(package))):  # noqa: PTH120
        where = os.path.join(candidate, "schemas")  # noqa: PTH118
        if os.path.isdir(where):  # noqa: PTH112
            return where
    return schema_dir()


@functools.cache
def _documents() -> Mapping[str, dict[str, Any]]:
    where = _directory()
    if isinstance(where, str):
        found = os.listdir(where)  # noqa: PTH208 - no pathlib
    else:
        found = [entry.name for entry in where.iterdir()]
    return {
        name.removesuffix(_SUFFIX): _one(name.removesuffix(_SUFFIX))
        for name in found
        if name.endswith(_SUFFIX)
    }


@functools.cache
def _one(name: str) -> dict[str, Any]:
    """One schema document by file stem, read once (``common`` included)."""
    where = _directory()
    text = None
    if _NAME.fullmatch(name) is not None:
        if isinstance(where, str):
            path = os.path.join(where, name + _SUFFIX)  # noqa: PTH118 - no pathlib
            with contextlib.suppress(FileNotFoundError), open(path, encoding="utf-8") as handle:  # noqa: PTH123
                text = handle.read()
        elif where.joinpath(name + _SUFFIX).is_file():
            text = where.joinpath(name + _SUFFIX).read_text(encoding="utf-8")
    if text is None:
        raise SchemaError(f"no bundled schema is named {name!r}", code="unknown_schema")
    document: dict[str, Any] = json.loads(text)
    return document


def schema_names() -> list[str]:
    """Every packet schema's name (its ``schema_version``), sorted; ``common`` excluded."""
    return sorted(name for name in _documents() if name != "common")


def get_schema(name: str) -> dict[str, Any]:
    """The schema document for ``name`` (a ``schema_version``), as parsed JSON."""
    try:
        return _documents()[name]
    except KeyError:
        raise SchemaError(f"no bundled schema is named {name!r}", code="unknown_schema") from None


@functools.cache
def _validated_documents() -> Mapping[str, dict[str, Any]]:
    return {name: _validated(name) for name in _documents()}


@functools.cache
def _validated(name: str) -> dict[str, Any]:
    # Every file declares Draft 2020-12 in "$schema", and jsonschema re-picks the
    # validator class from "$schema" at each $ref: our extended class (below)
    # would be dropped there. Validation copies leave the key out; the dialect
    # is still 2020-12 (the registry's default specification).
    return {key: value for key, value in _one(name).items() if key != "$schema"}


def _resources(documents: Iterator[dict[str, Any]]) -> referencing.Registry[Any]:
    from referencing import Registry, Resource  # noqa: PLC0415 - jsonschema is off the import path
    from referencing.jsonschema import DRAFT202012  # noqa: PLC0415

    registry: referencing.Registry[Any] = Registry().with_resources(
        (document["$id"], Resource.from_contents(document, default_specification=DRAFT202012))
        for document in documents
    )
    return registry.crawl()


@functools.cache
def _registry() -> referencing.Registry[Any]:
    """Every bundled document, crawled."""
    return _resources(iter(_validated_documents().values()))


@functools.cache
def _registry_for(name: str) -> referencing.Registry[Any]:
    """The documents ``name`` reaches through ``$ref``, crawled: what its validator resolves.

    Only an error is named this way, usually once in a process: reading and
    crawling all the documents would cost that error packet several ms. Each
    document has exactly one ``$id`` (its file's URI) and no anchors, so these
    are the only resources a lookup from ``name`` can reach; a ref of another
    shape takes the whole registry.
    """
    reached: dict[str, dict[str, Any]] = {}
    pending = [name]
    while pending:
        current = pending.pop()
        if current in reached:
            continue
        document = reached[current] = _validated(current)
        if document.get("$id") != SCHEMA_BASE_URI + current + _SUFFIX:
            return _registry()
        for ref in _refs(document):
            target = ref.partition("#")[0]
            if not target:
                continue
            if _FILE_REF.fullmatch(target) is None:
                return _registry()
            pending.append(target.removesuffix(_SUFFIX))
    return _resources(iter(reached.values()))


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield value
            else:
                yield from _refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _refs(value)


@functools.cache
def validator_for(name: str) -> jsonschema.protocols.Validator:
    """A compiled Draft 2020-12 validator for the named schema (built once)."""
    validator: jsonschema.protocols.Validator = _validator_class()(
        _validated(name),  # an unknown name is a SchemaError
        registry=_registry_for(name),
    )
    return validator


@functools.cache
def _validator_class() -> Any:
    from jsonschema import Draft202012Validator, validators  # noqa: PLC0415

    # Validation time must follow the input's size, not its square, nor its
    # number of errors: jsonschema compares unsortable uniqueItems (objects)
    # pairwise, and anyOf collects every error of a failed branch.
    return validators.extend(  # type: ignore[no-untyped-call]
        Draft202012Validator, {"uniqueItems": _unique_items, "anyOf": _any_of}
    )


def _any_of(validator: Any, branches: Any, instance: Any, schema: Any) -> Iterator[Any]:
    from jsonschema import ValidationError  # noqa: PLC0415

    del schema
    failures: list[Any] = []
    for index, branch in enumerate(branches):
        found = validator.descend(instance, branch, schema_path=index)
        errors = list(itertools.islice(found, _MAX_ERRORS))
        if not errors:
            return
        failures.extend(errors)
    yield ValidationError("is not valid under any of the given schemas", context=failures)


def _unique_items(validator: Any, unique: Any, instance: Any, schema: Any) -> Iterator[Any]:
    """Hash each item's frozen form: linear, with the same JSON equality."""
    from jsonschema import Draft202012Validator, ValidationError  # noqa: PLC0415

    if unique and validator.is_type(instance, "array"):
        try:
            frozen = [_frozen(item) for item in instance]
            distinct = len(set(frozen)) == len(frozen)
        except TypeError:  # not JSON data (a Python caller's set, ...): jsonschema's own way
            yield from Draft202012Validator.VALIDATORS["uniqueItems"](
                validator, unique, instance, schema
            )
            return
        if not distinct:
            yield ValidationError("has non-unique elements")


def _frozen(value: Any) -> Any:
    """A hashable stand-in equal exactly when the JSON values are (1 == 1.0, true != 1)."""
    if isinstance(value, bool):
        return (bool, value)
    if isinstance(value, dict):
        return (dict, frozenset((key, _frozen(item)) for key, item in value.items()))
    if isinstance(value, list | tuple):
        return (list, tuple(_frozen(item) for item in value))
    return value


def _path_of(error: jsonschema.ValidationError) -> str:
    path = "$"
    for part in error.absolute_path:
        path = join_path(path, part)
    return path


def _iter_leaves(error: jsonschema.ValidationError) -> Iterator[jsonschema.ValidationError]:
    if error.context:
        for child in error.context:
            yield from _iter_leaves(child)
    else:
        yield error


def _translate(error: jsonschema.ValidationError) -> RecordValidationError:
    """Map one jsonschema error onto our codes; never echo the offending value."""
    from jsonschema.exceptions import best_match  # noqa: PLC0415

    if error.context:
        # best_match descends into anyOf/oneOf itself and prefers the branch
        # that got furthest (a bad token, not "must be null").
        error = best_match([error])
    path = _path_of(error)
    keyword = error.validator
    value: Any = error.validator_value
    given: Any = error.instance
    if keyword in ("additionalProperties", "unevaluatedProperties"):
        instance = given if isinstance(given, dict) else {}
        allowed = error.schema.get("properties", {}) if isinstance(error.schema, dict) else {}
        extras = sorted(key for key in instance if key not in allowed)
        first = join_path(path, extras[0]) if extras else path
        names = ", ".join(extras)
        return RecordValidationError(f"unknown field: {names}", path=first, code="unknown_field")
    if keyword == "required":
        missing = [key for key in value if key not in given]
        target = join_path(path, missing[0]) if missing else path
        return RecordValidationError("required field is missing", path=target, code="missing_field")
    if keyword == "type":
        shown = value if isinstance(value, str) else " or ".join(value)
        return RecordValidationError(f"must be of type {shown}", path=path, code="wrong_type")
    if keyword == "maxLength":
        return RecordValidationError(
            f"is over the limit of {error.validator_value} characters; "
            "it is rejected, not truncated",
            path=path,
            code="text_too_long",
        )
    from reward_memory.text import find_unsafe  # noqa: PLC0415 - only on the error path

    if keyword == "pattern" and isinstance(given, str) and find_unsafe(given) == "unsafe_character":
        # The same code the records give (reward_memory.text): a control character
        # or a lone surrogate, named without echoing it.
        return RecordValidationError(
            "contains a control character or a lone surrogate",
            path=path,
            code="unsafe_character",
        )
    if keyword in ("pattern", "minLength", "format"):
        return RecordValidationError(
            "does not match the required grammar", path=path, code="invalid_format"
        )
    if keyword in ("const", "enum"):
        choices = [value] if keyword == "const" else list(value)
        shown = ", ".join(json.dumps(choice) for choice in choices)
        code = "schema_version_unsupported" if path == _SCHEMA_VERSION_PATH else "invalid_value"
        return RecordValidationError(f"must be one of: {shown}", path=path, code=code)
    if keyword in ("minItems", "maxItems", "uniqueItems", "minimum", "maximum"):
        return RecordValidationError(
            f"violates {keyword} {json.dumps(error.validator_value)}",
            path=path,
            code="invalid_value",
        )
    return RecordValidationError(f"violates {keyword}", path=path, code="invalid_value")


def validate(instance: Any, name: str | None = None) -> str:
    """Validate a packet against its schema; return the schema name used.

    Without ``name`` the packet's own ``schema_version`` selects the schema.
    Raises :class:`RecordValidationError` (field path named) on any mismatch,
    and :class:`~reward_memory.errors.InputError` for data past the bounds of
    :func:`reward_memory.jsonio.check_data`.
    """
    if not isinstance(instance, dict):
        raise RecordValidationError("a packet must be a JSON object", code="wrong_type")
    if name is None:
        version = instance.get("schema_version")
        if version is None:
            raise RecordValidationError(
                "schema_version is missing",
                path=_SCHEMA_VERSION_PATH,
                code="schema_version_missing",
            )
        if not isinstance(version, str) or version == "common" or version not in _documents():
            raise RecordValidationError(
                "schema_version names no packet this library knows",
                path=_SCHEMA_VERSION_PATH,
                code="schema_version_unsupported",
            )
        name = version
    check = _compiled(name)
    if check is not None and check(instance):
        return name
    reference_check(instance, name)
    return name


def reference_check(instance: Any, name: str, definition: str | None = None) -> None:
    """The reference path of :func:`validate` (``definition``: of :func:`validate_definition`).

    It names the error (or accepts what the compiled check was conservative
    about). :mod:`reward_memory._boundary` calls it directly for data its strict
    walk refused: compiling the fast check there would only be paid to fail.
    """
    # Data built in Python meets the bounds parsed JSON meets (depth, cycles,
    # number range, ...) before jsonschema recurses into it or repr()s it.
    from reward_memory import jsonio  # noqa: PLC0415

    jsonio.check_data(instance)
    _refuse_over_long(instance)
    if definition is None:
        _check_version(instance, name)
    validator = (
        validator_for(name) if definition is None else _definition_validator(name, definition)
    )
    # The best error is chosen among the first _MAX_ERRORS: each costs tens of
    # microseconds, and a 4 MiB list of bad items would otherwise yield 10**5.
    errors = itertools.islice(validator.iter_errors(instance), _MAX_ERRORS)
    error = next(iter(sorted(errors, key=_error_order)), None)
    if error is not None:
        raise _translate(error)


# No packet allows a longer list (the largest maxItems of the bundled schemas; a test
# holds the two together). jsonschema looks every item of a list up through its $ref
# before it reports the list too long: 200,000 items took seconds.
MAX_LIST_ITEMS: Final = 10_000


def _refuse_over_long(instance: Any) -> None:
    """Raise the schema's maxItems error for the first list no schema allows, at once."""
    stack: list[tuple[Any, str]] = [(instance, "$")]
    while stack:
        value, path = stack.pop()
        if isinstance(value, list) and len(value) > MAX_LIST_ITEMS:
            raise RecordValidationError(
                f"violates maxItems: no packet allows more than {MAX_LIST_ITEMS} items",
                path=path,
                code="invalid_value",
            )
        if isinstance(value, dict):
            pairs: Any = value.items()
        elif isinstance(value, list):
            pairs = enumerate(value)
        else:
            continue
        # Only containers are walked into (a path is built for them alone).
        stack.extend(
            (item, join_path(path, key))
            for key, item in reversed(list(pairs))
            if isinstance(item, dict | list)
        )


def _check_version(instance: Any, name: str) -> None:
    """Raise the reference path's error for a packet of another kind, without ``jsonschema``.

    A file of the wrong kind is the commonest bad input, and ``jsonschema`` costs
    an error packet ~40 ms to import and build. The answer is fixed here: the
    error at ``$.schema_version`` sorts first (:func:`_error_order`), and it is
    the only error there when the schema says no more of it than ``const``; it is
    among the first errors jsonschema yields (so never cut off by
    ``_MAX_ERRORS``) when only scalar properties (``ok``) come before it, and
    only ``type``, ``additionalProperties`` and ``required`` (a few errors each)
    before ``properties``. Any other shape takes the reference path.
    """
    if not isinstance(instance, dict) or "schema_version" not in instance:
        return
    const = _version_const(name)
    if const is _NO_CONST:
        return
    given = instance["schema_version"]
    if type(given) is str and given == const:
        return
    raise RecordValidationError(
        f"must be one of: {json.dumps(const)}",
        path=_SCHEMA_VERSION_PATH,
        code="schema_version_unsupported",
    )


_NO_CONST: Final = object()
_BEFORE_PROPERTIES: Final = frozenset({"type", "additionalProperties", "required"})


@functools.cache
def _version_const(name: str) -> Any:
    """The ``schema_version`` constant of ``name`` if :func:`_check_version` may decide."""
    document = _validated(name)
    for key in document:
        if key == "properties":
            break
        if key not in _BEFORE_PROPERTIES and key not in _ANNOTATIONS:
            return _NO_CONST
    else:
        return _NO_CONST
    properties = document["properties"]
    if not isinstance(properties, dict) or "schema_version" not in properties:
        return _NO_CONST
    for key, before in properties.items():
        if key == "schema_version":
            break
        if not _scalar(before):  # a few errors at most, none at schema_version
            return _NO_CONST
    node = properties["schema_version"]
    if not isinstance(node, dict) or set(node) != {"const"} or type(node["const"]) is not str:
        return _NO_CONST
    if any(not _plain(document.get(key)) for key in _BEFORE_PROPERTIES if key in document):
        return _NO_CONST
    return node["const"]


def _plain(node: Any) -> bool:
    # type "object", additionalProperties false, required [names]: one error each at
    # most (required: one per missing name), all at the root, none at schema_version.
    return (
        node == "object"
        or node is False
        or (isinstance(node, list) and all(type(item) is str for item in node))
    )


def _scalar(node: Any) -> bool:
    # At most a scalar type with const / enum (``"ok"`` of an output packet): <= 3 errors.
    return (
        isinstance(node, dict)
        and set(node) <= {"type", "const", "enum", "description", "title"}
        and node.get("type", "null") in ("boolean", "string", "integer", "number", "null")
    )


# Keywords that only annotate (they yield no error).
_ANNOTATIONS: Final = frozenset({"$id", "title", "description", "$comment", "$defs", "examples"})


@functools.cache
def _compiled(name: str, definition: str | None = None) -> Callable[[Any], bool] | None:
    """The schema (or its ``$defs/definition``) as a compiled predicate; ``None``: untranslated.

    ``True`` only for data the reference path (``check_data`` + jsonschema) accepts
    (see :mod:`reward_memory._schema_check`); ``False`` sends the data there.
    """
    from reward_memory._schema_check import compile_node  # noqa: PLC0415

    documents = _validated_documents()
    pointer = "" if definition is None else f"/$defs/{definition}"
    if definition is not None and definition not in documents[name].get("$defs", {}):
        return None
    return compile_node(documents, documents[name], pointer)


@functools.cache
def _definition_validator(name: str, definition: str) -> jsonschema.protocols.Validator:
    document = _validated(name)
    if definition not in document.get("$defs", {}):
        raise SchemaError(f"{name} has no definition {definition}")
    ref = {"$ref": f"{document['$id']}#/$defs/{definition}"}
    return validator_for(name).evolve(schema=ref)


def validate_definition(instance: Any, name: str, definition: str) -> None:
    """Validate a part of a packet (``instance``) against ``name``'s ``$defs/definition``.

    For documents that embed records without their own ``schema_version`` (a
    corpus, a provider binding): the same strict type gate as :func:`validate`,
    with field paths relative to ``instance``.
    """
    get_schema(name)
    check = _compiled(name, definition)
    if check is not None and check(instance):
        return
    reference_check(instance, name, definition)


def _error_order(error: jsonschema.ValidationError) -> tuple[int, int, str]:
    # Report the schema_version problem first, then the shallowest error, so the
    # message points at the real cause rather than a consequence of it.
    path = list(error.absolute_path)
    return (0 if path == ["schema_version"] else 1, len(path), str(path))
