"""Configuration of the SQLite provider: its default location, option checks, URL options."""

from __future__ import annotations

import math
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal

from reward_memory.errors import ProviderConfigError

if TYPE_CHECKING:
    from collections.abc import Mapping

ENV_PATH: Final = "REWARD_MEMORY_SQLITE_PATH"
DEFAULT_TIMEOUT: Final = 10.0
DEFAULT_BUSY_TIMEOUT_MS: Final = 5000
MAX_TIMEOUT: Final = 3600.0

Synchronous = Literal["normal", "full", "extra"]
_SYNCHRONOUS: Final = ("normal", "full", "extra")
OPTIONS: Final = ("path", "timeout", "busy_timeout_ms", "synchronous")
_OPTION_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
_INTEGER: Final = re.compile(r"[0-9]{1,10}")


def _option_error(name: str, problem: str) -> ProviderConfigError:
    return ProviderConfigError(f"sqlite provider option {name!r} {problem}")


def default_path(environ: Mapping[str, str] | None = None) -> str:
    """The store location used when no ``path`` is given (see the module docs)."""
    env = os.environ if environ is None else environ
    explicit = env.get(ENV_PATH, "")
    if explicit:
        return _checked_path(explicit, source=ENV_PATH)
    xdg = env.get("XDG_DATA_HOME", "")
    if xdg and Path(xdg).is_absolute():
        base = Path(xdg)
    else:
        try:
            base = Path.home() / ".local" / "share"
        except RuntimeError:  # no HOME and no passwd entry
            raise ProviderConfigError(
                f"the sqlite provider has no default location here: set {ENV_PATH} or pass path="
            ) from None
    return str((base / "reward-memory" / "memory.db").absolute())


def _checked_path(value: object, *, source: str = "path") -> str:
    """An absolute file path, validated without touching the filesystem beyond ``stat``."""
    what = f"option {source!r}" if source == "path" else source
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if not isinstance(value, str) or not value:
        raise ProviderConfigError(f"sqlite provider {what} must be a non-empty file path")
    if "\x00" in value or value == ":memory:" or value.startswith("file:"):
        raise ProviderConfigError(f"sqlite provider {what} must be a plain file path")
    if value.endswith(("/", os.sep)) or Path(value).is_dir():
        raise ProviderConfigError(f"sqlite provider {what} names a directory, not a file")
    return str(Path(value).absolute())


def _checked_timeout(value: object, name: str) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or not 0 < value <= MAX_TIMEOUT
    ):
        raise _option_error(name, f"must be a number of seconds in (0, {MAX_TIMEOUT:g}]")
    return float(value)


def _checked_busy(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 3_600_000:
        raise _option_error("busy_timeout_ms", "must be an integer from 0 to 3600000")
    return value


def _checked_synchronous(value: object) -> Synchronous:
    if not isinstance(value, str) or value.lower() not in _SYNCHRONOUS:
        raise _option_error("synchronous", f"must be one of: {', '.join(_SYNCHRONOUS)}")
    return value.lower()  # type: ignore[return-value]  # checked just above


def _url_option(name: str, raw: str) -> object:
    """Convert one query-string option to the type the constructor takes."""
    if name == "timeout":
        try:
            return float(raw)
        except ValueError:
            raise _option_error(name, "must be a number of seconds") from None
    if name == "busy_timeout_ms":
        if _INTEGER.fullmatch(raw) is None:
            raise _option_error(name, "must be an integer number of milliseconds")
        return int(raw)
    if name == "path":
        raise ProviderConfigError("the sqlite URL carries its path in the URL, not in the query")
    return raw


def _shown(name: str) -> str:
    return repr(name) if _OPTION_NAME.fullmatch(name) else "(not an identifier)"


def url_options(url: str) -> dict[str, Any]:
    """The constructor options a ``sqlite://`` URL names (see ``SQLiteProvider.from_url``)."""
    from urllib.parse import parse_qsl, unquote  # noqa: PLC0415 - only URL users pay

    prefix = "sqlite://"
    if not isinstance(url, str) or url[: len(prefix)].lower() != prefix:
        raise ProviderConfigError(
            "a sqlite provider URL is sqlite:// (the default location), or sqlite:// then"
            " an absolute file path"
        )
    rest = url[len(prefix) :]
    if "#" in rest:
        raise ProviderConfigError("a sqlite provider URL takes no fragment")
    location, _, query = rest.partition("?")
    if location and not location.startswith("/"):
        raise ProviderConfigError(
            "a sqlite provider URL names no host: sqlite:// then an absolute file path"
            " (three slashes in all)"
        )
    try:
        pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=True) if query else []
        path = unquote(location, errors="strict") if location else None
    except (ValueError, UnicodeDecodeError):
        raise ProviderConfigError("the sqlite provider URL is malformed") from None
    options: dict[str, Any] = {}
    for name, raw in pairs:
        if name in options:
            raise ProviderConfigError(f"option {_shown(name)} is given twice")
        options[name] = _url_option(name, raw)
    if path is not None:
        if re.match(r"/[A-Za-z]:[/\\]", path) and os.name == "nt":
            path = path[1:]
        options["path"] = path
    return options
