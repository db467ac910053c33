"""The error packet (``reward_memory_error_v0``) the CLI prints for bad input."""

from __future__ import annotations

from typing import Any, Literal

import attrs

from reward_memory._frozen import frozen
from reward_memory.errors import RecordValidationError
from reward_memory.records import _fields as f

__all__ = ["ErrorPacket"]


def _public(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    """A string the packet publishes: no credential, local path or control character (the
    CLI withholds such a detail before it builds the packet; a loaded one is held to it)."""
    if value is None and attribute.name == "field_path":
        return
    if not isinstance(value, str):
        raise RecordValidationError(
            "must be a string", path=f"$.{attribute.name}", code="wrong_type"
        )
    from reward_memory.text import find_unsafe  # noqa: PLC0415 - only when a packet loads

    if find_unsafe(value) is not None:
        raise RecordValidationError(
            "must be public-safe (it holds a credential, a local path or a control character)",
            path=f"$.{attribute.name}",
            code="unsafe_text",
        )


@frozen(kw_only=True)
class ErrorPacket:
    """A refused request: a stable error code, the field path, a public-safe message.

    ``error`` repeats the message (with its path) for readers of the original's
    v0 packet, which carried only that key.
    """

    ok: Literal[False] = f.const(False)
    schema_version: Literal["reward_memory_error_v0"] = f.const("reward_memory_error_v0")
    status: Literal["invalid_request"] = f.const("invalid_request")
    error_code: str = attrs.field(validator=_public)
    field_path: str | None = attrs.field(default=None, validator=_public)
    message: str = attrs.field(validator=_public)
    error: str = attrs.field(validator=_public)
