"""Shared CLI plumbing: outcomes, output formats, input files, error packets."""

from __future__ import annotations

import json
import re
import sys
from typing import TYPE_CHECKING, Any, Final

from reward_memory._frozen import frozen
from reward_memory.errors import RecordValidationError

if TYPE_CHECKING:
    import argparse

__all__ = [
    "DEFAULT_ACTIVATION_PATH",
    "Outcome",
    "add_activation_option",
    "emit",
    "emit_error",
    "read_json_input",
    "summary_lines",
    "write_json",
    "write_text",
]

# reward_memory._activation_registry.DEFAULT_ACTIVATION_PATH (a test holds the two
# equal), named here so that a verb's options do not import the registry's records,
# `tempfile` and `pathlib` (~25 ms) before it knows it reads an activation file.
DEFAULT_ACTIVATION_PATH: Final = ".reward-memory/activation.json"

ERROR_SCHEMA: Final = "reward_memory_error_v0"
# The error packet's own schema bounds (reward_memory_error_v0.schema.json); its
# `error` field is message + " @ " + path, so the two limits keep it under 1000.
_MAX_MESSAGE: Final = 600
_MAX_PATH: Final = 396
_ERROR_CODE: Final = re.compile(r"[a-z][a-z0-9_]{0,63}")
# C0/C1 controls, unpaired surrogates, and bidirectional overrides (which can
# make a terminal show a path other than the one printed).
_UNPRINTABLE: Final = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff\u202a-\u202e\u2066-\u2069]")
_PATH_GLUE: Final = re.compile(r"^\$|[.\[\]]")
# The verbs' own options, named as the path of a whole-file or flag error: constant
# words the secret scan passes (a test holds each to it), so they are not scanned
# again -- "--x" alone sends text on to the full scan, compiled at a cost.
OWN_OPTIONS: Final = frozenset(
    {
        "--activation",
        "--agent",
        "--agent-id",
        "--authority",
        "--binding",
        "--case",
        "--check",
        "--config",
        "--decision",
        "--goal-id",
        "--input",
        "--namespace",
        "--now",
        "--observed-at",
        "--provider",
        "--scope-ref",
        "--timeout",
    }
)
# Keys the text summary shows first, in this order, when a packet has them.
_SUMMARY_KEYS: Final = (
    "status",
    "decision",
    "effective_decision",
    "health_state",
    "corpus_id",
    "case_ref",
)


@frozen(kw_only=True)
class Outcome:
    """What a verb produced: the packet, its exit code, and optional extra text lines."""

    packet: dict[str, Any]
    exit_code: int = 0
    text_lines: tuple[str, ...] = ()
    printed: bool = False  # the verb wrote its own output (e.g. `schema show`)


def summary_lines(packet: dict[str, Any]) -> list[str]:
    """A short, readable summary of any packet (the ``--format text`` view)."""
    lines = [f"{packet.get('schema_version', 'reward-memory')}"]
    for key in _SUMMARY_KEYS:
        if key in packet and packet[key] is not None:
            lines.append(f"  {key}: {packet[key]}")
    lines.extend(f"  {key}: {value or '-'}" for key, value in _counted(packet))
    return lines


def _counted(packet: dict[str, Any]) -> list[tuple[str, str]]:
    """The counts both readable views show: classes, corpora, reason codes."""
    counts = []
    if isinstance(packet.get("memory_classes"), list):
        counts.append(("memory_classes", str(len(packet["memory_classes"]))))
    if "corpus_count" in packet:
        counts.append(("corpus_count", str(packet["corpus_count"])))
    if isinstance(packet.get("reason_codes"), list):
        counts.append(("reason_codes", ", ".join(map(str, packet["reason_codes"]))))
    return counts


def emit(outcome: Outcome, output_format: str) -> None:
    """Print an outcome as JSON (2-space indent, UTF-8 kept) or as a text summary."""
    if outcome.printed:
        return
    if output_format == "json":
        write_json(outcome.packet)
        return
    if output_format == "markdown":
        write_text("\n".join(markdown_lines(outcome.packet)) + "\n\n")
        return
    lines = summary_lines(outcome.packet)
    lines.extend(outcome.text_lines)
    write_text("\n".join(lines) + "\n")


def _stdout() -> Any:
    """``sys.stdout``; a closed descriptor 1 (``>&-``: Python sets it to None) is an
    ``OSError`` like any other stdout that cannot be written."""
    out = sys.stdout
    if out is None:
        import errno  # only when stdout is gone

        raise OSError(errno.EBADF, "stdout is closed")
    return out


def write_text(text: str) -> None:
    out = _stdout()
    try:
        out.write(text)
    except UnicodeEncodeError:  # a stdout that is not UTF-8: escape, never crash
        out.write(text.encode("ascii", "backslashreplace").decode("ascii"))


# The original's markdown view (reference 15.1): these keys, in this order, when present.
_MARKDOWN_KEYS: Final = ("status", "decision", "effective_decision", "health_state", "case_ref")


def markdown_lines(packet: Any) -> list[str]:
    """The original's ``--format markdown`` view of a packet: a heading, then a few keys."""
    lines = ["# Reward Memory", ""]
    if not isinstance(packet, dict):
        return lines
    lines.extend(f"- {key}: `{packet[key]}`" for key in _MARKDOWN_KEYS if key in packet)
    lines.extend(f"- {key}: `{value}`" for key, value in _counted(packet))
    return lines


def _activation_file(value: str) -> str:
    # "-" is no file here: configure writes the registry back, and a registry read from
    # stdin would be written to a file named "-".
    if value == "-":
        raise ValueError(value)
    return value


_activation_file.__name__ = "activation registry file"  # argparse's "invalid ... value"


def add_activation_option(parser: argparse.ArgumentParser) -> None:
    """``--activation FILE`` (alias ``--registry``): the activation registry file."""
    parser.add_argument(
        "--activation",
        "--registry",  # the original's name (its global --registry PATH)
        dest="activation",
        type=_activation_file,
        default=DEFAULT_ACTIVATION_PATH,
        metavar="FILE",
        help=f"the activation registry file (default: {DEFAULT_ACTIVATION_PATH})",
    )


def write_json(document: Any) -> None:
    """Print a JSON document (2-space indent, UTF-8 kept where stdout can show it).

    A stdout that cannot encode a character (``PYTHONIOENCODING=ascii``, a
    legacy console) gets the same JSON with ``\\u`` escapes instead of a crash:
    exit 1 is for our bugs, not for the caller's terminal.
    """
    out = _stdout()
    try:
        out.write(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    except UnicodeEncodeError:
        out.write(json.dumps(document, indent=2) + "\n")


def error_packet(code: str, message: str, path: str | None) -> dict[str, Any]:
    """The ``reward_memory_error_v0`` packet (``error`` repeats ``message`` for v0 readers)."""
    return {
        "ok": False,
        "schema_version": ERROR_SCHEMA,
        "status": "invalid_request",
        "error_code": code,
        "field_path": path,
        "message": message,
        "error": message if path is None else f"{message} @ {path}",
    }


def emit_error(code: str, message: str, path: str | None) -> None:
    """Print an error packet on stdout (always JSON: it is meant for the caller's code).

    Messages are ours and never repeat input values, but a parser message can
    quote an argument and a path or an unknown-field message names the input's
    keys; anything with a credential or path shape is replaced, and anything
    that would make the packet fail its own schema (length, unprintable
    characters) is cut or replaced, so the packet always validates.
    """
    from reward_memory.text import find_unsafe

    if _ERROR_CODE.fullmatch(code) is None:
        code = "invalid_request"
    message = _printable(message)
    if find_unsafe(message) is not None:
        message = "the input was not understood (a detail was withheld: it looks unsafe)"
    if path is not None and path not in OWN_OPTIONS:
        path = _printable(path)
        # A key is glued to "$." or "]": check it as a word of its own as well.
        if find_unsafe(_path_body(path)) is not None or (
            find_unsafe(_PATH_GLUE.sub(" ", path)) is not None
        ):
            path = "$"
    write_json(error_packet(code, _clip(message, _MAX_MESSAGE), path and _clip(path, _MAX_PATH)))


def _path_body(path: str) -> str:
    """A field path without its root ``$``, where that cannot change the scan's verdict.

    A lone ``$`` sends any text on to the full secret scan (for ``$HOME/`` shapes),
    and compiling that scan would cost every error packet several milliseconds.
    No shape starts at the ``$`` of ``$.`` or ``$[`` (only ``$HOME/`` and
    ``${HOME}/`` start with one) and none looks back at it, so the rest gets the
    same verdict (``tests/test_cli_malformed.py`` holds the two equal).
    """
    return path[1:] if path == "$" or path.startswith(("$.", "$[")) else path


def _printable(text: str) -> str:
    # Unpaired surrogates cannot be written as UTF-8, and control characters
    # have no place in a one-line message: both become U+FFFD.
    return _UNPRINTABLE.sub("\ufffd", text) or "?"


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def read_json_input(name: str | None, *, option: str = "--input") -> Any:
    """Read one JSON document from a file (``-`` for stdin), within the documented bounds.

    Every verb that reads a file goes through here, so every one refuses the same
    inputs the same way (:mod:`reward_memory.jsonio`: size, depth, endless or
    silent streams, duplicate keys, ...). Errors are typed
    (:class:`~reward_memory.errors.InputError`); a whole-document problem names
    the option as its path, never the file name (it may be a local path).
    """
    from reward_memory import jsonio

    return jsonio.read(name, where=option)


def read_json_object(name: str | None, *, option: str = "--input") -> dict[str, Any]:
    """Like :func:`read_json_input`, and the document must be one JSON object."""
    data = read_json_input(name, option=option)
    if not isinstance(data, dict):
        raise RecordValidationError(
            "the input must contain one JSON object", path="$", code="wrong_type"
        )
    return data
