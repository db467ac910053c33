"""attrs field helpers shared by every record module.

Each helper returns an ``attrs.field`` whose converter/validator enforces one
value grammar and raises :class:`RecordValidationError` with the field's path
(``$.<name>``, ``$.<name>[i]``). Nested records re-root those paths while the
private converter walks input (see :mod:`reward_memory.wire`).

Validators are cheap (one regex each): records are built on the per-call path.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

import attrs

from reward_memory.errors import RecordValidationError
from reward_memory.grammars import (
    check_corpus_id,
    check_surface_id,
    check_token,
    normalize_timestamp,
)
from reward_memory.records import _memo
from reward_memory.text import compact_text

__all__ = [
    "KIND",
    "const",
    "corpus_id",
    "corpus_id_list",
    "enum",
    "integer",
    "is_record",
    "optional_corpus_id",
    "optional_text",
    "optional_timestamp",
    "optional_token",
    "record",
    "strict_bool",
    "surface_id",
    "surface_list",
    "tagged",
    "text",
    "timestamp",
    "token",
    "token_list",
]

_Check = Callable[[Any, str], str]

# Where each helper records what it checks: ``field.metadata[KIND]`` is
# ``(kind, params, validator, converter)``. The one-pass builder of
# :mod:`reward_memory.records._plain` reads it to check stored data in one pass
# (same verdicts); a field whose validator or converter is no longer the
# helper's own (a ``@field.validator`` added later) is not trusted to it.
KIND: Final = "reward_memory.kind"


def tagged(kind: str, params: Any = None, **kwargs: Any) -> Any:
    """``attrs.field(**kwargs)`` that records its grammar ``kind`` (see :data:`KIND`)."""
    metadata = {KIND: (kind, params, kwargs.get("validator"), kwargs.get("converter"))}
    return attrs.field(metadata=metadata, **kwargs)


_VERDICTS: dict[_Check, Callable[[str], bool]] = {
    check_token: _memo.good_token,
    check_surface_id: _memo.good_surface,
    check_corpus_id: _memo.good_corpus,
}


def _path(attribute: attrs.Attribute[Any]) -> str:
    return f"$.{attribute.name}"


def _scalar(check: _Check, *, optional: bool) -> Callable[[Any, attrs.Attribute[Any], Any], None]:
    # Identifiers repeat (corpus ids, surfaces, refs): a good value's verdict is
    # cached (the check is a pure function of the value), a bad one re-checked
    # so the error names this field's path.
    good = _VERDICTS.get(check)

    def validate(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
        if value is None and optional:
            return
        if good is not None and type(value) is str and good(value):
            return
        check(value, _path(attribute))

    return validate


def token(**kwargs: Any) -> Any:
    """A required token (grammar T), scanned for secrets and paths."""
    return tagged("token", None, validator=_scalar(check_token, optional=False), **kwargs)


def optional_token(**kwargs: Any) -> Any:
    """An optional token; ``None`` when absent (serialised as ``null``)."""
    return tagged(
        "optional_token",
        None,
        default=None,
        validator=_scalar(check_token, optional=True),
        **kwargs,
    )


def surface_id(**kwargs: Any) -> Any:
    """A module-qualified surface id (grammar S)."""
    return tagged("surface_id", None, validator=_scalar(check_surface_id, optional=False), **kwargs)


def corpus_id(**kwargs: Any) -> Any:
    """A corpus id (grammar C)."""
    return tagged("corpus_id", None, validator=_scalar(check_corpus_id, optional=False), **kwargs)


def optional_corpus_id(**kwargs: Any) -> Any:
    """An optional corpus id."""
    return tagged(
        "optional_corpus_id",
        None,
        default=None,
        validator=_scalar(check_corpus_id, optional=True),
        **kwargs,
    )


def _timestamp_converter(*, optional: bool) -> attrs.Converter[Any, Any]:
    # Stored normalised (UTC, Z): two spellings of one instant are one record.
    def convert(value: Any, field: attrs.Attribute[Any]) -> Any:
        if value is None and optional:
            return None
        return normalize_timestamp(value, _path(field))

    return attrs.Converter(convert, takes_field=True)


def timestamp(**kwargs: Any) -> Any:
    """An ISO-8601 timestamp with offset, stored in its normal UTC spelling."""
    return tagged("timestamp", None, converter=_timestamp_converter(optional=False), **kwargs)


def optional_timestamp(**kwargs: Any) -> Any:
    """An optional timestamp (normalised like :func:`timestamp`)."""
    return tagged(
        "optional_timestamp",
        None,
        default=None,
        converter=_timestamp_converter(optional=True),
        **kwargs,
    )


def _text_converter(limit: int, *, optional: bool) -> attrs.Converter[Any, Any]:
    def convert(value: Any, field: attrs.Attribute[Any]) -> Any:
        if value is None and optional:
            return None
        return compact_text(value, limit=limit, path=_path(field), label=field.name)

    return attrs.Converter(convert, takes_field=True)


def text(limit: int, **kwargs: Any) -> Any:
    """Compact public-safe text of at most ``limit`` characters (rejected when longer)."""
    return tagged("text", limit, converter=_text_converter(limit, optional=False), **kwargs)


def optional_text(limit: int, **kwargs: Any) -> Any:
    """Optional compact public-safe text."""
    return tagged(
        "optional_text",
        limit,
        default=None,
        converter=_text_converter(limit, optional=True),
        **kwargs,
    )


def _list_converter(
    check: _Check, *, min_items: int, max_items: int, keep_order: bool
) -> attrs.Converter[Any, Any]:
    def convert(value: Any, field: attrs.Attribute[Any]) -> tuple[str, ...]:
        path = _path(field)
        # A real sequence: not a string, a set or a mapping (no order, or keys
        # only), nor a one-shot iterator.
        if not isinstance(value, list | tuple):
            raise RecordValidationError("must be a list", path=path, code="wrong_type")
        items = tuple(value)
        if not min_items <= len(items) <= max_items:
            raise RecordValidationError(
                f"must hold between {min_items} and {max_items} items",
                path=path,
                code="invalid_value",
            )
        seen: set[str] = set()
        for index, item in enumerate(items):
            check(item, f"{path}[{index}]")
            if item in seen:
                raise RecordValidationError(
                    "must not repeat an item", path=f"{path}[{index}]", code="duplicate_item"
                )
            seen.add(item)
        return items if keep_order else tuple(sorted(items))

    return attrs.Converter(convert, takes_field=True)


def token_list(*, min_items: int = 0, max_items: int = 12, keep_order: bool = False) -> Any:
    """A duplicate-free list of tokens, sorted unless ``keep_order``."""
    conv = _list_converter(
        check_token, min_items=min_items, max_items=max_items, keep_order=keep_order
    )
    params = ("token", min_items, max_items, keep_order)
    if min_items == 0:
        return tagged("list", params, factory=tuple, converter=conv)
    return tagged("list", params, converter=conv)


def surface_list(*, min_items: int = 1, max_items: int = 20) -> Any:
    """A duplicate-free, sorted list of surface ids."""
    return tagged(
        "list",
        ("surface_id", min_items, max_items, False),
        converter=_list_converter(
            check_surface_id, min_items=min_items, max_items=max_items, keep_order=False
        ),
    )


def corpus_id_list(*, max_items: int = 50) -> Any:
    """A duplicate-free, sorted list of corpus ids, empty by default."""
    return tagged(
        "list",
        ("corpus_id", 0, max_items, False),
        factory=tuple,
        converter=_list_converter(
            check_corpus_id, min_items=0, max_items=max_items, keep_order=False
        ),
    )


def enum(*choices: str, **kwargs: Any) -> Any:
    """One of a fixed set of wire words."""
    allowed = frozenset(choices)
    listing = ", ".join(choices)

    def validate(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
        if not isinstance(value, str) or value not in allowed:  # unhashable input too
            raise RecordValidationError(
                f"must be one of: {listing}", path=_path(attribute), code="invalid_value"
            )

    return tagged("enum", allowed, validator=validate, **kwargs)


def optional_enum(*choices: str, **kwargs: Any) -> Any:
    """One of a fixed set of wire words, or ``None`` (absent)."""
    allowed = frozenset(choices)
    listing = ", ".join(choices)

    def validate(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
        if value is not None and (not isinstance(value, str) or value not in allowed):
            raise RecordValidationError(
                f"must be null or one of: {listing}", path=_path(attribute), code="invalid_value"
            )

    return tagged("optional_enum", allowed, default=None, validator=validate, **kwargs)


def const(value: Any) -> Any:
    """A constant boundary flag: always emitted, never anything but ``value``."""

    expected = str(value).lower() if isinstance(value, bool) else repr(value)

    def validate(_: Any, attribute: attrs.Attribute[Any], given: Any) -> None:
        if type(given) is not type(value) or given != value:
            raise RecordValidationError(
                f"must be {expected}",
                path=_path(attribute),
                code="invalid_value",
            )

    return tagged("const", value, default=value, validator=validate)


def strict_bool(**kwargs: Any) -> Any:
    """A real boolean (``0``, ``1`` and ``"true"`` are refused)."""

    def validate(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
        if not isinstance(value, bool):
            raise RecordValidationError(
                "must be a boolean", path=_path(attribute), code="wrong_type"
            )

    return tagged("bool", None, validator=validate, **kwargs)


def integer(*, minimum: int = 0, maximum: int | None = None, **kwargs: Any) -> Any:
    """A real integer in a range (a boolean is not an integer)."""

    def validate(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
        if value is None and kwargs.get("default", ...) is None:
            return
        if isinstance(value, bool) or not isinstance(value, int):
            raise RecordValidationError(
                "must be an integer", path=_path(attribute), code="wrong_type"
            )
        if value < minimum or (maximum is not None and value > maximum):
            bound = f"between {minimum} and {maximum}" if maximum is not None else f">= {minimum}"
            raise RecordValidationError(
                f"must be {bound}", path=_path(attribute), code="invalid_value"
            )

    nullable = kwargs.get("default", ...) is None
    return tagged("integer", (minimum, maximum, nullable), validator=validate, **kwargs)


def is_record(cls: type[Any]) -> Any:
    """Validator: the field holds a ``cls`` record (a dict or another record is refused)."""

    def validate(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
        if not isinstance(value, cls):
            raise RecordValidationError(
                f"must be a {cls.__name__}", path=f"$.{attribute.name}", code="wrong_type"
            )

    validate.rm_record = cls  # type: ignore[attr-defined]  # a nested record: the builder builds it
    return validate


def record(cls: type[Any]) -> Any:
    """A nested record field, checked to hold a ``cls`` (a programmer's dict is refused)."""
    return attrs.field(validator=is_record(cls))
