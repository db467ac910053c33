"""Shared CLI plumbing: outcomes, output formats, input files, error packets."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Final

import attrs

from reward_memory.errors import RecordValidationError

__all__ = ["Outcome", "emit", "emit_error", "read_json_input", "summary_lines"]

ERROR_SCHEMA: Final = "reward_memory_error_v0"
# Keys the text summary shows first, in this order, when a packet has them.
_SUMMARY_KEYS: Final = (
    "status",
    "decision",
    "effective_decision",
    "health_state",
    "corpus_id",
    "case_ref",
)


@attrs.frozen(kw_only=True)
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
    if isinstance(packet.get("memory_classes"), list):
        lines.append(f"  memory_classes: {len(packet['memory_classes'])}")
    if "corpus_count" in packet:
        lines.append(f"  corpus_count: {packet['corpus_count']}")
    if isinstance(packet.get("reason_codes"), list):
        lines.append(f"  reason_codes: {', '.join(packet['reason_codes']) or '-'}")
    return lines


def emit(outcome: Outcome, output_format: str) -> None:
    """Print an outcome as JSON (2-space indent, UTF-8 kept) or as a text summary."""
    if outcome.printed:
        return
    if output_format == "json":
        sys.stdout.write(json.dumps(outcome.packet, indent=2, ensure_ascii=False) + "\n")
        return
    lines = summary_lines(outcome.packet)
    lines.extend(outcome.text_lines)
    sys.stdout.write("\n".join(lines) + "\n")


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
    quote an argument; anything with a credential or path shape is replaced.
    """
    from reward_memory.text import find_unsafe

    if find_unsafe(message) is not None:
        message = "the arguments were not understood (an argument was withheld: it looks unsafe)"
    if path is not None and find_unsafe(path) is not None:
        path = "$"
    packet = error_packet(code, message, path)
    sys.stdout.write(json.dumps(packet, indent=2, ensure_ascii=False) + "\n")


def read_json_input(name: str | None, *, option: str = "--input") -> Any:
    """Read one JSON document from a file (``-`` for stdin).

    Every failure is a :class:`RecordValidationError` whose path names the option;
    the message never repeats the file name (it may be a local path).
    """
    if name is None:
        raise RecordValidationError("a file is required", path=option, code="missing_input")
    try:
        raw = sys.stdin.buffer.read() if name == "-" else Path(name).read_bytes()
    except FileNotFoundError:
        raise RecordValidationError(
            "the input file does not exist", path=option, code="file_not_found"
        ) from None
    except IsADirectoryError:
        raise RecordValidationError(
            "the input is a directory, not a file", path=option, code="file_unreadable"
        ) from None
    except OSError as exc:
        raise RecordValidationError(
            f"the input file cannot be read ({type(exc).__name__})",
            path=option,
            code="file_unreadable",
        ) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise RecordValidationError(
            "the input file is not UTF-8 text", path=option, code="invalid_json"
        ) from None
    try:
        data = json.loads(text, parse_constant=_refuse_constant)
    except json.JSONDecodeError as exc:
        raise RecordValidationError(
            f"the input is not valid JSON (line {exc.lineno}, column {exc.colno})",
            path=option,
            code="invalid_json",
        ) from None
    except ValueError as exc:
        raise RecordValidationError(str(exc), path=option, code="invalid_json") from None
    return data


def read_json_object(name: str | None, *, option: str = "--input") -> dict[str, Any]:
    """Like :func:`read_json_input`, and the document must be one JSON object."""
    data = read_json_input(name, option=option)
    if not isinstance(data, dict):
        raise RecordValidationError(
            "the input must contain one JSON object", path="$", code="wrong_type"
        )
    return data


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"the input uses {name}, which JSON does not allow")
