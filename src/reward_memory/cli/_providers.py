"""``reward-memory providers``: what is installed, and one provider's health.

Without options it lists every provider entry point (id, distribution, version,
SPI version, load error). ``--check URL`` also builds that provider and asks it
for the inventory of one scope. A provider that fails (does not load, is
unavailable, times out) is reported as a ``check.status`` with exit 0; a bad
URL or option is an error packet with exit 2. The packet never carries the URL
or a local path: the location is ``"default"`` or a digest of what was given.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any, Final

from reward_memory.errors import (
    ProviderConfigError,
    ProviderLoadError,
    ProviderUnavailable,
    RecordValidationError,
)

if TYPE_CHECKING:
    import argparse

    from reward_memory.cli._common import Outcome
    from reward_memory.providers.spi import ProviderScope
    from reward_memory.records.providers import ProviderCheck, ProviderInfo

__all__ = ["configure", "run"]

DEFAULT_NAMESPACE: Final = "reward-memory"
DEFAULT_SCOPE_REF: Final = "default"
DEFAULT_TIMEOUT: Final = 5.0
MAX_CHECK_TIMEOUT: Final = 3600.0


# (the option, its dest, its default): what --check alone reads.
_CHECK_OPTIONS: Final = (
    ("--namespace", "namespace", DEFAULT_NAMESPACE),
    ("--scope-ref", "scope_ref", DEFAULT_SCOPE_REF),
    ("--peer", "peer", None),
    ("--timeout", "timeout", DEFAULT_TIMEOUT),
)


def configure(parser: argparse.ArgumentParser) -> None:
    """Add this verb's options."""
    parser.add_argument(
        "--check",
        metavar="URL",
        help="build this provider (e.g. sqlite:// or memory://) and report its inventory",
    )
    parser.add_argument(
        "--namespace",
        default=DEFAULT_NAMESPACE,
        help=f"the scope's namespace for --check (default: {DEFAULT_NAMESPACE})",
    )
    parser.add_argument(
        "--scope-ref",
        default=DEFAULT_SCOPE_REF,
        help=f"the scope reference for --check (default: {DEFAULT_SCOPE_REF})",
    )
    parser.add_argument(
        "--peer", default=None, help="the scope's actor peer id for --check (default: none)"
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT,
        help=f"seconds the provider may take to answer --check (default: {DEFAULT_TIMEOUT:g})",
    )


def _scope(args: argparse.Namespace) -> ProviderScope:
    from reward_memory.providers.spi import ProviderScope

    try:
        return ProviderScope(
            namespace=args.namespace, scope_ref=args.scope_ref, actor_peer_id=args.peer
        )
    except RecordValidationError as exc:
        option = {
            "$.namespace": "--namespace",
            "$.scope_ref": "--scope-ref",
            "$.actor_peer_id": "--peer",
        }.get(exc.path, exc.path)
        raise RecordValidationError(exc.message, path=option, code=exc.code) from None


def _detail(exc: BaseException, *, limit: int = 200) -> str:
    """The exception's message when it is short and public-safe, else only its type."""
    from reward_memory.text import find_unsafe

    message = " ".join(str(exc).split())
    if not message or len(message) > limit or find_unsafe(message) is not None:
        return type(exc).__name__
    return message


def _check(url: str, args: argparse.Namespace) -> ProviderCheck:
    from reward_memory.digests import short_digest
    from reward_memory.providers import discovery
    from reward_memory.providers.spi import well_formed_inventory
    from reward_memory.records.providers import ProviderCheck

    # Finite and bounded: inf or 1e20 seconds is no timeout a provider can wait for.
    if not isinstance(args.timeout, float) or not 0 < args.timeout <= MAX_CHECK_TIMEOUT:
        raise RecordValidationError(
            f"must be a positive number of seconds, at most {MAX_CHECK_TIMEOUT:g}",
            path="--timeout",
        )
    scope = _scope(args)
    provider_id, given = discovery.split_spec(url)
    if given is None:
        raise RecordValidationError(
            "must be a provider URL such as sqlite:// or memory://", path="--check"
        )
    try:  # argv bytes that are no UTF-8 arrive as lone surrogates: no location to open
        given.encode("utf-8")
    except UnicodeEncodeError:
        raise RecordValidationError(
            "must be UTF-8 text", path="--check", code="unsafe_character"
        ) from None
    location = given.partition("://")[2].partition("?")[0].partition("#")[0]

    def report(status: str, detail: str | None = None, **inventory: Any) -> ProviderCheck:
        return ProviderCheck(
            provider_id=provider_id,
            location="given" if location else "default",
            location_digest=short_digest(location) if location else None,
            scope=scope,
            status=status,
            detail=detail,
            **inventory,
        )

    try:
        cls = discovery.load_provider_class(provider_id)  # unknown id: exit 2
    except ProviderLoadError as exc:
        return report("load_failed", _detail(exc, limit=300))
    try:
        provider = cls.from_url(given)  # type: ignore[attr-defined]  # bad URL: exit 2
    except ProviderUnavailable as exc:
        return report(_unavailable_status(exc), _detail(exc))
    except (RecordValidationError, ProviderConfigError):
        raise
    except Exception as exc:  # noqa: BLE001 - a broken provider is a status, not a crash
        return report("failed", f"from_url raised {type(exc).__name__}")
    try:
        inventory = provider.inventory(scope=scope, timeout=args.timeout)
    except ProviderUnavailable as exc:
        return report(_unavailable_status(exc), _detail(exc))
    except Exception as exc:  # noqa: BLE001 - same: report, never crash
        return report("failed", f"inventory raised {type(exc).__name__}")
    finally:
        with contextlib.suppress(Exception):
            provider.close()
    if not well_formed_inventory(inventory):
        return report("failed", "inventory answered something that is not an Inventory")
    return report(
        "available" if inventory.available else "provider_unavailable",
        provider_available=inventory.available,
        corpus_present=inventory.corpus_present,
        record_count=inventory.record_count,
        index_present=inventory.index_present,
    )


def _unavailable_status(exc: ProviderUnavailable) -> str:
    return "provider_timeout" if exc.reason_code == "provider_timeout" else "provider_unavailable"


def _provider_line(info: ProviderInfo) -> str:
    origin = f"{info.distribution or '?'} {info.version or '?'}"
    state = f"spi {info.spi_version}" if info.load_error is None else f"error: {info.load_error}"
    return f"  {info.provider_id:<12} {origin:<28} {state}"


def _check_lines(check: ProviderCheck) -> list[str]:
    where = (
        "default location" if check.location == "default" else f"location {check.location_digest}"
    )
    lines = [f"  check {check.provider_id} ({where}): {check.status}"]
    if check.record_count is not None:
        lines.append(
            f"    records: {check.record_count}  corpus: {check.corpus_present}  "
            f"index: {check.index_present}"
        )
    if check.detail:
        lines.append(f"    detail: {check.detail}")
    return lines


def run(args: argparse.Namespace) -> Outcome:
    """List installed providers; with ``--check``, also report one provider's health."""
    from reward_memory.cli._common import Outcome
    from reward_memory.providers.discovery import available_providers
    from reward_memory.providers.spi import SPI_VERSION
    from reward_memory.records._plain import to_plain
    from reward_memory.records.providers import ProvidersReport

    if args.check is None:
        # Options of --check alone: given without it they would be taken and ignored.
        for option, name, default in _CHECK_OPTIONS:
            if getattr(args, name) != default:
                raise RecordValidationError(f"{option} is used only with --check", path=option)
    check = _check(args.check, args) if args.check is not None else None
    providers = tuple(available_providers())
    report = ProvidersReport(
        status="listed" if check is None else "checked",
        spi_version=SPI_VERSION,
        providers=providers,
        check=check,
    )
    lines = [f"  providers: {len(providers)} installed (SPI version {SPI_VERSION})"]
    lines.extend(_provider_line(info) for info in providers)
    if check is not None:
        lines.extend(_check_lines(check))
    # What wire.dump gives (tests/test_plain.py), without importing cattrs.
    return Outcome(packet=to_plain(report), text_lines=tuple(lines))
