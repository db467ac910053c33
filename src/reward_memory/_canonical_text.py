"""The canonical JSON text of a record, written once per ingest (the stored document).

Exactly ``digests._CANONICAL.encode(to_plain(record))`` -- sorted keys, no
spaces, non-ASCII kept, ``None`` left out of records that declare
``__rm_omit_none__`` -- by the fastest of three writers that gives those bytes:

1. orjson over one nested dict a compiled per-class function builds from the
   record (each exact record class it holds built the same way) -- only for a record
   class whose every field is declared ``str``, ``bool``, ``None``, a
   ``Literal`` of strings or booleans, ``tuple[str, ...]`` or another such
   record (the active record and its blocks). orjson writes exactly what the
   standard encoder writes for those (see :mod:`reward_memory.digests`); any
   other value at run time -- a ``str`` subclass, a record subclass, left as
   it is -- is refused by orjson (no ``default``) and the next writer takes over;
2. orjson over the plain form built by a compiled per-class builder that
   admits only exact ``str``, ``int``, ``bool``, ``None``, lists and str-keyed
   dicts (a record holding free JSON, such as a model decision's output);
3. ``to_plain`` and the standard encoder: floats, subclasses, lone
   surrogates, integers beyond 64 bits, and wherever orjson is not in use.

``tests/test_ingest.py`` holds every writer equal to the standard encoder.
"""

from __future__ import annotations

import functools
import sys
import types
import typing
from typing import TYPE_CHECKING, Any, Literal, Union

import attrs

from reward_memory.digests import _CANONICAL, sorted_dumps
from reward_memory.records._plain import to_plain

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["canonical_text"]


def canonical_text(record: Any) -> str:
    """The canonical JSON text of ``record``'s plain form (see the module docs)."""
    dumps = sorted_dumps()
    if dumps is not None:
        kind = type(record)
        if _hookable(kind):
            try:
                return _hooked()(record).decode("utf-8")
            except TypeError:
                pass  # a value the hook refuses, or orjson cannot write: the next writer
        try:
            return dumps(_plain(record)).decode("utf-8")
        except (_Unplain, TypeError, RecursionError):
            pass  # the standard encoder below gives the text
    return _CANONICAL.encode(to_plain(record))


# -- 1. orjson over one nested dict, built by a compiled function per record class ------------

# Per hookable record class: its fields as a dict, each field that may hold a
# record built the same way (a call per record object, not an orjson callback).
_DEEP: dict[type[Any], Callable[[Any], dict[str, Any]]] = {}
_HOOKABLE: dict[type[Any], bool] = {}


def _hookable(kind: type[Any]) -> bool:
    known = _HOOKABLE.get(kind)
    if known is None:
        _HOOKABLE[kind] = False  # a record that (indirectly) holds itself: not hookable
        try:
            known = _safe_record(kind)
        except Exception:  # noqa: BLE001 - hints that do not resolve: the next writer
            known = False
        _HOOKABLE[kind] = known
        if known:
            _DEEP[kind] = _deep_builder(kind)
    return known


def _safe_record(kind: type[Any]) -> bool:
    if not attrs.has(kind):
        return False
    hints = typing.get_type_hints(kind)
    return all(_safe_hint(hints[field.name]) for field in attrs.fields(kind))


def _safe_hint(hint: Any) -> bool:
    if _scalar_hint(hint):
        return True
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is Union or origin is types.UnionType:
        return all(_safe_hint(arg) for arg in args)
    return isinstance(hint, type) and _hookable(hint)


def _scalar_hint(hint: Any) -> bool:
    """A hint whose values orjson writes natively (no record among them)."""
    if hint is str or hint is bool or hint is type(None):
        return True
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is Literal:
        return all(type(arg) is str or type(arg) is bool for arg in args)
    if origin is Union or origin is types.UnionType:
        return all(_scalar_hint(arg) for arg in args)
    if origin is tuple:
        return len(args) == 2 and args[0] is str and args[1] is Ellipsis
    return False


def _nested(value: Any) -> Any:
    # Only the exact record classes found safe are expanded: a subclass (which may
    # add fields or change types) or any other object is left as it is, and
    # orjson, which has no default here, refuses it (TypeError).
    build = _DEEP.get(type(value))
    return value if build is None else build(value)


def _deep_builder(kind: type[Any]) -> Callable[[Any], dict[str, Any]]:
    hints = typing.get_type_hints(kind)
    names = [field.name for field in attrs.fields(kind)]
    if not all(name.isidentifier() for name in names):  # pragma: no cover - attrs fields are
        raise TypeError(f"{kind.__name__}: field names must be identifiers")
    # A field declared to hold only scalars is handed over as it is; whatever it
    # holds at run time, orjson writes it natively or refuses it.
    display = (
        "{"
        + ", ".join(
            f"{name!r}: r.{name}" if _scalar_hint(hints[name]) else f"{name!r}: v(r.{name})"
            for name in names
        )
        + "}"
    )
    if getattr(kind, "__rm_omit_none__", False):
        source = (
            f"def deep(r):\n    d = {display}\n"
            "    return {k: x for k, x in d.items() if x is not None}\n"
        )
    else:
        source = f"def deep(r):\n    return {display}\n"
    namespace: dict[str, Any] = {"v": _nested}
    exec(compile(source, f"<deep {kind.__name__}>", "exec"), namespace)  # noqa: S102 - field names only
    deep: Callable[[Any], dict[str, Any]] = namespace["deep"]
    return deep


@functools.cache
def _hooked() -> Callable[[Any], bytes]:
    orjson: Any = sys.modules["orjson"]  # sorted_dumps() imported it
    option = (
        orjson.OPT_SORT_KEYS
        | orjson.OPT_PASSTHROUGH_SUBCLASS  # a str subclass: refused (no default)
        | orjson.OPT_PASSTHROUGH_DATETIME
        | orjson.OPT_PASSTHROUGH_DATACLASS
    )
    dumps = functools.partial(orjson.dumps, option=option)

    def write(record: Any) -> bytes:
        written: bytes = dumps(_DEEP[type(record)](record))
        return written

    return write


# -- 2. orjson over a checked plain form ----------------------------------------------------


class _Unplain(Exception):
    """A value orjson might write differently from the standard encoder."""


# Per record class: a function giving its plain form (see canonical_text).
_BUILDERS: dict[type[Any], Callable[[Any], Any]] = {}


def _plain(value: Any) -> Any:
    kind = type(value)
    if kind is str or kind is bool or kind is int or value is None:
        return value
    build = _BUILDERS.get(kind)
    if build is not None:
        return build(value)
    if kind is tuple or kind is list:
        return [_plain(item) for item in value]
    if kind is dict:
        if not all(type(key) is str for key in value):
            raise _Unplain
        return {key: _plain(item) for key, item in value.items()}
    if attrs.has(kind):
        return _builder(kind)(value)
    raise _Unplain  # floats, subclasses, anything else: the standard encoder decides


def _builder(kind: type[Any]) -> Callable[[Any], Any]:
    """Compile the plain-form builder of one record class (one dict display)."""
    names = [field.name for field in attrs.fields(kind)]
    if not all(name.isidentifier() for name in names):  # pragma: no cover - attrs fields are
        raise TypeError(f"{kind.__name__}: field names must be identifiers")
    display = "{" + ", ".join(f"{name!r}: v(r.{name})" for name in names) + "}"
    if getattr(kind, "__rm_omit_none__", False):
        # A None field is left out (as to_plain does).
        source = (
            f"def build(r):\n    d = {display}\n"
            "    return {k: x for k, x in d.items() if x is not None}\n"
        )
    else:
        source = f"def build(r):\n    return {display}\n"
    namespace: dict[str, Any] = {"v": _plain}
    exec(compile(source, f"<plain builder {kind.__name__}>", "exec"), namespace)  # noqa: S102 - field names only
    build: Callable[[Any], Any] = namespace["build"]
    _BUILDERS[kind] = build
    return build
