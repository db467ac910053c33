"""Stage-3 application: the caller's model decides; deterministic code keeps the receipt honest.

:func:`apply` hands the recalled items to the caller's model callback
(``apply_memory(base_output, items)``), which returns a decision: ``applied``,
``ignored`` or ``refuted``, the output, the memory refs it relied on, a compact
reasoning summary, and whether it verified the current artifact (reference §7.5):

===============================================  ==========================  ==========
situation                                        status (= receipt outcome)  output
===============================================  ==========================  ==========
recall not ``completed`` (or no items)           ``not_available``           base
no callback                                      ``available_not_applied``   base
base output cannot be copied (model not called)  ``failed``                  base
callback raises, or returns an invalid decision  ``failed``                  base
valid ``ignored`` / ``refuted``                  the decision's outcome      base
valid ``applied``                                ``applied``                 its output
===============================================  ==========================  ==========

The callback cannot change what the caller gets back. It gets a deep copy of
the base (immutable scalars as they are, plain JSON-like data by a fast path,
anything else by :func:`copy.deepcopy`) and the items as a tuple of frozen
records; every status but ``applied`` hands back the caller's own base object,
whatever the callback did to its copy. A base that cannot be copied is never
shown to the callback (the original could be changed): ``failed``, with the
summary ``application_base_output_not_copyable``.

"Unchanged" is judged by value against the original base, not by identity:
dict, list and tuple element by element with exact types (``1`` is not
``True`` or ``1.0``), anything else by its own ``==``; an object without value
equality equals only the copy the callback was given. A comparison that raises
makes the decision invalid. ``fail_open_preserved_base`` is that judgement.

A decision is invalid when: it is neither a mapping nor a :class:`ModelDecision`,
or reading it raises (each field is read once); a key is missing or unknown;
the outcome is not exactly the string applied, ignored or refuted;
``memory_refs`` is not a list (or tuple) of strings naming items of *this*
recall (raw ``memory_ref`` or opaque ``provider_ref``, resolved as the session
knew them before the call); ``current_artifact_verified`` is not a real
boolean; ``applied`` names no ref or lacks current-artifact verification;
``ignored``/``refuted`` changes the output; the output cannot be compared with
the base; or the reasoning summary is not a string, is empty, is over 500
characters compacted, or is not public-safe.

The receipt never holds raw provider content: memory refs are hashed
(``sha256(raw ref)[:16]``, sorted, de-duplicated), and only for a valid
decision. Nothing here raises for a model or provider problem (a callback's
``KeyboardInterrupt`` or ``SystemExit`` is no model problem: it propagates);
an invalid ``application_id`` or ``artifact_ref`` (not a token) is a programmer
error and raises :class:`~reward_memory.errors.RecordValidationError`.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import inspect
import re
import unicodedata
from collections.abc import Callable, Mapping
from typing import Any, Final, TypeAlias

from reward_memory.errors import RecordValidationError
from reward_memory.guarded_recall import RecallItem, RecallSession
from reward_memory.records._memo import check_token_memo, compact_memo
from reward_memory.records.application import (
    MODEL_OUTCOMES,
    ApplicationReceipt,
    ApplicationResult,
    ModelDecision,
    Outcome,
    trusted_receipt,
    trusted_result,
)
from reward_memory.records.recall import RecallPacket
from reward_memory.text import shown

__all__ = [
    "BASE_NOT_COPYABLE",
    "CALLBACK_FAILED",
    "CALLBACK_MISSING",
    "ApplyMemory",
    "ModelDecision",
    "apply",
]

ApplyMemory: TypeAlias = Callable[
    [Any, tuple[RecallItem, ...]], "Mapping[str, Any] | ModelDecision"
]

CALLBACK_MISSING: Final = "model_application_callback_not_supplied"
CALLBACK_FAILED: Final = "application_boundary_failed"
BASE_NOT_COPYABLE: Final = "application_base_output_not_copyable"
SUMMARY_REPEATS_WITHHELD: Final = "model_reasoning_repeats_withheld_content"
# A query of fewer words than this, repeated, is a topic, not the exact text withheld.
_QUERY_WORDS: Final = 4
# A withheld summary shorter than this is matched as words only (a short text inside
# another word -- "use uv" in "uvicorn" -- is no repeat), and one of fewer than
# _REPEAT_FLOOR words not at all (two common words say nothing private).
_REPEAT_MIN: Final = 12
# A raw provider ref piece that names it: one path segment of this many characters (a
# hex id), half as many for what follows its scheme (see _ref_pieces).
_REF_PIECE: Final = 16
_PROSE_PUNCTUATION: Final = ".,;:!?()[]{}'\"`"
_REPEAT_FLOOR: Final = 3
# Scripts written without spaces (CJK, kana, Hangul, Thai): their words are no unit, so
# this many consecutive letters of one run of them in a withheld summary, found inside
# one run of the reasoning, are a repeat; a withheld summary that is one shorter run of
# them (at least _DENSE_MIN letters) is a repeat whole.
_DENSE_RUN: Final = 8
_DENSE_MIN: Final = 3
_DENSE: Final = re.compile(
    "[\u0e00-\u0e7f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af"
    "\uf900-\ufaff\U00020000-\U0003134f]+"
)
# This many consecutive words of a withheld summary in the reasoning are a repeat.
_REPEAT_WORDS: Final = 5
_WORD: Final = re.compile(r"[^\W_]+")
_DECISION_KEYS: Final = frozenset(
    {"outcome", "output", "memory_refs", "reasoning_summary", "current_artifact_verified"}
)
_SUMMARY_LIMIT: Final = 500
# A summary longer than this cannot compact to 500 characters in any sensible
# text; refusing it up front keeps a huge string out of the text memo.
_SUMMARY_INPUT_LIMIT: Final = 8 * _SUMMARY_LIMIT
# Values deepcopy hands back as they are (immutable): no copy, no memo entry.
_SHARED: Final = frozenset({str, int, float, bool, type(None), bytes, complex})
_CONTAINERS: Final = frozenset({dict, list, tuple})
_PLAIN_DEPTH: Final = 64
_IDENTITY_EQ: Final[Any] = object.__eq__


class _Invalid(Exception):
    """A model decision that does not hold (turned into a ``failed`` receipt)."""


class _NotPlain(Exception):
    """A value the plain-data fast path does not copy (deepcopy does)."""


def _plain_copy(value: Any, depth: int) -> Any:
    """A copy of JSON-like data (exact dict / list / tuple of scalars), without deepcopy's
    per-object memo; anything else, or nesting deeper than 64, is left to deepcopy."""
    kind = type(value)
    if kind in _SHARED:
        return value
    if depth > _PLAIN_DEPTH:
        raise _NotPlain
    if kind is dict:
        return {
            key if type(key) is str else _key(key): _plain_copy(item, depth + 1)
            for key, item in value.items()
        }
    if kind is list:
        return [_plain_copy(item, depth + 1) for item in value]
    if kind is tuple:
        return tuple(_plain_copy(item, depth + 1) for item in value)
    raise _NotPlain


def _key(key: Any) -> Any:
    if type(key) in _SHARED:
        return key
    raise _NotPlain


def _private_copy(base_output: Any) -> tuple[Any, dict[int, Any]]:
    """The callback's copy of the base, and deepcopy's memo (original id -> copy).

    Plain data takes a fast path (it holds nothing that compares by identity, so
    it needs no memo); everything else goes through :func:`copy.deepcopy`.
    """
    try:
        return _plain_copy(base_output, 0), {}
    except _NotPlain:
        pass
    memo: dict[int, Any] = {}
    return copy.deepcopy(base_output, memo), memo


def _equal(left: Any, right: Any, copies: dict[int, Any]) -> bool:
    """Whether ``left`` (an output) equals ``right`` (part of the base) by value.

    Built-in containers are walked with exact types; other values use their own
    ``==`` (which may raise: the caller turns that into an invalid decision),
    except a type without value equality, which equals only its own copy.
    """
    if left is right:
        return True
    kind = type(left)
    if kind is not type(right):
        return False
    if kind in _CONTAINERS:
        if len(left) != len(right):
            return False
        if kind is dict:
            if left.keys() != right.keys():
                return False
            return all(_equal(value, right[key], copies) for key, value in left.items())
        return all(_equal(a, b, copies) for a, b in zip(left, right, strict=True))
    if kind.__eq__ is _IDENTITY_EQ:
        return copies.get(id(right), right) is left
    return bool(left == right)


def _decision_fields(decision: Any) -> tuple[Any, Any, Any, Any, Any]:
    """The five fields of a decision, each read exactly once."""
    if type(decision) is dict:  # the common case, without the ABC checks
        if decision.keys() != _DECISION_KEYS:
            raise _Invalid
    elif isinstance(decision, ModelDecision):
        return (
            decision.outcome,
            decision.output,
            decision.memory_refs,
            decision.reasoning_summary,
            decision.current_artifact_verified,
        )
    elif inspect.iscoroutine(decision):
        decision.close()  # an async callback: never awaited here, so close it quietly
        raise _Invalid
    elif (
        not isinstance(decision, Mapping)
        or len(decision) != len(_DECISION_KEYS)
        or set(decision.keys()) != _DECISION_KEYS
    ):
        raise _Invalid
    return (
        decision["outcome"],
        decision["output"],
        decision["memory_refs"],
        decision["reasoning_summary"],
        decision["current_artifact_verified"],
    )


def _check_decision(
    decision: Any, base_output: Any, refs: Mapping[str, str], copies: dict[int, Any]
) -> tuple[Outcome, Any, tuple[str, ...], str, bool, bool]:
    """Outcome, output for the caller, raw refs, summary, verification, base preserved."""
    outcome, output, named, summary, verified = _decision_fields(decision)
    if type(outcome) is not str or outcome not in MODEL_OUTCOMES:
        raise _Invalid
    if type(named) is not list and type(named) is not tuple:
        raise _Invalid
    raw_refs: list[str] = []
    for ref in named:
        raw = refs.get(ref) if type(ref) is str else None
        if raw is None:
            raise _Invalid
        raw_refs.append(raw)
    if type(verified) is not bool:
        raise _Invalid
    if outcome == "applied" and (not raw_refs or not verified):
        raise _Invalid
    if type(summary) is not str or len(summary) > _SUMMARY_INPUT_LIMIT:
        raise _Invalid
    try:
        text = compact_memo(summary, _SUMMARY_LIMIT, "$.reasoning_summary")
    except RecordValidationError:
        raise _Invalid from None
    if outcome == "applied":
        # The output replaces the base: "preserved" only if equal by value (a
        # type without value equality is then never equal to the base).
        return outcome, output, tuple(raw_refs), text, verified, _equal(output, base_output, {})
    if not _equal(output, base_output, copies):
        raise _Invalid
    # The caller gets its own object back, never the callback's copy.
    return outcome, base_output, tuple(raw_refs), text, verified, True


@functools.lru_cache(maxsize=4096)
def _ref_digest(raw_ref: str) -> str:
    return hashlib.sha256(raw_ref.encode("utf-8")).hexdigest()[:16]


def _digests(raw_refs: tuple[str, ...]) -> tuple[str, ...]:
    if len(raw_refs) == 1:
        return (_ref_digest(raw_refs[0]),)
    return tuple(sorted({_ref_digest(ref) for ref in raw_refs}))


def apply(
    base_output: Any,
    session: RecallSession,
    *,
    application_id: str,
    artifact_ref: str | None = None,
    apply_memory: ApplyMemory | None = None,
) -> ApplicationResult:
    """Let the caller's model apply, ignore or refute a recall; fail open on every problem.

    Args:
        base_output: what the caller produces without memory; kept unless a valid
            ``applied`` decision replaces it, and never changed (the callback
            works on a deep copy).
        session: the :class:`~reward_memory.guarded_recall.RecallSession` of this recall.
        application_id: the caller's id for this application (a token).
        artifact_ref: the current artifact the model verified against (a token).
        apply_memory: the model callback, ``apply_memory(copy_of_base_output, items)``.

    Returns:
        The ``reward_memory_application_v0`` record: status, output, receipt.
    """
    application_id = check_token_memo(application_id, "$.application_id")
    if artifact_ref is not None:
        artifact_ref = check_token_memo(artifact_ref, "$.artifact_ref")
    if type(session) is not RecallSession:
        raise RecordValidationError(
            "session must be a RecallSession", path="$.session", code="wrong_type"
        )
    ids = (application_id, artifact_ref)
    packet = session.packet
    items = session.items
    if packet.status != "completed" or not items:
        return _fail_open(packet, ids, "not_available", base_output, f"recall_{packet.status}")
    if apply_memory is None:
        return _fail_open(packet, ids, "available_not_applied", base_output, CALLBACK_MISSING)
    if type(items) is not tuple:
        items = tuple(items)
    # What "an item of this recall" means is fixed before the callback runs.
    refs = session.refs
    try:
        view, copies = _private_copy(base_output)
    except _PROPAGATE:
        raise
    except BaseException:  # noqa: BLE001 - an uncopyable base is never handed to the model
        return _fail_open(packet, ids, "failed", base_output, BASE_NOT_COPYABLE)
    try:
        decision = apply_memory(view, items)
        outcome, output, raw_refs, summary, verified, preserved = _check_decision(
            decision, base_output, refs, copies
        )
    except _PROPAGATE:
        raise
    except BaseException:  # noqa: BLE001 - a failing model callback fails open (as recall)
        return _fail_open(packet, ids, "failed", base_output, CALLBACK_FAILED)
    if _repeats_withheld(summary, items, packet.results, session.request_packet.request.queries):
        return _fail_open(packet, ids, "failed", base_output, SUMMARY_REPEATS_WITHHELD)
    return _result(
        packet,
        ids,
        outcome=outcome,
        output=output,
        preserved=preserved,
        summary=summary,
        digests=_digests(raw_refs),
        verified=verified,
    )


def _repeats_withheld(
    summary: str, items: tuple[Any, ...], results: tuple[Any, ...], queries: tuple[Any, ...]
) -> bool:
    """:func:`_repeats` with hidden characters deleted, then (for text that is not all
    ASCII) read as word breaks: each reading catches what the other would miss."""
    if _repeats(summary, items, results, queries, _fold):
        return True
    if summary.isascii() and all(item.content_summary.isascii() for item in items):
        return False
    return _repeats(summary, items, results, (), _fold_breaking)


def _repeats(
    summary: str,
    items: tuple[Any, ...],
    results: tuple[Any, ...],
    queries: tuple[Any, ...],
    fold: Callable[[str], str],
) -> bool:
    """Whether the model's reasoning repeats what the public packet withholds: an item's
    raw provider ref, the summary of a record whose content is not exposed, or the exact
    text of a query (the receipt says ``exact_query_exposed: false``). The receipt is
    public: the model writes its summary, the library keeps it public-safe.

    A repeat is read after NFKC and case folding (fullwidth letters are letters; invisible
    characters and accents aside, as the secret scan reads text), as
    words, not as one exact string: any run of :data:`_REPEAT_WORDS` consecutive words
    of the withheld summary (punctuation aside), or all of it when it is shorter (from
    :data:`_REPEAT_FLOOR` words), found as consecutive words of the reasoning; and, for
    scripts written without spaces, any :data:`_DENSE_RUN` letters of one run of them
    (see :func:`_dense_repeat`). A dropped full stop, another case, a copied half or a
    character left out would otherwise carry private text into the receipt. A query
    is a repeat only whole, from :data:`_QUERY_WORDS` words on (a shorter one names a
    topic), and not when its summary, which the receipt publishes, is the same words.
    """
    folded = fold(summary)
    words: tuple[str, ...] | None = None
    dense: str | None = None
    # A piece of a ref is 8 characters or more with a digit or a separator in it: prose
    # without such a word quotes no ref, and the pieces of a new ref are not worked out.
    quotes = any(
        len(word) >= _REF_PIECE // 2 and not word.isalpha()
        for word in (part.strip(_PROSE_PUNCTUATION) for part in folded.split())
    )
    for item, result in zip(items, results, strict=False):
        if quotes and any(piece in folded for piece in _ref_pieces(item.memory_ref)):
            return True
        if result.content_exposed:
            continue
        withheld = fold(item.content_summary)
        if len(withheld) >= _REPEAT_MIN and withheld in folded:
            return True  # as text: a script without spaces is one "word"
        withheld_words = _words(withheld)
        if len(withheld_words) >= _REPEAT_FLOOR:
            if words is None:
                words = _words(folded)
            if _shares_a_run(withheld_words, words):
                return True
        runs = _DENSE.findall(withheld)
        if runs:
            if dense is None:
                dense = "\n".join(_DENSE.findall(folded))  # runs kept apart
            if _dense_repeat(runs, withheld, dense):
                return True
    for query in queries:
        text = query.query
        if len(text.split()) < _QUERY_WORDS:  # C-speed: most queries stop here or below
            continue
        asked = _folded_words(text)
        if len(asked) < _QUERY_WORDS or asked[0] not in folded:
            continue  # a repeat holds the query's first word
        if asked == _folded_words(query.query_summary):
            continue  # the receipt publishes the summary: the same words are public
        if words is None:
            words = _words(folded)
        if _holds_run(asked, words):
            return True
    return False


# A callback's KeyboardInterrupt or SystemExit is no model problem: it propagates.
_PROPAGATE: Final = (KeyboardInterrupt, SystemExit)


@functools.lru_cache(maxsize=1024)  # one per item: a module recalls the same few again
def _ref_pieces(ref: str) -> tuple[str, ...]:
    """The parts of a raw provider ref that name it (case-folded): the whole ref, what
    follows its scheme or prefix (``viking://…``, ``memory:…``), any run of three path
    segments (``user/alice/peers``) and 16-character windows of a long segment (a hex id:
    any quote of 24 of its characters holds one; a character left out at either end too).
    A model quoting a piece would publish what the receipt hashes."""
    folded = ref.casefold()
    body = folded.split("://", 1)[1] if "://" in folded else folded.partition(":")[2] or folded
    pieces = {folded, body}
    segments = [part for part in re.split(r"[/#?]", body) if part]
    pieces.update("/".join(segments[i : i + 3]) for i in range(len(segments) - 2))
    # A long segment: its _REF_PIECE-character windows every half piece, so any quote of
    # one and a half pieces holds one (a few substring tests, not one per character).
    step = _REF_PIECE // 2
    for part in re.split(r"[/:#?.]", body):
        if len(part) >= _REF_PIECE:
            pieces.update(part[i : i + _REF_PIECE] for i in range(0, len(part) - step, step))
            pieces.add(part[-_REF_PIECE:])
    return tuple(piece for piece in pieces if len(piece) >= _REF_PIECE // 2)


@functools.lru_cache(maxsize=256)  # a module asks the same few queries again and again
def _folded_words(text: str) -> tuple[str, ...]:
    return _words(_fold(text))


def _fold(text: str) -> str:
    # NFKC leaves ASCII as it is: only other text pays for it. Other text is composed
    # (NFKC: fullwidth letters are letters, an accent or a dakuten joins its letter),
    # then read without what a reader does not see (text.shown), so a zero-width space
    # or a stray combining mark inside a word does not split it.
    if text.isascii():
        return text.casefold()
    return shown(unicodedata.normalize("NFKC", text)).casefold()


def _fold_breaking(text: str) -> str:
    # The same, with each hidden character read as a space: in Khmer, Lao or Myanmar a
    # zero-width space is the word separator, and deleting it would join the words.
    if text.isascii():
        return text.casefold()
    return shown(unicodedata.normalize("NFKC", text), breaks=True).casefold()


def _dense_repeat(runs: list[str], withheld: str, dense: str) -> bool:
    """Whether the reasoning's runs of space-less letters (``dense``, one per line)
    repeat a withheld summary's: any :data:`_DENSE_RUN` letters of one run, or the whole
    summary when it is one shorter run of them."""
    for run in runs:
        if len(run) >= _DENSE_RUN:
            size = _DENSE_RUN
            if any(run[i : i + size] in dense for i in range(len(run) - size + 1)):
                return True
    if len(runs) == 1 and _DENSE_MIN <= len(runs[0]) < _DENSE_RUN:
        # A summary that is only this run (punctuation and spaces aside) is short text.
        rest = withheld.replace(runs[0], "")
        if not _words(rest) and runs[0] in dense:
            return True
    return False


def _holds_run(run: tuple[str, ...], words: tuple[str, ...]) -> bool:
    size = len(run)
    return any(words[i : i + size] == run for i in range(len(words) - size + 1))


def _words(text: str) -> tuple[str, ...]:
    return tuple(_WORD.findall(text.casefold()))


def _shares_a_run(withheld: tuple[str, ...], reasoning: tuple[str, ...]) -> bool:
    """Whether ``reasoning`` holds ``_REPEAT_WORDS`` consecutive words of ``withheld``
    (all of ``withheld`` when it has fewer)."""
    size = min(_REPEAT_WORDS, len(withheld))
    if size == 0 or len(reasoning) < size:
        return False
    runs = {withheld[i : i + size] for i in range(len(withheld) - size + 1)}
    return any(reasoning[i : i + size] in runs for i in range(len(reasoning) - size + 1))


def _fail_open(
    packet: RecallPacket,
    ids: tuple[str, str | None],
    outcome: Outcome,
    base_output: Any,
    summary: str,
) -> ApplicationResult:
    return _result(
        packet, ids, outcome=outcome, output=base_output, preserved=True, summary=summary
    )


def _result(
    packet: RecallPacket,
    ids: tuple[str, str | None],
    *,
    outcome: Outcome,
    output: Any,
    preserved: bool,
    summary: str,
    digests: tuple[str, ...] = (),
    verified: bool = False,
) -> ApplicationResult:
    """The receipt and result (trusted construction; the invariants hold by construction).

    ``ids`` (application id, artifact ref) were checked tokens; the packet is a
    :class:`RecallPacket` (validated, or built from checked parts); ``summary`` is
    compacted, scanned text or one of this module's fixed codes; ``digests`` are
    sorted, distinct 16-hex digests, non-empty exactly for an ``applied``
    decision that named refs and verified the current artifact of a ``completed``
    (hence read-back) recall; every other outcome hands back the base object
    itself (``preserved``).
    """
    # A packet of another type (a hand-built session) gets the validating constructors.
    trusted = type(packet) is RecallPacket
    receipt = (trusted_receipt if trusted else ApplicationReceipt)(
        application_id=ids[0],
        artifact_ref=ids[1],
        corpus_id=packet.corpus_id,
        surface_id=packet.surface_id,
        mode=packet.mode,
        query_kind=packet.query_kind,
        query_evidence=packet.query_evidence,
        outcome=outcome,
        memory_ref_digests=digests,
        reasoning_summary=summary,
        current_artifact_verified=verified,
        result_readback_verified=packet.result_readback_verified,
        provider_call_count=packet.provider_call_count,
    )
    return (trusted_result if trusted else ApplicationResult)(
        status=outcome,
        output=output,
        receipt=receipt,
        fail_open_preserved_base=preserved,
    )
