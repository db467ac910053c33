"""The error packet (``reward_memory_error_v0``) the CLI prints for bad input."""

from __future__ import annotations

from typing import Literal

from reward_memory._frozen import frozen
from reward_memory.records import _fields as f

__all__ = ["ErrorPacket"]


@frozen(kw_only=True)
class ErrorPacket:
    """A refused request: a stable error code, the field path, a public-safe message.

    ``error`` repeats the message (with its path) for readers of the original's
    v0 packet, which carried only that key.
    """

    ok: Literal[False] = f.const(False)
    schema_version: Literal["reward_memory_error_v0"] = f.const("reward_memory_error_v0")
    status: Literal["invalid_request"] = f.const("invalid_request")
    error_code: str
    field_path: str | None = None
    message: str
    error: str
