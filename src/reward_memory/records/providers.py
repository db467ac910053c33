"""Records for provider discovery and the ``reward_memory_providers_v0`` packet.

:class:`ProviderInfo` is what :func:`reward_memory.providers.discovery.available_providers`
returns for one installed entry point; :class:`ProvidersReport` is the packet the
``reward-memory providers`` verb prints. Neither ever carries a local path: a
provider's location is reported as ``"default"`` or as a digest of what was given.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Final

import attrs

from reward_memory._frozen import frozen
from reward_memory.errors import RecordValidationError
from reward_memory.providers.spi import ProviderScope  # noqa: TC001 - cattrs resolves hints
from reward_memory.records import _fields as f
from reward_memory.text import find_unsafe

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = [
    "CHECK_STATUSES",
    "PROVIDERS_SCHEMA",
    "PROVIDER_ID",
    "VERSION",
    "ProviderCheck",
    "ProviderInfo",
    "ProvidersReport",
]

PROVIDERS_SCHEMA: Final = "reward_memory_providers_v0"

# A provider id is also its URL scheme, so it keeps to characters a scheme allows.
PROVIDER_ID: Final = re.compile(r"[a-z][a-z0-9+.-]{0,63}")
# A distribution version as published (PEP 440, local labels included).
VERSION: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9.+!_-]{0,63}")
CHECK_STATUSES: Final = (
    "available",
    "provider_unavailable",
    "provider_timeout",
    "load_failed",
    "failed",
)
LOAD_ERROR_LIMIT: Final = 300
_SHORT_DIGEST: Final = re.compile(r"[0-9a-f]{16}")


def _provider_id(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if not isinstance(value, str) or PROVIDER_ID.fullmatch(value) is None:
        raise RecordValidationError(
            "must be a provider id (lower-case letters, digits, + . -)",
            path=f"$.{attribute.name}",
            code="invalid_format",
        )


def _optional_version(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is None:
        return
    if not isinstance(value, str) or VERSION.fullmatch(value) is None or find_unsafe(value):
        raise RecordValidationError(
            "must be a distribution version", path=f"$.{attribute.name}", code="invalid_format"
        )


def _optional_count(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise RecordValidationError(
            "must be a non-negative integer", path=f"$.{attribute.name}", code="wrong_type"
        )


def _optional_bool(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is not None and not isinstance(value, bool):
        raise RecordValidationError(
            "must be a boolean", path=f"$.{attribute.name}", code="wrong_type"
        )


def _optional_digest(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is None:
        return
    if not isinstance(value, str) or _SHORT_DIGEST.fullmatch(value) is None:
        raise RecordValidationError(
            "must be a 16-hex digest", path=f"$.{attribute.name}", code="invalid_format"
        )


def _optional_spi_version(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise RecordValidationError(
            "must be a positive integer", path=f"$.{attribute.name}", code="wrong_type"
        )


@frozen(kw_only=True)
class ProviderInfo:
    """One installed provider entry point, as discovery sees it.

    ``spi_version`` is read from the provider class, so it is ``None`` when the
    provider failed to load; ``load_error`` then says why (public-safe text).
    """

    provider_id: str = attrs.field(validator=_provider_id)
    distribution: str | None = f.optional_token()
    version: str | None = attrs.field(default=None, validator=_optional_version)
    spi_version: int | None = attrs.field(default=None, validator=_optional_spi_version)
    load_error: str | None = f.optional_text(LOAD_ERROR_LIMIT)


@frozen(kw_only=True)
class ProviderCheck:
    """One provider's health for one scope (``reward-memory providers --check URL``).

    ``location`` is ``"default"`` when the URL names no location, ``"given"``
    otherwise; ``location_digest`` is then the 16-hex digest of the location
    (never the location itself: it may be a local path). The inventory fields
    are ``None`` unless the provider answered.
    """

    provider_id: str = attrs.field(validator=_provider_id)
    location: str = f.enum("default", "given")
    location_digest: str | None = attrs.field(default=None, validator=_optional_digest)
    scope: ProviderScope
    status: str = f.enum(*CHECK_STATUSES)
    detail: str | None = f.optional_text(LOAD_ERROR_LIMIT)
    provider_available: bool | None = attrs.field(default=None, validator=_optional_bool)
    corpus_present: bool | None = attrs.field(default=None, validator=_optional_bool)
    record_count: int | None = attrs.field(default=None, validator=_optional_count)
    index_present: bool | None = attrs.field(default=None, validator=_optional_bool)


def _infos(value: Iterable[ProviderInfo]) -> tuple[ProviderInfo, ...]:
    return tuple(value)


@frozen(kw_only=True)
class ProvidersReport:
    """The ``reward_memory_providers_v0`` packet: installed providers, optionally one check."""

    schema_version: str = f.enum(PROVIDERS_SCHEMA, default=PROVIDERS_SCHEMA)
    status: str = f.enum("listed", "checked")
    spi_version: int = f.integer(minimum=1)
    providers: tuple[ProviderInfo, ...] = attrs.field(converter=_infos)
    check: ProviderCheck | None = None
