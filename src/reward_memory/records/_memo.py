"""Memoised checks for packets the library assembles on the per-call path.

The secret and local-path scan (:func:`reward_memory.text.find_unsafe`) costs
microseconds per identifier. Packets such as the recall packet and the
application receipt are rebuilt on every call from values that repeat (corpus
ids, surface ids, candidate refs, query summaries), so their validators use
these memoised checks instead: the same grammar, the same scan, the same error
(with the field's path), paid once per distinct value. The checks are pure
functions of the value, so caching their verdict is exact; caches are bounded
(least recently used values are dropped).

:func:`check_flags` checks a record's constant boundary flags in one pass
(identity comparisons: ``0`` is not ``False``), for the same reason.

:func:`trusted` makes a record's *trusted constructor*: the same fields, set
without running validators, converters or ``__attrs_post_init__``. The library
uses it only for packets it assembles itself from parts that were validated
already (a recall packet from a validated request and checked items, a receipt
from a checked decision); every public constructor, and :func:`wire.load`,
still validates everything. The tests rebuild such packets through the public
constructor to keep the invariants checked.
"""

from __future__ import annotations

import functools
import types
from collections.abc import Callable
from typing import Any, Final, TypeVar

import attrs

from reward_memory.errors import RecordValidationError
from reward_memory.grammars import check_corpus_id, check_surface_id, check_token
from reward_memory.text import compact_text

__all__ = [
    "check_flags",
    "check_text_memo",
    "check_token_memo",
    "compact_memo",
    "flag",
    "good_corpus",
    "good_surface",
    "good_token",
    "memo_text",
    "optional_memo_text",
    "require_bool",
    "require_choice",
    "require_corpus",
    "require_count",
    "require_optional_token",
    "require_records",
    "require_surface",
    "require_token",
    "token_tuple",
    "trusted",
]

_CACHE_SIZE: Final = 4096

Check = Callable[[Any, str], str]
Verdict = Callable[[str], bool]


def _verdict(check: Check) -> Verdict:
    @functools.lru_cache(maxsize=_CACHE_SIZE)
    def good(value: str) -> bool:
        try:
            check(value, "$")
        except RecordValidationError:
            return False
        return True

    return good


good_token: Final = _verdict(check_token)
good_surface: Final = _verdict(check_surface_id)
good_corpus: Final = _verdict(check_corpus_id)


def require_token(value: Any, path: str) -> None:
    """Raise unless ``value`` is a token (memoised verdict; the error names ``path``)."""
    if type(value) is not str or not good_token(value):
        check_token(value, path)


def require_optional_token(value: Any, path: str) -> None:
    """Like :func:`require_token`, ``None`` allowed."""
    if value is not None and (type(value) is not str or not good_token(value)):
        check_token(value, path)


def require_surface(value: Any, path: str) -> None:
    """Raise unless ``value`` is a surface id (memoised verdict)."""
    if type(value) is not str or not good_surface(value):
        check_surface_id(value, path)


def require_corpus(value: Any, path: str) -> None:
    """Raise unless ``value`` is a corpus id (memoised verdict)."""
    if type(value) is not str or not good_corpus(value):
        check_corpus_id(value, path)


def require_choice(value: Any, choices: frozenset[str], path: str) -> None:
    """Raise unless ``value`` is one of ``choices``."""
    if type(value) is not str or value not in choices:
        raise RecordValidationError(
            f"must be one of: {', '.join(sorted(choices))}", path=path, code="invalid_value"
        )


def require_count(value: Any, path: str) -> None:
    """Raise unless ``value`` is a non-negative integer (a boolean is not one)."""
    if type(value) is not int or value < 0:
        raise RecordValidationError("must be a non-negative integer", path=path, code="wrong_type")


def require_bool(value: Any, path: str) -> None:
    """Raise unless ``value`` is a real boolean."""
    if type(value) is not bool:
        raise RecordValidationError("must be a boolean", path=path, code="wrong_type")


def require_records(value: Any, cls: type[Any], path: str) -> None:
    """Raise unless ``value`` is a tuple of ``cls`` records."""
    if type(value) is not tuple:
        raise RecordValidationError("must be a list", path=path, code="wrong_type")
    for index, item in enumerate(value):
        if type(item) is not cls:
            raise RecordValidationError(
                f"must be a {cls.__name__}", path=f"{path}[{index}]", code="wrong_type"
            )


def check_token_memo(value: Any, path: str = "$") -> str:
    """:func:`reward_memory.grammars.check_token` with its verdict cached per value."""
    if type(value) is str and good_token(value):
        return value
    return check_token(value, path)


@functools.lru_cache(maxsize=_CACHE_SIZE)
def _compacted(value: str, limit: int) -> str | None:
    try:
        return compact_text(value, limit=limit)
    except RecordValidationError:
        return None


def compact_memo(value: Any, limit: int, path: str) -> str:
    """:func:`reward_memory.text.compact_text` with its result cached per distinct value."""
    if type(value) is str:
        text = _compacted(value, limit)
        if text is not None:
            return text
    return compact_text(value, limit=limit, path=path, label=path.rsplit(".", 1)[-1])


def check_text_memo(value: Any, limit: int, path: str) -> str:
    """``value`` when it is already compact, public-safe text of at most ``limit`` characters."""
    if type(value) is str and _compacted(value, limit) == value:
        return value
    text = compact_text(value, limit=limit, path=path, label=path.rsplit(".", 1)[-1])
    if text != value:
        raise RecordValidationError(
            "must already be compact (whitespace collapsed, stripped)",
            path=path,
            code="invalid_format",
        )
    return text


def memo_text(limit: int, **kwargs: Any) -> Any:
    """Already-compact public-safe text (validated, never rewritten), memoised."""

    def validate(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
        if type(value) is str and _compacted(value, limit) == value:
            return
        check_text_memo(value, limit, f"$.{attribute.name}")

    return attrs.field(validator=validate, **kwargs)


def optional_memo_text(limit: int, **kwargs: Any) -> Any:
    """Optional already-compact public-safe text, memoised."""

    def validate(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
        if value is None or (type(value) is str and _compacted(value, limit) == value):
            return
        check_text_memo(value, limit, f"$.{attribute.name}")

    return attrs.field(default=None, validator=validate, **kwargs)


def _to_tuple(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


def token_tuple(**kwargs: Any) -> Any:
    """A tuple of tokens (a list is accepted and kept in order), each memo-checked."""

    def validate(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
        path = f"$.{attribute.name}"
        if not isinstance(value, tuple):
            raise RecordValidationError("must be a list", path=path, code="wrong_type")
        for index, item in enumerate(value):
            check_token_memo(item, f"{path}[{index}]")

    return attrs.field(converter=_to_tuple, validator=validate, **kwargs)


def flag(value: bool) -> Any:
    """A constant boundary flag checked by :func:`check_flags` (no per-field validator)."""
    return attrs.field(default=value)


def check_flags(record: Any, expected: tuple[tuple[str, bool], ...]) -> None:
    """Raise unless every named flag of ``record`` is exactly its constant (``is``, not ``==``)."""
    for name, value in expected:
        if getattr(record, name) is not value:
            raise RecordValidationError(
                f"must be {str(value).lower()}", path=f"$.{name}", code="invalid_value"
            )


_T = TypeVar("_T")


def trusted(cls: type[_T]) -> Callable[..., _T]:
    """A keyword-only constructor of the attrs record ``cls`` that skips every check.

    It sets exactly the fields the generated ``__init__`` sets (defaults
    included), without validators, converters or ``__attrs_post_init__``. Only
    for values already known to satisfy the record's invariants: the caller
    owns that proof. Works on slotted (frozen) attrs classes, whose slots are
    written through their descriptors (what ``object.__setattr__`` does, minus
    the lookup).
    """
    if any(_HASH_CACHE in klass.__dict__ for klass in cls.__mro__):
        raise TypeError(f"{cls.__name__}: cache_hash records are not supported")
    namespace: dict[str, Any] = {"_new": object.__new__, "_cls": cls, "_missing": _MISSING}
    params: list[str] = []
    body: list[str] = []
    record_type: Any = cls
    for index, field in enumerate(attrs.fields(record_type)):
        if not field.init:
            raise TypeError(f"{cls.__name__}.{field.name}: init=False fields are not supported")
        arg = f"{field.alias}"  # the public __init__'s keyword (an identifier)
        default = field.default
        if default is attrs.NOTHING:
            params.append(arg)
        elif isinstance(default, attrs.Factory):  # type: ignore[arg-type]
            if default.takes_self:
                raise TypeError(f"{cls.__name__}.{arg}: takes_self factories are not supported")
            namespace[f"_factory{index}"] = default.factory
            params.append(f"{arg}=_missing")
            body.append(f"    if {arg} is _missing:\n        {arg} = _factory{index}()")
        else:
            namespace[f"_default{index}"] = default
            params.append(f"{arg}=_default{index}")
        namespace[f"_set{index}"] = _slot_setter(cls, field.name)
        body.append(f"    _set{index}(self, {arg})")
    source = (
        f"def make(*, {', '.join(params)}):\n"
        "    self = _new(_cls)\n" + "\n".join(body) + "\n    return self\n"
    )
    code = compile(source, f"<trusted {cls.__qualname__}>", "exec")
    exec(code, namespace)  # noqa: S102 - source generated from attrs field names only
    make: Callable[..., _T] = namespace["make"]
    make.__qualname__ = f"{cls.__qualname__}.<trusted>"
    make.__doc__ = f"Build a {cls.__name__} from already-checked values (no validation)."
    return make


_MISSING: Final = object()
_HASH_CACHE: Final = "_attrs_cached_hash"  # where attrs keeps a cache_hash record's hash


def _slot_setter(cls: type[Any], name: str) -> Callable[[Any, Any], None]:
    for klass in cls.__mro__:
        descriptor = klass.__dict__.get(name)
        if isinstance(descriptor, types.MemberDescriptorType):
            setter: Callable[[Any, Any], None] = descriptor.__set__
            return setter

    def set_attribute(record: Any, value: Any) -> None:
        object.__setattr__(record, name, value)

    return set_attribute
