"""The in-memory provider's fault switches and call log: what a test turns on and reads back.

Kept apart from :mod:`reward_memory.testing.memory` (the store itself): the
switches (:class:`Faults`, also spelled as ``memory://?name=value`` URL options),
the record of one received call (:class:`ProviderCall`), and the small helpers
both sides use. See the provider's module docs for what each switch does.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any, Final, Literal, get_args

import attrs

from reward_memory._frozen import frozen
from reward_memory.errors import ProviderConfigError, RecordValidationError
from reward_memory.providers.spi import ProviderScope
from reward_memory.records import _fields as f

if TYPE_CHECKING:
    from types import TracebackType

    from reward_memory.testing.memory import InMemoryProvider

__all__ = ["OPERATIONS", "Faults", "Operation", "ProviderCall"]

Operation = Literal["write", "read", "search", "delete", "inventory", "close"]
OPERATIONS: Final = frozenset(get_args(Operation))
_TRUE: Final = frozenset({"1", "true", "yes", "on"})
_FALSE: Final = frozenset({"0", "false", "no", "off"})


def _seconds(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value < 0
    ):
        raise RecordValidationError(
            "must be a finite, non-negative number of seconds",
            path=f"$.{attribute.name}",
            code="invalid_value",
        )


@frozen(kw_only=True)
class Faults:
    """The fault switches of one :class:`InMemoryProvider` (see the module docs)."""

    unavailable: bool = f.strict_bool(default=False)
    times_out: bool = f.strict_bool(default=False)
    slow_seconds: float = attrs.field(default=0.0, validator=_seconds)
    corrupt_readback: bool = f.strict_bool(default=False)
    search_misses: bool = f.strict_bool(default=False)


@frozen(kw_only=True)
class ProviderCall:
    """One call the provider received: the operation, the scope, and its key/ref/query.

    ``scope`` is ``None`` for ``close`` and for a call whose scope was not a
    :class:`ProviderScope`. ``target`` is the key (write), the ref (read,
    delete), the query (search), or ``None``.
    """

    op: Operation
    scope: ProviderScope | None
    target: str | None = None


_NO_FAULTS: Final = Faults()


class _FaultRestorer:
    """Returned by :meth:`InMemoryProvider.set_faults`; restores the old switches on exit."""

    def __init__(self, provider: InMemoryProvider, previous: Faults) -> None:
        self._provider = provider
        self._previous = previous

    def __enter__(self) -> Faults:
        return self._provider.faults

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._provider._replace_faults(self._previous)


def _corrupt(content: str) -> str:
    # Always different from the original, whatever it was (the empty string included).
    return "\ufffdcorrupted\ufffd" + content[::-1]


def _canonical(faults: Faults) -> Faults:
    """``_NO_FAULTS`` itself when no switch is on (what the fast path tests by identity)."""
    return _NO_FAULTS if faults == _NO_FAULTS else faults


def _call(op: Operation, scope: object, target: object) -> ProviderCall:
    return ProviderCall(
        op=op,
        scope=scope if isinstance(scope, ProviderScope) else None,
        target=target if isinstance(target, str) else None,
    )


def _shown(name: str) -> str:
    return repr(name) if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,63}", name) else "(unnamed)"


_BOOL_OPTIONS: Final = frozenset({"unavailable", "times_out", "corrupt_readback", "search_misses"})
_SECONDS_OPTIONS: Final = frozenset({"slow_seconds", "default_timeout"})


def _parse_option(name: str, raw: str) -> Any:
    if name in _BOOL_OPTIONS:
        word = raw.strip().lower()
        if word in _TRUE:
            return True
        if word in _FALSE:
            return False
        raise ProviderConfigError(f"option {name!r} must be true or false")
    if name in _SECONDS_OPTIONS:
        try:
            value = float(raw)
        except ValueError:
            raise ProviderConfigError(f"option {name!r} must be a number of seconds") from None
        if not math.isfinite(value) or value < 0:
            raise ProviderConfigError(f"option {name!r} must be a non-negative number of seconds")
        return value
    accepted = ", ".join(sorted(_BOOL_OPTIONS | _SECONDS_OPTIONS))
    raise ProviderConfigError(
        f"unknown option {_shown(name)} for provider 'memory'; it accepts: {accepted}"
    )
