"""Stage-3 application: the model decides, the receipt stays honest, failures fail open."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

from _recall_support import (
    NOW,
    active_record,
    binding,
    checkpoint,
    corpus,
    request,
    store,
    validate_packet,
)
from reward_memory import wire
from reward_memory.application import (
    CALLBACK_FAILED,
    CALLBACK_MISSING,
    SUMMARY_REPEATS_WITHHELD,
    apply,
)
from reward_memory.digests import sha256_hex
from reward_memory.errors import RecordValidationError
from reward_memory.guarded_recall import RecallItem, RecallSession, recall
from reward_memory.records.application import ApplicationReceipt, ApplicationResult, ModelDecision
from reward_memory.records.recall import RecallQuery, RecallRequest
from reward_memory.testing import InMemoryProvider

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

    from reward_memory.providers.spi import Provider

BASE = {"summary": "base reviewer summary"}


@pytest.fixture(params=["memory", "sqlite"])
def provider(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Provider]:
    from test_recall import open_provider

    opened = open_provider(request.param, tmp_path)
    try:
        yield opened
    finally:
        opened.close()


def session_with(provider: Provider, count: int = 2, **changes: Any) -> RecallSession:
    for i in range(count):
        store(provider, active_record(i))
    return recall(
        changes.pop("asked", request()),
        corpus=corpus(),
        checkpoint=checkpoint(),
        binding=binding(),
        provider=provider,
        now=NOW,
    )


def decision(items: tuple[RecallItem, ...], **changes: Any) -> dict[str, Any]:
    values: dict[str, Any] = {
        "outcome": "applied",
        "output": {"summary": "base reviewer summary, in the preferred tone"},
        "memory_refs": [items[0].memory_ref],
        "reasoning_summary": "The recalled tone preference fits this reviewer summary.",
        "current_artifact_verified": True,
    }
    values.update(changes)
    return values


def _check_receipt(result: ApplicationResult) -> dict[str, Any]:
    data = validate_packet(result)
    validate_packet(result.receipt)
    assert result.status == result.receipt.outcome
    receipt = data["receipt"]
    assert receipt["model_reasoning_preserved"] is True
    assert receipt["grants_new_action_authority"] is False
    assert receipt["raw_content_captured"] is False
    text = json.dumps(receipt)
    assert "preference number" not in text, "no raw provider content in a receipt"
    assert "reviewer summary tone" not in text, "no raw query text in a receipt"
    return data


# -- valid decisions -------------------------------------------------------------------------------


def test_applied(provider: Provider) -> None:
    session = session_with(provider)
    items = session.items
    result = apply(
        BASE,
        session,
        application_id="application:1",
        artifact_ref="artifact:pr-12",
        apply_memory=lambda base, got: decision(got),
    )
    assert result.status == "applied"
    assert result.output == {"summary": "base reviewer summary, in the preferred tone"}
    assert result.fail_open_preserved_base is False
    receipt = result.receipt
    assert receipt.memory_ref_digests == (sha256_hex(items[0].memory_ref)[:16],)
    assert receipt.reasoning_summary.startswith("The recalled tone preference")
    assert receipt.current_artifact_verified is True
    assert receipt.result_readback_verified is True
    assert receipt.provider_call_count == session.packet.provider_call_count
    assert receipt.application_id == "application:1"
    assert receipt.artifact_ref == "artifact:pr-12"
    assert receipt.corpus_id == session.packet.corpus_id
    assert receipt.surface_id == session.packet.surface_id
    assert receipt.query_evidence == session.packet.query_evidence
    _check_receipt(result)


def test_applied_with_opaque_refs_and_duplicates(provider: Provider) -> None:
    session = session_with(provider, 3)
    items = session.items
    refs = [items[2].provider_ref, items[0].memory_ref, items[0].provider_ref, items[2].memory_ref]
    result = apply(
        BASE,
        session,
        application_id="application:2",
        apply_memory=lambda base, got: decision(got, memory_refs=refs),
    )
    assert result.status == "applied"
    assert result.receipt.artifact_ref is None
    assert result.receipt.memory_ref_digests == tuple(
        sorted({sha256_hex(items[0].memory_ref)[:16], sha256_hex(items[2].memory_ref)[:16]})
    )
    _check_receipt(result)


@pytest.mark.parametrize("outcome", ["ignored", "refuted"])
def test_ignored_and_refuted_keep_the_base(provider: Provider, outcome: str) -> None:
    session = session_with(provider)
    result = apply(
        BASE,
        session,
        application_id="application:3",
        apply_memory=lambda base, got: decision(
            got, outcome=outcome, output=base, current_artifact_verified=outcome == "refuted"
        ),
    )
    assert result.status == outcome
    assert result.output is BASE
    assert result.fail_open_preserved_base is True
    assert len(result.receipt.memory_ref_digests) == 1
    _check_receipt(result)


def test_ignored_may_name_no_refs_and_an_equal_copy_of_the_base(provider: Provider) -> None:
    session = session_with(provider)
    result = apply(
        BASE,
        session,
        application_id="application:4",
        apply_memory=lambda base, got: decision(
            got,
            outcome="ignored",
            output=dict(base),
            memory_refs=[],
            current_artifact_verified=False,
        ),
    )
    assert result.status == "ignored"
    assert result.fail_open_preserved_base is True
    assert result.receipt.memory_ref_digests == ()


def test_typed_model_decision(provider: Provider) -> None:
    session = session_with(provider)
    result = apply(
        "base",
        session,
        application_id="application:5",
        artifact_ref="artifact:1",
        apply_memory=lambda base, got: ModelDecision(
            outcome="applied",
            output=base + " (tone applied)",
            memory_refs=(got[1].memory_ref,),
            reasoning_summary="  Tone   preference applies.  ",
            current_artifact_verified=True,
        ),
    )
    assert result.status == "applied"
    assert result.output == "base (tone applied)"
    assert result.receipt.reasoning_summary == "Tone preference applies."


def test_the_callback_sees_base_and_items(provider: Provider) -> None:
    session = session_with(provider)
    seen: list[Any] = []

    def model(base: Any, items: tuple[RecallItem, ...]) -> dict[str, Any]:
        seen.append((base, items))
        return decision(items)

    apply(BASE, session, application_id="application:6", apply_memory=model)
    ((base, items),) = seen
    # "The callback cannot change what the caller gets back": it sees a copy.
    assert base == BASE
    assert base is not BASE
    assert type(items) is tuple
    assert items == session.items


# -- fail open -------------------------------------------------------------------------------------


def _bad(items: tuple[RecallItem, ...], case: str) -> Any:
    good = decision(items)
    cases: dict[str, Any] = {
        "not_a_mapping": ["applied"],
        "none": None,
        "missing_output": {k: v for k, v in good.items() if k != "output"},
        "missing_refs": {k: v for k, v in good.items() if k != "memory_refs"},
        "extra_key": {**good, "raw_comment": "x"},
        "bad_outcome": {**good, "outcome": "review"},
        "refs_not_a_list": {**good, "memory_refs": items[0].memory_ref},
        "refs_not_strings": {**good, "memory_refs": [1]},
        "ref_from_elsewhere": {**good, "memory_refs": ["memory:0123456789abcdef0123"]},
        "verified_not_bool": {**good, "current_artifact_verified": 1},
        "applied_without_refs": {**good, "memory_refs": []},
        "applied_unverified": {**good, "current_artifact_verified": False},
        "ignored_changes_output": {**good, "outcome": "ignored"},
        "refuted_changes_output": {**good, "outcome": "refuted"},
        "unsafe_summary": {**good, "reasoning_summary": "see /home/alice/notes.txt"},
        "secret_summary": {**good, "reasoning_summary": "used api_key=abcd1234efgh5678"},
        "long_summary": {**good, "reasoning_summary": "x" * 501},
        "empty_summary": {**good, "reasoning_summary": "   "},
        "summary_not_text": {**good, "reasoning_summary": 7},
        "typed_bad_outcome": ModelDecision(
            outcome="maybe", output=BASE, reasoning_summary="x", current_artifact_verified=True
        ),
    }
    return cases[case]


BAD_CASES = [
    "not_a_mapping",
    "none",
    "missing_output",
    "missing_refs",
    "extra_key",
    "bad_outcome",
    "refs_not_a_list",
    "refs_not_strings",
    "ref_from_elsewhere",
    "verified_not_bool",
    "applied_without_refs",
    "applied_unverified",
    "ignored_changes_output",
    "refuted_changes_output",
    "unsafe_summary",
    "secret_summary",
    "long_summary",
    "empty_summary",
    "summary_not_text",
    "typed_bad_outcome",
]


@pytest.mark.parametrize("case", BAD_CASES)
def test_invalid_decisions_fail_open(provider: Provider, case: str) -> None:
    session = session_with(provider)
    result = apply(
        BASE,
        session,
        application_id="application:7",
        apply_memory=lambda base, got: _bad(got, case),
    )
    assert result.status == "failed"
    assert result.output is BASE
    assert result.fail_open_preserved_base is True
    assert result.receipt.reasoning_summary == CALLBACK_FAILED
    assert result.receipt.memory_ref_digests == ()
    assert result.receipt.current_artifact_verified is False
    _check_receipt(result)


@pytest.mark.parametrize(
    "error", [RuntimeError("model down"), KeyError("x"), RecordValidationError("x")]
)
def test_a_raising_callback_fails_open(provider: Provider, error: Exception) -> None:
    session = session_with(provider)

    def model(base: Any, items: Any) -> Any:
        raise error

    result = apply(BASE, session, application_id="application:8", apply_memory=model)
    assert (result.status, result.output) == ("failed", BASE)


def test_refs_from_another_recall_are_not_attribution(provider: Provider) -> None:
    session = session_with(provider)
    other_provider = InMemoryProvider()
    store(other_provider, active_record(9))
    other = recall(
        request(),
        corpus=corpus(),
        checkpoint=checkpoint(),
        binding=binding(),
        provider=other_provider,
        now=NOW,
    )
    foreign = other.items[0]
    assert foreign.memory_ref not in {item.memory_ref for item in session.items}
    result = apply(
        BASE,
        session,
        application_id="application:9",
        apply_memory=lambda base, got: decision(got, memory_refs=[foreign.memory_ref]),
    )
    assert result.status == "failed"


def test_odd_equality_counts_as_changed_output(provider: Provider) -> None:
    class Weird:
        def __eq__(self, other: object) -> bool:
            raise RuntimeError("no comparisons")

        __hash__ = object.__hash__

    session = session_with(provider)
    base = Weird()
    result = apply(
        base,
        session,
        application_id="application:10",
        apply_memory=lambda b, got: decision(got, outcome="ignored", output=Weird()),
    )
    assert result.status == "failed"
    assert result.output is base


# -- not available ---------------------------------------------------------------------------------


def test_no_callback_is_available_not_applied(provider: Provider) -> None:
    session = session_with(provider)
    result = apply(BASE, session, application_id="application:11")
    assert result.status == "available_not_applied"
    assert result.output is BASE
    assert result.receipt.reasoning_summary == CALLBACK_MISSING
    _check_receipt(result)


@pytest.mark.parametrize(
    ("status", "make"),
    [
        ("empty", lambda p: session_with(p, 0)),
        ("guard_blocked", lambda p: session_with(p, 1, asked=request(conflict_state="open"))),
    ],
)
def test_recall_without_items_is_not_available(provider: Provider, status: str, make: Any) -> None:
    session = make(provider)
    assert session.status == status
    called: list[Any] = []

    def model(base: Any, got: tuple[RecallItem, ...]) -> dict[str, Any]:
        called.append(got)
        return decision(got)

    result = apply(BASE, session, application_id="application:12", apply_memory=model)
    assert called == [], "the model is not asked when there is nothing to apply"
    assert result.status == "not_available"
    assert result.output is BASE
    assert result.receipt.reasoning_summary == f"recall_{status}"
    assert result.receipt.result_readback_verified is False
    _check_receipt(result)


def test_provider_unavailable_is_not_available() -> None:
    provider = InMemoryProvider(unavailable=True)
    session = recall(
        request(),
        corpus=corpus(),
        checkpoint=checkpoint(),
        binding=binding(),
        provider=provider,
        now=NOW,
    )

    def model(base: Any, got: tuple[RecallItem, ...]) -> dict[str, Any]:
        raise AssertionError("the model is not asked when the provider is down")

    result = apply(BASE, session, application_id="application:13", apply_memory=model)
    assert result.status == "not_available"
    assert result.receipt.reasoning_summary == "recall_provider_unavailable"
    assert result.receipt.provider_call_count == 1
    _check_receipt(result)


# -- programmer errors -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "path"),
    [
        ({"application_id": "not a token"}, "$.application_id"),
        ({"application_id": ""}, "$.application_id"),
        ({"application_id": 12}, "$.application_id"),
        ({"application_id": "/home/alice/app"}, "$.application_id"),
        ({"application_id": "ok:1", "artifact_ref": "bad ref"}, "$.artifact_ref"),
        ({"application_id": "ok:1", "artifact_ref": "token=abcdef1234567890abc"}, "$.artifact_ref"),
    ],
)
def test_invalid_ids_raise(kwargs: dict[str, Any], path: str) -> None:
    session = session_with(InMemoryProvider())
    with pytest.raises(RecordValidationError) as info:
        apply(BASE, session, **kwargs)
    assert info.value.path == path


def test_not_a_session_raises() -> None:
    with pytest.raises(RecordValidationError):
        apply(BASE, {"status": "completed"}, application_id="x")  # type: ignore[arg-type]


# -- the receipt's own invariants ------------------------------------------------------------------


def _receipt(**changes: Any) -> ApplicationReceipt:
    session = session_with(InMemoryProvider())
    result = apply(
        BASE,
        session,
        application_id="application:14",
        apply_memory=lambda base, got: decision(got),
    )
    data = wire.dump(result.receipt)
    data.update(changes)
    return wire.load(data, ApplicationReceipt)


@pytest.mark.parametrize(
    "changes",
    [
        {"memory_ref_digests": []},
        {"current_artifact_verified": False},
        {"result_readback_verified": False},
        {"outcome": "failed"},
        {"memory_ref_digests": ["bbbbbbbbbbbbbbbb", "aaaaaaaaaaaaaaaa"]},
        {"grants_new_action_authority": True},
        {"raw_content_captured": True},
    ],
)
def test_receipt_invariants_hold_on_load(changes: dict[str, Any]) -> None:
    with pytest.raises(RecordValidationError):
        _receipt(**changes)


def test_receipt_loads_back() -> None:
    receipt = _receipt()
    assert receipt.outcome == "applied"


def test_application_result_keeps_base_for_non_model_outcomes() -> None:
    receipt = _receipt()
    failed = ApplicationReceipt(
        **{
            **{
                f: getattr(receipt, f)
                for f in (
                    "application_id",
                    "artifact_ref",
                    "corpus_id",
                    "surface_id",
                    "mode",
                    "query_kind",
                    "query_evidence",
                    "result_readback_verified",
                    "provider_call_count",
                )
            },
            "outcome": "failed",
            "memory_ref_digests": (),
            "reasoning_summary": CALLBACK_FAILED,
            "current_artifact_verified": False,
        }
    )
    with pytest.raises(RecordValidationError):
        ApplicationResult(
            status="failed", output="changed", receipt=failed, fail_open_preserved_base=False
        )
    with pytest.raises(RecordValidationError):
        ApplicationResult(
            status="applied", output="x", receipt=failed, fail_open_preserved_base=True
        )


def test_end_to_end_from_a_reviewed_candidate(provider: Provider) -> None:
    """propose -> review(accept) -> activate -> owner writes -> recall -> apply."""
    from _recall_support import PROJECT, SURFACE, WORKSPACE
    from reward_memory.activation import activate
    from reward_memory.candidates import propose, review
    from reward_memory.records.candidate import (
        CandidateGuardContext,
        CandidateReasoning,
        CandidateSource,
        Proposal,
        ReviewDecision,
    )
    from reward_memory.records.envelope import RecordScope
    from reward_memory.records.recall import RecallQuery

    proposal = Proposal(
        raw_content_captured=False,
        target_class="soft_preference",
        content_summary="Keep reviewer summaries short and concrete.",
        source=CandidateSource(
            source_kind="maintainer_feedback",
            source_ref="pr:12#review",
            actor_ref="actor:maintainer",
            actor_role="maintainer",
        ),
        scope=RecordScope(workspace_ref=WORKSPACE, project_ref=PROJECT, surface_ids=(SURFACE,)),
        reasoning=CandidateReasoning(
            summary="The maintainer asked for it explicitly.",
            confidence="high",
            confidence_basis="explicit review comment",
        ),
        guard_context=CandidateGuardContext(
            source_freshness="current", conflict_state="clear", current_artifact_verified=True
        ),
    )
    candidate = propose(proposal, now=NOW)
    reviewed = review(
        candidate,
        ReviewDecision(
            decision="accept",
            reviewer_ref="reviewer:bob",
            review_ref="review:1",
            reasoning_summary="Scoped and reversible.",
        ),
    )
    record = activate(reviewed, corpus(), checkpoint=None, now=NOW)
    ref = store(provider, record)
    session = recall(
        request(queries=(RecallQuery(query="reviewer summaries short", query_summary="short"),)),
        corpus=corpus(),
        checkpoint=checkpoint(),
        binding=binding(),
        provider=provider,
        now=NOW,
    )
    (item,) = session.items
    assert item.memory_ref == ref
    assert item.candidate_ref == candidate.candidate.candidate_ref
    result = apply(
        BASE,
        session,
        application_id="application:e2e",
        artifact_ref="artifact:pr-12",
        apply_memory=lambda base, got: decision(got),
    )
    assert result.status == "applied"
    assert result.receipt.memory_ref_digests == (sha256_hex(ref)[:16],)
    _check_receipt(result)


def _private_session(
    provider: Provider, summary: str | None = None, asked: RecallRequest | None = None
) -> RecallSession:
    """A recall of a private corpus: the public packet withholds every summary."""
    from reward_memory.records.corpus import CorpusPrivacy

    private = corpus(privacy=CorpusPrivacy(visibility="private", raw_content_in_registry=False))
    store(provider, active_record(0, summary=summary))
    return recall(
        asked or request(),
        corpus=private,
        checkpoint=checkpoint(),
        binding=binding(),
        provider=provider,
        now=NOW,
    )


def test_a_reasoning_that_repeats_a_raw_ref_fails_open(provider: Provider) -> None:
    """The receipt is public: the model may not write the raw provider ref into it."""
    session = session_with(provider)
    raw = session.items[0].memory_ref
    result = apply(
        BASE,
        session,
        application_id="application:9",
        apply_memory=lambda base, items: decision(items, reasoning_summary=f"Used {raw} here."),
    )
    assert (result.status, result.output) == ("failed", BASE)
    assert result.receipt.reasoning_summary == SUMMARY_REPEATS_WITHHELD
    assert raw not in json.dumps(wire.dump(result))


@pytest.mark.parametrize(
    "quote",
    [
        lambda raw: raw.split(":", 1)[1],  # the ref without its prefix
        lambda raw: raw[:-1],  # one character left out
        lambda raw: raw.upper(),  # another case
    ],
)
def test_a_reasoning_that_quotes_a_piece_of_a_raw_ref_fails_open(
    provider: Provider, quote: Any
) -> None:
    """Only the whole ref was refused: its id after the prefix, or the ref minus a character,
    went into the public receipt."""
    session = session_with(provider)
    piece = quote(session.items[0].memory_ref)
    result = apply(
        BASE,
        session,
        application_id="application:9",
        apply_memory=lambda base, items: decision(items, reasoning_summary=f"Used {piece} here."),
    )
    assert (result.status, result.output) == ("failed", BASE)


def test_a_path_like_raw_ref_is_refused_by_its_pieces() -> None:
    from reward_memory.application import _ref_pieces

    ref = "viking://user/alice/peers/bob/resources/reward-memory/review-policy/record-1.json"
    pieces = _ref_pieces(ref)
    assert "user/alice/peers" in pieces
    assert ref.split("://", 1)[1] in pieces


def test_a_reasoning_that_repeats_withheld_content_fails_open(provider: Provider) -> None:
    session = _private_session(provider)
    (item,) = session.items
    assert session.packet.results[0].content_exposed is False

    def model(base: Any, items: Any) -> Any:
        return decision(items, reasoning_summary="Applied: " + item.content_summary)

    result = apply(BASE, session, application_id="application:10", apply_memory=model)
    assert result.status == "failed"
    assert item.content_summary not in json.dumps(wire.dump(result))


@pytest.mark.parametrize(
    "echo",
    [
        lambda text: text.rstrip("."),
        lambda text: text.lower(),
        lambda text: text.upper().replace(" ", "  "),
        lambda text: "Applied, because " + " ".join(text.split()[:5]) + " and so on",
        lambda text: text.replace(" ", ", "),
    ],
    ids=["no-full-stop", "lower-case", "upper-spaced", "partial-copy", "punctuated"],
)
def test_a_reasoning_that_repeats_withheld_content_loosely_fails_open(
    provider: Provider, echo: Callable[[str], str]
) -> None:
    """A repeat is read as words: case, punctuation and a copied part still repeat it."""
    session = _private_session(provider)
    (item,) = session.items

    def model(base: Any, items: Any) -> Any:
        return decision(items, reasoning_summary=echo(item.content_summary))

    result = apply(BASE, session, application_id="application:10", apply_memory=model)
    assert (result.status, result.output) == ("failed", BASE)
    assert result.receipt.reasoning_summary == SUMMARY_REPEATS_WITHHELD


def test_a_reasoning_gluing_a_withheld_summary_into_other_text_fails_open(
    provider: Provider,
) -> None:
    """A script without spaces (CJK) is one "word": the verbatim copy is still a repeat."""
    session = _private_session(provider)
    (item,) = session.items

    def model(base: Any, items: Any) -> Any:
        return decision(items, reasoning_summary="我认为" + item.content_summary + "很重要")

    result = apply(BASE, session, application_id="application:10", apply_memory=model)
    assert (result.status, result.output) == ("failed", BASE)


def test_a_reasoning_sharing_a_few_words_with_withheld_content_is_kept(
    provider: Provider,
) -> None:
    session = _private_session(provider)
    (item,) = session.items
    words = item.content_summary.split()
    assert len(words) >= 6
    shared = " ".join(words[:4])  # four consecutive words: below the repeat run

    def model(base: Any, items: Any) -> Any:
        return decision(items, reasoning_summary=f"The rule fits: {shared} here.")

    result = apply(BASE, session, application_id="application:10", apply_memory=model)
    assert result.status == "applied"


def test_a_reasoning_that_repeats_exposed_content_is_kept(provider: Provider) -> None:
    session = session_with(provider, count=1)
    (item,) = session.items
    assert session.packet.results[0].content_exposed is True

    def model(base: Any, items: Any) -> Any:
        return decision(items, reasoning_summary="Applied: " + item.content_summary)

    result = apply(BASE, session, application_id="application:11", apply_memory=model)
    assert result.status == "applied"


def test_what_counts_as_an_item_of_the_recall_is_read_only(provider: Provider) -> None:
    session = session_with(provider)
    with pytest.raises(TypeError):
        session.refs["provider-ffffffffffffffffffff"] = "memory:never-returned"  # type: ignore[index]
    assert "provider-ffffffffffffffffffff" not in session.refs


def _fullwidth(text: str) -> str:
    return "".join(chr(ord(char) + 0xFEE0) if char.isalpha() else char for char in text)


_CJK = "审查摘要必须少于四十个字并且总是引用对应的工单编号以便追踪"
# Khmer, its words separated by zero-width spaces (as Khmer is written).
_KHMER = "\u200b".join(["ខ្ញុំ", "ចង់", "ឲ្យ", "អ្នក", "ពិនិត្យ", "សង្ខេប", "ខ្លី", "ជានិច្ច"])


@pytest.mark.parametrize(
    ("withheld", "reasoning"),
    [
        (_CJK, _CJK[:-1]),  # one character left out
        (_CJK, _CJK[:12]),  # a prefix
        (_CJK, _CJK[:10] + "。" + _CJK[10:20]),  # punctuation put in
        ("Never rebase shared branches.", "never rebase shared branches"),  # short, whole
        (
            "Keep fixes scoped to the module",
            _fullwidth("keep fixes scoped to the"),
        ),  # fullwidth
        ("禁止变基", "规则:禁止变基。"),  # a short CJK summary, whole
        (
            "Keep fixes scoped to the module",
            "k\u200beep fi\u00adxes sco\u200dped to the",
        ),  # invisible characters put in
        (_CJK, "\u200b".join(_CJK[:12])),  # a zero-width space between CJK letters
        (_KHMER, "note " + " ".join(_KHMER.split("\u200b")[1:7])),  # ZWSP: its word break
        (
            "Reviewer summary tone preference: keep replies short and cite the ticket",
            "reviewer\u200bsummary\u200btone\u200bpreference\u200bkeep\u200breplies",
        ),  # zero-width spaces for spaces
        ("Always cite the café ticket number", "always cite the cafe\u0301 ticket"),  # NFD
    ],
)
def test_a_repeat_of_withheld_text_in_any_script_fails_open(
    provider: Provider, withheld: str, reasoning: str
) -> None:
    session = _private_session(provider, summary=withheld)

    def model(base: Any, items: Any) -> Any:
        return decision(items, reasoning_summary=reasoning)

    result = apply(BASE, session, application_id="application:12", apply_memory=model)
    assert (result.status, result.receipt.reasoning_summary) == (
        "failed",
        "model_reasoning_repeats_withheld_content",
    )


@pytest.mark.parametrize(
    ("withheld", "reasoning"),
    [
        ("Use uv", "The service runs under uvicorn here."),  # text inside another word
        ("no rebase", "There was no rebase in this branch."),  # two common words
        ("Prefer the 日本語 docs for the release notes", "日本語 is the docs language."),
        ("审查摘要 and 工单编号", "审查摘要 was checked; the 工单编号 too."),  # two short runs
    ],
)
def test_a_reasoning_that_only_shares_common_words_is_kept(
    provider: Provider, withheld: str, reasoning: str
) -> None:
    session = _private_session(provider, summary=withheld)

    def model(base: Any, items: Any) -> Any:
        return decision(items, reasoning_summary=reasoning)

    assert apply(BASE, session, application_id="application:18", apply_memory=model).status == (
        "applied"
    )


def test_a_query_whose_summary_is_its_text_may_be_repeated(provider: Provider) -> None:
    """The receipt publishes the query summary: the same words are public already."""
    text = "reviewer summary tone for the release notes"
    session = session_with(
        provider, asked=request(queries=(RecallQuery(query=text, query_summary=text),))
    )

    def model(base: Any, items: Any) -> Any:
        return decision(items, reasoning_summary=f"Asked: {text}")

    assert apply(BASE, session, application_id="application:19", apply_memory=model).status == (
        "applied"
    )


def test_a_reasoning_with_a_few_letters_of_a_withheld_cjk_summary_is_kept(
    provider: Provider,
) -> None:
    session = _private_session(provider, summary=_CJK)

    def model(base: Any, items: Any) -> Any:
        return decision(items, reasoning_summary=f"规则适用:{_CJK[:4]}。")

    assert apply(BASE, session, application_id="application:13", apply_memory=model).status == (
        "applied"
    )


def test_the_exact_query_is_not_repeated_into_the_receipt(provider: Provider) -> None:
    """The receipt says ``exact_query_exposed: false``: the model may not write it there."""
    asked = request(
        queries=(
            RecallQuery(
                query="reviewer summary tone for the internal build flag of alice",
                query_summary="summary tone",
            ),
        )
    )
    session = session_with(provider, asked=asked)

    def model(base: Any, items: Any) -> Any:
        return decision(
            items,
            reasoning_summary="Asked: reviewer summary tone for the internal build flag of alice",
        )

    result = apply(BASE, session, application_id="application:14", apply_memory=model)
    assert result.status == "failed"
    assert result.receipt.reasoning_summary == "model_reasoning_repeats_withheld_content"
    assert result.receipt.query_evidence[0].exact_query_exposed is False


class _Crash(BaseException):
    pass


class _Uncopyable:
    def __deepcopy__(self, memo: Any) -> Any:
        raise _Crash


def test_a_base_exception_from_the_callback_or_the_copy_fails_open(provider: Provider) -> None:
    session = session_with(provider)

    def crash(base: Any, items: Any) -> Any:
        raise _Crash

    result = apply(BASE, session, application_id="application:15", apply_memory=crash)
    assert result.status == "failed"
    odd = _Uncopyable()
    result = apply(odd, session, application_id="application:16", apply_memory=crash)
    assert (result.status, result.output) == ("failed", odd)

    def interrupted(base: Any, items: Any) -> Any:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        apply(BASE, session, application_id="application:17", apply_memory=interrupted)
