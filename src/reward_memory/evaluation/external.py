"""External writes of the evaluated operations, observed: files opened for writing.

A seam's own packet says whether it wrote outside the store
(``external_writes_performed``); that is its word. This module also watches: a
CPython audit hook (:func:`sys.addaudithook`, installed on the first evaluation of
a process and inert outside one) counts every ``open`` event with a writing mode
or flags that the thread running an evaluated case makes while it runs (another
thread's are not the case's doing). SQLite's own file I/O happens in C and raises
no such event; a seam that writes a file, a log or a temp file does.
Network sends are not counted: a remote provider's transport is how it stores.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

__all__ = ["not_counted", "watching"]

_WRITE_FLAGS: Final = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC
_LOCK: Final = threading.Lock()
# The threads running an evaluated case, and the writing opens each made: only theirs
# count (a host's logging thread writing meanwhile is not the case's doing).
_WATCHED: Final[dict[int, int]] = {}
_INSTALLED: Final[list[bool]] = [False]


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if event != "open" or not _WATCHED:
        return
    thread = threading.get_ident()
    if thread not in _WATCHED:
        return
    mode = args[1] if len(args) > 1 else None
    flags = args[2] if len(args) > 2 else None
    if (isinstance(mode, str) and any(char in mode for char in "wax+")) or (
        isinstance(flags, int) and flags & _WRITE_FLAGS
    ):
        _WATCHED[thread] += 1  # only this thread writes its own entry


@contextlib.contextmanager
def watching() -> Iterator[Callable[[], int]]:
    """Count the files this thread opens for writing while the block runs; yields the
    count so far."""
    thread = threading.get_ident()
    with _LOCK:
        if not _INSTALLED[0]:
            sys.addaudithook(_hook)  # cannot be removed: it is inert when nothing watches
            _INSTALLED[0] = True
        outer = _WATCHED.get(thread)
        _WATCHED[thread] = outer or 0
    start = _WATCHED[thread]
    try:
        yield lambda: _WATCHED[thread] - start
    finally:
        if outer is None:
            with _LOCK:
                del _WATCHED[thread]


@contextlib.contextmanager
def not_counted() -> Iterator[None]:
    """Files this thread opens for writing inside the block are not the case's (the
    fixture's own seeding: creating a new store file, say)."""
    thread = threading.get_ident()
    before = _WATCHED.get(thread)
    try:
        yield
    finally:
        if before is not None and thread in _WATCHED:
            _WATCHED[thread] = before  # only this thread writes its own entry
