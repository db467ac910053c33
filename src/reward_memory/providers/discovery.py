"""Provider discovery through the ``reward_memory.providers`` entry-point group.

The group is scanned once, on first use (never at ``import reward_memory``), and
its entries are kept as ``module:Class`` strings: a provider module is imported
only when that provider is asked for by name, or when every provider is listed.

- :func:`available_providers` lists every installed entry point. A provider that
  fails to import, or does not satisfy the SPI, is logged on the
  ``reward_memory.providers`` logger and reported with its ``load_error``; it
  never stops the listing.
- :func:`load_provider_class` returns one provider class, or raises
  :class:`~reward_memory.errors.ProviderNotFoundError` (unknown id) or
  :class:`~reward_memory.errors.ProviderLoadError` (import or SPI check failed,
  naming the distribution).
- Two distributions claiming one id is :class:`ProviderConflictError`, never a
  silent override (fsspec's ``clobber=True`` is the anti-pattern here).
- :func:`get_provider` builds a provider from a URL (``sqlite:///abs/memory.db``,
  ``memory://``) or a bare id plus keyword options. The URL scheme is the id.
- Fast path: the built-in ids (``memory``, ``sqlite``) are loaded from this
  package directly, without the scan (~20 ms: ``importlib.metadata`` and every
  distribution's metadata), as long as this process has not scanned. A CLI verb
  or an experiment that only names a built-in never pays for the scan; a third
  party claiming a built-in id cannot take its place there either (the
  built-in is what was asked for). Once the group is scanned (a listing, an
  unknown id, :func:`rescan`), every lookup goes through the scan, so such a
  claim is a :class:`ProviderConflictError`.

What a provider class must look like is described in :mod:`reward_memory.providers.spi`.
"""

from __future__ import annotations

import functools
import importlib
import re
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final

from reward_memory._frozen import frozen
from reward_memory.errors import (
    ProviderConfigError,
    ProviderConflictError,
    ProviderLoadError,
    ProviderNotFoundError,
    RewardMemoryError,
)
from reward_memory.grammars import TOKEN
from reward_memory.providers.spi import SPI_VERSION
from reward_memory.records.providers import (
    LOAD_ERROR_LIMIT,
    PROVIDER_ID,
    VERSION,
    ProviderInfo,
)
from reward_memory.text import find_unsafe

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from reward_memory.providers.spi import Provider

__all__ = [
    "COMPATIBLE_SPI_VERSIONS",
    "GROUP",
    "ProviderConflictError",
    "available_providers",
    "get_provider",
    "load_provider_class",
    "provider_ids",
    "rescan",
    "split_spec",
]

GROUP: Final = "reward_memory.providers"
# SPI versions this core can drive. Grows only when a version stays compatible.
COMPATIBLE_SPI_VERSIONS: Final = frozenset({SPI_VERSION})
# Everything a provider class must offer (checked when it loads, like pluggy's _verify_hook).
REQUIRED_METHODS: Final = ("write", "read", "search", "delete", "inventory", "close", "from_url")


def _logger() -> Any:
    """The ``reward_memory.providers`` logger (``logging`` imported only when one is needed:
    most verbs never log, and the import is a few milliseconds of their start-up)."""
    import logging  # noqa: PLC0415

    return logging.getLogger("reward_memory.providers")


# importlib.metadata's own grammar for an entry-point value ("pkg.mod:Class [extra]").
_VALUE: Final = re.compile(r"(?P<module>[\w.]+)\s*(?::\s*(?P<attr>[\w.]+)\s*)?(?:\[.*\])?\s*$")
_OPTION_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")


@frozen(kw_only=True)
class _Entry:
    """One entry point, recorded as strings (nothing imported yet)."""

    name: str
    value: str
    distribution: str | None
    version: str | None


def _public(name: str | None, pattern: re.Pattern[str]) -> str | None:
    """``name`` when it fits ``pattern`` and is public-safe, else ``None``."""
    if name is None or pattern.fullmatch(name) is None or find_unsafe(name) is not None:
        return None
    return name


def _index(entries: Iterable[_Entry]) -> Mapping[str, tuple[_Entry, ...]]:
    """Group entries by provider id, de-duplicating identical registrations."""
    grouped: dict[str, list[_Entry]] = {}
    for entry in entries:
        same_id = grouped.setdefault(entry.name, [])
        if not any(
            seen.distribution == entry.distribution and seen.value == entry.value
            for seen in same_id
        ):
            same_id.append(entry)
    return MappingProxyType({name: tuple(found) for name, found in sorted(grouped.items())})


# The built-in providers, exactly as pyproject.toml registers them.
_BUILT_INS: Final = MappingProxyType(
    {
        "memory": _Entry(
            name="memory",
            value="reward_memory.testing.memory:InMemoryProvider",
            distribution="reward-memory",
            version=None,
        ),
        "sqlite": _Entry(
            name="sqlite",
            value="reward_memory.providers.sqlite:SQLiteProvider",
            distribution="reward-memory",
            version=None,
        ),
    }
)
# Set by the first scan or rescan(): from then on the scan decides every lookup.
_scanned = False


@functools.cache
def _scan() -> Mapping[str, tuple[_Entry, ...]]:
    # importlib.metadata costs ~10 ms to import and more to scan sys.path: it is
    # paid on first use of discovery, never by ``import reward_memory``.
    from importlib.metadata import entry_points  # noqa: PLC0415

    global _scanned  # noqa: PLW0603 - one process-wide switch, see the module docs
    _scanned = True
    entries = []
    for point in entry_points().select(group=GROUP):
        dist = getattr(point, "dist", None)
        entries.append(
            _Entry(
                name=point.name,
                value=point.value,
                distribution=None if dist is None else dist.name,
                version=None if dist is None else dist.version,
            )
        )
    return _index(entries)


def rescan() -> None:
    """Forget the cached entry-point scan (after installing a distribution at run time)."""
    global _scanned  # noqa: PLW0603
    importlib.invalidate_caches()
    _scan.cache_clear()
    _scanned = True


def provider_ids() -> list[str]:
    """The ids of every installed provider entry point, sorted (nothing is imported)."""
    return list(_scan())


def _describe(exc: BaseException) -> str:
    """A public-safe, one-line description of an import failure."""
    kind = type(exc).__name__
    message = " ".join(str(exc).split())
    if not message or find_unsafe(message) is not None:
        return kind
    text = f"{kind}: {message}"
    return text if len(text) <= LOAD_ERROR_LIMIT - 40 else kind


def _dist_label(entry: _Entry) -> str:
    return _public(entry.distribution, TOKEN) or "an unnamed distribution"


def _import_entry(entry: _Entry) -> object:
    match = _VALUE.match(entry.value)
    if match is None or not match.group("attr"):
        raise ProviderLoadError(
            f"provider {entry.name!r} from distribution {_dist_label(entry)!r} has a malformed "
            "entry point: it must name a class as 'package.module:Class'",
            distribution=entry.distribution,
        )
    try:
        target: object = importlib.import_module(match.group("module"))
        for part in match.group("attr").split("."):
            target = getattr(target, part)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:
        raise ProviderLoadError(
            f"provider {entry.name!r} from distribution {_dist_label(entry)!r} failed to "
            f"import ({_describe(exc)})",
            distribution=entry.distribution,
        ) from exc
    return target


def _spi_problem(obj: object, provider_id: str) -> str | None:
    """What keeps ``obj`` from being a provider class for ``provider_id``, if anything."""
    if not isinstance(obj, type):
        return "the entry point does not name a class"
    declared = getattr(obj, "provider_id", None)
    if declared != provider_id:
        return f"its provider_id must equal the entry-point name {provider_id!r}"
    spi = getattr(obj, "spi_version", None)
    if isinstance(spi, bool) or not isinstance(spi, int):
        return "it has no integer spi_version"
    if spi not in COMPATIBLE_SPI_VERSIONS:
        supported = ", ".join(str(v) for v in sorted(COMPATIBLE_SPI_VERSIONS))
        return f"it implements SPI version {spi}; this reward-memory supports {supported}"
    missing = [name for name in REQUIRED_METHODS if not callable(getattr(obj, name, None))]
    if missing:
        return f"it lacks {', '.join(missing)}"
    return None


def _load(entry: _Entry) -> type[Provider]:
    obj = _import_entry(entry)
    try:
        problem = _spi_problem(obj, entry.name)
    except Exception as exc:  # noqa: BLE001 - an attribute whose access raises
        problem = f"reading its SPI attributes raised {type(exc).__name__}"
    if problem is not None:
        raise ProviderLoadError(
            f"provider {entry.name!r} from distribution {_dist_label(entry)!r} does not "
            f"satisfy the provider SPI: {problem}",
            distribution=entry.distribution,
        )
    return obj  # type: ignore[return-value]  # checked structurally just above


def _conflict(provider_id: str, entries: tuple[_Entry, ...]) -> ProviderConflictError:
    names = tuple(_dist_label(entry) for entry in entries)
    return ProviderConflictError(
        f"provider id {provider_id!r} is registered by {len(entries)} distributions "
        f"({', '.join(names)}); uninstall all but one, since reward-memory never picks "
        "one silently",
        distributions=names,
    )


def _not_found(provider_id: str) -> ProviderNotFoundError:
    known = ", ".join(_scan()) or "none"
    # An id-shaped string can still be a pasted key (``sk-...``): shown only when safe.
    safe = PROVIDER_ID.fullmatch(provider_id) and find_unsafe(provider_id) is None
    shown = repr(provider_id) if safe else "with that id"
    return ProviderNotFoundError(
        f"provider {shown} is either misspelled or not installed (installed providers: {known})",
    )


def load_provider_class(provider_id: str) -> type[Provider]:
    """Import and check the provider class registered as ``provider_id``.

    A built-in id is loaded without the scan until this process has scanned
    (see the module docs).

    Raises:
        ProviderNotFoundError: no installed distribution registers ``provider_id``.
        ProviderConflictError: two or more distributions register it.
        ProviderLoadError: importing it failed, or it does not satisfy the SPI.
    """
    if not isinstance(provider_id, str):
        raise ProviderConfigError("a provider id must be a string")
    built_in = _BUILT_INS.get(provider_id)
    if built_in is not None and not _scanned:
        return _load(built_in)
    entries = _scan().get(provider_id)
    if not entries:
        raise _not_found(provider_id)
    if len(entries) > 1:
        raise _conflict(provider_id, entries)
    return _load(entries[0])


def available_providers() -> list[ProviderInfo]:
    """Every installed provider entry point, sorted by id (each one is imported).

    A provider that fails to load is logged and reported with ``load_error``;
    this function never raises for a broken provider.
    """
    infos: list[ProviderInfo] = []
    for provider_id, entries in _scan().items():
        if PROVIDER_ID.fullmatch(provider_id) is None:
            _logger().warning(
                "skipping a provider entry point from %s: its name is not a valid provider id",
                ", ".join(_dist_label(entry) for entry in entries),
            )
            continue
        conflict = _conflict(provider_id, entries) if len(entries) > 1 else None
        if conflict is not None:
            _logger().warning("%s", conflict.message)
        for entry in entries:
            spi_version: int | None = None
            error: str | None = None
            if conflict is not None:
                error = conflict.message
            else:
                try:
                    spi_version = getattr(_load(entry), "spi_version", None)
                except ProviderLoadError as exc:
                    error = exc.message
                    # One line at WARNING; the traceback only for those who ask for DEBUG.
                    _logger().warning("%s", exc.message)
                    _logger().debug("provider %r load failure", provider_id, exc_info=True)
            infos.append(
                ProviderInfo(
                    provider_id=provider_id,
                    distribution=_public(entry.distribution, TOKEN),
                    version=_public(entry.version, VERSION),
                    spi_version=spi_version,
                    load_error=_fit(error),
                )
            )
    return infos


def _fit(message: str | None) -> str | None:
    """Make a load error fit the public record: bounded, and never unsafe text."""
    if message is None:
        return None
    if len(message) > LOAD_ERROR_LIMIT:
        message = message[: LOAD_ERROR_LIMIT - 3].rstrip() + "..."
    if find_unsafe(message) is not None:
        return "the provider failed to load (details withheld: they look like a path or secret)"
    return message


def split_spec(spec: str) -> tuple[str, str | None]:
    """Split a provider spec into ``(provider_id, url_or_None)``.

    ``"sqlite:///abs/memory.db"`` gives ``("sqlite", "sqlite:///abs/memory.db")``;
    a bare id ``"sqlite"`` gives ``("sqlite", None)``. The spec itself is never
    repeated in an error message (a URL may hold a path or a credential).

    Raises:
        ProviderConfigError: not a string, or not a provider id / ``id://...`` URL.
    """
    if not isinstance(spec, str):
        raise ProviderConfigError("a provider spec must be a string such as 'memory://'")
    scheme, sep, _ = spec.partition("://")
    provider_id = scheme if sep else spec
    if PROVIDER_ID.fullmatch(provider_id) is None:
        raise ProviderConfigError(
            "a provider spec must be a provider id (such as 'sqlite') or a URL whose "
            "scheme is one (such as 'memory://', or 'sqlite://' then an absolute file path)"
        )
    return provider_id, (spec if sep else None)


def _check_options(cls: type[Any], provider_id: str, options: Mapping[str, Any]) -> None:
    import inspect  # noqa: PLC0415 - only paid when options are given

    try:
        parameters = inspect.signature(cls).parameters.values()
    except (TypeError, ValueError):  # no introspectable signature: the provider checks
        return
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return
    accepted = sorted(
        p.name
        for p in parameters
        if p.kind in (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    )
    for name in options:
        if name not in accepted:
            shown = repr(name) if _OPTION_NAME.fullmatch(name) else "(not an identifier)"
            raise ProviderConfigError(
                f"unknown option {shown} for provider {provider_id!r}; "
                f"it accepts: {', '.join(accepted) or 'no options'}"
            )


def get_provider(spec: str, **options: Any) -> Provider:
    """Build a provider from a URL or a bare provider id.

    Args:
        spec: ``"memory://"``, ``"sqlite://"`` (its default location),
            ``"sqlite:///abs/path/memory.db"``, or a bare id such as ``"sqlite"``.
            A URL's scheme is the provider id; its query string carries options
            and is parsed by the provider's ``from_url``.
        **options: keyword options for a bare id (passed to the provider class).
            With a URL, options go in the query string instead.

    Raises:
        ProviderConfigError: a malformed spec, an unknown or invalid option.
        ProviderNotFoundError: no installed provider has that id.
        ProviderLoadError: the provider is installed but failed to load.

    .. versionadded:: 0.1.0
    """
    provider_id, url = split_spec(spec)
    cls = load_provider_class(provider_id)
    if url is not None:
        if options:
            raise ProviderConfigError(
                "options cannot be combined with a provider URL: put them in the URL's "
                "query string, or pass the bare provider id with keyword options"
            )
        return _started(provider_id, lambda: cls.from_url(url))  # type: ignore[attr-defined]
    _check_options(cls, provider_id, options)
    return _started(provider_id, lambda: cls(**options))


def _started(provider_id: str, make: Any) -> Provider:
    """The provider ``make()`` builds; a third party's failure or odd answer as a typed error
    naming it (the library's own typed errors -- a bad option, an unusable store -- pass)."""
    try:
        made = make()
    except RewardMemoryError as exc:
        # The library's own errors pass; a third party's own message may repeat what it
        # was given (a URL with a password): the same error, withheld when unsafe.
        if find_unsafe(" ".join(str(exc).split())) is None:
            raise
        kind = type(exc)
        try:
            clean = kind(f"provider {provider_id!r} refused its configuration (detail withheld)")
        except Exception:  # noqa: BLE001 - a subclass with another constructor
            clean = ProviderConfigError(
                f"provider {provider_id!r} refused its configuration (detail withheld)"
            )
        raise clean from None
    except Exception as exc:
        raise ProviderLoadError(
            f"provider {provider_id!r} failed to start ({_describe(exc)})"
        ) from exc
    if made is None or getattr(made, "provider_id", None) != provider_id:
        raise ProviderLoadError(f"provider {provider_id!r} did not build a {provider_id} provider")
    return made  # type: ignore[no-any-return]
