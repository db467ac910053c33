"""Provider options: keyword arguments, ``openviking://`` URLs and environment defaults.

Options not given fall back to the environment, so ``get_provider("openviking")``
(what an experiment config's binding leads to) can be configured without code:

=============================  =================================================
``REWARD_MEMORY_OPENVIKING_URL``      base URL (default ``http://127.0.0.1:1933``)
``REWARD_MEMORY_OPENVIKING_API_KEY``  the key (or name another variable: ``api_key_env``)
``REWARD_MEMORY_OPENVIKING_AUTH``     ``api_key`` | ``trusted`` | ``dev``
``REWARD_MEMORY_OPENVIKING_ACCOUNT``  account id (trusted mode)
``REWARD_MEMORY_OPENVIKING_USER``     user id (trusted mode)
=============================  =================================================

A URL never carries a key (command lines and logs show URLs): use ``api_key_env``.
Error messages name the option, never its value.
"""

from __future__ import annotations

import math
import os
import re
from typing import Any, Final, Literal

import attrs

from reward_memory.errors import ProviderConfigError, RecordValidationError
from reward_memory_openviking._layout import (
    DEFAULT_ROOT,
    check_no_reserved_segment,
    check_resources_uri,
)

AuthMode = Literal["api_key", "trusted", "dev"]
ProcessingMode = Literal["vectors_only", "semantic_and_vectors"]

ENV_URL: Final = "REWARD_MEMORY_OPENVIKING_URL"
ENV_API_KEY: Final = "REWARD_MEMORY_OPENVIKING_API_KEY"
ENV_AUTH: Final = "REWARD_MEMORY_OPENVIKING_AUTH"
ENV_ACCOUNT: Final = "REWARD_MEMORY_OPENVIKING_ACCOUNT"
ENV_USER: Final = "REWARD_MEMORY_OPENVIKING_USER"
DEFAULT_URL: Final = "http://127.0.0.1:1933"
DEFAULT_TIMEOUT: Final = 10.0
DEFAULT_RETRIES: Final = 3
MAX_TIMEOUT: Final = 3600.0
MAX_RETRIES: Final = 10
#: Scores are (cosine + 1) / 2: 0.5 is a text no more related than chance. Hits below
#: this are dropped, so a query that shares nothing with a record does not "find" it
#: (an embedding search ranks every record for any query). OpenViking's own guidance
#: puts a useful threshold at 0.55-0.65; lower it for a weak embedding model.
DEFAULT_SCORE_THRESHOLD: Final = 0.55

OPTION_NAMES: Final = (
    "base_url",
    "api_key",
    "api_key_env",
    "auth",
    "account",
    "user",
    "root",
    "actor_peer",
    "timeout",
    "retries",
    "wait_for_index",
    "processing_mode",
    "score_threshold",
)
_URL_OPTIONS: Final = frozenset(OPTION_NAMES) - {"base_url", "api_key"}
_IDENTIFIER: Final = re.compile(r"[A-Za-z0-9_.@-]{1,255}")
_ENV_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
_HOST_PORT: Final = re.compile(r"(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]{1,253})(?::([0-9]{1,5}))?")
_OPTION_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
# URL numbers are ASCII digits only: int() and float() also take other scripts'
# digits ("\u00b2" passes str.isdigit, a full-width 5 parses as 5), "_" separators
# ("1_0" is 10), spaces, exponents, "inf" and "nan".
_URL_INTEGER: Final = re.compile(r"[0-9]{1,3}")
_URL_DECIMAL: Final = re.compile(r"[0-9]{1,12}(?:\.[0-9]{1,12})?")
_TRUE: Final = frozenset({"1", "true", "yes", "on"})
_FALSE: Final = frozenset({"0", "false", "no", "off"})


def _bad(name: str, problem: str) -> ProviderConfigError:
    return ProviderConfigError(f"openviking provider option {name!r} {problem}")


def shown(name: str) -> str:
    return repr(name) if _OPTION_NAME.fullmatch(name) else "(not an identifier)"


@attrs.frozen(kw_only=True)
class Options:
    """Checked options of one provider (the key is kept out of ``repr``)."""

    base_url: str
    api_key: str | None = attrs.field(repr=False)
    auth: AuthMode
    account: str | None
    user: str | None
    root: str
    actor_peer: str | None
    timeout: float
    retries: int
    wait_for_index: bool
    processing_mode: ProcessingMode
    score_threshold: float

    def headers(self) -> dict[str, str]:
        """The authentication headers every request carries."""
        headers = {"Accept": "application/json"}
        if self.auth != "dev" and self.api_key is not None:
            headers["X-API-Key"] = self.api_key
        if self.auth == "trusted":
            headers["X-OpenViking-Account"] = self.account or ""
            headers["X-OpenViking-User"] = self.user or ""
        return headers


def build_options(given: dict[str, Any], environ: dict[str, str] | None = None) -> Options:
    """Check keyword options (unknown ones included) and fill in environment defaults."""
    env = dict(os.environ) if environ is None else environ
    for name in given:
        if name not in OPTION_NAMES:
            raise ProviderConfigError(
                f"unknown option {shown(name)} for provider 'openviking'; "
                f"it accepts: {', '.join(OPTION_NAMES)}"
            )
    base_url = _base_url(given.get("base_url", env.get(ENV_URL) or DEFAULT_URL))
    api_key = _api_key(given, env)
    auth: Any = given.get("auth", env.get(ENV_AUTH) or None)
    account = given.get("account", env.get(ENV_ACCOUNT) or None)
    user = given.get("user", env.get(ENV_USER) or None)
    if auth is None:
        auth = "trusted" if account is not None else ("api_key" if api_key else "dev")
    if auth not in ("api_key", "trusted", "dev"):
        raise _bad("auth", "must be 'api_key', 'trusted' or 'dev'")
    for name, value in (("account", account), ("user", user)):
        if value is not None and (not isinstance(value, str) or not _IDENTIFIER.fullmatch(value)):
            raise _bad(name, "must be an OpenViking identifier ([A-Za-z0-9_.@-], 1-255)")
    if auth == "api_key" and not api_key:
        raise _bad("api_key", f"is required in api_key mode (or set {ENV_API_KEY})")
    if auth == "trusted" and (not api_key or account is None or user is None):
        raise _bad("auth", "'trusted' needs the root key (api_key) plus account and user options")
    if auth != "trusted" and (account is not None or user is not None):
        raise _bad("account", "and 'user' are only used in trusted mode")
    root = given.get("root", DEFAULT_ROOT)
    if not isinstance(root, str):
        raise _bad("root", "must be a viking:// URI")
    try:
        root = check_resources_uri(root, "root")
        check_no_reserved_segment(root, "root")  # plain scopes inside a records directory
    except RecordValidationError as exc:
        raise _bad("root", exc.message) from None
    actor_peer = given.get("actor_peer")
    if actor_peer is not None and (
        not isinstance(actor_peer, str) or not _IDENTIFIER.fullmatch(actor_peer)
    ):
        raise _bad("actor_peer", "must be an OpenViking identifier ([A-Za-z0-9_.@-], 1-255)")
    return Options(
        base_url=base_url,
        api_key=api_key,
        auth=auth,
        account=account,
        user=user,
        root=root,
        actor_peer=actor_peer,
        timeout=_seconds(given.get("timeout", DEFAULT_TIMEOUT), "timeout"),
        retries=_retries(given.get("retries", DEFAULT_RETRIES)),
        wait_for_index=_flag(given.get("wait_for_index", True), "wait_for_index"),
        processing_mode=_processing(given.get("processing_mode", "vectors_only")),
        score_threshold=_threshold(given.get("score_threshold", DEFAULT_SCORE_THRESHOLD)),
    )


def _base_url(value: object) -> str:
    if not isinstance(value, str) or not value.startswith(("http://", "https://")):
        raise _bad("base_url", "must be an http:// or https:// URL")
    scheme, _, rest = value.partition("://")
    location = rest.rstrip("/")
    if "/" in location or "?" in location or "#" in location or "@" in location:
        raise _bad("base_url", "must be scheme://host[:port] (no path, query or credentials)")
    match = _HOST_PORT.fullmatch(location)
    if match is None or (match.group(2) and not 0 < int(match.group(2)) < 65536):
        raise _bad("base_url", "must name a host and an optional port 1-65535")
    return f"{scheme}://{location}"


def _api_key(given: dict[str, Any], env: dict[str, str]) -> str | None:
    if "api_key" in given and "api_key_env" in given:
        raise _bad("api_key", "and 'api_key_env' cannot both be given")
    if "api_key" in given:
        key = given["api_key"]
    else:
        variable = given.get("api_key_env", ENV_API_KEY)
        if not isinstance(variable, str) or not _ENV_NAME.fullmatch(variable):
            raise _bad("api_key_env", "must be an environment variable name")
        key = env.get(variable) or None
        if key is None and "api_key_env" in given:
            raise _bad("api_key_env", "names an environment variable that is not set")
    if key is None:
        return None
    if not isinstance(key, str) or not key or not key.isascii() or not key.isprintable():
        raise _bad("api_key", "must be a non-empty printable ASCII string")
    return key


def _seconds(value: object, name: str) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or not 0 < value <= MAX_TIMEOUT
    ):
        raise _bad(name, f"must be a number of seconds in (0, {MAX_TIMEOUT:g}]")
    return float(value)


def _retries(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_RETRIES:
        raise _bad("retries", f"must be an integer from 0 to {MAX_RETRIES}")
    return value


def _flag(value: object, name: str) -> bool:
    if not isinstance(value, bool):
        raise _bad(name, "must be true or false")
    return value


def _processing(value: object) -> ProcessingMode:
    if value == "vectors_only":
        return "vectors_only"
    if value == "semantic_and_vectors":
        return "semantic_and_vectors"
    raise _bad("processing_mode", "must be 'vectors_only' or 'semantic_and_vectors'")


def _threshold(value: object) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or not 0 <= value <= 1
    ):
        raise _bad("score_threshold", "must be a number from 0 to 1")
    return float(value)


def options_from_url(url: object, provider_id: str) -> dict[str, Any]:
    """Keyword options from ``openviking://host:port?opt=v`` (nothing is contacted)."""
    from urllib.parse import parse_qsl  # noqa: PLC0415 - only URL users pay for it

    prefix = f"{provider_id}://"
    if not isinstance(url, str) or url[: len(prefix)].lower() != prefix:
        raise ProviderConfigError(
            "an openviking provider URL is openviking://host:port?options "
            "(or openviking:// for the environment's default server)"
        )
    rest = url[len(prefix) :]
    if "#" in rest:
        raise ProviderConfigError("an openviking provider URL takes no fragment")
    location, _, query = rest.partition("?")
    location = location.rstrip("/")
    if "@" in location:
        raise ProviderConfigError(
            "an openviking provider URL carries no credentials: name the key's environment "
            "variable with ?api_key_env=NAME"
        )
    try:
        pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=True) if query else []
    except ValueError:
        raise ProviderConfigError("the openviking provider URL's query is malformed") from None
    options: dict[str, Any] = {}
    tls = False
    for name, raw in pairs:
        if name in options or (name == "tls" and tls):
            raise ProviderConfigError(f"option {shown(name)} is given twice")
        if name == "tls":
            tls = _url_flag(name, raw)
        elif name == "api_key":
            raise ProviderConfigError(
                "an openviking provider URL carries no key: use ?api_key_env=NAME"
            )
        elif name not in _URL_OPTIONS:
            raise ProviderConfigError(
                f"unknown option {shown(name)} for provider 'openviking'; it accepts: "
                f"{', '.join(sorted(_URL_OPTIONS | {'tls'}))}"
            )
        elif name in ("timeout", "score_threshold"):
            options[name] = _url_number(name, raw)
        elif name == "retries":
            if not _URL_INTEGER.fullmatch(raw):
                raise _bad(name, "must be an integer")
            options[name] = int(raw)
        elif name == "wait_for_index":
            options[name] = _url_flag(name, raw)
        else:
            options[name] = raw
    if location:
        options["base_url"] = f"{'https' if tls else 'http'}://{location}"
    elif tls:
        raise ProviderConfigError("option 'tls' needs a host in the URL")
    return options


def _url_flag(name: str, raw: str) -> bool:
    word = raw.strip().lower()
    if word in _TRUE:
        return True
    if word in _FALSE:
        return False
    raise _bad(name, "must be true or false")


def _url_number(name: str, raw: str) -> float:
    if not _URL_DECIMAL.fullmatch(raw):
        raise _bad(name, "must be a decimal number (ASCII digits, an optional fraction)")
    return float(raw)
