"""``evaluate()``: run the eight cases against a provider and decide the release gate.

What "write count zero" means here: the store has to be seeded before a
recall can prove anything, so the fixture writes -- the corpus owner's ingest
and the owner's writes of lifecycle-changed records, plus the deletes that
clean them up -- are counted *apart* (``fixture``; per case
``fixture_write_count``). ``provider_write_count`` and ``storage_write_bytes``
count only the writes (``write`` and ``delete`` calls, and written bytes) made
by the evaluated operations -- recall, application, the adapter, the route
check -- and the gate holds if either is not zero. Both are counted by a proxy
around the provider (:mod:`reward_memory.evaluation.counting`), never taken from
a seam's own report (though case 1 checks that the two agree); writes the provider
makes on its own (its record counts drifting from the run's ledger, or its own call
log) are added. ``external_write_count`` is what the seams' packets report plus every
file the case opened for writing (:mod:`reward_memory.evaluation.external`).

Latency is measured per case with :func:`time.perf_counter` (float ms, three
decimals) around the whole case, its seeding included. Model tokens, model
calls and maintainer interruptions are what the application callbacks
reported (:class:`~reward_memory.evaluation.fixture.FixtureModel`: a
deterministic callback, so 0 tokens measured, not assumed). A user gate is a
fail-open seam that raised to its caller instead of failing open.
"""

from __future__ import annotations

import contextlib
import json
import time
from typing import TYPE_CHECKING, Any, Final

from reward_memory.errors import RecordValidationError
from reward_memory.evaluation.cases import CASES
from reward_memory.evaluation.context import Context
from reward_memory.evaluation.counting import CountingProvider
from reward_memory.evaluation.external import watching
from reward_memory.evaluation.fixture import build_fixture
from reward_memory.evaluation.gate import release_gate
from reward_memory.evaluation.metrics import dimensions_of, metrics_of
from reward_memory.grammars import TOKEN, resolve_now
from reward_memory.records.evaluation import (
    CaseResult,
    Evaluation,
    EvaluationBoundaries,
    FixtureReport,
)

if TYPE_CHECKING:
    from collections.abc import Callable
    from datetime import datetime

    from reward_memory.evaluation.context import Check
    from reward_memory.providers.spi import Provider

__all__ = ["evaluate"]

_UNKNOWN_PROVIDER: Final = "unknown_provider"


def _open(provider: Provider | str | None) -> tuple[Provider, str | None, bool]:
    """The provider object, its URL (to reopen it), and whether this run owns it."""
    if provider is None:
        from reward_memory.testing.memory import InMemoryProvider  # noqa: PLC0415

        return InMemoryProvider(), None, True
    if isinstance(provider, str):
        from reward_memory.providers.discovery import get_provider  # noqa: PLC0415

        return get_provider(provider), provider, True
    for name in ("write", "read", "search", "delete", "inventory", "close"):
        if not callable(getattr(provider, name, None)):
            raise RecordValidationError(
                "provider must be an SPI provider object, a provider URL or None",
                path="$.provider",
                code="wrong_type",
            )
    return provider, None, False


def _restarter(proxy: CountingProvider, url: str | None, restarts: list[int]) -> Callable[[], bool]:
    def restart() -> bool:
        """Replace the provider object by a new one over the same store; False if impossible."""
        old = proxy.inner
        handover = getattr(old, "handover", None)
        if callable(handover):  # an in-process store: its state goes to the new object
            new: Provider = handover()
        elif url is not None:  # a store behind a URL: close, then open it again
            from reward_memory.providers.discovery import get_provider  # noqa: PLC0415

            old.close()
            new = get_provider(url)
        else:
            return False
        proxy.replace(new)
        restarts[0] += 1
        return new is not old

    return restart


# The canonical encoding (sorted keys, compact, UTF-8); the keys are checked names.
# One encoder for the process: json.dumps with these options builds this very
# encoder on every call.
_EVIDENCE_ENCODER: Final = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False
)


def _evidence_json(evidence: dict[str, Any]) -> bytes:
    return _EVIDENCE_ENCODER.encode(evidence).encode()


def _public_token(value: object) -> bool:
    """Whether a provider's own name (an exception class, its id) may go into the packet:
    a grammar token that holds no credential or local-path shape (else it is withheld)."""
    from reward_memory.text import find_unsafe  # noqa: PLC0415

    return isinstance(value, str) and TOKEN.fullmatch(value) is not None and not find_unsafe(value)


def _failure_kind(exc: BaseException) -> str:
    name = type(exc).__name__
    return name if _public_token(name) else "exception"


def _run_case(case_id: str, case: Callable[[Context], Check], ctx: Context) -> CaseResult:
    provider = ctx.provider
    case_meter = provider.meters["case"]
    fixture_meter = provider.meters["fixture"]
    calls, writes, write_bytes, _ = case_meter.snapshot()
    seeded = fixture_meter.writes
    drift = provider.drift()
    models = len(ctx.models)
    gates = ctx.user_gates
    external = ctx.external_writes
    provider.enter("case")
    start = time.perf_counter()
    with watching() as opened:
        try:
            check: Check | None = case(ctx)
            failure: str | None = None
        except Exception as exc:  # noqa: BLE001 - a raising case fails, it never stops the suite
            check, failure = None, _failure_kind(exc)
        files_written = opened()
    latency_ms = round((time.perf_counter() - start) * 1000.0, 3)
    # Documents the provider stored (or dropped) beyond what was asked: writes of its own.
    unasked = max(0, provider.drift() - drift)
    provider.enter("case")
    reported = ctx.models[models:]
    failed: tuple[str, ...] = ()
    evidence: dict[str, Any] = {}
    if check is None:
        assertion_count, false_applications = 1, 0
    else:
        assertion_count = len(check.assertions)
        failed = tuple(name for name, ok in check.assertions if not ok)
        evidence, false_applications = check.evidence, check.false_applications
        evidence["false_application_observed"] = false_applications > 0
        if failed:
            failure = "assertion_failed"
    return CaseResult(
        case_id=case_id,  # type: ignore[arg-type]
        passed=failure is None,
        assertion_count=assertion_count,
        failed_assertions=failed,
        failure_kind=failure,
        latency_ms=latency_ms,
        public_evidence_bytes=len(_evidence_json(evidence)),
        model_call_count=sum(model.calls for model in reported),
        model_tokens=sum(model.tokens for model in reported),
        provider_call_count=case_meter.calls - calls,
        provider_write_count=case_meter.writes - writes + unasked,
        storage_write_bytes=case_meter.write_bytes - write_bytes,
        external_write_count=ctx.external_writes - external + files_written,
        fixture_write_count=fixture_meter.writes - seeded,
        false_application_count=false_applications,
        maintainer_interruption_count=sum(model.interruptions for model in reported),
        user_gate_count=ctx.user_gates - gates,
        evidence=evidence,
    )


def _clean_up(proxy: CountingProvider) -> tuple[int, bool]:
    """Delete what the fixture seeded (in the fixture phase): the provider's deleted count,
    and whether every seeded ref then reads back not found (a provider that answers a
    delete without deleting leaves the cleanup incomplete, whatever it answers)."""
    proxy.enter("fixture")
    deleted, complete = 0, True
    seeded = list(dict.fromkeys(proxy.seeded))
    read_key = getattr(proxy.inner, "read_key", None)
    for scope, key in proxy.unsettled:  # a write that raised may have stored its document
        try:
            found = read_key(scope=scope, key=key, timeout=5) if callable(read_key) else None
        except Exception:  # noqa: BLE001
            found = None
        if found is None:
            complete = False  # no way to tell whether it is there
        elif getattr(found, "found", False) is True and isinstance(found.ref, str):
            seeded.append((scope, found.ref))
    for scope, ref in seeded:
        try:
            gone = proxy.delete(scope=scope, ref=ref, timeout=5)
            deleted += getattr(gone, "deleted", False) is True
            left = proxy.read(scope=scope, ref=ref, timeout=5)
            complete = complete and getattr(left, "found", True) is False
        except Exception:  # noqa: BLE001 - a failed cleanup holds the gate, it never raises
            complete = False
    proxy.seeded.clear()
    proxy.unsettled.clear()
    return deleted, complete


def evaluate(*, provider: Provider | str | None = None, now: datetime | None = None) -> Evaluation:
    """Run the Stage-4 contract suite over the real core; return ``reward_memory_evaluation_v0``.

    Args:
        provider: ``None`` (a new in-memory provider), a provider URL
            (``sqlite:///abs/eval.db``, ``memory://``; opened with
            :func:`~reward_memory.providers.discovery.get_provider`, restarted by
            opening it again, closed at the end), or an SPI provider object.
            Everything is seeded in a namespace of this run only
            (``reward_memory_evaluation.<run id>``), and
            deleted again at the end. Case 1 restarts the provider: an object
            with ``handover()`` (the memory provider) hands its documents to a
            new object (which hands them back at the end: the caller's object
            keeps its store and stays open); a URL is closed and opened again; another
            object cannot be restarted, and case 1 fails.
        now: the clock (aware; default the current UTC time).

    Never raises for anything the provider does: a broken provider fails cases
    and holds the gate. Raises :class:`~reward_memory.errors.RecordValidationError`
    for a ``provider`` that is none of the three, or a naive ``now``;
    :class:`~reward_memory.errors.ProviderError` for a URL no provider serves.
    """
    moment = resolve_now(now)
    inner, url, owned = _open(provider)
    proxy = CountingProvider(inner)
    restarts = [0]
    try:
        ctx = Context(
            fixture=build_fixture(moment),
            provider=proxy,
            now=moment,
            restart=_restarter(proxy, url, restarts),
        )
        cases = [_run_case(case_id, case, ctx) for case_id, case in CASES]
        seed_calls, seed_writes, seed_bytes, _ = proxy.meters["fixture"].snapshot()
        deleted, complete = _clean_up(proxy)
    finally:
        take_back = getattr(inner, "_take_back", None)
        if not owned and proxy.inner is not inner and callable(take_back):
            # The caller's own object was restarted (handed over): its store comes back
            # to it, so nothing the caller held is lost with the successor.
            with contextlib.suppress(Exception):
                take_back(proxy.inner)
        elif owned or proxy.inner is not inner:
            with contextlib.suppress(Exception):  # closing is best effort
                proxy.inner.close()
    failures = proxy.meters["fixture"].failures + proxy.meters["case"].failures
    fixture = FixtureReport(
        seed_write_count=seed_writes,
        seed_write_bytes=seed_bytes,
        seed_provider_call_count=seed_calls,
        cleanup_delete_count=deleted,
        cleaned_up=complete,
        restart_count=restarts[0],
        provider_failure_count=failures,
    )
    metrics = metrics_of(cases)
    gate = release_gate(cases, metrics, fixture)
    passed = gate.status == "ready_for_bounded_dogfood"
    provider_id: Any = proxy.provider_id
    return Evaluation(
        ok=passed,
        status="passed" if passed else "failed",
        provider_id=provider_id if _public_token(provider_id) else _UNKNOWN_PROVIDER,
        cases=tuple(cases),
        metrics=metrics,
        dimensions=dimensions_of(metrics),
        fixture=fixture,
        release_gate=gate,
        boundaries=EvaluationBoundaries(
            provider_writes_performed=metrics.provider_write_count > 0,
            external_writes_performed=metrics.external_write_count > 0,
        ),
    )
