"""The release gate closes, with a reason, whenever the store or the core misbehaves.

Real providers with their fault switches for store failures; for core failures,
fault injection replaces one seam the cases call (through the evaluation's
context, or the route check of the last case; the only mocks here) to show
that each gated count is measured and holds the gate.
"""

from __future__ import annotations

import json
import types
from datetime import UTC, datetime
from typing import Any

import attrs
import pytest

from _spi_only import SpiOnly
from reward_memory import wire
from reward_memory.evaluation import application_cases, cases, context, evaluate
from reward_memory.evaluation.fixture import FixtureModel
from reward_memory.providers.spi import ProviderScope
from reward_memory.testing.memory import InMemoryProvider

NOW = datetime(2026, 8, 1, 9, 0, tzinfo=UTC)
STORE_CASES = (
    "compact_restart_survival",
    "project_module_scope_isolation",
    "supersede_revoke_rejection",
    "gate_non_override",
    "candidate_ranking_influence",
)


def _failed(result: Any) -> set[str]:
    return {case.case_id for case in result.cases if not case.passed}


@pytest.mark.parametrize("url", ["memory://?unavailable=true", "memory://?times_out=true"])
def test_an_unavailable_store_holds_the_gate(url: str) -> None:
    """Done when: 'a deliberately broken provider (fault switch) closes it with a reason'."""
    result = evaluate(provider=url, now=NOW)
    assert result.ok is False
    assert result.status == "failed"
    gate = result.release_gate
    assert (gate.status, gate.decision) == ("hold", "repair_stage_4")
    # A write that failed may have stored its document (an index pending): whether the
    # fixture left anything cannot be told from a store that answers nothing.
    assert gate.reason_codes == (
        *(f"case_failed:{case}" for case in STORE_CASES),
        "provider_failures_observed",
        "fixture_cleanup_incomplete",
    )
    assert _failed(result) == set(STORE_CASES)
    # Fail open: a broken store is never a user gate.
    assert result.metrics.user_gate_count == 0
    assert result.fixture.provider_failure_count > 0
    # Guard-only cases never needed the store.
    assert {c.case_id for c in result.cases if c.passed} == {
        "stale_source_rejection",
        "multi_person_authority_conditions",
        "large_edge_case_patch_protection",
    }


def test_a_store_switched_off_mid_run_holds_the_gate() -> None:
    provider = InMemoryProvider()
    original = cases.CASES[1][1]

    def then_break(ctx: Any) -> Any:
        inner = ctx.provider.inner
        inner.set_faults(unavailable=True)
        return original(ctx)

    patched = (cases.CASES[0], ("project_module_scope_isolation", then_break), *cases.CASES[2:])
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(cases, "CASES", patched)
        patch.setattr("reward_memory.evaluation.runner.CASES", patched)
        result = evaluate(provider=provider, now=NOW)
    assert "case_failed:project_module_scope_isolation" in result.release_gate.reason_codes
    assert "fixture_cleanup_incomplete" in result.release_gate.reason_codes
    assert result.fixture.cleaned_up is False


def test_a_raising_case_reports_its_exception_class() -> None:
    result = evaluate(provider="memory://?unavailable=true", now=NOW)
    lifecycle = next(c for c in result.cases if c.case_id == "supersede_revoke_rejection")
    assert lifecycle.failure_kind == "ProviderUnavailable"
    assert lifecycle.assertion_count == 1
    assert lifecycle.evidence == {}
    restart = result.cases[0]
    assert restart.failure_kind == "assertion_failed"
    assert "seed_activated" in restart.failed_assertions


def test_a_corrupt_readback_fails_restart_survival() -> None:
    result = evaluate(provider="memory://?corrupt_readback=true", now=NOW)
    assert "case_failed:compact_restart_survival" in result.release_gate.reason_codes
    assert result.ok is False


def test_a_lagging_index_fails_restart_survival() -> None:
    result = evaluate(provider="memory://?search_misses=true", now=NOW)
    assert "case_failed:compact_restart_survival" in result.release_gate.reason_codes


class _StoresThenRaises(InMemoryProvider):
    """Fault injection: a lifecycle write stores its document, then reports a failure (as
    an OpenViking server with ``wait_for_index`` does when its index lags)."""

    def write(self, **kwargs: Any) -> Any:
        result = super().write(**kwargs)
        if "lifecycle" in kwargs["scope"].scope_ref:
            from reward_memory.errors import ProviderUnavailable

            raise ProviderUnavailable("index pending", reason_code="provider_index_pending")
        return result

    def handover(self) -> Any:
        successor = super().handover()
        successor.__class__ = _StoresThenRaises
        return successor


def test_a_document_a_failed_write_stored_is_cleaned_up_too() -> None:
    provider = _StoresThenRaises()
    result = evaluate(provider=provider, now=NOW)
    assert result.release_gate.status == "hold"
    assert result.fixture.cleaned_up is True
    assert all(not provider.documents(scope) for scope in provider.scopes())


class _NoRestart(SpiOnly):
    """An SPI provider that cannot be restarted (no handover, no URL)."""

    provider_id = "memory"
    spi_version = 1

    def __init__(self) -> None:
        super().__init__(InMemoryProvider())


def test_restart_survival_needs_a_real_restart() -> None:
    """Compact/restart survival is a real restart: without one, the case fails."""
    result = evaluate(provider=_NoRestart(), now=NOW)
    first = result.cases[0]
    assert first.failed_assertions == ("restarted_on_a_new_provider_object",)
    assert result.fixture.restart_count == 0
    assert result.release_gate.reason_codes == ("case_failed:compact_restart_survival",)


class _ScopeBlind(_NoRestart):
    """A provider that ignores scopes entirely (every scope is one store)."""

    _ONE = ProviderScope(namespace="everything", scope_ref="everything")

    def write(self, **kwargs: Any) -> Any:
        return self._inner.write(**{**kwargs, "scope": self._ONE})

    def read(self, **kwargs: Any) -> Any:
        return self._inner.read(**{**kwargs, "scope": self._ONE})

    def search(self, **kwargs: Any) -> Any:
        return self._inner.search(**{**kwargs, "scope": self._ONE})

    def delete(self, **kwargs: Any) -> Any:
        return self._inner.delete(**{**kwargs, "scope": self._ONE})

    def handover(self) -> _ScopeBlind:
        return self


def test_a_scope_blind_store_fails_isolation_though_the_core_leaks_nothing() -> None:
    """The isolation case asks the store itself: one that serves every scope fails it. And
    defence in depth: the core's item filter still keeps another corpus's record out (no
    false application); a provider restart that is no restart is caught."""
    result = evaluate(provider=_ScopeBlind(), now=NOW)
    by_id = {case.case_id: case for case in result.cases}
    isolation = by_id["project_module_scope_isolation"]
    assert isolation.failed_assertions == ("store_keeps_sibling_and_namespace_apart",)
    assert isolation.false_application_count == 0
    assert "case_failed:project_module_scope_isolation" in result.release_gate.reason_codes
    assert by_id["compact_restart_survival"].failed_assertions == (
        "restarted_on_a_new_provider_object",
    )


class _PrefixLeak(_NoRestart):
    """A store whose search and read also serve a scope whose ref the asked one extends
    (``.../policies-sibling`` sees ``.../policies``): the classic prefix-match leak."""

    def _widened(self, kwargs: dict[str, Any], call: Any) -> Any:
        asked = kwargs["scope"]
        answer = call(**kwargs)
        if getattr(answer, "hits", None) or getattr(answer, "found", None):
            return answer
        for cut in range(len(asked.scope_ref) - 1, 0, -1):
            shorter = ProviderScope(namespace=asked.namespace, scope_ref=asked.scope_ref[:cut])
            other = call(**{**kwargs, "scope": shorter})
            if getattr(other, "hits", None) or getattr(other, "found", None):
                return other
        return answer

    def search(self, **kwargs: Any) -> Any:
        return self._widened(kwargs, self._inner.search)

    def read(self, **kwargs: Any) -> Any:
        return self._widened(kwargs, self._inner.read)

    def handover(self) -> _PrefixLeak:
        return self


def test_a_store_that_leaks_into_a_sibling_scope_holds_the_gate() -> None:
    result = evaluate(provider=_PrefixLeak(), now=NOW)
    by_id = {case.case_id: case for case in result.cases}
    isolation = by_id["project_module_scope_isolation"]
    assert "store_keeps_sibling_and_namespace_apart" in isolation.failed_assertions
    assert isolation.evidence["store_leaked_hit_count"] > 0
    assert result.release_gate.status == "hold"


# -- fault injection in the core: each gated count is measured ------------------------------


def test_a_route_guard_that_authorizes_the_pilot_is_a_false_application(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = application_cases.route_check

    def broken(observation: Any) -> Any:
        route = real(observation)
        return attrs.evolve(
            route,
            decision="pilot_fix",
            pilot_authorized=True,
            meta_review_required=False,
            missing_required_evidence=(),
        )

    monkeypatch.setattr(application_cases, "route_check", broken)
    result = evaluate(now=NOW)
    last = result.cases[-1]
    assert last.passed is False
    assert last.false_application_count == 1
    assert result.release_gate.reason_codes == (
        "case_failed:large_edge_case_patch_protection",
        "nonzero:false_application_count",
    )


def test_a_write_during_recall_is_counted_and_holds_the_gate(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """'Provider/storage writes' of the evaluated operations are counted by the provider proxy."""
    real = context.recall

    def writing(*args: Any, **kwargs: Any) -> Any:
        provider = kwargs["provider"]
        provider.write(
            scope=kwargs["binding"].provider_scope, key="side-effect.json", content='{"x": 1}'
        )
        return real(*args, **kwargs)

    monkeypatch.setattr(context, "recall", writing)
    result = evaluate(now=NOW)
    assert result.metrics.provider_write_count > 0
    assert result.metrics.storage_write_bytes == 8 * result.metrics.provider_write_count
    assert result.boundaries.provider_writes_performed is True
    assert "nonzero:provider_write_count" in result.release_gate.reason_codes
    assert "nonzero:storage_write_bytes" in result.release_gate.reason_codes
    assert result.ok is False


def test_a_seam_that_raises_instead_of_failing_open_is_a_user_gate(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def raising(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the application boundary broke")

    monkeypatch.setattr(context, "apply", raising)
    result = evaluate(now=NOW)
    assert result.metrics.user_gate_count == 2  # gate_non_override and ranking, one each
    assert result.release_gate.reason_codes[-1] == "nonzero:user_gate_count"
    by_id = {case.case_id: case for case in result.cases}
    assert by_id["gate_non_override"].failure_kind == "RuntimeError"


def test_model_reports_are_summed(monkeypatch: pytest.MonkeyPatch) -> None:
    """'Zero model tokens means this deterministic contract suite did not invoke a model':
    the figure is what the callback reports, so a reporting model shows up."""
    real = FixtureModel.__call__

    def reporting(self: FixtureModel, base_output: Any, items: Any) -> Any:
        self.tokens += 40
        self.interruptions += 1
        return real(self, base_output, items)

    monkeypatch.setattr(FixtureModel, "__call__", reporting)
    result = evaluate(now=NOW)
    assert result.metrics.model_call_count == 4
    assert result.metrics.model_tokens == 160
    assert result.metrics.maintainer_interruption_count == 4
    assert result.release_gate.reason_codes == ("nonzero:maintainer_interruption_count",)


class _Loud:
    """An application result whose receipt reports an external write (a broken seam)."""

    def __init__(self, real: Any) -> None:
        self._real = real
        self.receipt = types.SimpleNamespace(
            **{**attrs.asdict(real.receipt, recurse=False), "external_writes_performed": True}
        )

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


def test_an_external_write_reported_by_a_seam_is_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    """The original hard-coded external writes to zero: ours reads what the seam reports."""
    real = context.apply
    monkeypatch.setattr(context, "apply", lambda *a, **k: _Loud(real(*a, **k)))
    result = evaluate(now=NOW)
    assert result.metrics.external_write_count == 5  # every application of the run
    assert result.boundaries.external_writes_performed is True
    assert "nonzero:external_write_count" in result.release_gate.reason_codes
    assert "case_failed:gate_non_override" in result.release_gate.reason_codes


class _Anonymous(_NoRestart):
    """An SPI object without a provider id (or one that is not a token)."""

    provider_id = None  # type: ignore[assignment]


def test_a_provider_without_a_usable_id_is_reported_as_unknown() -> None:
    result = evaluate(provider=_Anonymous(), now=NOW)
    assert result.provider_id == "unknown_provider"
    weird = _NoRestart()
    weird.provider_id = "/home/alice/provider"  # type: ignore[misc]
    assert evaluate(provider=weird, now=NOW).provider_id == "unknown_provider"
    for unsafe in ("ghp_abcdefghijklmnopqrstuvwxyz0123456789", "x:/home/alice/db"):
        weird.provider_id = unsafe  # type: ignore[misc]
        assert evaluate(provider=weird, now=NOW).provider_id == "unknown_provider"


_SECRET_NAMED: Any = type("ghp_abcdefghijklmnopqrstuvwxyz0123456789", (Exception,), {})


class _RaisesASecretNamedError(_NoRestart):
    def write(self, **kwargs: Any) -> Any:
        if "lifecycle" in kwargs["scope"].scope_ref:
            raise _SECRET_NAMED("boom")
        return self._inner.write(**kwargs)


def test_an_exception_whose_class_name_is_unsafe_is_withheld() -> None:
    """'Never raises for anything the provider does': the class name is not published."""
    result = evaluate(provider=_RaisesASecretNamedError(), now=NOW)
    kinds = {case.failure_kind for case in result.cases if not case.passed}
    assert "exception" in kinds
    assert "ghp_" not in json.dumps(wire.dump(result))
    assert result.release_gate.status == "hold"


class _DeletesNothing(_NoRestart):
    """Answers every delete -- truthfully (``deleted=False``) or not -- and deletes nothing."""

    def __init__(self, *, lie: bool) -> None:
        super().__init__()
        self._lie = lie

    def delete(self, **kwargs: Any) -> Any:
        from reward_memory.providers.spi import DeleteResult

        return DeleteResult(ref=kwargs["ref"], deleted=self._lie)


@pytest.mark.parametrize("lie", [False, True], ids=["says-not-deleted", "lies-deleted"])
def test_a_cleanup_that_leaves_the_seeds_holds_the_gate(lie: bool) -> None:
    """ "fixture_cleanup_incomplete when the evaluation could not delete what it seeded":
    what the store still holds decides, not what its delete answers."""
    report = evaluate(provider=_DeletesNothing(lie=lie))
    assert report.fixture.cleaned_up is False
    assert report.ok is False
    assert "fixture_cleanup_incomplete" in report.release_gate.reason_codes
    if not lie:
        assert report.fixture.cleanup_delete_count == 0


class _AuditsEverySearch(InMemoryProvider):
    """A provider double that writes an audit document of its own on every search -- into
    a scope of its own, where no proxy and no inventory of the run's scopes would see it;
    its own call log does."""

    _AUDIT = ProviderScope(namespace="audit", scope_ref="audit-log")

    def search(self, **kwargs: Any) -> Any:
        found = super().search(**kwargs)
        self.write(scope=self._AUDIT, key=f"audit-{self.call_counts()['search']}", content="x")
        return found


class _WritesBesideEachRead(_NoRestart):
    """An SPI provider (no call log) that stores a document beside each one it is asked to
    read, in the same scope: its record counts drift from what the run stored."""

    def read(self, **kwargs: Any) -> Any:
        found = super().read(**kwargs)
        self._inner.write(
            scope=kwargs["scope"], key=f"shadow-{len(str(kwargs['ref']))}-{id(found)}", content="x"
        )
        return found


@pytest.mark.parametrize("make", [_AuditsEverySearch, _WritesBesideEachRead])
def test_writes_a_provider_makes_on_its_own_are_counted_and_hold_the_gate(make: Any) -> None:
    """Issue 9: "provider calls and writes (counted by the provider)"; gap 7: counted by
    the provider double, never assumed zero."""
    report = evaluate(provider=make(), now=NOW)
    assert report.metrics.provider_write_count > 0
    assert "nonzero:provider_write_count" in report.release_gate.reason_codes
    assert report.ok is False


def test_a_file_a_seam_writes_is_an_external_write_though_it_says_none(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    """A seam that writes a file (a log, a cache) and reports no external write: the
    evaluation observes the open itself (an audit hook), not the seam's word."""
    real = context.apply
    log = tmp_path / "side-effect.log"

    def logging_apply(*args: Any, **kwargs: Any) -> Any:
        with log.open("a", encoding="utf-8") as handle:
            handle.write("applied\n")
        return real(*args, **kwargs)

    monkeypatch.setattr(context, "apply", logging_apply)
    result = evaluate(now=NOW)
    assert result.metrics.external_write_count == 5  # every application of the run
    assert "nonzero:external_write_count" in result.release_gate.reason_codes
    assert result.ok is False


def test_reading_files_is_no_external_write(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    real = context.apply
    data = tmp_path / "input.txt"
    data.write_text("x", encoding="utf-8")

    def reading_apply(*args: Any, **kwargs: Any) -> Any:
        data.read_text(encoding="utf-8")
        return real(*args, **kwargs)

    monkeypatch.setattr(context, "apply", reading_apply)
    assert evaluate(now=NOW).metrics.external_write_count == 0


def _blind_identity(item_filter: Any, parsed: Any) -> bool:
    return parsed.live and parsed.grantable  # identity and surface checks dropped


def _blind_surface(item_filter: Any, parsed: Any) -> bool:
    return parsed.identity == item_filter.identity and parsed.live  # surface check dropped


@pytest.mark.parametrize("broken", [_blind_identity, _blind_surface], ids=["identity", "surface"])
def test_an_item_filter_that_lets_other_identities_through_fails_isolation(
    monkeypatch: pytest.MonkeyPatch, broken: Any
) -> None:
    """Mutation check: the isolation case shares one provider scope with records of another
    project, workspace, surface and corpus, so only the item filter keeps them out --
    breaking it must close the gate on the memory provider too, not only on a leaky one."""
    from reward_memory._recall import execution

    monkeypatch.setattr(execution, "static_fit", broken)
    result = evaluate(now=NOW)
    assert "case_failed:project_module_scope_isolation" in result.release_gate.reason_codes
    assert result.ok is False


def test_an_application_that_accepts_an_unreturned_ref_fails_the_ranking_case(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Mutation check: the seeds' "An applied receipt requires both attribution to an item
    returned by this recall and current-artifact verification" -- an application seam that
    stopped checking attribution must close the gate."""
    from reward_memory import application

    real = application._check_decision

    class _AnyRef(dict):  # type: ignore[type-arg]
        """Resolves a ref the recall never returned to one it did (attribution dropped)."""

        def get(self, key: Any, default: Any = None) -> Any:
            return super().get(key) or next(iter(self.values()), default)

    def lenient(decision: Any, base_output: Any, refs: Any, copies: Any) -> Any:
        return real(decision, base_output, _AnyRef(refs), copies)

    monkeypatch.setattr(application, "_check_decision", lenient)
    result = evaluate(now=NOW)
    assert "case_failed:candidate_ranking_influence" in result.release_gate.reason_codes


@pytest.mark.parametrize(
    ("dropped", "case"),
    [
        ("workspace_scope_mismatch", "project_module_scope_isolation"),
        ("unresolved_conflict", "stale_source_rejection"),
    ],
)
def test_a_request_guard_that_forgets_a_rule_fails_its_case(
    monkeypatch: pytest.MonkeyPatch, dropped: str, case: str
) -> None:
    """Mutation check: recall's request guard without its workspace or conflict rule."""
    from reward_memory import guarded_recall

    real = guarded_recall.request_reasons

    def forgetful(*args: Any, **kwargs: Any) -> Any:
        return tuple(code for code in real(*args, **kwargs) if code != dropped)

    monkeypatch.setattr(guarded_recall, "request_reasons", forgetful)
    result = evaluate(now=NOW)
    assert f"case_failed:{case}" in result.release_gate.reason_codes


def test_a_recall_that_keeps_a_superseded_record_fails_the_lifecycle_case(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Mutation check: the superseded relation between two returned records ignored."""
    from reward_memory._recall import execution

    monkeypatch.setattr(execution, "_superseded", lambda items: [False] * len(items))
    result = evaluate(now=NOW)
    assert "case_failed:supersede_revoke_rejection" in result.release_gate.reason_codes


def test_another_threads_file_writes_are_not_the_cases(tmp_path: Any) -> None:
    """A host's logging thread writing files while the evaluation runs is not an
    external write of the evaluated operations."""
    import threading

    stop = threading.Event()

    def busy() -> None:
        count = 0
        while not stop.is_set():
            (tmp_path / f"log-{count % 3}.txt").write_text("x", encoding="utf-8")
            count += 1

    worker = threading.Thread(target=busy)
    worker.start()
    try:
        result = evaluate(now=NOW)
    finally:
        stop.set()
        worker.join()
    assert result.metrics.external_write_count == 0
    assert result.ok is True
