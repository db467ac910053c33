"""The module author's object and the boundary decorator (issue 8 item 6; DESIGN.md §2)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import reward_memory as rm
from _experiment_support import PLANNING, SCOPES, activation_data
from _hooks_support import (
    NOW,
    OBSERVED,
    SCOPE_C,
    A,
    B,
    C,
    applying,
    authority,
    goal,
    hard_event,
    walk_config,
)
from reward_memory.providers.sqlite import SQLiteProvider
from reward_memory.records.recall import ReadAuthorityCheckpoint
from reward_memory.testing import InMemoryProvider


def _reader(corpus: Any, surface_id: str, context: Any) -> ReadAuthorityCheckpoint:
    return ReadAuthorityCheckpoint(
        verified=True,
        corpus_id=corpus.corpus_id,
        workspace_ref=context.workspace_ref,
        project_ref=context.project_ref,
        surface_id=surface_id,
        read_authority=corpus.read_authority,
        source_ref="repository:authority-map",
    )


def _sqlite_config() -> dict[str, Any]:
    data = walk_config()
    data["project_provider_binding"]["provider_id"] = "sqlite"
    for entry in data["corpora"]:
        entry["corpus"]["provider_id"] = "sqlite"
    return data


def _open(tmp_path: Path, provider: Any = None, **kwargs: Any) -> rm.Experiment:
    (tmp_path / "config.json").write_text(json.dumps(_sqlite_config()), encoding="utf-8")
    activation = tmp_path / "activation.json"
    activation.write_text(json.dumps(activation_data()), encoding="utf-8")
    kwargs.setdefault("read_authority", _reader)
    kwargs.setdefault("authority", authority())
    return rm.open_experiment(
        activation, goal_id="issue-fix", agent_id="agent:patcher", provider=provider, **kwargs
    )


def test_ingest_then_recall_at_a_function_boundary_on_a_real_sqlite_file(tmp_path: Path) -> None:
    """'a module author records feedback at one function boundary and has it recalled,
    under guard, at another'; replay is deduplicated."""
    store = SQLiteProvider(path=tmp_path / "store.sqlite3")
    with _open(tmp_path, store) as memory:
        first = memory.ingest(hard_event(), observed_at=OBSERVED, execute=True, now=NOW)
        assert first.status == "activated"
        assert first.receipt is not None
        assert first.receipt.exact_readback_verified is True
        again = memory.ingest(hard_event(), observed_at=OBSERVED, execute=True, now=NOW)
        assert again.receipt is not None
        assert again.receipt.deduplicated is True

        outcome = memory.recall(
            PLANNING,
            queries=["scope selection"],
            base_output={"plan": 1},
            apply_memory=applying,
            application_id="app-1",
            artifact_ref="artifact-1",
            now=NOW,
        )
        assert outcome.status == "applied"
        assert outcome.output == {"plan": 1, "memory": True}
        assert outcome.application is not None
        assert outcome.packet.trigger == "explicit"

        @memory.boundary(PLANNING, queries=lambda issue: [issue], apply_memory=applying)
        def plan(issue: str) -> dict[str, Any]:
            return {"plan": issue}

        assert plan("scope selection") == {"plan": "scope selection", "memory": True}
        status = memory.status()
        assert status.available is True
    store.close()


def test_the_object_builds_its_provider_from_the_config_and_closes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    memory = _open(tmp_path)
    hook = memory.ingest(hard_event(), observed_at=OBSERVED, execute=True, now=NOW)
    assert hook.status == "activated"
    memory.close()
    memory.close()  # idempotent


def test_repr_shows_no_path_or_scope_ref(tmp_path: Path) -> None:
    memory = _open(tmp_path, InMemoryProvider())
    text = repr(memory)
    assert "issue-fix" in text
    for secret in [*SCOPES.values(), SCOPE_C, str(tmp_path), "config.json"]:
        assert secret not in text


def test_dry_run_is_planned_without_touching_the_provider(tmp_path: Path) -> None:
    provider = InMemoryProvider()
    hook = _open(tmp_path, provider).ingest(hard_event(), observed_at=OBSERVED, now=NOW)
    assert hook.status == "planned"
    assert provider.calls == ()


def test_an_agent_not_allowlisted_is_disabled_with_zero_calls() -> None:
    provider = InMemoryProvider()
    memory = rm.open_experiment_from(
        goal(), walk_config(), agent_id="agent:stranger", authority=authority(), provider=provider
    )
    assert memory.available is False
    assert memory.ingest(hard_event(), execute=True, now=NOW).status == "disabled"
    outcome = memory.recall(PLANNING, queries=["q"], base_output=1, application_id="a", now=NOW)
    assert outcome.status == "disabled"
    assert outcome.output == 1
    assert provider.calls == ()


def test_explicit_recall_does_not_need_the_automatic_flag_but_the_hook_does() -> None:
    """The seeds: the flag authorizes only the automatic hook."""
    provider = InMemoryProvider()
    memory = rm.open_experiment_from(
        goal(),
        walk_config(recall=False),
        agent_id="agent:patcher",
        authority=authority(),
        read_authority=_reader,
        provider=provider,
    )
    auto = memory.automatic_recall(
        PLANNING, queries=["q"], base_output=1, application_id="a", now=NOW
    )
    assert auto.status == "disabled"
    assert provider.calls == ()
    explicit = memory.recall(PLANNING, queries=["q"], base_output=1, application_id="a", now=NOW)
    assert explicit.status == "not_available"
    assert provider.calls != ()


def test_without_read_authority_every_corpus_is_blocked() -> None:
    """The read checkpoint is never inferred from the event or from memory."""
    provider = InMemoryProvider()
    memory = rm.open_experiment_from(
        goal(), walk_config(), agent_id="agent:patcher", authority=authority(), provider=provider
    )
    memory.ingest(hard_event(), observed_at=OBSERVED, execute=True, now=NOW)
    before = len(provider.calls)
    outcome = memory.recall(PLANNING, queries=["q"], base_output=1, application_id="a", now=NOW)
    assert outcome.status == "not_available"
    assert outcome.packet.reason_code == "every_corpus_guard_blocked"
    assert len(provider.calls) == before


def _memory(provider: Any) -> rm.Experiment:
    return rm.open_experiment_from(
        goal(),
        walk_config(),
        agent_id="agent:patcher",
        authority=authority(),
        read_authority=_reader,
        provider=provider,
    )


def _boom(*_: Any, **__: Any) -> Any:
    raise RuntimeError("boom")


@pytest.mark.parametrize(
    "kind",
    ["queries_raise", "callback_raises", "provider_raises", "bad_application_id", "reader_raises"],
)
def test_the_decorator_falls_back_to_the_function_output_on_every_failure(kind: str) -> None:
    """'falls back to the undecorated result on any failure'."""
    provider = InMemoryProvider()
    memory = _memory(provider)
    memory.ingest(hard_event(), observed_at=OBSERVED, execute=True, now=NOW)
    if kind == "provider_raises":
        provider.set_faults(unavailable=True)
    if kind == "reader_raises":
        memory = rm.open_experiment_from(
            goal(),
            walk_config(),
            agent_id="agent:patcher",
            authority=authority(),
            read_authority=_boom,
            provider=provider,
        )
    options: dict[str, Any] = {
        "queries": _boom if kind == "queries_raise" else (lambda x: [x]),
        "apply_memory": _boom if kind == "callback_raises" else applying,
        "application_id": "not a token!" if kind == "bad_application_id" else "app-1",
    }

    @memory.boundary(PLANNING, **options)
    def plan(issue: str) -> dict[str, Any]:
        return {"plan": issue}

    assert plan("scope selection") == {"plan": "scope selection"}


def test_the_functions_own_exception_propagates() -> None:
    memory = _memory(InMemoryProvider())

    @memory.boundary(PLANNING, queries=lambda: ["q"])
    def plan() -> None:
        raise ValueError("the function's own")

    with pytest.raises(ValueError, match="own"):
        plan()


@settings(max_examples=40, deadline=None)
@given(
    unavailable=st.booleans(),
    times_out=st.booleans(),
    corrupt=st.booleans(),
    misses=st.booleans(),
    callback=st.sampled_from(["apply", "raise", "garbage", "none"]),
)
def test_whatever_the_provider_does_the_caller_gets_an_output(
    unavailable: bool, times_out: bool, corrupt: bool, misses: bool, callback: str
) -> None:
    """Fail open: the caller gets its output or the applied output, never a memory exception."""
    provider = InMemoryProvider()
    memory = _memory(provider)
    memory.ingest(hard_event(), observed_at=OBSERVED, execute=True, now=NOW)
    provider.set_faults(
        unavailable=unavailable, times_out=times_out, corrupt_readback=corrupt, search_misses=misses
    )
    models: dict[str, Any] = {
        "apply": applying,
        "raise": _boom,
        "garbage": lambda b, i: 42,
        "none": None,
    }

    @memory.boundary(PLANNING, queries=lambda x: [x], apply_memory=models[callback])
    def plan(issue: str) -> dict[str, Any]:
        return {"plan": issue}

    assert plan("scope selection") in (
        {"plan": "scope selection"},
        {"plan": "scope selection", "memory": True},
    )


def test_async_twins_and_an_async_boundary() -> None:
    provider = InMemoryProvider()
    memory = _memory(provider)

    @memory.boundary(PLANNING, queries=lambda x: [x], apply_memory=applying)
    async def plan(issue: str) -> dict[str, Any]:
        return {"plan": issue}

    async def main() -> tuple[Any, Any, Any]:
        hook = await memory.aingest(hard_event(), observed_at=OBSERVED, execute=True, now=NOW)
        outcome = await memory.arecall(
            PLANNING,
            queries=["scope selection"],
            base_output={"plan": 1},
            apply_memory=applying,
            application_id="app-1",
            now=NOW,
        )
        return hook, outcome, await plan("scope selection")

    hook, outcome, planned = asyncio.run(main())
    assert hook.status == "activated"
    assert outcome.status == "applied"
    assert planned == {"plan": "scope selection", "memory": True}


class _ReadingAuthority:
    """An authority source with the optional read extension (answers for one corpus only)."""

    def __init__(self, corpus_id: str) -> None:
        self._inner = authority()
        self._corpus_id = corpus_id
        self.asked: list[str] = []

    @property
    def source_ref(self) -> str:
        return self._inner.source_ref

    def checkpoint_for(self, **claims: Any) -> Any:
        return self._inner.checkpoint_for(**claims)

    def read_checkpoint_for(
        self, *, corpus: Any, surface_id: str, context: Any, agent_id: str, now: Any
    ) -> Any:
        self.asked.append(corpus.corpus_id)
        if corpus.corpus_id != self._corpus_id or agent_id != "agent:patcher":
            return None
        return _reader(corpus, surface_id, context)


@pytest.mark.parametrize(("answers_for", "status"), [(C, "applied"), (A, "not_available")])
def test_the_read_checkpoint_comes_from_the_authority_source(answers_for: str, status: str) -> None:
    source = _ReadingAuthority(answers_for)
    memory = rm.open_experiment_from(
        goal(),
        walk_config(),
        agent_id="agent:patcher",
        authority=source,
        provider=InMemoryProvider(),
    )
    assert memory.ingest(hard_event(), observed_at=OBSERVED, execute=True, now=NOW).status == (
        "activated"
    )
    outcome = memory.recall(
        PLANNING,
        queries=["scope selection"],
        base_output={"plan": 1},
        apply_memory=applying,
        application_id="app-1",
        now=NOW,
    )
    assert outcome.status == status
    assert source.asked == [A, B, C]


def test_open_experiment_reads_an_authority_map_file(tmp_path: Path) -> None:
    from reward_memory import wire

    path = tmp_path / "authority.json"
    path.write_text(json.dumps(wire.dump(authority().record)), encoding="utf-8")
    memory = _open(tmp_path, InMemoryProvider(), authority=path)
    assert memory.ingest(hard_event(), observed_at=OBSERVED, execute=True, now=NOW).status == (
        "activated"
    )


def test_a_missing_activation_file_is_unavailable_never_an_exception(tmp_path: Path) -> None:
    memory = rm.open_experiment(
        tmp_path / "absent.json", goal_id="issue-fix", agent_id="agent:patcher", authority=None
    )
    assert memory.available is False
    assert memory.status().status == "disabled"
    assert memory.ingest(hard_event(), execute=True, now=NOW).status == "disabled"


def test_status_reports_an_unbuildable_provider_as_a_health_status() -> None:
    data = walk_config()
    data["project_provider_binding"]["provider_id"] = "no_such_provider"
    for entry in data["corpora"]:
        entry["corpus"]["provider_id"] = "no_such_provider"
    memory = rm.open_experiment_from(goal(), data, agent_id="agent:patcher", authority=authority())
    assert memory.available is True
    assert memory.status().provider_health.status == "provider_unavailable"
    hook = memory.ingest(hard_event(), observed_at=OBSERVED, execute=True, now=NOW)
    assert hook.status == "provider_unavailable"


# -- an operator's change to the activation file reaches an object already open --------


def _disable_agent(tmp_path: Path) -> None:
    data = activation_data()
    data["goals"][0]["enabled_agents"] = ["agent:someone-else"]
    (tmp_path / "activation.json").write_text(json.dumps(data), encoding="utf-8")


def _clear_goal(tmp_path: Path) -> None:
    rm.configure_goal(tmp_path / "activation.json", goal_id="issue-fix", clear=True, execute=True)


def _delete_files(tmp_path: Path) -> None:
    (tmp_path / "activation.json").unlink()
    (tmp_path / "config.json").unlink()


def _break_config(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{}", encoding="utf-8")


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (_disable_agent, "agent_not_allowlisted"),
        (_clear_goal, "goal_not_configured"),
        (_delete_files, "activation_missing"),
        (_break_config, "config_unavailable_or_invalid"),
    ],
    ids=["agent-removed", "goal-cleared", "files-deleted", "config-broken"],
)
def test_a_change_after_open_stops_the_next_call(tmp_path: Path, change: Any, reason: str) -> None:
    """DESIGN.md §2: "Real provider writes need a configured goal and an allowlisted
    agent" -- at the time of the write, not only when the object was opened."""
    provider = InMemoryProvider()
    memory = _open(tmp_path, provider)
    assert memory.available
    change(tmp_path)
    hook = memory.ingest(hard_event(), observed_at=OBSERVED, execute=True, now=NOW)
    assert hook.status == "disabled"
    assert provider.call_count() == 0
    assert memory.runtime.reason_code == reason
    outcome = memory.recall(
        PLANNING,
        queries=["scope selection"],
        base_output={"plan": 1},
        apply_memory=applying,
        application_id="app-1",
        now=NOW,
    )
    assert outcome.status == "disabled"
    assert outcome.output == {"plan": 1}
    assert provider.call_count() == 0
    assert memory.status(check_provider=False).available is False


def test_an_unchanged_activation_is_not_resolved_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = _open(tmp_path, InMemoryProvider())
    import reward_memory.author as author

    calls: list[object] = []
    real = author.resolve_experiment
    monkeypatch.setattr(
        author, "resolve_experiment", lambda *a, **k: calls.append(a) or real(*a, **k)
    )
    memory.ingest(hard_event(), observed_at=OBSERVED, execute=True, now=NOW)
    memory.ingest(hard_event(), observed_at=OBSERVED, execute=True, now=NOW)
    assert calls == []
    _disable_agent(tmp_path)
    assert memory.available is False
    assert len(calls) == 1


def test_a_config_fixed_after_open_gets_its_provider_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first build failed (a provider id nothing serves): once the config names one
    that exists, the open object builds it, as a freshly opened one would."""
    monkeypatch.chdir(tmp_path)
    data = _sqlite_config()
    broken = json.loads(json.dumps(data).replace('"sqlite"', '"not-installed"'))
    (tmp_path / "config.json").write_text(json.dumps(broken), encoding="utf-8")
    activation = tmp_path / "activation.json"
    activation.write_text(json.dumps(activation_data()), encoding="utf-8")
    memory = rm.open_experiment(
        activation,
        goal_id="issue-fix",
        agent_id="agent:patcher",
        authority=authority(),
        read_authority=_reader,
    )
    assert memory.status().provider_health.status != "available"  # type: ignore[union-attr]
    (tmp_path / "config.json").write_text(json.dumps(data), encoding="utf-8")
    assert memory.status().provider_health.status == "available"  # type: ignore[union-attr]
    memory.close()


def test_a_change_while_the_activation_is_read_is_seen_on_the_next_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fault injection: the operator's write lands while the object resolves the file
    again. The object does not record that state as seen: the next call resolves again."""
    import reward_memory.author as author

    memory = _open(tmp_path, InMemoryProvider())
    real = author.resolve_experiment
    fired: list[bool] = []

    def resolve_then_change(*args: Any, **kwargs: Any) -> Any:
        runtime = real(*args, **kwargs)
        if not fired:
            fired.append(True)
            _disable_agent(tmp_path)  # lands after the read, before the object looks again
        return runtime

    (tmp_path / "activation.json").write_text(
        json.dumps(activation_data()) + " ", encoding="utf-8"
    )  # a change: the next call resolves again
    monkeypatch.setattr(author, "resolve_experiment", resolve_then_change)
    assert memory.available  # resolved the allowlisted state ...
    assert memory.available is False  # ... and the change that landed meanwhile is seen


def test_a_replay_without_an_observation_time_is_deduplicated(tmp_path: Path) -> None:
    """DESIGN §2's call, ``memory.ingest(event, execute=True)``, twice: the seeds'
    'Repeated events remain idempotent'. The store's record keeps the first time; a later
    replay takes it (it used to be a conflict: the clock gave each replay another time)."""
    from datetime import timedelta

    store = SQLiteProvider(path=tmp_path / "store.sqlite3")
    with _open(tmp_path, store) as memory:
        first = memory.ingest(hard_event(), execute=True, now=NOW)
        again = memory.ingest(hard_event(), execute=True, now=NOW + timedelta(hours=1))
        told = memory.ingest(
            hard_event(), observed_at=NOW - timedelta(minutes=5), execute=True, now=NOW
        )
    store.close()
    assert first.status == "activated"
    assert first.receipt is not None
    assert again.receipt is not None
    assert (again.status, again.receipt.deduplicated) == ("activated", True)
    assert again.receipt.activation_ref == first.receipt.activation_ref
    assert again.receipt.external_writes_performed is False
    # A time the caller gives is the caller's word: another one is still a conflict.
    assert (told.status, told.receipt.reason_codes if told.receipt else None) == (
        "conflict",
        ("provider_target_content_conflict",),
    )


@pytest.mark.parametrize(
    ("arguments", "path"),
    [
        ({"observed_at": "2026-11-01T12:00:00"}, "observed_at"),  # naive
        ({"observed_at": 5}, "observed_at"),
        ({"execute": "yes"}, "execute"),
    ],
)
def test_a_bad_argument_of_the_callers_own_raises(
    tmp_path: Path, arguments: dict[str, Any], path: str
) -> None:
    """DESIGN §4: programmer errors raise typed errors early, with the field path named
    (they used to come back as a rejected event)."""
    from reward_memory.errors import RecordValidationError

    memory = _open(tmp_path, InMemoryProvider())
    with pytest.raises(RecordValidationError) as caught:
        memory.ingest(hard_event(), now=NOW, **arguments)
    assert caught.value.path == path


@pytest.mark.parametrize(
    ("arguments", "path"),
    [({"authority": 5}, "authority"), ({"provider": "memory://"}, "provider")],
)
def test_a_wrong_authority_or_provider_is_refused_when_the_object_is_made(
    tmp_path: Path, arguments: dict[str, Any], path: str
) -> None:
    from reward_memory.errors import RecordValidationError

    provider = arguments.pop("provider", None)
    with pytest.raises(RecordValidationError) as caught:
        _open(tmp_path, provider, **arguments)
    assert caught.value.path == path


# -- the decorator meets descriptors, async callables and async models ----------------------


def _seeded() -> rm.Experiment:
    memory = _memory(InMemoryProvider())
    memory.ingest(hard_event(), observed_at=OBSERVED, execute=True, now=NOW)
    return memory


def test_the_decorator_above_staticmethod_and_classmethod_keeps_their_kind() -> None:
    """It used to bind ``self`` into a staticmethod (TypeError) and call a classmethod
    object (TypeError on every call)."""
    memory = _seeded()

    class Planner:
        @memory.boundary(PLANNING, queries=lambda issue: [issue], apply_memory=applying)
        @staticmethod
        def plain(issue: str) -> dict[str, Any]:
            return {"plan": issue}

        @memory.boundary(PLANNING, queries=lambda cls, issue: [issue], apply_memory=applying)
        @classmethod
        def of_class(cls, issue: str) -> dict[str, Any]:
            return {"plan": issue, "by": cls.__name__}

    applied = {"plan": "scope selection", "memory": True}
    assert Planner.plain("scope selection") == applied
    assert Planner().plain("scope selection") == applied
    assert Planner.of_class("scope selection") == {**applied, "by": "Planner"}
    assert Planner().of_class("scope selection") == {**applied, "by": "Planner"}


def test_an_object_with_an_async_call_is_wrapped_as_a_coroutine() -> None:
    """Its call returns a coroutine: the recall runs after it, off the event loop (it used
    to recall on the coroutine object itself, blocking the loop, and never apply)."""
    memory = _seeded()

    class Plan:
        async def __call__(self, issue: str) -> dict[str, Any]:
            return {"plan": issue}

    plan = memory.boundary(PLANNING, queries=lambda issue: [issue], apply_memory=applying)(Plan())
    assert asyncio.run(plan("scope selection")) == {"plan": "scope selection", "memory": True}


def test_an_async_model_callback_works_on_the_async_paths() -> None:
    memory = _seeded()
    seen: list[str] = []

    async def model(base: Any, items: Any) -> Any:
        await asyncio.sleep(0)
        seen.append("model")
        return applying(base, items)

    @memory.boundary(PLANNING, queries=lambda issue: [issue], apply_memory=model)
    async def plan(issue: str) -> dict[str, Any]:
        return {"plan": issue}

    async def main() -> tuple[Any, Any]:
        outcome = await memory.arecall(
            PLANNING,
            queries=["scope selection"],
            base_output={"plan": 1},
            apply_memory=model,
            application_id="app-1",
            now=NOW,
        )
        return outcome, await plan("scope selection")

    outcome, planned = asyncio.run(main())
    assert outcome.status == "applied"
    assert planned == {"plan": "scope selection", "memory": True}
    assert seen == ["model", "model"]


def test_a_generator_function_or_a_bad_queries_argument_is_refused_when_decorated() -> None:
    memory = _memory(InMemoryProvider())
    boundary = memory.boundary(PLANNING, queries=lambda issue: [issue], apply_memory=applying)
    with pytest.raises(TypeError):

        @boundary
        def steps(issue: str) -> Any:
            yield issue

    with pytest.raises(TypeError):

        @boundary
        async def async_steps(issue: str) -> Any:
            yield issue

    with pytest.raises(TypeError):
        memory.boundary(PLANNING, queries=["scope selection"])  # type: ignore[arg-type]


def test_a_walk_over_several_corpora_keeps_one_deadline() -> None:
    """README: the binding's timeout_seconds bounds the whole recall. A surface of three
    corpora on a slow store used to take three timeouts (each corpus its own deadline)."""
    import time

    data = walk_config()
    data["project_provider_binding"]["timeout_seconds"] = 1
    slow = InMemoryProvider(slow_seconds=0.7)
    memory = rm.open_experiment_from(
        goal(), data, agent_id="agent:patcher", authority=authority(),
        read_authority=_reader, provider=slow,
    )  # fmt: skip
    started = time.monotonic()
    outcome = memory.recall(
        PLANNING,
        queries=["scope selection"],
        base_output={"plan": 1},
        apply_memory=applying,
        application_id="app-1",
        now=NOW,
    )
    took = time.monotonic() - started
    assert outcome.output == {"plan": 1}  # nothing in the store: the base output
    assert took < 1.6, took  # one deadline (1 s) and one late answer, never three


@pytest.mark.parametrize(
    "query",
    [
        {"query": "scope selection", "query_summary": "scope", "limit": 99},
        {"query": "scope selection"},
    ],
)
def test_a_query_mapping_holds_exactly_its_two_fields(query: dict[str, Any]) -> None:
    """An unknown field is refused, never dropped unseen (reference gap 8)."""
    memory = _seeded()
    outcome = memory.recall(
        PLANNING,
        queries=[query],
        base_output={"plan": 1},
        apply_memory=applying,
        application_id="app-1",
        now=NOW,
    )
    assert outcome.packet.status == "guard_rejected"
    assert outcome.output == {"plan": 1}


def test_an_async_model_on_a_sync_path_is_refused_not_silently_failed() -> None:
    """It used to be read as junk (status failed, the base output, nothing said why)."""
    memory = _memory(InMemoryProvider())

    async def model(base: Any, items: Any) -> Any:
        return applying(base, items)

    with pytest.raises(TypeError):
        memory.recall(
            PLANNING,
            queries=["scope selection"],
            base_output={"plan": 1},
            apply_memory=model,
            application_id="app-1",
            now=NOW,
        )
    with pytest.raises(TypeError):

        @memory.boundary(PLANNING, queries=lambda issue: [issue], apply_memory=model)
        def plan(issue: str) -> dict[str, Any]:
            return {"plan": issue}
