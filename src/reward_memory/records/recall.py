"""Stage-3 recall records: the request, its checkpoint and binding, and the recall packets.

Inputs (validated in full when built, by Python callers or by :func:`wire.load`):

- :class:`RecallRequest` -- what the caller asks: one surface, its workspace and
  project, caller/model-authored queries, a limit, current freshness and
  conflict observations (reference §7.1).
- :class:`ReadAuthorityCheckpoint` -- the caller's independently verified read
  authority for one corpus, workspace, project and surface.
- :class:`ProviderBinding` -- where the corpus lives in a provider (reference §7.2).
- :class:`RecallInput` (``reward_memory_recall_input_v0``) -- the four together,
  as the ``recall`` CLI verb reads them.

Packets (assembled by :mod:`reward_memory.guarded_recall` from validated records; their
identifier and text checks are memoised, see :mod:`reward_memory.records._memo`;
the library builds them through trusted constructors that skip re-validating
parts it checked already, while the public constructors validate everything):

- :class:`RecallRequestPacket` (``reward_memory_recall_request_v0``) -- the
  guarded request, in memory only: it still holds the exact query text.
- :class:`RecallPacket` (``reward_memory_recall_v0``) -- the public recall
  result: opaque provider refs, query digests and summaries, never raw content
  or raw query text.

Differs from the original: a structurally valid provider binding that does not
match the corpus (corpus, provider, scope digest, peer) is a guard reason code
recorded before any provider call, not an exception; setup hints that are
unsafe are rejected rather than silently dropped; the normalised request always
carries the three identity keys (``null`` when unset).
"""

from __future__ import annotations

import functools
import re
from typing import Any, ClassVar, Final, Literal, get_args

import attrs

from reward_memory._frozen import frozen
from reward_memory.digests import short_digest
from reward_memory.errors import RecordValidationError
from reward_memory.providers.spi import ProviderScope
from reward_memory.records import _fields as f
from reward_memory.records import _memo as m
from reward_memory.records.corpus import CorpusDeclaration  # noqa: TC001 - resolved at run time
from reward_memory.records.envelope import CLASS_IDS, ClassId

__all__ = [
    "GUARD_RULE",
    "MODES",
    "QUERY_KINDS",
    "RECALL_INPUT_SCHEMA",
    "RECALL_REQUEST_SCHEMA",
    "RECALL_SCHEMA",
    "RECALL_STATUSES",
    "FreshnessContext",
    "NormalizedRecallRequest",
    "ProviderBinding",
    "QueryEvidence",
    "ReadAuthorityCheckpoint",
    "RecallGuard",
    "RecallInput",
    "RecallPacket",
    "RecallQuery",
    "RecallRequest",
    "RecallRequestPacket",
    "RecallResult",
    "SetupHints",
]

RECALL_REQUEST_SCHEMA: Final = "reward_memory_recall_request_v0"
RECALL_SCHEMA: Final = "reward_memory_recall_v0"
RECALL_INPUT_SCHEMA: Final = "reward_memory_recall_input_v0"

Mode = Literal["function_boundary", "bounded_agentic_search"]
MODES: Final[tuple[Mode, ...]] = get_args(Mode)
# How many caller/model-authored queries each mode allows (inclusive bounds).
QUERY_BOUNDS: Final[dict[str, tuple[int, int]]] = {
    "function_boundary": (1, 1),
    "bounded_agentic_search": (1, 3),
}
QueryKind = Literal["business_recall", "ingest_verification"]
QUERY_KINDS: Final[tuple[QueryKind, ...]] = get_args(QueryKind)
RecallStatus = Literal["guard_blocked", "provider_unavailable", "completed", "empty"]
RECALL_STATUSES: Final[tuple[RecallStatus, ...]] = get_args(RecallStatus)
MAX_LIMIT: Final = 8
DEFAULT_LIMIT: Final = 5
DEFAULT_TIMEOUT_SECONDS: Final = 30
GUARD_RULE: Final = (
    "caller_supplies_queries_and_reasoning_deterministic_code_checks_scope_authority_privacy_"
    "freshness_and_conflict"
)
EMPTY_REASON: Final = "no_active_exact_corpus_results"
_REQUEST_PACKET_FLAGS: Final = (
    ("ok", True),
    ("automatic_recall", False),
    ("provider_call_performed", False),
    ("external_writes_performed", False),
    ("raw_content_captured", False),
)
_RECALL_PACKET_FLAGS: Final = (
    ("ok", True),
    ("automatic_recall", False),
    ("fail_open", True),
    ("provider_failure_is_user_gate", False),
    ("external_writes_performed", False),
    ("raw_provider_payload_captured", False),
    ("raw_content_persisted", False),
)
_MODE_SET: Final = frozenset(MODES)
_QUERY_KIND_SET: Final = frozenset(QUERY_KINDS)
_STATUS_SET: Final = frozenset(RECALL_STATUSES)
_PROVIDER_REF: Final = re.compile(r"provider-[0-9a-f]{20}")
_SHORT_HEX: Final = re.compile(r"[0-9a-f]{16}")


def _tuple(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


def _records_of(cls: type[Any]) -> Any:
    def validate(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
        path = f"$.{attribute.name}"
        if not isinstance(value, tuple):
            raise RecordValidationError("must be a list", path=path, code="wrong_type")
        for index, item in enumerate(value):
            if not isinstance(item, cls):
                raise RecordValidationError(
                    f"must be a {cls.__name__}", path=f"{path}[{index}]", code="wrong_type"
                )

    return validate


def _check_query_bounds(mode: str, queries: tuple[Any, ...]) -> None:
    low, high = QUERY_BOUNDS[mode]
    if not low <= len(queries) <= high:
        raise RecordValidationError(
            f"{mode} requires between {low} and {high} queries",
            path="$.queries",
            code="invalid_value",
        )


def _evidence_of(queries: tuple[RecallQuery, ...]) -> tuple[QueryEvidence, ...]:
    """Digest and summary of each query."""
    # Trusted: a short digest is 16 hex, and the summary was compacted and
    # scanned when the query was built. (The query text is not memoised
    # anywhere: it stays with its request only.)
    make = _trusted_evidence
    return tuple(
        [make(query_digest=short_digest(q.query), query_summary=q.query_summary) for q in queries]
    )


# -- inputs ---------------------------------------------------------------------------------


@frozen(kw_only=True)
class RecallQuery:
    """One caller/model-authored query and its compact public summary."""

    query: str = f.text(500)
    query_summary: str = f.text(220)


@frozen(kw_only=True)
class FreshnessContext:
    """What the caller observed about source truth, just now."""

    source_truth_current: bool = f.strict_bool()
    source_revision: str | None = f.optional_token()
    age_seconds: int | None = f.integer(minimum=0, default=None)


@frozen(kw_only=True)
class RecallRequest:
    """An explicit recall request: one surface, 1..3 queries, current observations (§7.1).

    ``function_boundary`` takes exactly one query, ``bounded_agentic_search`` one
    to three; anything else is a structural error. ``limit`` is 1..8 (default 5).
    A ``conflict_state`` other than ``clear`` is a guard reason, not an error.
    """

    mode: Mode = f.enum(*MODES)
    surface_id: str = f.surface_id()
    workspace_ref: str = f.token()
    project_ref: str = f.token()
    revision_ref: str | None = f.optional_token()
    user_ref: str | None = f.optional_token()
    peer_ref: str | None = f.optional_token()
    session_ref: str | None = f.optional_token()
    queries: tuple[RecallQuery, ...] = attrs.field(
        converter=_tuple, validator=_records_of(RecallQuery)
    )
    limit: int = f.integer(minimum=1, maximum=MAX_LIMIT, default=DEFAULT_LIMIT)
    observed_at: str = f.timestamp()
    conflict_state: str = f.token()
    query_kind: QueryKind = f.enum(*QUERY_KINDS, default="business_recall")
    freshness_context: FreshnessContext
    raw_content_captured: Literal[False] = f.const(False)

    def __attrs_post_init__(self) -> None:
        _check_query_bounds(self.mode, self.queries)
        if type(self) is RecallRequest:
            # Every request is guarded, and the guard reads its normalised view:
            # set both views now, so that their first read is a slot read (a
            # cached property's first read raises and catches AttributeError).
            evidence = _evidence_of(self.queries)
            _put_evidence(self, evidence)
            _put_normalized(self, NormalizedRecallRequest.of(self))

    @functools.cached_property
    def query_evidence(self) -> tuple[QueryEvidence, ...]:
        """Digest and summary of each query (computed once per request record)."""
        return _evidence_of(self.queries)

    @functools.cached_property
    def normalized(self) -> NormalizedRecallRequest:
        """The normalised view the request packet holds (computed once per request record)."""
        return NormalizedRecallRequest.of(self)


@frozen(kw_only=True)
class ReadAuthorityCheckpoint:
    """The caller's independently verified read authority (never derived from memory).

    Identity fields matter only where the corpus scope sets them.
    """

    verified: bool = f.strict_bool()
    corpus_id: str = f.token()
    workspace_ref: str = f.token()
    project_ref: str = f.token()
    surface_id: str = f.token()
    read_authority: str = f.token()
    source_ref: str | None = f.optional_token()
    user_ref: str | None = f.optional_token()
    peer_ref: str | None = f.optional_token()
    session_ref: str | None = f.optional_token()


@frozen(kw_only=True)
class SetupHints:
    """How to make an unavailable provider available (compact, public-safe)."""

    install: str | None = f.optional_text(500)
    configure: str | None = f.optional_text(500)


def _timeout(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 1 <= value <= 120:
        raise RecordValidationError(
            "must be a number of seconds between 1 and 120",
            path=f"$.{attribute.name}",
            code="invalid_value",
        )


@frozen(kw_only=True)
class ProviderBinding:
    """Where a corpus lives in a provider: namespace, scope and (explicit) actor peer.

    The binding is only structurally validated here. Whether it matches the
    corpus (corpus id, provider id, scope digest, the peer of a ``/peers/<peer>/``
    scope) is checked by :func:`reward_memory.guards.recall.binding_reasons`,
    as reason codes, before any provider call. The actor peer is never inferred
    from ``scope_ref``: it is only what the binding carries.
    """

    # Absent optional keys stay out of the wire form (the original's binding had
    # provider_binary and minimum_provider_version only when set).
    __rm_omit_none__: ClassVar[bool] = True

    corpus_id: str = f.token()
    provider_id: str = f.token()
    namespace: str = f.token()
    scope_ref: str = f.token()
    timeout_seconds: float = attrs.field(default=DEFAULT_TIMEOUT_SECONDS, validator=_timeout)
    actor_peer_id: str | None = f.optional_token()
    setup_hints: SetupHints = attrs.field(factory=SetupHints)
    # The original's CLI-adapter fields (reference 7.2): read, scanned, kept; unused.
    provider_binary: str | None = f.optional_text(240)
    minimum_provider_version: str | None = f.optional_text(64)

    @functools.cached_property
    def provider_scope(self) -> ProviderScope:
        """The SPI scope every provider call of this binding uses."""
        return ProviderScope(
            namespace=self.namespace, scope_ref=self.scope_ref, actor_peer_id=self.actor_peer_id
        )


@frozen(kw_only=True)
class RecallInput:
    """``reward_memory_recall_input_v0``: one recall, as the ``recall`` verb reads it."""

    schema_version: Literal["reward_memory_recall_input_v0"] = f.const(RECALL_INPUT_SCHEMA)
    corpus: CorpusDeclaration
    request: RecallRequest
    read_authority_checkpoint: ReadAuthorityCheckpoint
    provider_binding: ProviderBinding


# -- packets ----------------------------------------------------------------------------------


def _short_hex(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if type(value) is not str or _SHORT_HEX.fullmatch(value) is None:
        raise RecordValidationError(
            "must be 16 lower-case hex", path=f"$.{attribute.name}", code="invalid_format"
        )


@frozen(kw_only=True)
class QueryEvidence:
    """What a public packet says about a query: its digest and summary, never its text."""

    query_digest: str = attrs.field(validator=_short_hex)
    query_summary: str = m.memo_text(220)
    exact_query_exposed: Literal[False] = f.const(False)


def _evidence(value: Any) -> Any:
    return _tuple(value)


@frozen(kw_only=True)
class RecallGuard:
    """The guard verdict: passed, and the ordered reason codes when not."""

    passed: bool = f.strict_bool()
    reason_codes: tuple[str, ...] = m.token_tuple()
    semantic_reasoning_preserved: Literal[True] = f.const(True)
    rule: str = f.const(GUARD_RULE)

    def __attrs_post_init__(self) -> None:
        if self.passed == bool(self.reason_codes):
            raise RecordValidationError(
                "a guard passes exactly when it has no reason codes",
                path="$.reason_codes",
                code="invalid_value",
            )


@frozen(kw_only=True)
class NormalizedRecallRequest:
    """The request as the request packet holds it (with the exact query text, in memory)."""

    workspace_ref: str = f.token()
    project_ref: str = f.token()
    surface_id: str = f.surface_id()
    revision_ref: str | None = f.optional_token()
    mode: Mode = f.enum(*MODES)
    queries: tuple[RecallQuery, ...] = attrs.field(
        converter=_tuple, validator=_records_of(RecallQuery)
    )
    limit: int = f.integer(minimum=1, maximum=MAX_LIMIT)
    observed_at: str = f.timestamp()
    conflict_state: str = f.token()
    user_ref: str | None = f.optional_token()
    peer_ref: str | None = f.optional_token()
    session_ref: str | None = f.optional_token()
    query_kind: QueryKind = f.enum(*QUERY_KINDS)
    query_evidence: tuple[QueryEvidence, ...] = attrs.field(
        converter=_evidence, validator=_records_of(QueryEvidence)
    )
    # Ours (absent in the original's packet): the freshness observations the guard
    # judged, so a seam that acts on this packet can re-derive the whole verdict.
    # A packet without them proves no freshness and is blocked on execution.
    freshness_context: FreshnessContext | None = attrs.field(
        default=None,
        validator=attrs.validators.optional(attrs.validators.instance_of(FreshnessContext)),
    )

    def __attrs_post_init__(self) -> None:
        # Structural invariants hold for every packet, however it was built: the
        # mode's query bounds, and evidence that is the digest of each query.
        _check_query_bounds(self.mode, self.queries)
        evidence = self.query_evidence
        if len(evidence) != len(self.queries):
            raise RecordValidationError(
                "query_evidence has one entry per query",
                path="$.query_evidence",
                code="invalid_value",
            )
        for index, (query, seen) in enumerate(zip(self.queries, evidence, strict=True)):
            if seen.query_digest != short_digest(query.query):
                raise RecordValidationError(
                    "query_digest is not the digest of the query",
                    path=f"$.query_evidence[{index}].query_digest",
                    code="invalid_value",
                )
            if seen.query_summary != query.query_summary:
                raise RecordValidationError(
                    "query_summary differs from the query's summary",
                    path=f"$.query_evidence[{index}].query_summary",
                    code="invalid_value",
                )

    @classmethod
    def of(cls, request: RecallRequest) -> NormalizedRecallRequest:
        """The normalised view of a validated request.

        A :class:`RecallRequest` itself was checked field by field when built, so
        its view is built without re-checking; anything else is validated.
        """
        trusted = cls is NormalizedRecallRequest and type(request) is RecallRequest
        make = _trusted_normalized if trusted else cls
        return make(
            workspace_ref=request.workspace_ref,
            project_ref=request.project_ref,
            surface_id=request.surface_id,
            revision_ref=request.revision_ref,
            mode=request.mode,
            queries=request.queries,
            limit=request.limit,
            observed_at=request.observed_at,
            conflict_state=request.conflict_state,
            user_ref=request.user_ref,
            peer_ref=request.peer_ref,
            session_ref=request.session_ref,
            query_kind=request.query_kind,
            query_evidence=request.query_evidence,
            freshness_context=request.freshness_context,
        )


@frozen(kw_only=True)
class RecallRequestPacket:
    """``reward_memory_recall_request_v0``: the guarded request (in memory; holds query text).

    ``status`` is ``ready`` exactly when the guard passed. Building it never
    calls a provider.
    """

    ok: Literal[True] = m.flag(True)
    schema_version: Literal["reward_memory_recall_request_v0"] = f.const(RECALL_REQUEST_SCHEMA)
    status: Literal["ready", "guard_blocked"] = f.enum("ready", "guard_blocked")
    corpus: CorpusDeclaration
    request: NormalizedRecallRequest
    read_authority_checkpoint: ReadAuthorityCheckpoint
    guard: RecallGuard
    automatic_recall: Literal[False] = m.flag(False)
    provider_call_performed: Literal[False] = m.flag(False)
    external_writes_performed: Literal[False] = m.flag(False)
    raw_content_captured: Literal[False] = m.flag(False)

    def __attrs_post_init__(self) -> None:
        m.check_flags(self, _REQUEST_PACKET_FLAGS)
        if (self.status == "ready") != self.guard.passed:
            raise RecordValidationError(
                "status is ready exactly when the guard passed",
                path="$.status",
                code="invalid_value",
            )


def _provider_ref(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if type(value) is not str or _PROVIDER_REF.fullmatch(value) is None:
        raise RecordValidationError(
            "must be an opaque provider- ref", path=f"$.{attribute.name}", code="invalid_format"
        )


@frozen(kw_only=True)
class RecallResult:
    """One recalled item as the public packet shows it: an opaque ref, never raw content.

    ``content_summary`` is set only when the corpus is ``public_safe``.
    """

    memory_ref: str = attrs.field(validator=_provider_ref)
    candidate_ref: str = f.token()
    target_class: ClassId = f.enum(*CLASS_IDS)
    content_summary: str | None = m.optional_memo_text(500)
    content_exposed: bool = f.strict_bool()

    def __attrs_post_init__(self) -> None:
        if self.content_exposed != (self.content_summary is not None):
            raise RecordValidationError(
                "content_exposed says whether content_summary is set",
                path="$.content_exposed",
                code="invalid_value",
            )


@frozen(kw_only=True)
class RecallPacket:
    """``reward_memory_recall_v0``: the public result of one recall.

    Statuses: ``guard_blocked`` (``reason_codes`` say why; zero provider calls),
    ``provider_unavailable`` (``reason_code`` and ``setup_hints``; anything
    gathered is discarded), ``completed`` (results), ``empty``
    (``no_active_exact_corpus_results``). Never a user gate.
    """

    ok: Literal[True] = m.flag(True)
    schema_version: Literal["reward_memory_recall_v0"] = f.const(RECALL_SCHEMA)
    corpus_id: str
    surface_id: str
    mode: Mode
    query_kind: QueryKind
    query_evidence: tuple[QueryEvidence, ...]
    provider_id: str
    result_count: int
    results: tuple[RecallResult, ...]
    result_readback_verified: bool
    provider_call_count: int
    automatic_recall: Literal[False] = m.flag(False)
    fail_open: Literal[True] = m.flag(True)
    provider_failure_is_user_gate: Literal[False] = m.flag(False)
    external_writes_performed: Literal[False] = m.flag(False)
    raw_provider_payload_captured: Literal[False] = m.flag(False)
    raw_content_persisted: Literal[False] = m.flag(False)
    status: RecallStatus
    reason_code: str | None = None
    reason_codes: tuple[str, ...] = ()
    setup_hints: SetupHints | None = None
    # Ours: read-back records dropped because another returned record supersedes them.
    superseded_dropped_count: int = 0

    def __attrs_post_init__(self) -> None:
        # One pass over every field (this packet is rebuilt on every recall): the
        # same grammars and flags as field validators, without a call per field.
        _check_recall_packet(self)


def _check_recall_packet(packet: RecallPacket) -> None:
    def bad(path: str, message: str) -> RecordValidationError:
        return RecordValidationError(message, path=path, code="invalid_value")

    if (
        packet.ok is not True
        or packet.automatic_recall is not False
        or packet.fail_open is not True
        or packet.provider_failure_is_user_gate is not False
        or packet.external_writes_performed is not False
        or packet.raw_provider_payload_captured is not False
        or packet.raw_content_persisted is not False
    ):
        m.check_flags(packet, _RECALL_PACKET_FLAGS)  # type: ignore[unreachable]  # untyped callers
    m.require_corpus(packet.corpus_id, "$.corpus_id")
    m.require_surface(packet.surface_id, "$.surface_id")
    m.require_choice(packet.mode, _MODE_SET, "$.mode")
    m.require_choice(packet.query_kind, _QUERY_KIND_SET, "$.query_kind")
    m.require_records(packet.query_evidence, QueryEvidence, "$.query_evidence")
    m.require_token(packet.provider_id, "$.provider_id")
    m.require_count(packet.result_count, "$.result_count")
    m.require_records(packet.results, RecallResult, "$.results")
    m.require_bool(packet.result_readback_verified, "$.result_readback_verified")
    m.require_count(packet.provider_call_count, "$.provider_call_count")
    m.require_count(packet.superseded_dropped_count, "$.superseded_dropped_count")
    m.require_choice(packet.status, _STATUS_SET, "$.status")
    m.require_optional_token(packet.reason_code, "$.reason_code")
    if type(packet.reason_codes) is not tuple:
        raise RecordValidationError("must be a list", path="$.reason_codes", code="wrong_type")
    for index, code in enumerate(packet.reason_codes):
        m.require_token(code, f"$.reason_codes[{index}]")
    if packet.setup_hints is not None and type(packet.setup_hints) is not SetupHints:
        raise RecordValidationError("must be a SetupHints", path="$.setup_hints", code="wrong_type")
    status = packet.status
    if packet.result_count != len(packet.results):
        raise bad("$.result_count", "must equal the number of results")
    if packet.result_readback_verified != (packet.result_count > 0):
        raise bad("$.result_readback_verified", "is true exactly when results were read back")
    if (status == "completed") != (packet.result_count > 0):
        raise bad("$.status", "completed exactly when there are results")
    if (status == "guard_blocked") != bool(packet.reason_codes):
        raise bad("$.reason_codes", "reason_codes are given exactly when guard_blocked")
    if status == "guard_blocked" and packet.provider_call_count != 0:
        raise bad("$.provider_call_count", "a blocked recall makes no provider call")
    if packet.superseded_dropped_count and status not in ("completed", "empty"):
        raise bad("$.superseded_dropped_count", "only a finished recall drops superseded records")
    if (status in ("empty", "provider_unavailable")) != (packet.reason_code is not None):
        raise bad("$.reason_code", "reason_code is given exactly when empty or unavailable")
    if status == "empty" and packet.reason_code != EMPTY_REASON:
        raise bad("$.reason_code", f"an empty recall says {EMPTY_REASON}")
    if (status == "provider_unavailable") != (packet.setup_hints is not None):
        raise bad("$.setup_hints", "setup_hints are given exactly when provider_unavailable")


# -- trusted constructors (library-internal) ---------------------------------------------------
#
# For packets the library assembles from parts it has validated already; see
# reward_memory.records._memo.trusted. Public constructors keep every check.


_trusted_evidence: Final = m.trusted(QueryEvidence)
_trusted_normalized: Final = m.trusted(NormalizedRecallRequest)
trusted_guard: Final = m.trusted(RecallGuard)
trusted_request_packet: Final = m.trusted(RecallRequestPacket)
trusted_recall_packet: Final = m.trusted(RecallPacket)
# The slots of RecallRequest's two cached views (set when a request is built).
_put_evidence: Final = RecallRequest.__dict__["query_evidence"].__set__
_put_normalized: Final = RecallRequest.__dict__["normalized"].__set__
