"""``frozen``: ``attrs.frozen`` with one shared ``__repr__``, ``__eq__`` and ``__hash__``.

attrs writes the source of four methods for every class it makes and compiles it
at import. A CLI verb imports over a hundred record classes, so that compiling was
a quarter of a verb's run (35 of 140 ms for ``ingest-event``, measured). Three of
the four do the same for every record -- show, compare or hash the fields in
order -- so one function each serves every class here, reading the fields through
one ``operator.attrgetter`` (C) made per class; attrs still writes ``__init__``
(validators, converters, defaults), which is the record's own.

Behaviour is attrs': ``__eq__`` is ``NotImplemented`` for another class and
compares the fields that take part in equality, ``__hash__`` hashes those with a
per-class salt (equal records, equal hashes), ``__repr__`` shows the fields attrs
would show, in order. A method the class defines itself is kept (as attrs'
``auto_detect`` does). Type checkers see ``attrs.frozen`` itself: the options and
the fields are exactly attrs'.
"""

from __future__ import annotations

import operator
import reprlib
from typing import TYPE_CHECKING, Any

import attrs

__all__ = ["frozen"]


def _key_of(names: list[str]) -> Any:
    """What compares or hashes a record by the fields ``names`` (a bare value for one name).

    A class attribute: ``attrgetter`` is no descriptor (``self._rm_eq_key`` is the
    getter itself); a function would bind, hence the ``staticmethod`` for no names.
    """
    if names:
        return operator.attrgetter(*names)
    return staticmethod(lambda _record: ())


def _eq(self: Any, other: Any) -> Any:
    if other.__class__ is not self.__class__:
        return NotImplemented
    key = self._rm_eq_key
    return key(self) == key(other)


def _hash(self: Any) -> int:
    return hash((self._rm_hash_salt, self._rm_hash_key(self)))


@reprlib.recursive_repr()
def _repr(self: Any) -> str:
    shown = ", ".join(f"{name}={show(getattr(self, name))}" for name, show in self._rm_repr_fields)
    return f"{self.__class__.__qualname__.rsplit('>.', 1)[-1]}({shown})"


def _share_methods(cls: type[Any], own: frozenset[str]) -> None:
    fields = attrs.fields(cls)
    shared: dict[str, Any] = {}
    if "__eq__" not in own:
        shared.update(_rm_eq_key=_key_of([a.name for a in fields if a.eq]), __eq__=_eq)
        if "__hash__" not in own:  # attrs' rule: a field hashes when it compares (unless told)
            hashed = [a.name for a in fields if a.hash is True or (a.hash is None and a.eq)]
            salt = hash(f"{cls.__module__}.{cls.__qualname__}")
            shared.update(_rm_hash_key=_key_of(hashed), _rm_hash_salt=salt, __hash__=_hash)
    if "__repr__" not in own:
        shown = tuple(
            (a.name, repr if a.repr is True else a.repr) for a in fields if a.repr is not False
        )
        shared.update(_rm_repr_fields=shown, __repr__=_repr)
    for name, value in shared.items():
        setattr(cls, name, value)


def _frozen(maybe_cls: type[Any] | None = None, **options: Any) -> Any:
    """``attrs.frozen(**options)`` with the shared ``__repr__``/``__eq__``/``__hash__``."""
    if {"repr", "eq", "order", "hash", "unsafe_hash"} & options.keys():
        return attrs.frozen(maybe_cls, **options)  # a class that asks for its own: attrs'

    def wrap(cls: type[Any]) -> type[Any]:
        own = frozenset(("__repr__", "__eq__", "__hash__")) & cls.__dict__.keys()
        made: type[Any] = attrs.frozen(cls, repr=False, eq=False, **options)
        if any(a.eq_key is not None for a in attrs.fields(made)):
            raise TypeError(f"{cls.__qualname__}: a field with an eq key needs attrs.frozen")
        _share_methods(made, own)
        return made

    return wrap if maybe_cls is None else wrap(maybe_cls)


if TYPE_CHECKING:
    from attrs import frozen
else:
    frozen = _frozen
