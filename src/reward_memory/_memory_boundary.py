"""The boundary decorator behind :meth:`reward_memory.Experiment.boundary`.

A function's output passes through recall and apply on one surface; on *any* memory
failure the caller gets the function's own output, and the function's own exception
propagates. What the decorator meets:

- a plain function or method: wrapped (``functools.wraps``: name, doc, signature,
  ``__wrapped__``);
- a ``staticmethod`` or ``classmethod`` (the decorator written above it): its function
  is wrapped and put back in the same kind of descriptor;
- a coroutine function, or any callable whose call returns an awaitable (an object
  with an ``async def __call__``): the recall runs in a worker thread after the
  awaitable, so the event loop is never blocked;
- a generator function (sync or async): refused when decorated -- its output is a
  generator, which no recall can apply to; so is an async ``apply_memory`` on a sync
  function (nothing could await it).

An ``apply_memory`` that is a coroutine function works on the async path: the worker
thread runs it on the caller's event loop and waits for it.
"""

from __future__ import annotations

import functools
import inspect
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["decorate", "is_async", "on_loop"]

F = TypeVar("F", bound="Callable[..., Any]")

# How long the worker thread waits for an async apply_memory on the loop (the recall's
# own deadline bounds the provider; this bounds a model callback that never answers).
_MODEL_WAIT_SECONDS = 600.0


def is_async(function: Any) -> bool:
    call = getattr(function, "__call__", None)  # noqa: B004 - an object's own async __call__
    return inspect.iscoroutinefunction(function) or (
        not inspect.isroutine(function) and inspect.iscoroutinefunction(call)
    )


def decorate(
    function: Any,
    through: Callable[[Any, tuple[Any, ...], dict[str, Any], Any], Any],
    apply_memory: Any,
) -> Any:
    """Wrap ``function`` (see the module docs); ``through(output, args, kwargs, model)``
    runs recall and apply (``model``: the apply callback to use) and never raises."""
    if isinstance(function, staticmethod | classmethod):
        return type(function)(decorate(function.__func__, through, apply_memory))
    if inspect.isgeneratorfunction(function) or inspect.isasyncgenfunction(function):
        raise TypeError(
            "boundary: a generator function yields a generator, which memory cannot apply "
            "to; decorate the function that returns the finished output"
        )
    if not callable(function):
        raise TypeError("boundary decorates a function (or a staticmethod / classmethod)")
    if is_async(apply_memory) and not is_async(function):
        raise TypeError(
            "boundary: an async apply_memory needs an async function (a sync one cannot await it)"
        )

    async def after(pending: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        import asyncio  # noqa: PLC0415 - only async callers pay for it

        output = await pending
        model = on_loop(apply_memory, asyncio.get_running_loop())
        try:
            return await asyncio.to_thread(through, output, args, kwargs, model)
        except Exception:  # noqa: BLE001 - memory never breaks the caller
            return output

    if is_async(function):

        @functools.wraps(function)
        async def awrapper(*args: Any, **kwargs: Any) -> Any:
            return await after(function(*args, **kwargs), args, kwargs)

        return awrapper

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        output = function(*args, **kwargs)
        if inspect.isawaitable(output):  # an async callable the checks above did not see
            return after(output, args, kwargs)
        return through(output, args, kwargs, apply_memory)

    return wrapper


def on_loop(apply_memory: Any, loop: Any) -> Any:
    """``apply_memory`` for a worker thread: an async one runs on ``loop`` (the caller's,
    free while it awaits the thread); a plain one is itself."""
    if apply_memory is None or not is_async(apply_memory):
        return apply_memory
    import asyncio  # noqa: PLC0415

    def model(*args: Any, **kwargs: Any) -> Any:
        done = asyncio.run_coroutine_threadsafe(apply_memory(*args, **kwargs), loop)
        return done.result(_MODEL_WAIT_SECONDS)

    return model
