"""The active record: an accepted, reviewed memory as the corpus owner persists it.

``reward_memory_active_record_v1`` carries the full Stage-0 envelope (class,
source, scope, authority, confidence, lifecycle state, supersession,
revocation, expiry, privacy) beside its activation lineage. The original's
``reward_memory_active_record_v0`` lacked authority, revocation and privacy
visibility/retention; it is still *read* (see :class:`LegacyActiveRecord`) but
never written (differs from the original).

Two identities (issue item 12):

- ``record_ref`` -- *which memory*: ``record:`` + 20 hex over the canonical JSON
  of ``corpus_id`` and ``candidate_ref`` (:func:`record_ref_of`). Activating or
  re-writing the same candidate into the same corpus gives the same record_ref
  whatever the review or the clock; any change to what the candidate says or
  how long it lives is a new candidate_ref, hence a new record_ref. It is what
  revoke, purge and explain name, and it survives every later lifecycle change.
  Derived, so it may be absent on input (a v1 record written before it existed
  is read unchanged) and is refused when it does not match.
- ``activation_ref`` -- *these exact bytes*: computed by
  :func:`reward_memory.activation.activation_ref_of` over everything else in
  the record. Not re-hashed on load (recall reads records on its hot path; the
  exact readback already pins the stored bytes).

Adding ``record_ref`` does not bump the version: it is optional on input and
carries nothing the record did not already hold (it is a function of two of
its fields), so every earlier v1 record still reads, as the same record.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from typing import TYPE_CHECKING, Any, Final, Literal

import attrs

from reward_memory._frozen import frozen
from reward_memory.digests import REF_HEX_LENGTH, make_ref
from reward_memory.errors import InputError, RecordValidationError
from reward_memory.records import _fields as f
from reward_memory.records import _memo as m
from reward_memory.records.envelope import (
    CLASS_IDS,
    LIFECYCLE_STATES,
    ClassId,
    Confidence,
    DurableEnvelope,
    Expiry,
    LifecycleState,
    Privacy,
    RecordAuthority,
    RecordScope,
    RecordSource,
    Revocation,
    Supersession,
    check_envelope,
)

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = [
    "STORED_RECORD_TYPES",
    "ActivationLineage",
    "ActiveRecord",
    "LegacyActiveRecord",
    "LegacyLifecycle",
    "LegacyLineage",
    "LegacyPrivacy",
    "LegacySource",
    "ReviewSummary",
    "decode_stored",
    "load_stored",
    "record_ref_of",
]


_PLAIN: Final = re.compile(r"[A-Za-z0-9._:/#-]+")


@functools.lru_cache(maxsize=4096)
def record_ref_of(corpus_id: str, candidate_ref: str) -> str:
    """The stable identity of the memory a candidate becomes in a corpus (see module docs)."""
    if _PLAIN.fullmatch(corpus_id) and _PLAIN.fullmatch(candidate_ref):
        return _plain_ref(corpus_id, candidate_ref)
    return make_ref("record", {"corpus_id": corpus_id, "candidate_ref": candidate_ref})


def _plain_ref(corpus_id: str, candidate_ref: str) -> str:
    """:func:`record_ref_of` of a corpus id and a candidate ref that are grammar tokens.

    Neither holds a quote, backslash or control character, so their canonical
    JSON is this text exactly: no encoder.
    """
    text = f'{{"candidate_ref":"{candidate_ref}","corpus_id":"{corpus_id}"}}'
    return "record:" + hashlib.sha256(text.encode("ascii")).hexdigest()[:REF_HEX_LENGTH]


def _text(limit: int) -> Any:
    """:func:`_fields.text`, memoised: activation copies text the candidate already checked."""

    def convert(value: Any, field: attrs.Attribute[Any]) -> str:
        return m.compact_memo(value, limit, f"$.{field.name}")

    converter = attrs.Converter(convert, takes_field=True)
    return f.tagged("text", limit, converter=converter)


@frozen(kw_only=True)
class ReviewSummary:
    """Who reviewed the candidate, under which review reference, and why (compact)."""

    reviewer_ref: str = f.token()
    review_ref: str = f.token()
    reasoning_summary: str = _text(500)


@frozen(kw_only=True)
class ActivationLineage:
    """How the record became active: always an accepted review of a guard-passed candidate."""

    effective_decision: Literal["accept"] = f.const("accept")
    guard_passed: Literal[True] = f.const(True)
    review_ref: str = f.token()


@frozen(kw_only=True)
class ActiveRecord:
    """``reward_memory_active_record_v1``: the durable, recallable record."""

    schema_version: Literal["reward_memory_active_record_v1"] = f.const(
        "reward_memory_active_record_v1"
    )
    # Derived from corpus_id and candidate_ref: computed when left empty, checked when given.
    record_ref: str = f.tagged("derived", None, default="")
    activation_ref: str = f.token()
    activated_at: str = f.timestamp()
    corpus_id: str = f.corpus_id()
    candidate_ref: str = f.token()
    content_summary: str = _text(500)
    class_id: ClassId = f.enum(*CLASS_IDS)
    source: RecordSource
    scope: RecordScope
    authority: RecordAuthority
    confidence: Confidence
    lifecycle_state: LifecycleState = f.enum(*LIFECYCLE_STATES)
    supersession: Supersession = attrs.field(factory=Supersession)
    revocation: Revocation = attrs.field(factory=Revocation)
    expiry: Expiry = attrs.field(factory=Expiry)
    privacy: Privacy
    review: ReviewSummary
    activation_lineage: ActivationLineage
    provider_write_performed: Literal[False] = f.const(False)
    external_writes_performed: Literal[False] = f.const(False)

    def __attrs_post_init__(self) -> None:
        # Its fields are checked before this runs (attrs validates first; so does the
        # one-pass builder): record_ref_of's grammar test is not needed, nor a memo
        # (a record read for the first time is a miss; measured: no gain).
        ref = _plain_ref(self.corpus_id, self.candidate_ref)
        if type(self.record_ref) is not str:
            raise RecordValidationError(
                "must be a record ref (a string)", path="$.record_ref", code="wrong_type"
            )
        if not self.record_ref:
            object.__setattr__(self, "record_ref", ref)
        elif self.record_ref != ref:
            raise RecordValidationError(
                "does not match the record's corpus_id and candidate_ref (it is derived from them)",
                path="$.record_ref",
                code="digest_mismatch",
            )
        # The envelope's cross-field rules (authority per class, lifecycle
        # consistency) apply to the active record exactly as to any durable record:
        # checked on the record itself (it has every envelope field), not on a copy.
        check_envelope(self)

    def envelope(self) -> DurableEnvelope:
        """The Stage-0 envelope of this record."""
        return DurableEnvelope(
            class_id=self.class_id,
            source=self.source,
            scope=self.scope,
            authority=self.authority,
            confidence=self.confidence,
            lifecycle_state=self.lifecycle_state,
            supersession=self.supersession,
            revocation=self.revocation,
            expiry=self.expiry,
            privacy=self.privacy,
        )


@frozen(kw_only=True)
class LegacySource:
    """The v0 record's copied candidate source: kind, ref, actor and (optional) role."""

    source_kind: str = f.token()
    source_ref: str = f.text(240)
    actor_ref: str = f.token()
    actor_role: str | None = f.optional_token()


@frozen(kw_only=True)
class LegacyLineage:
    """The v0 activation lineage: an accepted review of a guard-passed candidate, or invalid."""

    effective_decision: Literal["accept"] = f.const("accept")
    guard_passed: Literal[True] = f.const(True)
    review_ref: str | None = f.optional_token()


@frozen(kw_only=True)
class LegacyPrivacy:
    """The v0 privacy block: only the claim that raw content was not captured (never true)."""

    raw_content_captured: Literal[False] = f.const(False)


@frozen(kw_only=True)
class LegacyLifecycle:
    """The v0 lifecycle: state, optional expiry, lineage refs.

    ``superseded_by`` is only valid on a record that is no longer ``active``
    (no half-superseded record, as for the v1 envelope).
    """

    state: LifecycleState = f.enum(*LIFECYCLE_STATES)
    expires_at: str | None = f.optional_timestamp()
    supersedes_refs: tuple[str, ...] = f.token_list(max_items=50)
    superseded_by: str | None = f.optional_token()

    def __attrs_post_init__(self) -> None:
        if self.superseded_by is not None and self.state == "active":
            raise RecordValidationError(
                "an active record cannot be superseded; its state says superseded",
                path="$.superseded_by",
                code="inconsistent_lifecycle",
            )


@frozen(kw_only=True)
class LegacyActiveRecord:
    """``reward_memory_active_record_v0`` as the original wrote it (read-only input).

    Every block is a strict record (unknown fields refused, every string scanned
    for credentials and local paths): scope, lifecycle, source, review, lineage
    and privacy. A record claiming raw content, or whose lineage says the guard
    did not pass, is invalid (so never recalled). A legacy record has no
    authority block: it is read as advisory only and can never carry action
    authority; it has no visibility either, so its summary is never exposed in
    a public packet.
    """

    schema_version: Literal["reward_memory_active_record_v0"] = f.const(
        "reward_memory_active_record_v0"
    )
    corpus_id: str = f.corpus_id()
    candidate_ref: str = f.token()
    target_class: ClassId = f.enum(*CLASS_IDS)
    content_summary: str = f.text(500)
    scope: RecordScope
    lifecycle: LegacyLifecycle
    activation_ref: str | None = f.optional_token()
    activated_at: str | None = f.optional_timestamp()
    source: LegacySource | None = None
    review: ReviewSummary | None = None
    activation_lineage: LegacyLineage | None = None
    privacy: LegacyPrivacy | None = None
    provider_write_performed: bool = f.strict_bool(default=False)
    external_writes_performed: bool = f.strict_bool(default=False)


STORED_RECORD_TYPES: Final[dict[str, type[ActiveRecord] | type[LegacyActiveRecord]]] = {
    "reward_memory_active_record_v1": ActiveRecord,
    "reward_memory_active_record_v0": LegacyActiveRecord,
}


_MAX_STORED_DEPTH: Final = 64


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether ``value`` nests containers more than ``limit`` deep (iterative: no recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


# The C scanner json.loads runs (an attribute typeshed does not declare).
_SCAN: Final[Any] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]
_JSON_SPACE: Final = " \t\n\r"


def decode_stored(content: str | bytes | bytearray) -> Any:
    """``json.loads(content)``, with the wrapper's work skipped for a stored document.

    A stored record is UTF-8 text that starts with ``{``: the C scanner reads it
    directly. Anything else (another encoding, a BOM, leading space, trailing
    data, invalid JSON) goes to ``json.loads``, which gives the value or the error.
    """
    try:
        text = content if isinstance(content, str) else bytes(content).decode("utf-8")
        if text[:1] == "{":
            value, end = _SCAN(text, 0)
            if end == len(text) or not text[end:].strip(_JSON_SPACE):
                return value
    except Exception:  # noqa: BLE001, S110 - json.loads below decides (and names the error)
        pass
    return json.loads(content)


@functools.cache
def _plain() -> Any:
    """:mod:`reward_memory.records._plain`, imported on first use (it imports the records)."""
    from reward_memory.records import _plain  # noqa: PLC0415

    return _plain


@functools.cache
def _fast() -> tuple[Callable[[Any], Any], Callable[[Any, Any], Any]]:
    """(``orjson.loads``, the one-pass build), imported on the first stored record read."""
    import orjson  # noqa: PLC0415 - a process that reads no stored record never loads it

    return orjson.loads, _plain().built


def load_stored(content: str | bytes | bytearray) -> ActiveRecord | LegacyActiveRecord:
    """One stored active record (a provider's readback bytes), parsed in one strict pass.

    A v1 record, or a legacy v0 record (read-only, advisory). The same record
    and the same errors as building it through its constructors: unknown and
    missing fields, every grammar, the secret and local-path scan, the envelope
    rules and the derived ``record_ref`` (see :mod:`reward_memory.records._onepass`).
    ``activation_ref`` is not re-hashed (the exact readback pins the bytes).

    The bytes are read by ``orjson`` and built in one pass; anything that does
    not settle there (``orjson`` refuses what ``json.loads`` reads -- NaN, a BOM,
    a lone surrogate, another encoding -- and reads integers beyond 64 bits as
    floats, which no stored record holds) is read again by ``json.loads`` and
    goes the reference way, so the record or the error is the stdlib's.

    Raises:
        RecordValidationError: not JSON (``invalid_json``), not an object, another
            ``schema_version``, or anything the record refuses (field path named).
    """
    loads, built = _fast()
    try:
        data = loads(content)
    except Exception:  # noqa: BLE001 - json.loads below decides (and names the error)
        data = None
    if type(data) is dict:
        version = data.get("schema_version")
        cls = STORED_RECORD_TYPES.get(version) if type(version) is str else None
        if cls is not None:
            record: ActiveRecord | LegacyActiveRecord | None = built(cls, data)
            if record is not None:
                return record
    return _load_reference(content)


def _load_reference(content: str | bytes | bytearray) -> ActiveRecord | LegacyActiveRecord:
    """:func:`load_stored` by ``json.loads`` and the reference walk (the record or the error)."""
    try:
        data = decode_stored(content)
        if _deeper_than(data, _MAX_STORED_DEPTH):
            # A record is a few levels deep. Deeper nesting is no record, and how deep
            # json.loads itself goes differs between Python versions: refuse it the same
            # way everywhere.
            raise ValueError("nested too deep")
    except (ValueError, TypeError, RecursionError):
        raise InputError("a stored record is one JSON document", code="invalid_json") from None
    if type(data) is not dict:
        raise RecordValidationError("a stored record is a JSON object", code="wrong_type")
    version = data.get("schema_version")
    cls = STORED_RECORD_TYPES.get(version) if type(version) is str else None
    if cls is None:
        raise RecordValidationError(
            "schema_version names no stored record this library reads",
            path="$.schema_version",
            code="schema_version_unsupported",
        )
    try:
        record: ActiveRecord | LegacyActiveRecord = _plain().from_plain(cls, data)
    except RecordValidationError:
        raise
    except Exception:  # noqa: BLE001 - a rule that met a value of the wrong shape (null block)
        raise RecordValidationError(
            "a stored record field has the wrong shape", code="wrong_type"
        ) from None
    return record
