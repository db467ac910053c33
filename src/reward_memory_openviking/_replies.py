"""What the server answered: the reply, its JSON envelope, and the failure it means.

Pure functions over a :class:`Reply`; the failure mapping they implement is listed in
:mod:`._protocol`. Anything the server sends that no write of this provider could
have made (JSON nested past the parser's depth, text with a lone surrogate, a score
outside [0, 1]) is ``provider_bad_response``, never a raw exception.
"""

from __future__ import annotations

import json
import math
from typing import Any, Final

from reward_memory.errors import ProviderUnavailable

_RETRY_STATUSES: Final = frozenset({429, 502, 503})
#: Scores are (cosine + 1) / 2, in [0, 1]; float rounding may overshoot by this much.
_SCORE_SLACK: Final = 1e-6


class OpenVikingAuthError(ProviderUnavailable):
    """The server refused the credentials (401) or the access (403).

    A :class:`ProviderUnavailable`, so the core fails open; the reason code
    ``provider_auth_failed`` tells it apart from an outage.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message, reason_code="provider_auth_failed")


class Reply:
    """What came back: the status code and the body's bytes."""

    __slots__ = ("body", "status")

    def __init__(self, status: int, body: bytes) -> None:
        self.status = status
        self.body = body


def bad_response(op: str, problem: str) -> ProviderUnavailable:
    return ProviderUnavailable(
        f"openviking {op}: unexpected response ({problem})", reason_code="provider_bad_response"
    )


def _parsed(body: bytes) -> Any:
    """The JSON of a body; ``ValueError`` for anything else.

    The C parser recurses per nesting level: a body nested deeper than the
    interpreter's recursion limit (``[[[[...``) raises ``RecursionError``, which is
    no JSON this server sends either.
    """
    try:
        return json.loads(body)
    except RecursionError:
        raise ValueError("nested too deeply") from None


def envelope(reply: Reply, op: str) -> dict[str, Any]:
    try:
        body = _parsed(reply.body)
    except ValueError:  # UnicodeDecodeError is a ValueError
        raise bad_response(op, f"HTTP {reply.status}, body is not JSON") from None
    if not isinstance(body, dict):
        raise bad_response(op, f"HTTP {reply.status}, body is not a JSON object")
    return body


def _error_code(body: dict[str, Any]) -> str:
    error = body.get("error")
    code = error.get("code") if isinstance(error, dict) else None
    return code if isinstance(code, str) and code.isidentifier() and len(code) <= 40 else "?"


def retryable(reply: Reply) -> bool:
    if reply.status in _RETRY_STATUSES:
        return True
    if reply.status != 409:
        return False
    try:
        body = _parsed(reply.body)
        return body["error"]["details"]["retryable"] is True
    except (ValueError, KeyError, TypeError):
        return False


def failure(reply: Reply, op: str) -> ProviderUnavailable:
    """The exception for a reply the operation cannot use."""
    try:
        code = _error_code(envelope(reply, op))
    except ProviderUnavailable:
        code = "?"
    status = reply.status
    what = f"openviking {op}: HTTP {status} {code}"
    if status in (401, 403):
        return OpenVikingAuthError(f"{what} (check the key, the account/user and the peer)")
    if status in (408, 504):
        return ProviderUnavailable(what, reason_code="provider_timeout")
    if status >= 500 or status in _RETRY_STATUSES or status == 409:
        return ProviderUnavailable(what)
    if 200 <= status < 300:
        return bad_response(op, f"HTTP {status}")
    return ProviderUnavailable(what, reason_code="provider_request_rejected")


def result_of(reply: Reply, op: str) -> Any:
    """The ``result`` of a successful envelope."""
    body = envelope(reply, op)
    if body.get("status") != "ok" or "result" not in body:
        raise bad_response(op, "no ok result")
    return body["result"]


def text(value: object, op: str, what: str) -> str:
    """A string of the response that is UTF-8 text.

    JSON's ``\\ud800`` escapes decode to lone surrogates: no write stores one
    (``check_content`` refuses them), and one would break every later encode.
    """
    if not isinstance(value, str):
        raise bad_response(op, f"{what} is not a string")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise bad_response(op, f"{what} is not UTF-8 text") from None
    return value


def score(value: object, op: str) -> float:
    """A hit's score: missing or not a number ranks as 0; a number outside [0, 1] is corrupt.

    NaN (which Python's json accepts) would pass any threshold and sort anywhere, and
    infinity or 1e308 would outrank every real hit: a bad response, not a ranking.
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0.0
    score = float(value)
    if not math.isfinite(score) or not -_SCORE_SLACK <= score <= 1 + _SCORE_SLACK:
        raise bad_response(op, "a hit's score is not a number from 0 to 1")
    return min(max(score, 0.0), 1.0)
