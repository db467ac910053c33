"""Bounded JSON input: the one reader behind every CLI verb that reads a file and
every library loader that takes text, bytes or a path.

Every problem is an :class:`~reward_memory.errors.InputError` (a
``RecordValidationError``) with a stable ``code``; no input makes it raise
anything else (``RecursionError``, ``JSONDecodeError``, ...), read more than
the size limit, or wait forever:

=========================  =====================================================
code                       when
=========================  =====================================================
``missing_input``          no source was named
``wrong_type``             :func:`parse` was given neither text nor bytes, or
                           :func:`check_data` a non-JSON value or key
``file_not_found``         the path does not exist
``file_unreadable``        a directory, a socket, permission denied, ...
``input_too_large``        over :data:`MAX_INPUT_BYTES` (at most that + 1 bytes
                           are ever read, so ``/dev/zero`` ends at once)
``input_timeout``          a named FIFO, device or special file gave no byte
                           for :data:`INPUT_IDLE_TIMEOUT` seconds (no writer)
``not_utf8``               the bytes are not UTF-8
``empty_input``            nothing but whitespace
``invalid_json``           not JSON, or ``NaN`` / ``Infinity``
``input_too_deep``         arrays / objects nested past :data:`MAX_JSON_DEPTH`
``duplicate_key``          an object repeats a key (path names it)
``number_out_of_range``    an integer beyond +/-(2**53 - 1) or a float that
                           overflows (I-JSON, RFC 7493 §2.2; path names it)
``unpaired_surrogate``     a ``\\ud800``-style escape with no partner
                           (RFC 7493 §2.1; path names it)
=========================  =====================================================

Decisions: one leading UTF-8 byte-order mark is ignored (RFC 8259 §8.1 allows
it; editors add it). Standard input (``-``) is read to its end, bounded in size
but not in time, as any filter reads it; a *named* FIFO or device is read with
an idle deadline instead, because nobody may ever open its other end.

The depth limit is checked on the text before the parser runs (the parser
itself would recurse); a normal document has fewer brackets than the limit and
pays two ``str.count`` calls for it.
"""

from __future__ import annotations

import errno
import json
import math
import os
import re
import select
import stat
import sys
from itertools import accumulate
from typing import TYPE_CHECKING, Any, Final

from reward_memory.errors import InputError, join_path

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = [
    "INPUT_IDLE_TIMEOUT",
    "MAX_INPUT_BYTES",
    "MAX_JSON_DEPTH",
    "MAX_JSON_INTEGER",
    "check_data",
    "parse",
    "read",
    "read_bytes",
]

MAX_INPUT_BYTES: Final = 4 * 1024 * 1024
"""The largest input accepted, in bytes (of UTF-8 for text): 4 MiB."""
MAX_JSON_DEPTH: Final = 64
"""The deepest nesting of arrays and objects accepted (``{}`` is depth 1)."""
MAX_JSON_INTEGER: Final = 2**53 - 1
"""The largest integer magnitude accepted: exact in every JSON reader (RFC 7493 §2.2)."""
INPUT_IDLE_TIMEOUT: Final = 3.0
"""Seconds a named FIFO or device may stay silent before it is refused."""

_CHUNK: Final = 64 * 1024
_JSON_SPACE: Final = " \t\r\n"
_BOM: Final = "\ufeff"
# A JSON string, or an unterminated one up to the end: possessive, so the scan
# is linear even on adversarial text (no backtracking, no retries).
_STRING: Final = re.compile(r'"[^"\\]*+(?:\\.[^"\\]*+)*+"?', re.DOTALL)
_NOT_BRACKET: Final = re.compile(r"[^\[\]{}]++")
_STEP: Final = {"[": 1, "{": 1, "]": -1, "}": -1}
_SURROGATE: Final = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE: Final = re.compile(r"\\u[dD][89a-fA-F]")
# An int literal longer than this is out of range whatever its digits (sign included).
_INT_DIGITS: Final = len(str(MAX_JSON_INTEGER)) + 1


class _Bad:
    """Stands in, inside the parsed tree, for a value the parser hooks refused."""

    __slots__ = ("code", "key", "message")

    def __init__(self, code: str, message: str, key: str | None = None) -> None:
        self.code = code
        self.message = message
        self.key = key


_NUMBER: Final = _Bad(
    "number_out_of_range",
    f"is a number outside the interoperable range (integers up to {MAX_JSON_INTEGER})",
)


def _error(code: str, message: str, path: str) -> InputError:
    return InputError(message, path=path, code=code)


# --- reading -------------------------------------------------------------------------


def read_bytes(
    source: str | os.PathLike[str] | None,
    *,
    max_bytes: int = MAX_INPUT_BYTES,
    idle_timeout: float | None = None,
    where: str = "$",
) -> bytes:
    """The bytes of a file (``"-"`` for standard input), at most ``max_bytes`` of them.

    ``where`` names the source in errors (e.g. ``--input``); the file name itself
    never appears in an error (it may be a local path). ``idle_timeout``
    (default :data:`INPUT_IDLE_TIMEOUT`) applies to a named FIFO or device only.

    Raises:
        InputError: ``missing_input``, ``file_not_found``, ``file_unreadable``,
            ``input_too_large`` or ``input_timeout``.
    """
    if source is None or source == "":
        raise _error("missing_input", "a file is required", where)
    if source == "-":
        return _read_stdin(max_bytes, where)
    try:
        # Non-blocking, so that opening a FIFO with no writer does not wait forever.
        fd = os.open(
            source,
            os.O_RDONLY
            | getattr(os, "O_NONBLOCK", 0)
            | getattr(os, "O_NOCTTY", 0)
            | getattr(os, "O_CLOEXEC", 0),
        )
    except (FileNotFoundError, NotADirectoryError):
        raise _error("file_not_found", "the input file does not exist", where) from None
    except IsADirectoryError:
        raise _error("file_unreadable", "the input is a directory, not a file", where) from None
    except PermissionError:
        raise _error(
            "file_unreadable", "the input file cannot be read (permission denied)", where
        ) from None
    except OSError as exc:  # ENXIO (a socket), ELOOP, ENAMETOOLONG, ...
        raise _error(
            "file_unreadable", f"the input file cannot be read ({_reason(exc)})", where
        ) from None
    except ValueError:  # a NUL byte or an unencodable character in the name
        raise _error("file_not_found", "the input file name is not a valid path", where) from None
    deadline = INPUT_IDLE_TIMEOUT if idle_timeout is None else idle_timeout
    try:
        return _read_fd(fd, max_bytes, deadline, where)
    finally:
        os.close(fd)


def _read_fd(fd: int, max_bytes: int, idle_timeout: float | None, where: str) -> bytes:
    """Read ``fd`` to its end; ``idle_timeout`` (None: wait forever) bounds each wait."""
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise _error("file_unreadable", "the input is a directory, not a file", where)
        chunk = _CHUNK
        if stat.S_ISREG(info.st_mode):
            # The size is known: refuse without reading, and read the rest in one
            # go (one more byte than the size, to see a file that grew).
            if info.st_size > max_bytes:
                raise _too_large(max_bytes, where)
            chunk = max(info.st_size + 1, _CHUNK)
        # Regular files wait too: a /proc file (kmsg) can block like a pipe, and
        # poll() answers at once for an ordinary file.
        wait = _waiter(fd, idle_timeout, where)
        return _read_until(fd, max_bytes, chunk, wait, where)
    except OSError as exc:
        raise _error(
            "file_unreadable", f"the input cannot be read ({_reason(exc)})", where
        ) from None


def _read_stdin(max_bytes: int, where: str) -> bytes:
    stream = getattr(sys.stdin, "buffer", sys.stdin)
    if stream is None:
        raise _error("file_unreadable", "standard input is not available", where)
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        fd = None
    if fd is None:  # an in-memory stream (tests, embedding): bounded all the same
        try:
            data = stream.read(max_bytes + 1)
        except (OSError, ValueError) as exc:
            raise _error(
                "file_unreadable", f"standard input cannot be read ({type(exc).__name__})", where
            ) from None
        if not isinstance(data, bytes | bytearray):
            data = str(data).encode("utf-8", "surrogatepass")
        if len(data) > max_bytes:
            raise _too_large(max_bytes, where)
        return bytes(data)
    # Standard input is read from its descriptor (nothing has buffered it yet in
    # a CLI run), to its end: no deadline, as any filter reads it.
    return _read_fd(fd, max_bytes, None, where)


def _read_until(
    fd: int, max_bytes: int, chunk_size: int, wait: Callable[[], None] | None, where: str
) -> bytes:
    """Read to end of file; refuse the input as soon as it passes ``max_bytes``."""
    chunks: list[bytes] = []
    total = 0
    while True:
        if wait is not None:
            wait()
        try:
            chunk = os.read(fd, min(chunk_size, max_bytes + 1 - total))
        except BlockingIOError:  # woken without data (a terminal, a spurious wake-up)
            continue
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        total += len(chunk)
        if total > max_bytes:
            raise _too_large(max_bytes, where)


def _waiter(fd: int, idle_timeout: float | None, where: str) -> Callable[[], None] | None:
    """Wait until ``fd`` is readable; raise ``input_timeout`` once the deadline passes.

    The descriptor is non-blocking (a FIFO is opened so), so every read is
    preceded by a wait: no busy loop, and a silent writer meets the deadline.
    """
    if not hasattr(select, "poll"):  # Windows: blocking reads, no deadline
        return None
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    timeout_ms = None if idle_timeout is None else max(0, int(idle_timeout * 1000))

    def wait() -> None:
        if not poller.poll(timeout_ms):
            raise _error(
                "input_timeout",
                f"the input gave no data for {idle_timeout:g} seconds (is anything writing to it?)",
                where,
            )

    return wait


def _reason(exc: OSError) -> str:
    # The errno's symbolic name (never strerror with the file name in it).
    return errno.errorcode.get(exc.errno or 0, type(exc).__name__)


def _too_large(max_bytes: int, where: str) -> InputError:
    return _error(
        "input_too_large", f"the input is larger than the limit of {max_bytes} bytes", where
    )


# --- parsing -------------------------------------------------------------------------


def read(
    source: str | os.PathLike[str] | None,
    *,
    max_bytes: int = MAX_INPUT_BYTES,
    max_depth: int = MAX_JSON_DEPTH,
    idle_timeout: float | None = None,
    where: str = "$",
) -> Any:
    """Read and parse one JSON document from a file (``"-"``: standard input)."""
    raw = read_bytes(source, max_bytes=max_bytes, idle_timeout=idle_timeout, where=where)
    return parse(raw, max_bytes=max_bytes, max_depth=max_depth, where=where)


def parse(
    data: str | bytes | bytearray | memoryview,
    *,
    max_bytes: int = MAX_INPUT_BYTES,
    max_depth: int = MAX_JSON_DEPTH,
    where: str = "$",
) -> Any:
    """Parse one JSON document within the bounds (see the module docs for the codes).

    ``where`` names the document in errors about it as a whole; errors about one
    member (``duplicate_key``, ``number_out_of_range``, ``unpaired_surrogate``)
    name that member's JSON path instead.
    """
    if isinstance(data, str):
        text = data
        # A character is at most 4 bytes: only a long text pays for the encoding.
        if len(text) > max_bytes or (
            len(text) * 4 > max_bytes and len(text.encode("utf-8", "surrogatepass")) > max_bytes
        ):
            raise _too_large(max_bytes, where)
    elif isinstance(data, bytes | bytearray | memoryview):
        raw = bytes(data)
        if len(raw) > max_bytes:
            raise _too_large(max_bytes, where)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise _error(
                "not_utf8", f"the input is not UTF-8 text (byte {exc.start})", where
            ) from None
    else:
        raise _error("wrong_type", "JSON input must be text or bytes", where)
    if text.startswith(_BOM):
        text = text[1:]
    if not text.strip(_JSON_SPACE):
        raise _error("empty_input", "the input is empty", where)
    _check_text_depth(text, max_depth, where)
    marks: list[_Bad] = []
    try:
        value = _decode(text, marks)
    except json.JSONDecodeError as exc:
        message = f"the input is not valid JSON (line {exc.lineno}, column {exc.colno})"
        raise _error("invalid_json", message, where) from None
    except ValueError as exc:  # our refusal of NaN / Infinity
        raise _error("invalid_json", str(exc), where) from None
    if marks or _may_hold_surrogate(text, raw_text=isinstance(data, str)):
        _raise_first_problem(value, max_depth)
    return value


def _may_hold_surrogate(text: str, *, raw_text: bool) -> bool:
    # Decoded bytes never hold one (UTF-8 refuses them); an escape or a caller's
    # str might. A hit only costs the exact walk, so an escaped backslash before
    # "ud800" is a harmless false alarm.
    if "\\u" in text and _SURROGATE_ESCAPE.search(text) is not None:
        return True
    return raw_text and _SURROGATE.search(text) is not None


def _decode(text: str, marks: list[_Bad]) -> Any:
    def pairs(items: list[tuple[str, Any]]) -> Any:
        obj = dict(items)
        if len(obj) == len(items):
            return obj
        seen: set[str] = set()
        for key, _ in items:
            if key in seen:
                bad = _Bad("duplicate_key", "the object repeats this key", key)
                marks.append(bad)
                return bad
            seen.add(key)
        return obj  # pragma: no cover - len() differs only when a key repeats

    def integer(literal: str) -> Any:
        if len(literal) <= _INT_DIGITS:
            number = int(literal)
            if -MAX_JSON_INTEGER <= number <= MAX_JSON_INTEGER:
                return number
        marks.append(_NUMBER)
        return _NUMBER

    def real(literal: str) -> Any:
        number = float(literal)
        if math.isfinite(number):
            return number
        marks.append(_NUMBER)
        return _NUMBER

    return json.loads(
        text,
        object_pairs_hook=pairs,
        parse_int=integer,
        parse_float=real,
        parse_constant=_refuse_constant,
    )


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"the input uses {name}, which JSON does not allow")


def _check_text_depth(text: str, max_depth: int, where: str) -> None:
    # Brackets inside strings count too here: an over-estimate that only sends
    # more documents to the exact scan below.
    if text.count("[") + text.count("{") <= max_depth:
        return
    skeleton = _NOT_BRACKET.sub("", _STRING.sub("", text))
    if skeleton and max(accumulate(map(_STEP.__getitem__, skeleton))) > max_depth:
        raise _error(
            "input_too_deep",
            f"the input nests arrays or objects deeper than the limit of {max_depth}",
            where,
        )


# --- checking parsed data ------------------------------------------------------------


def check_data(value: Any, *, max_depth: int = MAX_JSON_DEPTH) -> None:
    """Check data built in Python (not parsed here) against the same bounds.

    For ``wire.load`` and other loaders handed a ``dict``: nesting (a cycle is
    infinitely deep), non-string keys, non-JSON values, integers out of range,
    non-finite floats and unpaired surrogates each raise a typed error naming
    the path. Iterative, so no input can exhaust the interpreter's stack.
    """
    if not _looks_clean(value, max_depth):
        _raise_first_problem(value, max_depth)


def _looks_clean(root: Any, max_depth: int) -> bool:
    """The fast pass of :func:`check_data`: no paths kept; False sends it to the exact walk."""
    stack: list[tuple[Any, int]] = [(root, 1)]
    push = stack.append
    while stack:
        value, depth = stack.pop()
        kind = type(value)
        if kind is str:
            if _SURROGATE.search(value):
                return False
        elif kind is dict:
            if depth > max_depth:
                return False
            for key, item in value.items():
                if type(key) is not str or _SURROGATE.search(key):
                    return False
                push((item, depth + 1))
        elif kind is list or kind is tuple:
            if depth > max_depth:
                return False
            for item in value:
                push((item, depth + 1))
        elif kind is int:
            if not -MAX_JSON_INTEGER <= value <= MAX_JSON_INTEGER:
                return False
        elif kind is float:
            if not math.isfinite(value):
                return False
        elif value is not None and kind is not bool:
            return False  # a subclass or a foreign type: the exact walk decides
    return True


def _raise_first_problem(root: Any, max_depth: int) -> None:
    """Walk ``root`` (depth-first, in document order) and raise its first problem."""
    # Each entry: (value, depth, trail) where trail is (parent_trail, key) or None.
    stack: list[tuple[Any, int, Any]] = [(root, 1, None)]
    while stack:
        value, depth, trail = stack.pop()
        if isinstance(value, str):
            if _SURROGATE.search(value):
                raise _surrogate(trail)
        elif isinstance(value, dict | list | tuple):
            if depth > max_depth:
                raise _error(
                    "input_too_deep",
                    f"nests arrays or objects deeper than the limit of {max_depth}",
                    _path(trail),
                )
            if isinstance(value, dict):
                children: list[tuple[Any, Any]] = []
                for key, item in value.items():
                    if type(key) is not str:
                        raise _error("wrong_type", "has a key that is not a string", _path(trail))
                    if _SURROGATE.search(key):  # named by its object: the key cannot be printed
                        raise _surrogate(trail)
                    children.append((item, (trail, key)))
            else:
                children = [(item, (trail, index)) for index, item in enumerate(value)]
            stack.extend((item, depth + 1, where) for item, where in reversed(children))
        elif isinstance(value, _Bad):
            if value.key is not None:
                raise _error(value.code, value.message, _path((trail, value.key)))
            raise _error(value.code, value.message, _path(trail))
        elif value is None or isinstance(value, bool):
            continue
        elif isinstance(value, int):
            if not -MAX_JSON_INTEGER <= value <= MAX_JSON_INTEGER:
                raise _error(_NUMBER.code, _NUMBER.message, _path(trail))
        elif isinstance(value, float):
            if not math.isfinite(value):
                raise _error(_NUMBER.code, "is not a finite number", _path(trail))
        else:
            raise _error("wrong_type", "is not a JSON value", _path(trail))


def _surrogate(trail: Any) -> InputError:
    return _error("unpaired_surrogate", "holds an unpaired UTF-16 surrogate", _path(trail))


def _path(trail: Any) -> str:
    keys: list[str | int] = []
    while trail is not None:
        trail, key = trail
        keys.append(key)
    path = "$"
    for key in reversed(keys):
        path = join_path(path, key) if isinstance(key, int) else f"{path}.{key}"
    return path
