"""``apply()`` protects the caller's base output, and never reports anything false.

Contract (issue items 6 and 11; reference §7.5; DESIGN §4 "Provider or model
failure fails open: the caller's base output is kept ... nothing is reported as
activated or applied"): the callback cannot change what the caller gets back
(it works on a copy); "base preserved" is judged by value, not identity; an
invalid or failing model application preserves the base output; an applied
receipt requires attribution to an item returned by this recall and
current-artifact verification.
"""

from __future__ import annotations

import collections
import copy
import functools
import json
import threading
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from _recall_support import NOW, active_record, binding, checkpoint, corpus, request, store
from reward_memory.application import BASE_NOT_COPYABLE, CALLBACK_FAILED, apply
from reward_memory.guarded_recall import RecallItem, RecallSession, recall
from reward_memory.records.application import ApplicationReceipt, ApplicationResult, ModelDecision
from reward_memory.testing import InMemoryProvider


@functools.cache
def _session() -> RecallSession:
    provider = InMemoryProvider()
    for i in range(2):
        store(provider, active_record(i))
    session = recall(
        request(),
        corpus=corpus(),
        checkpoint=checkpoint(),
        binding=binding(),
        provider=provider,
        now=NOW,
    )
    assert session.status == "completed"
    return session


def _decision(items: tuple[RecallItem, ...], **changes: Any) -> dict[str, Any]:
    values: dict[str, Any] = {
        "outcome": "applied",
        "output": {"plan": "narrowed"},
        "memory_refs": [items[0].memory_ref],
        "reasoning_summary": "The recalled preference fits this artifact.",
        "current_artifact_verified": True,
    }
    values.update(changes)
    return values


def _apply(base: Any, model: Any, session: RecallSession | None = None) -> ApplicationResult:
    return apply(base, session or _session(), application_id="application:p", apply_memory=model)


def _assert_honest(result: ApplicationResult) -> None:
    """The result and receipt also hold under the validating public constructors."""
    receipt = result.receipt
    ApplicationReceipt(
        **{
            name: getattr(receipt, name)
            for name in (
                "application_id",
                "artifact_ref",
                "corpus_id",
                "surface_id",
                "mode",
                "query_kind",
                "query_evidence",
                "outcome",
                "memory_ref_digests",
                "reasoning_summary",
                "current_artifact_verified",
                "result_readback_verified",
                "provider_call_count",
            )
        }
    )
    values: tuple[Any, ...] = (
        result.status,
        receipt.current_artifact_verified,
        result.fail_open_preserved_base,
    )
    assert [type(value) for value in values] == [str, bool, bool]


def _nested() -> dict[str, Any]:
    return {"files": ["a.py", "b.py"], "meta": {"scope": "generic", "tags": ["x"]}, "n": 1}


# -- the callback works on a copy ------------------------------------------------------------


def _mutate(value: Any) -> None:
    value["files"].append("evil.py")
    value["meta"]["scope"] = "everything"
    value["n"] = 2


@pytest.mark.parametrize("then", ["raise", "ignored_mutated", "junk", "applied_bad_ref"])
def test_a_mutating_callback_never_changes_the_callers_base(then: str) -> None:
    """Mutate-then-fail: the caller still gets its own, untouched base object."""
    base = _nested()
    snapshot = copy.deepcopy(base)

    def model(view: Any, items: tuple[RecallItem, ...]) -> Any:
        _mutate(view)
        if then == "raise":
            raise RuntimeError("model crashed after editing its input")
        if then == "ignored_mutated":
            return _decision(items, outcome="ignored", output=view, current_artifact_verified=False)
        if then == "junk":
            return view
        return _decision(items, output=view, memory_refs=["memory:not-from-this-recall"])

    result = _apply(base, model)
    assert result.status == "failed"
    assert result.output is base
    assert base == snapshot
    assert result.fail_open_preserved_base is True
    assert result.receipt.reasoning_summary == CALLBACK_FAILED


def test_ignored_after_mutating_the_copy_but_answering_with_the_base_value() -> None:
    """Ignored is judged by value against the original base: an equal value passes,
    and the caller gets its own object back (not the callback's)."""
    base = _nested()
    snapshot = copy.deepcopy(base)
    equal_value = copy.deepcopy(base)

    def model(view: Any, items: tuple[RecallItem, ...]) -> Any:
        _mutate(view)
        return _decision(items, outcome="ignored", output=equal_value, memory_refs=[])

    result = _apply(base, model)
    assert result.status == "ignored"
    assert result.output is base
    assert base == snapshot
    assert result.fail_open_preserved_base is True


@pytest.mark.parametrize("outcome", ["ignored", "refuted"])
def test_returning_the_untouched_copy_keeps_the_base_by_value(outcome: str) -> None:
    base = _nested()

    def model(view: Any, items: tuple[RecallItem, ...]) -> Any:
        return _decision(items, outcome=outcome, output=view)

    result = _apply(base, model)
    assert result.status == outcome
    assert result.output is base
    assert result.fail_open_preserved_base is True


def test_applied_returns_the_models_output_and_judges_preservation_by_value() -> None:
    base = _nested()
    snapshot = copy.deepcopy(base)

    def model(view: Any, items: tuple[RecallItem, ...]) -> Any:
        _mutate(view)
        return _decision(items, output=view)

    changed = _apply(base, model)
    assert changed.status == "applied"
    assert changed.output is not base
    assert changed.output["n"] == 2
    assert changed.fail_open_preserved_base is False
    assert base == snapshot
    same = _apply(base, lambda view, items: _decision(items, output=view))
    assert same.status == "applied"
    assert same.fail_open_preserved_base is True, "an equal copy is the base, by value"


@pytest.mark.parametrize(
    ("base", "output"),
    [
        ({"n": 1}, {"n": True}),
        ({"n": 1}, {"n": 1.0}),
        ([1, 2], (1, 2)),
        ({"a": [1]}, {"a": [1, 2]}),
        ({"a": 1}, {"b": 1}),
        ("text", "text "),
    ],
)
def test_ignored_with_a_different_value_fails(base: Any, output: Any) -> None:
    """Value, with exact JSON types: ``1`` is not ``true`` and a list is not a tuple."""
    result = _apply(base, lambda view, items: _decision(items, outcome="ignored", output=output))
    assert result.status == "failed"
    assert result.output is base


def _deep() -> list[Any]:
    nested: list[Any] = ["deep"]
    for _ in range(200):
        nested = [nested]
    return nested


def _shared() -> dict[str, Any]:
    files = ["a.py"]
    return {"a": files, "b": files}


def _cyclic() -> list[Any]:
    cyclic: list[Any] = ["a.py"]
    cyclic.append(cyclic)
    return cyclic


@pytest.mark.parametrize(
    "make",
    [
        lambda: collections.defaultdict(list, {"files": ["a.py"]}),
        lambda: {("tuple", "key"): ["a.py"], 1: {"nested": [1, 2]}},
        _deep,
        _shared,
        _cyclic,
    ],
    ids=["dict-subclass", "odd-keys", "deep", "shared", "cyclic"],
)
def test_any_copyable_base_is_copied_and_left_alone(make: Any) -> None:
    """Whatever its shape, the callback's edits land on its own copy."""
    base = make()
    before = repr(base)
    seen: list[Any] = []

    def model(view: Any, items: Any) -> Any:
        seen.append(view)
        target = view if isinstance(view, list) else next(iter(view.values()))
        target.append("evil.py")
        raise RuntimeError("after editing")

    result = _apply(base, model)
    assert result.status == "failed"
    assert result.output is base
    assert seen[0] is not base
    assert type(seen[0]) is type(base)
    assert repr(base) == before


def test_a_base_that_cannot_be_copied_fails_open_without_calling_the_model() -> None:
    """The original is never handed to the callback (it could change it)."""
    base = {"lock": threading.Lock(), "plan": ["a.py"]}
    called: list[Any] = []

    def model(view: Any, items: Any) -> Any:
        called.append(view)
        return _decision(items)

    result = _apply(base, model)
    assert called == []
    assert result.status == "failed"
    assert result.output is base
    assert result.receipt.reasoning_summary == BASE_NOT_COPYABLE
    assert result.receipt.memory_ref_digests == ()


def test_a_base_without_value_equality_counts_as_kept_only_as_its_own_copy() -> None:
    class Plan:
        def __init__(self) -> None:
            self.files = ["a.py"]

    base = Plan()
    kept = _apply(base, lambda view, items: _decision(items, outcome="ignored", output=view))
    assert kept.status == "ignored"
    assert kept.output is base
    other = _apply(base, lambda view, items: _decision(items, outcome="ignored", output=Plan()))
    assert other.status == "failed"
    applied = _apply(base, lambda view, items: _decision(items, output=view))
    assert applied.status == "applied"
    assert applied.fail_open_preserved_base is False, "not provably the base"


# -- weird decisions all fail open -----------------------------------------------------------


class _Raises:
    def __eq__(self, other: object) -> bool:
        raise RuntimeError("eq")

    def __iter__(self) -> Iterator[Any]:
        raise RuntimeError("iter")

    def __getitem__(self, key: object) -> Any:
        raise RuntimeError("getitem")

    def keys(self) -> Any:
        raise RuntimeError("keys")

    __hash__ = object.__hash__


class _MappingThat(Mapping[str, Any]):
    """A mapping with the five keys whose reads misbehave."""

    def __init__(self, good: dict[str, Any], how: str) -> None:
        self._good = good
        self._how = how
        self._reads = 0

    def __getitem__(self, key: str) -> Any:
        self._reads += 1
        if self._how == "getitem_raises":
            raise KeyError(key)
        if self._how == "changes" and key == "memory_refs":
            return list(self._good[key]) if self._reads % 2 else []
        if self._how == "changes" and key == "outcome":
            return "applied" if self._reads % 2 else "ignored"
        return self._good[key]

    def __iter__(self) -> Iterator[str]:
        if self._how == "iter_raises":
            raise RuntimeError("iter")
        return iter(self._good)

    def __len__(self) -> int:
        if self._how == "len_raises":
            raise RuntimeError("len")
        return len(self._good)

    def keys(self) -> Any:
        if self._how == "keys_raises":
            raise RuntimeError("keys")
        return super().keys()


class _Always(str):
    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = str.__hash__


class _RaisingDecision(ModelDecision):
    """A ModelDecision subclass whose ``memory_refs`` raises when read."""

    def __getattribute__(self, name: str) -> Any:
        if name == "memory_refs":
            raise RuntimeError("property")
        return super().__getattribute__(name)


_RAISING = _RaisingDecision(
    outcome="applied", output="x", reasoning_summary="fine", current_artifact_verified=True
)


def _weird(case: str, items: tuple[RecallItem, ...]) -> Any:
    good = _decision(items)
    ref = items[0].memory_ref
    cases: dict[str, Any] = {
        "raising_object": _Raises(),
        "getitem_raises": _MappingThat(good, "getitem_raises"),
        "iter_raises": _MappingThat(good, "iter_raises"),
        "len_raises": _MappingThat(good, "len_raises"),
        "keys_raises": _MappingThat(good, "keys_raises"),
        "outcome_str_subclass": {**good, "outcome": _Always("applied")},
        "outcome_weird": {**good, "outcome": _Raises()},
        "summary_str_subclass": {**good, "reasoning_summary": _Always("ok")},
        "huge_summary": {**good, "reasoning_summary": "a " * 2_000_000},
        "huge_ref": {**good, "memory_refs": ["m" * 5_000_000]},
        "bytes_ref": {**good, "memory_refs": [ref.encode()]},
        "int_ref": {**good, "memory_refs": [7]},
        "none_ref": {**good, "memory_refs": [None]},
        "str_subclass_ref": {**good, "memory_refs": [_Always(ref)]},
        "refs_generator": {**good, "memory_refs": (r for r in [ref])},
        "refs_set": {**good, "memory_refs": {ref}},
        "refs_raising": {**good, "memory_refs": _Raises()},
        "refs_a_string": {**good, "memory_refs": ref},
        "verified_truthy_int": {**good, "current_artifact_verified": 1},
        "verified_string": {**good, "current_artifact_verified": "true"},
        "ignored_output_eq_raises": {**good, "outcome": "ignored", "output": _Raises()},
        "property_raises": _RAISING,
    }
    return cases[case]


WEIRD = [
    "raising_object",
    "getitem_raises",
    "iter_raises",
    "len_raises",
    "keys_raises",
    "outcome_str_subclass",
    "outcome_weird",
    "summary_str_subclass",
    "huge_summary",
    "huge_ref",
    "bytes_ref",
    "int_ref",
    "none_ref",
    "str_subclass_ref",
    "refs_generator",
    "refs_set",
    "refs_raising",
    "refs_a_string",
    "verified_truthy_int",
    "verified_string",
    "ignored_output_eq_raises",
    "property_raises",
]


@pytest.mark.parametrize("case", WEIRD)
def test_weird_decisions_fail_open_and_never_raise(case: str) -> None:
    base = _nested()
    result = _apply(base, lambda view, items: _weird(case, items))
    assert result.status == "failed"
    assert result.output is base
    assert result.receipt.memory_ref_digests == ()
    assert result.receipt.current_artifact_verified is False
    _assert_honest(result)


@pytest.mark.filterwarnings("error::RuntimeWarning")
def test_an_async_callback_fails_open_without_a_dangling_coroutine() -> None:
    async def model(view: Any, items: tuple[RecallItem, ...]) -> Any:
        return _decision(items)

    base = _nested()
    result = _apply(base, model)
    assert result.status == "failed"
    assert result.output is base


def test_a_mapping_that_changes_between_reads_is_read_once() -> None:
    """Whatever it answers, the receipt is consistent with one reading of it."""
    result = _apply(_nested(), lambda view, items: _MappingThat(_decision(items), "changes"))
    assert result.status in {"applied", "ignored", "failed"}
    _assert_honest(result)
    if result.status == "applied":
        assert result.receipt.memory_ref_digests
        assert result.receipt.current_artifact_verified is True


# -- recall not completed: the callback is never called --------------------------------------


def test_a_session_that_is_not_completed_never_calls_the_model() -> None:
    """Even a hand-built session carrying items: ``not_available``, no call."""
    provider = InMemoryProvider()
    empty = recall(
        request(),
        corpus=corpus(),
        checkpoint=checkpoint(),
        binding=binding(),
        provider=provider,
        now=NOW,
    )
    assert empty.status == "empty"

    def model(view: Any, items: Any) -> Any:
        raise AssertionError("the model must not be asked")

    base = _nested()
    result = _apply(base, model, empty)
    assert result.status == "not_available"
    assert result.output is base
    assert result.receipt.result_readback_verified is False


def test_a_session_cannot_be_assembled_by_hand() -> None:
    """Stage 3: "An applied receipt requires ... attribution to an item returned by this
    recall": a session carrying items no provider returned for it cannot be built."""
    session = _session()
    with pytest.raises(TypeError):
        RecallSession(
            packet=session.packet, items=session.items, request_packet=session.request_packet
        )
    with pytest.raises(TypeError):
        type("Session", (RecallSession,), {})


# -- property: the base is never changed, applied only for a valid decision ------------------

_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-5, 5)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=6),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4)
    ),
    max_leaves=12,
)
_ACTIONS = [
    "applied_valid",
    "applied_opaque_ref",
    "applied_no_refs",
    "applied_unverified",
    "applied_foreign_ref",
    "ignored_view",
    "ignored_snapshot",
    "refuted_view",
    "raise",
    "junk",
]
_JUNK = st.sampled_from([None, 1, "applied", [], {"outcome": "applied"}, _Raises(), object()])


def _scribble(value: Any) -> bool:
    """Mutate the first container found (depth first); whether anything changed."""
    if isinstance(value, dict):
        for child in value.values():
            if _scribble(child):
                return True
        value["__scribbled__"] = True
        return True
    if isinstance(value, list):
        for child in value:
            if _scribble(child):
                return True
        value.append("__scribbled__")
        return True
    return False


@given(base=_JSON, mutate=st.booleans(), action=st.sampled_from(_ACTIONS), junk=_JUNK)
def test_property_base_untouched_and_applied_only_when_valid(
    base: Any, mutate: bool, action: str, junk: Any
) -> None:
    snapshot = copy.deepcopy(base)
    text = json.dumps(base, sort_keys=True)
    changed: list[bool] = []

    def model(view: Any, items: tuple[RecallItem, ...]) -> Any:
        changed.append(mutate and _scribble(view))
        ref = items[0].memory_ref
        if action == "raise":
            raise ValueError("model failure")
        if action == "junk":
            return junk
        outcome, _, kind = action.partition("_")
        output = {"ignored": view, "refuted": view}.get(outcome, {"new": view})
        if kind == "snapshot":
            output = copy.deepcopy(snapshot)
        refs = {
            "no_refs": [],
            "foreign_ref": ["memory:foreign"],
            "opaque_ref": [items[1].provider_ref],
        }.get(kind, [ref])
        return _decision(
            items,
            outcome=outcome,
            output=output,
            memory_refs=refs,
            current_artifact_verified=kind != "unverified",
        )

    result = _apply(base, model)
    assert base == snapshot
    assert json.dumps(base, sort_keys=True) == text
    valid_applied = action in {"applied_valid", "applied_opaque_ref"}
    valid_kept = action == "ignored_snapshot" or (
        action in {"ignored_view", "refuted_view"} and not changed[0]
    )
    assert (result.status == "applied") is valid_applied
    if valid_kept:
        assert result.status == action.partition("_")[0]
    if not valid_applied and not valid_kept:
        assert result.status == "failed"
    if result.status != "applied":
        assert result.output is base
        assert result.fail_open_preserved_base is True
    else:
        assert result.receipt.current_artifact_verified is True
        assert result.receipt.memory_ref_digests
    _assert_honest(result)
