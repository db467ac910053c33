"""The fault-injection suite: recall, arecall and apply against misbehaving providers (item 11).

Contract sentences protected here:

- "``recall``, ``arecall`` and ``apply`` never raise because of anything a provider
  does: exceptions of any class (including ones whose own attributes raise), wrong
  types (non-string refs, ``None``, bytes, non-iterables), repeated refs, one record
  stored under several refs (dedupe: the model sees each record once)."
- "A recall has an overall deadline: the binding's timeout bounds the whole recall,
  not each call."
- "Nothing false is ever reported as applied or verified."

Every case wraps a real in-memory provider holding three valid records and changes
one thing about how it answers. For each case, through ``recall``, ``arecall`` and
``apply`` (whose callback applies every returned ref, having verified the current
artifact): no exception escapes; the status is a documented one; the packet
validates against its schema; ``result_readback_verified`` is true only when every
listed result was really read back exactly (the provider answered that very ref,
found, with that exact string, which is an active record of the exact corpus,
class and surface); no record reaches the model twice; and no receipt says
``applied`` for a ref that was not read back so.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import attrs
import pytest

from _recall_support import (
    CORPUS_ID,
    NOW,
    SURFACE,
    active_record,
    binding,
    checkpoint,
    content_of,
    corpus,
    request,
    store,
    validate_packet,
)
from reward_memory import wire
from reward_memory.application import apply
from reward_memory.errors import ProviderUnavailable, RecordValidationError
from reward_memory.guarded_recall import RecallSession, arecall, recall
from reward_memory.providers.spi import ReadResult, SearchHit, SearchResult
from reward_memory.records.recall import RecallQuery
from reward_memory.testing import InMemoryProvider

STATUSES = frozenset({"provider_unavailable", "completed", "empty"})
TIMEOUT = 5.0


class FakeClock:
    """A monotonic clock that moves only when a misbehaving provider says it took time."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


# -- misbehaving values ----------------------------------------------------------------------------


class EqualsAll(str):
    """A str subclass claiming to equal everything."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return True

    def __ne__(self, other: object) -> bool:
        return False

    def __hash__(self) -> int:
        return 0


class HashRaises(str):
    __slots__ = ()

    def __hash__(self) -> int:
        raise RuntimeError("no hash")

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("no eq")


class Truthy:
    def __bool__(self) -> bool:
        return True

    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = object.__hash__


class BoolRaises:
    def __bool__(self) -> bool:
        raise RuntimeError("no bool")


class Opaque:
    """Every attribute access raises."""

    def __getattribute__(self, name: str) -> Any:
        raise RuntimeError(f"no {name}")


class RefRaises:
    @property
    def ref(self) -> str:
        raise RuntimeError("no ref")


@attrs.frozen
class LooseHit:
    """A hit-shaped object that is not a SearchHit (duck typing is allowed)."""

    ref: Any
    summary: str = "s"


@attrs.frozen
class LooseReadback:
    ref: Any
    found: Any
    content: Any


class FoundRaises:
    def __init__(self, ref: str) -> None:
        self.ref = ref
        self.content = "{}"

    @property
    def found(self) -> bool:
        raise RuntimeError("no found")


class HitsRaise:
    @property
    def hits(self) -> Any:
        raise RuntimeError("no hits")


class ReadbackRaises:
    def __init__(self, field: str) -> None:
        self.field = field

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError(f"no {name}")


class RaisingIterList(list):  # type: ignore[type-arg]
    def __iter__(self) -> Iterator[Any]:
        raise RuntimeError("no iteration")

    def __getitem__(self, index: Any) -> Any:
        raise RuntimeError("no items")


class EndlessList(list):  # type: ignore[type-arg]
    def __init__(self, hit: Any) -> None:
        super().__init__()
        self.hit = hit

    def __iter__(self) -> Iterator[Any]:
        return itertools.repeat(self.hit)


class Boom(BaseException):
    """A BaseException subclass that is neither KeyboardInterrupt nor SystemExit."""


class StrRaises(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no str")

    def __repr__(self) -> str:
        raise RuntimeError("no repr")


class ReasonRaises(ProviderUnavailable):
    def __init__(self) -> None:
        Exception.__init__(self, "gone")

    @property  # type: ignore[override]
    def reason_code(self) -> str:
        raise RuntimeError("no reason")


class ReasonBoom(ProviderUnavailable):
    def __init__(self) -> None:
        Exception.__init__(self, "gone")

    @property  # type: ignore[override]
    def reason_code(self) -> str:
        raise Boom


class ClassRaises(ProviderUnavailable):
    @property  # type: ignore[override]
    def __class__(self) -> type:
        raise RuntimeError("no class")


class AttrsRaise(ProviderUnavailable):
    def __getattribute__(self, name: str) -> Any:
        raise RuntimeError(f"no {name}")


class UnhashableError(ProviderUnavailable):
    __hash__ = None  # type: ignore[assignment]

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("no eq")


def _reason(value: Any) -> ProviderUnavailable:
    error = ProviderUnavailable("gone")
    error.reason_code = value
    return error


# -- the misbehaving provider ----------------------------------------------------------------------


Search = Callable[["Rogue", dict[str, Any]], Any]
Read = Callable[["Rogue", dict[str, Any]], Any]


def _real_search(rogue: Rogue, kw: dict[str, Any]) -> Any:
    return rogue.real.search(**kw)


def _real_read(rogue: Rogue, kw: dict[str, Any]) -> Any:
    return rogue.real.read(**kw)


@attrs.frozen
class Case:
    name: str
    search: Search = _real_search
    read: Read = _real_read
    expect: str | None = None  # the status, when the case decides it
    reason: str | None = None


class Rogue:
    """A provider that answers like a real one, except for the one fault of its case."""

    provider_id = "memory_or_sqlite"
    spi_version = 1

    def __init__(self, case: Case) -> None:
        self.case = case
        self.real = InMemoryProvider()
        self.refs = [store(self.real, active_record(i)) for i in range(3)]
        self.contents = [content_of(active_record(i)) for i in range(3)]
        self.other = store(self.real, active_record(7, corpus_id="another_corpus"))
        self.clock = FakeClock()
        self.timeouts: list[float] = []
        # What this provider really answered "found, exactly this string" for, per ref.
        self.answered: dict[str, str] = {}

    def search(self, **kw: Any) -> Any:
        self.timeouts.append(kw["timeout"])
        return self.case.search(self, kw)

    def read(self, **kw: Any) -> Any:
        self.timeouts.append(kw["timeout"])
        answer = self.case.read(self, kw)
        ref = kw["ref"]
        try:
            found, said, content = answer.found, answer.ref, answer.content
        except Exception:  # noqa: BLE001 - the rogue's own answer may be anything
            return answer
        exact = found is True and type(content) is str and type(said) is str and said == ref
        if exact and type(ref) is str:
            self.answered[ref] = content
        return answer

    def hits(self, *refs: Any) -> SearchResult:
        return SearchResult(hits=tuple(SearchHit(ref=ref, summary="s") for ref in refs))

    def close(self) -> None:
        self.real.close()


def _raise(error: BaseException) -> Callable[[Rogue, dict[str, Any]], Any]:
    def fail(rogue: Rogue, kw: dict[str, Any]) -> Any:
        raise error

    return fail


def _answer(value: Any) -> Callable[[Rogue, dict[str, Any]], Any]:
    return lambda rogue, kw: value


def _hits_of(make: Callable[[Rogue], Any]) -> Search:
    return lambda rogue, kw: SearchResult(hits=make(rogue))


def _refs(make: Callable[[Rogue], tuple[Any, ...]]) -> Search:
    return lambda rogue, kw: rogue.hits(*make(rogue))


def _readback(make: Callable[[Rogue, str], Any]) -> Read:
    return lambda rogue, kw: make(rogue, kw["ref"])


def _content(make: Callable[[Rogue, str], Any]) -> Read:
    return _readback(lambda rogue, ref: ReadResult(ref=ref, found=True, content=make(rogue, ref)))


def _record_json(**changes: Any) -> Callable[[Rogue, str], str]:
    return lambda rogue, ref: content_of(active_record(5, **changes))


def _loose_read(rogue: Rogue, kw: dict[str, Any]) -> Any:
    real = rogue.real.read(**kw)
    return LooseReadback(ref=real.ref, found=real.found, content=real.content)


def _first_then_raise(rogue: Rogue, kw: dict[str, Any]) -> Any:
    if kw["ref"] == rogue.refs[0]:
        return rogue.real.read(**kw)
    raise RuntimeError("second read")


def _generator(rogue: Rogue) -> Iterator[SearchHit]:
    yield SearchHit(ref=rogue.refs[0], summary="s")


def _generator_raising(rogue: Rogue) -> Iterator[SearchHit]:
    yield SearchHit(ref=rogue.refs[0], summary="s")
    raise RuntimeError("mid-way")


def _same_record_everywhere(rogue: Rogue, ref: str) -> ReadResult:
    return ReadResult(ref=ref, found=True, content=rogue.contents[0])


def _reformatted(rogue: Rogue, ref: str) -> ReadResult:
    # The same record, re-serialised with other whitespace and key order under each ref.
    data = json.loads(rogue.contents[0])
    text = json.dumps(data, indent=rogue.refs.index(ref) + 1 if ref in rogue.refs else None)
    return ReadResult(ref=ref, found=True, content=text)


def _slow(seconds: float, then: Callable[[Rogue, dict[str, Any]], Any]) -> Any:
    def answer(rogue: Rogue, kw: dict[str, Any]) -> Any:
        rogue.clock.advance(seconds)
        return then(rogue, kw)

    return answer


def _just_inside(then: Callable[[Rogue, dict[str, Any]], Any]) -> Any:
    """Answers at 90% of whatever timeout it was given (inside every per-call timeout)."""

    def answer(rogue: Rogue, kw: dict[str, Any]) -> Any:
        rogue.clock.advance(kw["timeout"] * 0.9)
        return then(rogue, kw)

    return answer


def _v0(**changes: Any) -> Callable[[Rogue, str], str]:
    base: dict[str, Any] = {
        "schema_version": "reward_memory_active_record_v0",
        "corpus_id": CORPUS_ID,
        "candidate_ref": "candidate:legacy",
        "target_class": "soft_preference",
        "content_summary": "Legacy reviewer summary tone preference.",
        "scope": {"workspace_ref": "workspace:main", "project_ref": "project:alpha"},
        "lifecycle": {"state": "active"},
    }
    base["scope"]["surface_ids"] = [SURFACE]
    base.update(changes)
    return lambda rogue, ref: json.dumps(base)


U = "provider_unavailable"
E = "empty"
C = "completed"
FAILED = "provider_execution_failed"
MALFORMED = "provider_answer_malformed"
LATE = "recall_deadline_exceeded"

EXCEPTIONS: list[tuple[str, BaseException, str]] = [
    ("runtime_error", RuntimeError("boom"), FAILED),
    ("value_error", ValueError("bad"), FAILED),
    ("type_error", TypeError("bad"), FAILED),
    ("key_error", KeyError("k"), FAILED),
    ("attribute_error", AttributeError("a"), FAILED),
    ("memory_error", MemoryError(), FAILED),
    ("recursion_error", RecursionError(), FAILED),
    ("os_error", OSError(5, "io"), FAILED),
    ("connection_error", ConnectionResetError(), FAILED),
    ("builtin_timeout", TimeoutError(), FAILED),
    ("unicode_error", UnicodeDecodeError("utf-8", b"\xff", 0, 1, "bad"), FAILED),
    ("stop_iteration", StopIteration(), FAILED),
    ("generator_exit", GeneratorExit(), FAILED),
    ("cancelled", asyncio.CancelledError(), FAILED),
    ("base_exception_subclass", Boom(), FAILED),
    ("exception_group", ExceptionGroup("many", [RuntimeError("a"), ValueError("b")]), FAILED),
    ("str_raises", StrRaises(), FAILED),
    ("record_validation_error", RecordValidationError("bad ref"), FAILED),
    ("unavailable", ProviderUnavailable("gone"), U),
    (
        "unavailable_custom_code",
        ProviderUnavailable("x", reason_code="provider_busy"),
        "provider_busy",
    ),
    ("reason_code_int", _reason(7), U),
    ("reason_code_none", _reason(None), U),
    ("reason_code_bytes", _reason(b"provider_busy"), U),
    ("reason_code_str_subclass", _reason(EqualsAll("provider_busy")), U),
    ("reason_code_unsafe", _reason("token=ghp_abcdefghijklmnopqrstuvwxyz0123456789"), U),
    ("reason_code_not_a_token", _reason("two words!"), U),
    ("reason_code_huge", _reason("x" * 100_000), U),
    ("reason_code_property_raises", ReasonRaises(), U),
    ("reason_code_property_raises_base", ReasonBoom(), U),
    ("class_property_raises", ClassRaises("gone"), U),
    ("every_attribute_raises", AttrsRaise("gone"), U),
    ("unhashable_exception", UnhashableError("gone"), U),
]

CASES: list[Case] = [
    # -- search raises (32) ------------------------------------------------------------------------
    *(Case(f"search_raises_{n}", search=_raise(e), expect=U, reason=r) for n, e, r in EXCEPTIONS),
    # -- read raises (8) ---------------------------------------------------------------------------
    Case("read_raises_runtime", read=_raise(RuntimeError("x")), expect=U, reason=FAILED),
    Case("read_raises_unavailable", read=_raise(ProviderUnavailable("x")), expect=U, reason=U),
    Case("read_raises_base", read=_raise(Boom()), expect=U, reason=FAILED),
    Case("read_raises_generator_exit", read=_raise(GeneratorExit()), expect=U, reason=FAILED),
    Case("read_raises_str_raises", read=_raise(StrRaises()), expect=U, reason=FAILED),
    Case("read_raises_reason_raises", read=_raise(ReasonRaises()), expect=U, reason=U),
    Case("read_raises_attrs_raise", read=_raise(AttrsRaise("x")), expect=U, reason=U),
    Case("read_raises_on_second", read=_first_then_raise, expect=U, reason=FAILED),
    # -- a wholly malformed search answer (15) ----------------------------------------------------
    Case("search_none", search=_answer(None), expect=U, reason=MALFORMED),
    Case("search_int", search=_answer(5), expect=U, reason=MALFORMED),
    Case("search_str", search=_answer("memory:abc"), expect=U, reason=MALFORMED),
    Case("search_bytes", search=_answer(b"hits"), expect=U, reason=MALFORMED),
    Case("search_dict", search=_answer({"hits": []}), expect=U, reason=MALFORMED),
    Case("search_list_of_hits", search=lambda r, kw: list(r.hits(*r.refs).hits), expect=U),
    Case("hits_none", search=_hits_of(lambda r: None), expect=U, reason=MALFORMED),
    Case("hits_int", search=_hits_of(lambda r: 3), expect=U, reason=MALFORMED),
    Case("hits_str", search=_hits_of(lambda r: "abc"), expect=U, reason=MALFORMED),
    Case("hits_bytes", search=_hits_of(lambda r: b"abc"), expect=U, reason=MALFORMED),
    Case("hits_dict", search=_hits_of(lambda r: {"ref": r.refs[0]}), expect=U, reason=MALFORMED),
    Case("hits_set", search=_hits_of(lambda r: {r.refs[0]}), expect=U, reason=MALFORMED),
    Case("hits_generator", search=_hits_of(_generator), expect=U, reason=MALFORMED),
    Case("hits_generator_raising", search=_hits_of(_generator_raising), expect=U),
    Case("hits_property_raises", search=_answer(HitsRaise()), expect=U, reason=FAILED),
    Case("search_opaque", search=_answer(Opaque()), expect=U, reason=FAILED),
    Case("hits_list_iteration_raises", search=_hits_of(lambda r: RaisingIterList()), expect=U),
    # -- hits that are partly bad: the bad one is skipped (20) -----------------------------------
    Case("hits_endless_list", search=_hits_of(lambda r: EndlessList(r.hits(r.refs[0]).hits[0]))),
    Case(
        "hits_huge_repeated",
        search=_hits_of(lambda r: r.hits(*[r.refs[0]] * 10_000).hits),
        expect=C,
    ),
    Case("hits_all_none", search=_hits_of(lambda r: (None, None)), expect=E),
    Case("hits_all_ints", search=_hits_of(lambda r: (1, 2, 3)), expect=E),
    Case("hits_refs_as_strings", search=_hits_of(lambda r: tuple(r.refs)), expect=E),
    Case("hit_ref_int", search=_refs(lambda r: (1, r.refs[0])), expect=C),
    Case("hit_ref_none", search=_refs(lambda r: (None, r.refs[1])), expect=C),
    Case("hit_ref_bytes", search=_refs(lambda r: (r.refs[0].encode(), r.refs[1])), expect=C),
    Case("hit_ref_empty", search=_refs(lambda r: ("", r.refs[0])), expect=C),
    Case("hit_ref_equals_all", search=_refs(lambda r: (EqualsAll(r.refs[0]),)), expect=E),
    Case(
        "hit_ref_hash_raises",
        search=_refs(lambda r: (HashRaises(r.refs[0]), r.refs[1])),
        expect=C,
    ),
    Case("hit_ref_surrogate", search=_refs(lambda r: ("memory:\udc80", r.refs[0])), expect=C),
    Case("hit_ref_huge", search=_refs(lambda r: ("m" * 100_000, r.refs[0])), expect=C),
    Case("hit_ref_raises", search=_hits_of(lambda r: (RefRaises(),)), expect=U, reason=FAILED),
    Case("hit_opaque", search=_hits_of(lambda r: (Opaque(),)), expect=U, reason=FAILED),
    Case("hit_loose_object", search=_hits_of(lambda r: (LooseHit(ref=r.refs[0]),)), expect=C),
    Case(
        "hits_repeated_refs", search=_refs(lambda r: (r.refs[0],) * 5 + (r.refs[1],) * 3), expect=C
    ),
    Case("hits_unknown_refs", search=_refs(lambda r: ("memory:nope", "memory:gone")), expect=E),
    Case("hits_of_another_corpus", search=_refs(lambda r: (r.other,)), expect=E),
    Case(
        "hits_list_subclass",
        search=_hits_of(lambda r: type("L", (list,), {})(r.hits(*r.refs).hits)),
        expect=C,
    ),
    # -- readbacks of the wrong shape: skipped (22) -----------------------------------------------
    Case("read_none", read=_answer(None), expect=E),
    Case("read_int", read=_answer(3), expect=E),
    Case("read_content_directly", read=lambda r, kw: r.real.read(**kw).content, expect=E),
    Case("read_opaque", read=_answer(Opaque()), expect=U, reason=FAILED),
    Case("read_attrs_raise", read=_answer(ReadbackRaises("found")), expect=U, reason=FAILED),
    Case(
        "read_not_found", read=_readback(lambda r, ref: ReadResult(ref=ref, found=False)), expect=E
    ),
    Case(
        "read_found_int",
        read=_readback(lambda r, ref: ReadResult(ref=ref, found=1, content=r.contents[0])),
        expect=E,
    ),  # type: ignore[arg-type]
    Case(
        "read_found_str",
        read=_readback(lambda r, ref: ReadResult(ref=ref, found="yes", content=r.contents[0])),
        expect=E,
    ),  # type: ignore[arg-type]
    Case(
        "read_found_truthy",
        read=_readback(lambda r, ref: ReadResult(ref=ref, found=Truthy(), content=r.contents[0])),
        expect=E,
    ),  # type: ignore[arg-type]
    Case(
        "read_found_bool_raises",
        read=_readback(
            lambda r, ref: ReadResult(ref=ref, found=BoolRaises(), content=r.contents[0])
        ),
        expect=E,
    ),  # type: ignore[arg-type]
    Case(
        "read_other_ref",
        read=_readback(
            lambda r, ref: ReadResult(ref="memory:other", found=True, content=r.contents[0])
        ),
        expect=E,
    ),
    Case(
        "read_ref_none",
        read=_readback(lambda r, ref: ReadResult(ref=None, found=True, content=r.contents[0])),
        expect=E,
    ),  # type: ignore[arg-type]
    Case(
        "read_ref_equals_all",
        read=_readback(
            lambda r, ref: ReadResult(ref=EqualsAll("x"), found=True, content=r.contents[0])
        ),
        expect=E,
    ),
    Case("read_content_none", read=_content(lambda r, ref: None), expect=E),
    Case("read_content_bytes", read=_content(lambda r, ref: r.contents[0].encode()), expect=E),
    Case("read_content_int", read=_content(lambda r, ref: 42), expect=E),
    Case(
        "read_content_str_subclass",
        read=_content(lambda r, ref: EqualsAll(r.contents[0])),
        expect=E,
    ),
    Case("read_content_list", read=_content(lambda r, ref: [r.contents[0]]), expect=E),
    Case("read_loose_object", read=_loose_read, expect=C),
    Case(
        "read_loose_found_int",
        read=_readback(lambda r, ref: LooseReadback(ref=ref, found=1, content=r.contents[0])),
        expect=E,
    ),
    Case("read_generator", read=lambda r, kw: (x for x in [r.real.read(**kw)]), expect=E),
    Case(
        "read_found_property_raises",
        read=_readback(lambda r, ref: FoundRaises(ref)),
        expect=U,
        reason=FAILED,
    ),
    # -- content that is not an active record of this corpus: skipped (22) ------------------------
    Case("content_empty", read=_content(lambda r, ref: ""), expect=E),
    Case("content_not_json", read=_content(lambda r, ref: "reviewer summary tone"), expect=E),
    Case("content_truncated", read=_content(lambda r, ref: r.contents[0][:-10]), expect=E),
    Case("content_json_array", read=_content(lambda r, ref: "[1, 2, 3]"), expect=E),
    Case("content_json_null", read=_content(lambda r, ref: "null"), expect=E),
    Case(
        "content_deep_nesting",
        read=_content(lambda r, ref: "[" * 100_000 + "]" * 100_000),
        expect=E,
    ),
    Case(
        "content_huge", read=_content(lambda r, ref: json.dumps({"x": "y" * 2_000_000})), expect=E
    ),
    Case(
        "content_lone_surrogate",
        read=_content(lambda r, ref: r.contents[0].replace("Reviewer", "\udc80Reviewer")),
        expect=E,
    ),
    Case("content_nan", read=_content(lambda r, ref: '{"schema_version": NaN}'), expect=E),
    Case("content_bom", read=_content(lambda r, ref: "\ufeff" + r.contents[0]), expect=E),
    Case("content_other_corpus", read=_content(_record_json(corpus_id="another_corpus")), expect=E),
    Case(
        "content_other_class",
        read=_content(_record_json(class_id="procedural_experience")),
        expect=E,
    ),
    Case(
        "content_other_surface",
        read=_content(_record_json(surfaces=("reviewer_notification.before_send",))),
        expect=E,
    ),
    Case(
        "content_other_workspace",
        read=_content(_record_json(workspace_ref="workspace:other")),
        expect=E,
    ),
    Case("content_revoked", read=_content(_record_json(revoked=True)), expect=E),
    Case("content_superseded", read=_content(_record_json(superseded=True)), expect=E),
    Case(
        "content_expired", read=_content(_record_json(expires_at="2026-02-01T00:00:00Z")), expect=E
    ),
    Case(
        "content_other_schema",
        read=_content(lambda r, ref: json.dumps(wire.dump(corpus()))),
        expect=E,
    ),
    Case(
        "content_v0_raw_content",
        read=_content(_v0(privacy={"raw_content_captured": True})),
        expect=E,
    ),
    Case(
        "content_v0_guard_failed",
        read=_content(
            _v0(activation_lineage={"effective_decision": "accept", "guard_passed": False})
        ),
        expect=E,
    ),
    Case(
        "content_v0_credential",
        read=_content(
            _v0(
                source={
                    "source_kind": "k",
                    "source_ref": "password=hunter2hunter2hunter2",
                    "actor_ref": "a:b",
                }
            )
        ),
        expect=E,
    ),
    Case(
        "content_v0_local_path",
        read=_content(
            _v0(content_summary="Read /home/alice/.netrc for the reviewer summary tone.")
        ),
        expect=E,
    ),
    # -- one record under several refs: seen once (3) ---------------------------------------------
    Case("same_record_under_every_ref", read=_readback(_same_record_everywhere), expect=C),
    Case("same_record_reformatted", read=_readback(_reformatted), expect=C),
    Case(
        "same_record_stored_twice",
        search=_refs(lambda r: (r.refs[0], r.refs[0] + "#copy")),
        read=_readback(lambda r, ref: ReadResult(ref=ref, found=True, content=r.contents[0])),
        expect=C,
    ),
    # -- time: one deadline for the whole recall (6) ----------------------------------------------
    Case(
        "search_after_the_deadline", search=_slow(TIMEOUT + 1, _real_search), expect=U, reason=LATE
    ),
    Case("read_after_the_deadline", read=_slow(TIMEOUT + 1, _real_read), expect=U, reason=LATE),
    Case(
        "every_call_at_90pct_of_the_binding",
        search=_slow(TIMEOUT * 0.9, _real_search),
        read=_slow(TIMEOUT * 0.9, _real_read),
        expect=U,
        reason=LATE,
    ),
    Case(
        "every_call_just_inside_its_timeout",
        search=_just_inside(_real_search),
        read=_just_inside(_real_read),
    ),
    Case("exactly_at_the_deadline", search=_slow(TIMEOUT, _real_search), expect=U, reason=LATE),
    Case(
        "slow_then_raises",
        search=_slow(TIMEOUT * 2, _raise(RuntimeError("late"))),
        expect=U,
        reason=FAILED,
    ),
]


def test_the_suite_has_at_least_80_distinct_misbehaviours() -> None:
    names = [case.name for case in CASES]
    assert len(names) == len(set(names))
    assert len(names) >= 80


# -- the checks ------------------------------------------------------------------------------------


def _apply_all(base: Any, items: Any) -> dict[str, Any]:
    return {
        "outcome": "applied",
        "output": "with memory",
        "memory_refs": [item.provider_ref for item in items],
        "reasoning_summary": "Applied every recalled item after checking the artifact.",
        "current_artifact_verified": True,
    }


def _check_session(session: RecallSession, rogue: Rogue, case: Case) -> None:
    packet = session.packet
    validate_packet(packet)
    assert packet.status in STATUSES
    if case.expect is not None:
        assert packet.status == case.expect, (packet.status, packet.reason_code)
    if case.reason is not None:
        assert packet.reason_code == case.reason
    assert packet.result_readback_verified is (packet.status == "completed")
    assert packet.result_count == len(packet.results) == len(session.items)
    if packet.status != "completed":
        assert session.items == ()
        assert packet.results == ()
        return
    keys = set()
    for item, result in zip(session.items, packet.results, strict=True):
        # Read back exactly: the provider answered this very ref, found, with this string.
        content = rogue.answered[item.memory_ref]
        text = content.replace("\r\n", "\n").removesuffix("\n")
        assert item.content_digest == hashlib.sha256(text.encode()).hexdigest()
        record = wire.load(json.loads(content))
        assert record == item.record
        assert item.record.corpus_id == CORPUS_ID
        assert result.candidate_ref == item.candidate_ref
        keys.add(json.dumps(wire.dump(item.record), sort_keys=True))
    assert len(keys) == len(session.items)  # no record reaches the model twice


def _check_applied(session: RecallSession, rogue: Rogue) -> None:
    result = apply("base", session, application_id="application:1", apply_memory=_apply_all)
    receipt = result.receipt
    validate_packet(result)
    assert receipt.result_readback_verified is session.packet.result_readback_verified
    if receipt.outcome == "applied":
        assert session.packet.status == "completed"
        real = {
            hashlib.sha256(ref.encode()).hexdigest()[:16]
            for ref in rogue.answered
            if any(item.memory_ref == ref for item in session.items)
        }
        assert receipt.memory_ref_digests
        assert set(receipt.memory_ref_digests) <= real
        assert receipt.result_readback_verified is True
    else:
        assert receipt.memory_ref_digests == ()
        assert result.output == "base"


def _arguments(rogue: Rogue) -> dict[str, Any]:
    asked = request(
        mode="bounded_agentic_search",
        queries=(
            RecallQuery(query="reviewer summary tone", query_summary="a"),
            RecallQuery(query="preference number", query_summary="b"),
        ),
    )
    return {
        "request": asked,
        "corpus": corpus(),
        "checkpoint": checkpoint(),
        "binding": binding(timeout_seconds=TIMEOUT),
        "provider": rogue,
        "now": NOW,
        "clock": rogue.clock,
    }


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_recall_arecall_and_apply_survive_every_misbehaviour(case: Case) -> None:
    rogue = Rogue(case)
    session = recall(**_arguments(rogue))
    _check_session(session, rogue, case)
    _check_applied(session, rogue)
    assert all(0 < timeout <= TIMEOUT for timeout in rogue.timeouts)

    later = Rogue(case)
    asynced = asyncio.run(arecall(**_arguments(later)))
    _check_session(asynced, later, case)
    _check_applied(asynced, later)
    assert asynced.packet.status == session.packet.status
    assert asynced.packet.reason_code == session.packet.reason_code


# -- the deadline, precisely -----------------------------------------------------------------------


def test_each_call_gets_only_the_time_that_remains() -> None:
    """ "the binding's timeout bounds the whole recall, not each call"."""
    rogue = Rogue(Case("steps", search=_slow(1.0, _real_search), read=_slow(1.0, _real_read)))
    session = recall(**_arguments(rogue))
    # 5 s in all: search (1 s), then reads of 1 s each, each given what is left.
    assert rogue.timeouts[:4] == [5.0, 4.0, 3.0, 2.0]
    assert session.status == "provider_unavailable"
    assert session.packet.reason_code == "recall_deadline_exceeded"
    assert rogue.clock.now - 1000.0 <= TIMEOUT + 1.0  # at most one late answer past the budget


def test_a_provider_just_inside_every_timeout_cannot_stretch_the_recall() -> None:
    rogue = Rogue(Case("inside", search=_just_inside(_real_search), read=_just_inside(_real_read)))
    session = recall(**_arguments(rogue))
    assert rogue.clock.now - 1000.0 < TIMEOUT
    assert session.status in {"completed", "provider_unavailable"}


def test_a_fast_provider_completes_under_the_fake_clock() -> None:
    rogue = Rogue(Case("fast"))
    session = recall(**_arguments(rogue))
    assert session.status == "completed"
    assert session.packet.result_count == 3


def test_the_memory_providers_slow_switch_cannot_stretch_one_recall() -> None:
    """Real time: four calls of 0.3 s each under a 1 s binding stop at about 1 s, not 1.2 s."""
    provider = InMemoryProvider()
    for i in range(3):
        store(provider, active_record(i))
    start = time.monotonic()
    with provider.set_faults(slow_seconds=0.3):
        session = recall(
            request(),
            corpus=corpus(),
            checkpoint=checkpoint(),
            binding=binding(timeout_seconds=1),
            provider=provider,
            now=NOW,
        )
    elapsed = time.monotonic() - start
    assert session.status == "provider_unavailable"
    assert session.packet.reason_code in {"provider_timeout", "recall_deadline_exceeded"}
    assert elapsed < 1.15


def test_the_clock_must_be_callable() -> None:
    rogue = Rogue(Case("clock"))
    arguments = {**_arguments(rogue), "clock": 5}
    with pytest.raises(RecordValidationError) as info:
        recall(**arguments)
    assert info.value.path == "$.clock"


# -- what still propagates, by design --------------------------------------------------------------


@pytest.mark.parametrize("error", [KeyboardInterrupt(), SystemExit(3)])
def test_keyboard_interrupt_and_system_exit_still_propagate(error: BaseException) -> None:
    """Documented: a user's Ctrl-C or an explicit exit is not a provider failure."""
    rogue = Rogue(Case("interrupt", search=_raise(error)))
    with pytest.raises(type(error)):
        recall(**_arguments(rogue))


def test_a_provider_without_operations_fails_open() -> None:
    arguments = {**_arguments(Rogue(Case("none"))), "provider": object()}
    session = recall(**arguments)
    assert session.status == "provider_unavailable"
    assert session.packet.reason_code == FAILED


def test_execute_recall_keeps_the_same_deadline() -> None:
    from reward_memory.guarded_recall import build_recall_request, execute_recall

    rogue = Rogue(Case("late", read=_slow(TIMEOUT + 1, _real_read)))
    arguments = _arguments(rogue)
    packet = build_recall_request(
        arguments["request"], corpus=arguments["corpus"], checkpoint=arguments["checkpoint"]
    )
    session = execute_recall(
        packet, binding=arguments["binding"], provider=rogue, now=NOW, clock=rogue.clock
    )
    assert session.packet.reason_code == LATE
    with pytest.raises(RecordValidationError):
        execute_recall(packet, binding=arguments["binding"], provider=rogue, clock="soon")  # type: ignore[arg-type]
