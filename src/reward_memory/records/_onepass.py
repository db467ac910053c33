"""One strict pass from parsed JSON to a record: the builders behind ``_plain.from_plain``.

A record built by its constructor runs one validator per field, and each
validator scans its string for secrets and local paths on its own (dozens of
regex runs and calls for a stored active record). The builder generated here
for a record class checks the same rules in one pass over the data instead:

- each field by the grammar its ``_fields`` helper records in its metadata
  (``_fields.KIND``): type, pattern, length, choices; text must already be in
  its compact form and a timestamp in its stored spelling, a list sorted and
  duplicate-free where the record sorts it -- so the record it builds is the
  one the constructor would build, value for value;
- every string that the validators would scan is collected, and the caller
  scans them all at once (:func:`all_safe`: one hygiene check and one
  prefilter pass over the joined text);
- the tokens (most of a stored record's strings) are collected as they are met
  and their grammar checked at once, one pattern over them joined, before the
  cross-field rules run (:func:`_tokens_ok`); an unknown key is found by count
  (a block's keys are its fields less the absent ones; a missing required
  field raises as it is read);
- the record is then made without re-running the validators, and its
  ``__attrs_post_init__`` (the cross-field rules, the derived refs) runs as usual.

Anything else -- a field without recorded grammar (or whose validator was
extended after the helper made it), data that is not already in stored form,
any doubt from the prefilter -- is not decided here: the builder raises and
``from_plain`` runs the reference walk through the validating constructors,
which gives the record or the error with its field path exactly as before.
A class with a field the builder cannot check is built through its
constructor (its nested records may still be built in one pass).
``tests/test_plain.py`` holds the builders to the constructors.
"""

from __future__ import annotations

import re
import typing
from typing import TYPE_CHECKING, Any, Final

import attrs

from reward_memory.grammars import CORPUS_ID, SURFACE_ID, TOKEN, _normalized
from reward_memory.records._fields import KIND
from reward_memory.text import (
    _find_shape,
    has_unsafe_character,
    prefilter_stops,
    shown,
)

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["all_safe", "generate"]

_PATTERNS: Final = {
    "token": TOKEN.fullmatch,
    "surface_id": SURFACE_ID.fullmatch,
    "corpus_id": CORPUS_ID.fullmatch,
}
_MISSING: Final = object()


# Strings already found safe (the verdict is a pure function of the string). The
# records of one corpus share most of their strings (workspace, project, actor,
# reviewer, surface, basis), so a record read for the first time scans only its
# own new strings. Bounded: emptied when full.
_SAFE: Final[dict[str, None]] = {}
_SAFE_SIZE: Final = 8192


def all_safe(strings: list[str]) -> bool:
    """True when no string holds an unsafe character or anything the secret/path prefilter
    would look at (then each per-field scan would pass too: see ``tests/test_plain.py``)."""
    known = _SAFE
    fresh = [value for value in strings if value not in known]
    if not fresh:
        return True
    # A newline is allowed in free text and cannot be in an identifier; every
    # anchor of the prefilter treats it as the edge of a string does, so a
    # string the prefilter would stop at still stops it when joined. The full
    # scan does not (a value followed by a newline reads as prose): where the
    # prefilter stops, each string is scanned on its own, as its validator would.
    joined = "\n".join(fresh)
    if has_unsafe_character(joined):
        return False
    stops = True  # a bidi override: each string is read as the scan reads it (reversed too)
    if not joined.isascii():  # free text: the scan reads what a reader sees (text.shown)
        if "\u202d" not in joined and "\u202e" not in joined:
            stops = prefilter_stops(shown(joined))
    else:
        stops = prefilter_stops(joined)
    if stops and not all(_find_shape(value) is None for value in fresh):
        return False
    if len(known) + len(fresh) > _SAFE_SIZE:
        known.clear()
    known.update(dict.fromkeys(fresh))
    return True


# Every token of a record at once: one pattern over the tokens joined by newlines
# (a newline is in no token, so the pattern splits them back exactly; the count
# refuses a token that holds a newline itself).
_TOKEN_RUN: Final = re.compile(rf"(?:{TOKEN.pattern}\n)*{TOKEN.pattern}")


def _tokens_ok(tokens: list[str]) -> bool:
    """Whether every one of ``tokens`` (all str) is a grammar token (``TOKEN``)."""
    joined = "\n".join(tokens)
    return joined.count("\n") == len(tokens) - 1 and _TOKEN_RUN.fullmatch(joined) is not None


def _record_of(field: attrs.Attribute[Any], hint: Any) -> type[Any] | None:
    """The nested record class of a plain record field (no validator, or ``is_record``)."""
    marked = getattr(field.validator, "rm_record", None)
    if field.converter is not None or (field.validator is not None and marked is None):
        return None
    candidates = typing.get_args(hint) or (hint,)
    found = [c for c in candidates if isinstance(c, type) and attrs.has(c)]
    if len(found) != 1 or (marked is not None and marked is not found[0]):
        return None
    return found[0]


class _Source:
    """The generated function's text and the names it refers to."""

    def __init__(self, cls: type[Any], fallback: type[Exception]) -> None:
        self.names: dict[str, Any] = {
            "_cls": cls,
            "_F": fallback,
            "_str": str,
            "_list": list,
            "_dict": dict,
            "_tuple": tuple,
            "_bool": bool,
            "_int": int,
            "_join": " ".join,
            "_sorted": sorted,
            "_set": set,
            "_norm": _normalized,
            "_new": object.__new__,
            "_missing": _MISSING,
            "_tokens_ok": _tokens_ok,
        }
        self.lines: list[str] = []

    def name(self, value: Any) -> str:
        key = f"_v{len(self.names)}"
        self.names[key] = value
        return key

    def add(self, *lines: str) -> None:
        self.lines.extend(lines)


def _check(src: _Source, kind: str, params: Any, indent: str) -> bool:
    """Lines that check ``v`` for one field kind (raising ``_F``); False: unknown kind."""
    fail = f"{indent}    raise _F"
    if kind.startswith("optional_"):
        src.add(f"{indent}if v is not None:")
        return _check(src, kind.removeprefix("optional_"), params, indent + "    ")
    if kind == "token":  # its grammar is checked with the others at the end (_tokens_ok)
        src.add(f"{indent}if type(v) is not _str:", fail, f"{indent}tpush(v)")
    elif kind in _PATTERNS:
        match = src.name(_PATTERNS[kind])
        src.add(f"{indent}if type(v) is not _str or {match}(v) is None:", fail)
        src.add(f"{indent}push(v)")
    elif kind == "timestamp":
        src.add(f"{indent}if type(v) is not _str or _norm(v) != v:", fail)
    elif kind == "text":
        src.add(
            f"{indent}if type(v) is not _str or not v or len(v) > {int(params)}"
            " or _join(v.split()) != v:",
            fail,
            f"{indent}push(v)",
        )
    elif kind == "list":
        item, low, high, keep_order = params
        src.add(
            f"{indent}if type(v) is not _list or not {int(low)} <= len(v) <= {int(high)}:",
            fail,
        )
        if item == "token":
            src.add(
                f"{indent}for item in v:",
                f"{indent}    if type(item) is not _str:",
                f"{indent}        raise _F",
                f"{indent}tokens.extend(v)",
            )
        else:
            match = src.name(_PATTERNS[item])
            src.add(
                f"{indent}for item in v:",
                f"{indent}    if type(item) is not _str or {match}(item) is None:",
                f"{indent}        raise _F",
                f"{indent}strings.extend(v)",
            )
        src.add(f"{indent}if len(_set(v)) != len(v):", fail)
        if not keep_order:
            src.add(f"{indent}if len(v) > 1 and _sorted(v) != v:", fail)
        src.add(f"{indent}v = _tuple(v)")
    elif kind == "enum":
        src.add(f"{indent}if type(v) is not _str or v not in {src.name(params)}:", fail)
    elif kind == "const":
        expected, kind_of = src.name(params), src.name(type(params))
        src.add(f"{indent}if type(v) is not {kind_of} or v != {expected}:", fail)
    elif kind == "bool":
        src.add(f"{indent}if type(v) is not _bool:", fail)
    elif kind == "integer":
        low, high, nullable = params
        bound = "" if high is None else f" or v > {int(high)}"
        test = f"type(v) is not _int or v < {int(low)}{bound}"
        if nullable:
            test = f"v is not None and ({test})"
        src.add(f"{indent}if {test}:", fail)
    elif kind == "derived":
        src.add(f"{indent}if type(v) is not _str:", fail)
    else:
        return False
    return True


def _one_pass(
    cls: type[Any],
    builder_of: Callable[[type[Any]], Any],
    src: _Source,
    *,
    plan_of: Callable[[type[Any]], Any] | None = None,
    depth: int = 0,
    indent: str = "    ",
) -> bool:
    """Lines that check and set every field of ``cls``; False when one cannot be checked.

    At ``depth`` 0 the record is ``self`` made from ``data``; a nested record
    that can be built in one pass too is inlined (``self<depth>`` from
    ``data<depth>``), any other is built by its own builder.
    """
    me, data = ("self", "data") if depth == 0 else (f"self{depth}", f"data{depth}")
    absent = f"absent{depth}"
    hints = typing.get_type_hints(cls)
    inner = indent + "    "
    later: list[tuple[attrs.Attribute[Any], Any]] = []
    start = len(src.lines)
    for field in attrs.fields(cls):
        if not field.init or field.alias != field.name or field.on_setattr not in (None, False):
            return False
        default = field.default
        if isinstance(default, attrs.Factory):  # type: ignore[arg-type]
            if default.takes_self:
                return False
            fallback_value = f"{src.name(default.factory)}()"
        elif default is attrs.NOTHING:
            fallback_value = "_F"
        else:
            fallback_value = src.name(default)
        if fallback_value == "_F":  # required: a missing key raises (KeyError)
            src.add(f"{indent}v = {data}[{field.name!r}]", f"{indent}if True:")
        else:  # absent: counted, so the key count at the end finds unknown keys
            src.add(
                f"{indent}v = {data}.get({field.name!r}, _missing)",
                f"{indent}if v is _missing:",
                f"{inner}v = {fallback_value}",
                f"{inner}{absent} += 1",
                f"{indent}else:",
            )
        nested = _record_of(field, hints[field.name])
        if nested is not None:
            where = inner
            if default is None:
                src.add(f"{inner}if v is not None:")
                where = inner + "    "
            if not (plan_of and _inline(nested, builder_of, src, plan_of, depth + 1, where)):
                src.add(f"{where}v = {src.name(builder_of(nested))}(v, strings)")
        else:
            recorded = field.metadata.get(KIND)
            if recorded is None:
                return False
            kind, params, validator, converter = recorded
            added = _added_validators(field, validator)
            if added is None or field.converter is not converter:
                return False  # changed after the helper made it: the constructor checks it
            if default is not attrs.NOTHING and not _default_ok(field, validator, converter):
                return False  # an absent field takes its default unchecked: it must be valid
            if not _check(src, kind, params, inner):
                return False
            later.extend((field, extra) for extra in added)
        slot = src.name(_slot_setter(cls, field.name))
        src.add(f"{indent}{slot}({me}, v)")
    # No unknown key: every key is a field that was read (a missing required one
    # raised KeyError), so the keys are the fields less the absent ones.
    src.lines.insert(start, f"{indent}{absent} = 0")
    count = len(attrs.fields(cls))
    src.add(f"{indent}if len({data}) + {absent} != {count}:", f"{indent}    raise _F")
    # Validators a record adds to a helper's field (``@field.validator``) run as
    # attrs runs them: after every field is set, in field order, with the same
    # arguments (any failure sends the data to the reference walk).
    for field, extra in later:
        src.add(f"{indent}{src.name(extra)}({me}, {src.name(field)}, {me}.{field.name})")
    return True


def _default_ok(field: attrs.Attribute[Any], validator: Any, converter: Any) -> bool:
    """Whether the field's default passes its helper unchanged (as the constructor would)."""
    default: Any = field.default
    value = default.factory() if isinstance(default, attrs.Factory) else default  # type: ignore[arg-type]
    try:
        converted = value
        if converter is not None:
            converted = (
                converter.converter(value, field)
                if converter.takes_field
                else (converter.converter(value))
            )
        if validator is not None:
            validator(None, field, converted)
    except Exception:  # noqa: BLE001 - an invalid default: this class goes through its constructor
        return False
    return bool(converted == value)


def _added_validators(field: attrs.Attribute[Any], recorded: Any) -> list[Any] | None:
    """The validators on ``field`` besides the helper's own, in order; None if it lost its own."""
    current = field.validator
    if current is recorded:
        return []
    chain = list(getattr(current, "_validators", (current,)))
    if recorded is None:
        return chain
    if chain and chain[0] is recorded:
        return chain[1:]
    return None


def _plain_class(cls: type[Any]) -> bool:
    """A slotted attrs record whose ``__init__`` only sets, checks and post-inits."""
    return "__slots__" in cls.__dict__ and not hasattr(cls, "__attrs_pre_init__")


def _inline(  # noqa: PLR0917 - private, called from one place
    cls: type[Any],
    builder_of: Callable[[type[Any]], Any],
    src: _Source,
    plan_of: Callable[[type[Any]], Any],
    depth: int,
    indent: str,
) -> bool:
    """Emit ``cls``'s one pass in place (result in ``v``); False: it has none (nothing emitted)."""
    if not _plain_class(cls):
        return False
    trial = _Source(cls, src.names["_F"])
    trial.names = src.names  # one namespace: names stay unique
    if not _one_pass(cls, builder_of, trial, plan_of=plan_of, depth=depth, indent=indent):
        return False
    me, data = f"self{depth}", f"data{depth}"
    src.add(
        f"{indent}{data} = v", f"{indent}if type({data}) is not _dict:", f"{indent}    raise _F"
    )
    src.add(f"{indent}{me} = _new({src.name(cls)})", *trial.lines)
    post = getattr(cls, "__attrs_post_init__", None)
    if post is not None:
        src.add(f"{indent}{src.name(post)}({me})")
    src.add(f"{indent}v = {me}")
    return True


def _slot_setter(cls: type[Any], name: str) -> Callable[[Any, Any], None]:
    for klass in cls.__mro__:
        descriptor = klass.__dict__.get(name)
        if descriptor is not None and hasattr(descriptor, "__set__"):
            setter: Callable[[Any, Any], None] = descriptor.__set__
            return setter

    def set_attribute(record: Any, value: Any) -> None:
        object.__setattr__(record, name, value)

    return set_attribute


def generate(
    cls: type[Any],
    plan_of: Callable[[type[Any]], Any],
    builder_of: Callable[[type[Any]], Any],
    fallback: type[Exception],
) -> Callable[[Any, list[str]], Any]:
    """The builder for ``cls``: ``build(data, strings)`` -> record (raises ``fallback``)."""
    plan = plan_of(cls)
    src = _Source(cls, fallback)
    head = ["def build(data, strings):", "    if type(data) is not _dict:", "        raise _F"]
    one_pass = _plain_class(cls) and _one_pass(cls, builder_of, src, plan_of=plan_of)
    if one_pass:
        body = [
            "    push = strings.append",
            "    tokens = []",
            "    tpush = tokens.append",
            "    self = _new(_cls)",
            *src.lines,
        ]
        # Every token's grammar at once, before the cross-field rules read them.
        body += ["    if tokens:", "        if not _tokens_ok(tokens):", "            raise _F"]
        body.append("        strings.extend(tokens)")
        post = getattr(cls, "__attrs_post_init__", None)
        if post is not None:
            body.append(f"    {src.name(post)}(self)")
        body.append("    return self")
    else:
        src.lines = []
        body = _through_constructor(cls, plan, builder_of, src)
    source = "\n".join([*head, *body])
    code = compile(source, f"<one-pass builder {cls.__qualname__}>", "exec")
    exec(code, src.names)  # noqa: S102 - generated from attrs field names only
    built: Callable[[Any, list[str]], Any] = src.names["build"]
    return built


def _through_constructor(
    cls: type[Any], plan: Any, builder_of: Callable[[type[Any]], Any], src: _Source
) -> list[str]:
    """The walk's kwargs as straight-line code, then the validating constructor."""
    names, required = src.name(plan.names), src.name(plan.required)
    lines = [
        "    keys = data.keys()",
        f"    if not (keys <= {names} and {required} <= keys):",
        "        raise _F",
        "    kw = data.copy()",
    ]
    for name in sorted(plan.names):
        if name in plan.nested:
            build = src.name(builder_of(plan.nested[name]))
            lines += [
                f"    v = data.get({name!r})",
                "    if v is not None:",
                f"        kw[{name!r}] = {build}(v, strings)",
            ]
        elif name in plan.sequences:
            build = src.name(builder_of(plan.sequences[name]))
            lines += [
                f"    if {name!r} in keys:",
                f"        v = data[{name!r}]",
                "        if type(v) is not _list:",
                "            raise _F",
                f"        kw[{name!r}] = _tuple([{build}(item, strings) for item in v])",
            ]
        else:
            lines += [
                f"    v = data.get({name!r})",
                "    kind = type(v)",
                "    if kind is _list:",
                f"        kw[{name!r}] = _tuple(v)",
            ]
            if name not in plan.mappings:
                lines += ["    elif kind is _dict:", "        raise _F"]
    lines.append("    return _cls(**kw)")
    return lines
