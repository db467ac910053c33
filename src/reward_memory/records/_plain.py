"""The strict structurer: parsed JSON into attrs records and back, without the converter.

Every parse of JSON into records goes through :func:`from_plain`: ``wire.load``
(after the schema), :func:`load_plain` (the boundary of ``propose``, ``review``
and the CLI verbs), a stored record (``records.active.load_stored``) and a
provider readback on the recall path. The rules are strict where cattrs is
lenient and the record validators cannot see: exact key sets (unknown and
missing keys are errors), objects only where a record is nested (or a mapping
is declared), lists only where a sequence is; every grammar and type rule is
the records' own. Lists become tuples.

Two ways, one result. :func:`from_plain` first runs the builder generated for
the class (:mod:`reward_memory.records._onepass`: the same rules in one pass,
one joined secret/path scan); anything it does not settle goes to
:func:`_walk`, the reference walk through the validating constructors, which
builds the record or raises the error with its field path. Errors are
:class:`~reward_memory.errors.RecordValidationError` whose path is rooted at
the top-level object (``$.request.queries[0].query``).

:func:`to_plain` is the other direction. Both produce exactly what the cattrs
converter in :mod:`reward_memory.wire` produces; ``tests/test_plain.py`` holds
them to that for every packet type, and ``tests/test_onepass.py`` holds the
builders to the walk. The converter is kept for ``wire.dump`` and
``wire.structure`` (data structured without a schema); no load goes through it.
"""

from __future__ import annotations

import typing
from collections.abc import Mapping
from typing import Any, Final, TypeVar, cast

import attrs

from reward_memory._frozen import frozen
from reward_memory.errors import RecordValidationError, join_path
from reward_memory.records._onepass import all_safe, generate

__all__ = ["as_record", "built", "from_plain", "load_plain", "to_plain"]

T = TypeVar("T")


@frozen
class _Plan:
    names: frozenset[str]
    required: frozenset[str]
    nested: dict[str, type[Any]]  # field -> record class of a nested record
    sequences: dict[str, type[Any]]  # field -> record class of a tuple of records
    mappings: frozenset[str]  # fields declared as plain mappings
    nullable: frozenset[str] = frozenset()  # nested record fields that may be null


_PLANS: Final[dict[type[Any], _Plan]] = {}


def _record_class(hint: Any) -> type[Any] | None:
    if isinstance(hint, type) and attrs.has(hint):
        return hint
    return None


def _plan(cls: type[Any]) -> _Plan:
    known = _PLANS.get(cls)
    if known is not None:
        return known
    hints = typing.get_type_hints(cls)
    names: set[str] = set()
    required: set[str] = set()
    nested: dict[str, type[Any]] = {}
    sequences: dict[str, type[Any]] = {}
    mappings: set[str] = set()
    nullable: set[str] = set()
    for field in attrs.fields(cls):
        names.add(field.name)
        if field.default is attrs.NOTHING:
            required.add(field.name)
        hint = hints[field.name]
        if hint is Any:  # opaque JSON (an application's output): an object is a value here
            mappings.add(field.name)
            continue
        origin = typing.get_origin(hint)
        if origin is tuple:
            args = typing.get_args(hint)
            inner = _record_class(args[0]) if args else None
            if inner is not None:
                sequences[field.name] = inner
            continue
        if origin is dict:
            mappings.add(field.name)
            continue
        candidates = typing.get_args(hint) if origin is not None else (hint,)
        for candidate in candidates:
            if candidate is dict or typing.get_origin(candidate) is dict:
                mappings.add(field.name)
            inner = _record_class(candidate)
            if inner is not None:
                nested[field.name] = inner
                if type(None) in candidates:
                    nullable.add(field.name)
    plan = _Plan(
        names=frozenset(names),
        required=frozenset(required),
        nested=nested,
        sequences=sequences,
        mappings=frozenset(mappings),
        nullable=frozenset(nullable),
    )
    _PLANS[cls] = plan
    return plan


class _Fallback(Exception):
    """The builder met something unusual: the reference walk decides (and names it)."""


_BUILDERS: Final[dict[type[Any], Any]] = {}


def _builder(cls: type[Any]) -> Any:
    """The builder generated for ``cls`` (see :mod:`reward_memory.records._onepass`)."""
    known = _BUILDERS.get(cls)
    if known is None:
        known = _BUILDERS[cls] = generate(cls, _plan, _builder, _Fallback)
    return known


def from_plain(cls: type[Any], data: Any, path: str = "$") -> Any:
    """Build a ``cls`` record from parsed JSON ``data`` (strict; see the module docs)."""
    record = built(cls, data)
    if record is None:
        return _walk(cls, data, path)
    return record


# The classes whose first record this process has read. A class's builder is made
# for its second record: making one (compiling its source, ~0.2-0.9 ms) costs more
# than the walk of one record, and a one-shot CLI verb reads one record of a class.
_MET: Final[set[type[Any]]] = set()


def built(cls: type[Any], data: Any) -> Any:
    """The record the one-pass builder makes of ``data``; None when it does not settle it
    (then :func:`from_plain`'s reference walk gives the record or the error), and for
    the first record of ``cls`` (see ``_MET``)."""
    build = _BUILDERS.get(cls)
    if build is None and cls not in _MET:
        _MET.add(cls)
        return None
    try:
        strings: list[str] = []
        record = (build or _builder(cls))(data, strings)
        if not strings or all_safe(strings):
            return record
    except Exception:  # noqa: BLE001, S110 - the reference walk names the error
        pass
    return None


def _walk(cls: type[Any], data: Any, path: str) -> Any:
    """The reference walk: the same record as the builder, or the error with its full path."""
    if type(data) is not dict:
        raise RecordValidationError("must be an object", path=path, code="wrong_type")
    plan = _plan(cls)
    keys = data.keys()
    if not keys <= plan.names:
        extra = sorted(keys - plan.names)
        raise RecordValidationError(
            f"unknown field: {', '.join(extra)}",
            path=join_path(path, extra[0]),
            code="unknown_field",
        )
    if not plan.required <= keys:
        missing = sorted(plan.required - keys)
        raise RecordValidationError(
            "required field is missing", path=join_path(path, missing[0]), code="missing_field"
        )
    kwargs: dict[str, Any] = {}
    for key, value in data.items():
        inner = plan.nested.get(key)
        if inner is not None and value is not None:
            kwargs[key] = _walk(inner, value, join_path(path, key))
            continue
        if inner is not None and key not in plan.nullable:
            # A record field that is not optional: null is not a record.
            raise RecordValidationError(
                "must be an object", path=join_path(path, key), code="wrong_type"
            )
        inner = plan.sequences.get(key)
        if inner is not None:
            where = join_path(path, key)
            if type(value) is not list:
                raise RecordValidationError("must be a list", path=where, code="wrong_type")
            kwargs[key] = tuple(
                _walk(inner, item, join_path(where, index)) for index, item in enumerate(value)
            )
        elif type(value) is list:
            kwargs[key] = tuple(value)
        elif type(value) is dict and key not in plan.mappings:
            raise RecordValidationError(
                "must not be an object", path=join_path(path, key), code="wrong_type"
            )
        else:
            kwargs[key] = value
    try:
        return cls(**kwargs)
    except RecordValidationError as exc:
        if path == "$":
            raise
        # The validator named its field relative to this record: re-root it here.
        clone = exc.under("$")
        clone.path = path + (exc.path[1:] if exc.path.startswith("$") else exc.path)
        raise clone from None


_VERSIONS: Final[dict[type[Any], str]] = {}


def _version_of(cls: type[Any]) -> str:
    known = _VERSIONS.get(cls)
    if known is None:
        known = _VERSIONS[cls] = cast("str", attrs.fields_dict(cls)["schema_version"].default)
    return known


def load_plain(data: Any, cls: type[T]) -> T:
    """Validate ``data`` against ``cls``'s packet schema, then build the record (no cattrs).

    Raises:
        RecordValidationError: not an object, no or another ``schema_version``,
            or anything the schema or the record refuses (field path named).
    """
    from reward_memory import schemas  # noqa: PLC0415 - the JSON boundary only

    expected = _version_of(cast("type[Any]", cls))
    if not isinstance(data, dict):
        raise RecordValidationError("a packet must be a JSON object", code="wrong_type")
    if "schema_version" not in data:
        raise RecordValidationError(
            "schema_version is missing", path="$.schema_version", code="schema_version_missing"
        )
    schemas.validate(data, expected)
    return cast("T", from_plain(cls, data))


def to_plain(record: Any) -> Any:
    """JSON-ready data for a record: fields in declaration order, tuples as lists,
    ``None`` left out of records that declare ``__rm_omit_none__``."""
    if attrs.has(type(record)):
        omit_none = getattr(record, "__rm_omit_none__", False)
        plain: dict[str, Any] = {}
        for field in attrs.fields(type(record)):
            value = getattr(record, field.name)
            if value is None and omit_none:
                continue
            plain[field.name] = to_plain(value)
        return plain
    if isinstance(record, tuple | list):
        return [to_plain(item) for item in record]
    if isinstance(record, dict):
        return {key: to_plain(value) for key, value in record.items()}
    return record


def as_record(value: object, cls: type[T], *, what: str, path: str = "$") -> T:
    """``value`` if it is already a ``cls`` record; a mapping goes through :func:`load_plain`.

    The typed path costs one ``isinstance``; only untyped input pays for the
    schema. Anything else is a ``wrong_type`` error naming what was expected.
    """
    if isinstance(value, cls):
        return value
    if isinstance(value, Mapping):
        if path == "$":
            return load_plain(dict(value), cls)
        try:
            return load_plain(dict(value), cls)
        except RecordValidationError as exc:
            # Named under the argument it came in (``checkpoint.verified``), so a bad
            # checkpoint is not mistaken for the proposal's field of the same name.
            raise exc.rooted_at(path) from None
    version = attrs.fields_dict(cast("type[Any]", cls))["schema_version"].default
    raise RecordValidationError(
        f"{what} is a {cls.__name__} or a {version} object", path=path, code="wrong_type"
    )
