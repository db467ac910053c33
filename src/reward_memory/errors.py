"""The exception tree of reward-memory.

::

    RewardMemoryError
     ├── RecordValidationError (also ValueError)   bad input: names the field path
     │    ├── UnsafeTextError                      credential or local-path shape, over-long text
     │    └── InputError                           unreadable, oversized, endless or malformed JSON
     ├── SchemaError                               unknown schema / broken bundled schema
     └── ProviderError
          ├── ProviderNotFoundError (also LookupError)
          ├── ProviderLoadError
          │    └── ProviderConflictError           two distributions claim one id
          ├── ProviderConfigError (also ValueError)
          └── ProviderUnavailable                  transport failure; the core fails open on it

Every error carries a stable, machine-readable ``code`` and a public-safe
``message``: neither ever contains the offending value itself, so an error
packet can be printed or logged without leaking the secret or path it caught.
"""

from __future__ import annotations

import re

__all__ = [
    "InputError",
    "ProviderConfigError",
    "ProviderConflictError",
    "ProviderError",
    "ProviderLoadError",
    "ProviderNotFoundError",
    "ProviderUnavailable",
    "RecordValidationError",
    "RewardMemoryError",
    "SchemaError",
    "UnsafeTextError",
    "join_path",
]


_GLUE = re.compile(r"[.\[\]]")


def join_path(parent: str, child: str | int) -> str:
    """Join JSON-path segments: ``join_path("$.a", "b") == "$.a.b"``, ints index lists."""
    if isinstance(child, int):
        return f"{parent}[{child}]"
    if child.startswith(("[", ".")):
        return parent + child
    return f"{parent}.{child}"


# Error codes whose message names the input's keys.
_KEY_MESSAGES = frozenset({"unknown_field", "duplicate_key"})


def _public(text: str) -> bool:
    from reward_memory.text import find_unsafe  # noqa: PLC0415 - text imports this module

    return find_unsafe(text) is None


def _public_path(path: str) -> str:
    """``path`` up to its first segment that looks like a credential or a local path.

    Each key is scanned as a word of its own (the ``.`` and ``[`` glue would
    otherwise hide ``ghp_...`` behind ``$.``): the longest safe parent is kept.
    """
    if type(path) is not str or path == "$" or path.isidentifier():
        return path
    words = path[1:] if path.startswith(("$.", "$[")) else path
    if _public(words) and _public(_GLUE.sub(" ", words)):
        return path
    while path not in ("$", "") and not (_public(path[1:]) and _public(_GLUE.sub(" ", path[1:]))):
        cut = max(path.rfind("."), path.rfind("["))
        path = path[:cut] if cut > 0 else "$"
    return path or "$"


class RewardMemoryError(Exception):
    """Base class of every error this library raises on purpose."""

    code: str = "reward_memory_error"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code


class RecordValidationError(RewardMemoryError, ValueError):
    """Input that does not fit the record model.

    ``path`` is a JSON path rooted at ``$`` (``$.scope.surface_ids[0]``); ``code``
    is one of a small fixed vocabulary (``unknown_field``, ``missing_field``,
    ``wrong_type``, ``invalid_value``, ``invalid_format``, ``text_too_long``,
    ``unsafe_text``, ``unsafe_character``, ``schema_version_missing``,
    ``schema_version_unsupported``,
    ``contradictory_observation``, ...).
    """

    code = "invalid_value"

    def __init__(self, message: str, *, path: str = "$", code: str | None = None) -> None:
        # A path (and an unknown- or repeated-key message) is built from the input's
        # keys: a key shaped like a credential or a local path is not repeated.
        if code in _KEY_MESSAGES and not _public(message):
            message = "the input holds a key that is not allowed here (withheld: it looks unsafe)"
        super().__init__(message, code=code)
        self.path = _public_path(path)

    def __str__(self) -> str:
        return f"{self.message} @ {self.path}"

    def under(self, parent: str | int) -> RecordValidationError:
        """Return a copy re-rooted beneath ``parent`` (used while walking nested input)."""
        suffix = self.path[1:] if self.path.startswith("$") else self.path
        base = join_path("$", parent) if parent != "$" else "$"
        clone = type(self).__new__(type(self))
        clone.__dict__.update(self.__dict__)
        clone.args = self.args
        clone.path = base + suffix
        return clone

    def rooted_at(self, root: str) -> RecordValidationError:
        """Return a copy whose ``$`` is ``root`` (an argument's name, a file's field)."""
        clone = self.under("$")
        clone.path = root + (self.path[1:] if self.path.startswith("$") else f".{self.path}")
        return clone


class UnsafeTextError(RecordValidationError):
    """Text that is over-long, has a credential or local-path shape (``unsafe_text``),
    or holds a control character or lone surrogate (``unsafe_character``)."""

    code = "unsafe_text"


class InputError(RecordValidationError):
    """A JSON document that cannot be read or parsed within the documented bounds.

    Raised by :mod:`reward_memory.jsonio` (and so by every CLI verb that reads a
    file, and by ``wire.loads`` / ``wire.load_file``): a missing or unreadable
    file, input over the size limit, a stream that never ends or never starts,
    text that is not UTF-8 or not JSON, nesting past the depth limit, a
    duplicate object key, a number outside the interoperable range. ``path`` is
    the option that named the input (``--input``) for problems of the whole
    document, or the JSON path of the offending member.
    """

    code = "invalid_input"


class SchemaError(RewardMemoryError):
    """A schema that is unknown to this library, or a bundled schema that is broken."""

    code = "schema_error"


class ProviderError(RewardMemoryError):
    """Base class of provider discovery, configuration and transport errors."""

    code = "provider_error"


class ProviderNotFoundError(ProviderError, LookupError):
    """No installed provider has the requested id (misspelled or not installed)."""

    code = "provider_not_found"


class ProviderLoadError(ProviderError):
    """A provider's entry point exists but importing or checking it failed."""

    code = "provider_load_failed"

    def __init__(self, message: str, *, distribution: str | None = None) -> None:
        super().__init__(message)
        self.distribution = distribution


class ProviderConflictError(ProviderLoadError):
    """Two or more distributions register the same provider id.

    Discovery refuses to pick one (no silent shadowing): uninstall one of them,
    or rename its entry point.
    """

    code = "provider_id_conflict"

    def __init__(self, message: str, *, distributions: tuple[str, ...]) -> None:
        super().__init__(message, distribution=None)
        self.distributions = distributions


class ProviderConfigError(ProviderError, ValueError):
    """A provider URL or option that the provider cannot accept."""

    code = "provider_config_invalid"


class ProviderUnavailable(ProviderError):  # the SPI's name for it (DESIGN.md §7), not ...Error
    """The provider could not be reached or did not answer in time.

    Raised by providers for transport failures; the core turns it into a
    fail-open status (``provider_unavailable``) and never lets it escape recall,
    ingest, the hooks or the boundary decorator.
    """

    code = "provider_unavailable"

    def __init__(self, message: str, *, reason_code: str = "provider_unavailable") -> None:
        super().__init__(message)
        self.reason_code = reason_code
