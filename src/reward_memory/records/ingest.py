"""The ingest receipt (``reward_memory_ingest_receipt_v0``, reference §9.3): public-safe.

Every outcome of :func:`reward_memory.ingestion.ingest` is one receipt:

=======================  ===============================================================
``guard_blocked``        the event, the standing policy, the corpus, the binding or the
                         authority source refused it; zero provider calls
``planned``              dry run (the default): the target is named, no provider call
``provider_unavailable`` a provider call failed (write, read or the verification recall)
``conflict``             ours: the target already holds *other* content -- a retry with
                         another ``observed_at`` (never a duplicate; the original reported
                         ``provider_unavailable``) -- or an operator control retired,
                         revoked or purged the record (``record_closed_by_operator``:
                         nothing is left written, the event cannot bring it back -- a
                         control that closed it while the write waited is seen after
                         the write, which is then taken back)
``committed_pending``    written and read back exactly, but search does not find it yet
``readback_unverified``  the read-back content is not what was written
``activated``            written, read back exactly (ref, candidate ref and canonical
                         content digest) and found by one exact-corpus, exact-surface
                         function-boundary recall
=======================  ===============================================================

``exact_readback_verified`` and ``memory_available_for_recall`` are true only
for ``activated`` (the record enforces it). ``grants_new_action_authority`` is
always false: authority comes from the caller's checkpoint, never from memory.
The receipt holds refs, digests, counts and codes only: never the reasoning, the raw
provider ref or payload (``provider_ref`` is opaque), and the summary only as a recall
shows it -- the embedded verification ``readback`` is that recall's public packet, which
carries a record's summary exactly when the corpus and the record are ``public_safe``.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar, Final, Literal, get_args

import attrs

from reward_memory._frozen import frozen
from reward_memory.errors import RecordValidationError
from reward_memory.grammars import check_token
from reward_memory.records import _fields as f
from reward_memory.records.execution_evidence import (  # noqa: TC001 - resolved at run time
    ExecutionEvidence,
)
from reward_memory.records.recall import RecallPacket  # noqa: TC001 - resolved at run time

__all__ = [
    "INGEST_RECEIPT_SCHEMA",
    "INGEST_STATUSES",
    "PASSED_ON_REASONS",
    "STATUS_REASON_CODES",
    "WRITES",
    "IngestGuard",
    "IngestReceipt",
    "IngestStatus",
    "IngestWrite",
    "NextRecall",
]

INGEST_RECEIPT_SCHEMA: Final = "reward_memory_ingest_receipt_v0"
IngestStatus = Literal[
    "guard_blocked",
    "planned",
    "provider_unavailable",
    "conflict",
    "committed_pending",
    "readback_unverified",
    "activated",
]
INGEST_STATUSES: Final[tuple[IngestStatus, ...]] = get_args(IngestStatus)
WriteStatus = Literal["planned", "created", "unchanged", "conflict", "failed"]
# The reasons a status may carry (guard_blocked carries the guard's own codes).
PASSED_ON_REASONS: Final = frozenset(
    {"provider_timeout", "provider_auth_failed", "provider_bad_response", "provider_closed"}
)
STATUS_REASON_CODES: Final[dict[str, frozenset[str]]] = {
    "planned": frozenset({"execute_required_for_resource_write"}),
    "provider_unavailable": frozenset(
        {
            "provider_write_failed",
            "provider_read_failed",
            "provider_verification_recall_failed",
            "provider_answer_malformed",
            "provider_delete_failed",
            # With a failed step: what the provider itself said (its ProviderUnavailable
            # reason), as a recall attempt reports it.
            *PASSED_ON_REASONS,
        }
    ),
    "conflict": frozenset({"provider_target_content_conflict", "record_closed_by_operator"}),
    "committed_pending": frozenset({"provider_index_pending"}),
    "readback_unverified": frozenset({"exact_provider_readback_unverified"}),
    "activated": frozenset(),
}
INGEST_GUARD_RULE: Final = "standing_policy_checks_exact_owner_class_source_actor_scope_and_authority_without_semantic_routing"  # noqa: E501
_DIGEST12: Final = re.compile(r"[0-9a-f]{12}")
_DIGEST16: Final = re.compile(r"[0-9a-f]{16}")
_PROVIDER_REF: Final = re.compile(r"provider-[0-9a-f]{20}")


def _tuple(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


def _codes(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    path = f"$.{attribute.name}"
    if not isinstance(value, tuple) or not all(type(code) is str for code in value):
        raise RecordValidationError("must be a list of codes", path=path, code="wrong_type")
    if list(value) != sorted(set(value)):
        raise RecordValidationError(
            "must list each code once, sorted", path=path, code="invalid_value"
        )
    for index, code in enumerate(value):
        check_token(code, f"{path}[{index}]")


@frozen(kw_only=True)
class IngestGuard:
    """The standing-policy guard's verdict: passed, and every reason, sorted.

    ``field_path`` (ours; present only then) names the event's field that made it
    unmodelled, unsafe or raw (``$.comment_body``): the seeds block such an event, and
    the path says which field (gap 8), never its value.
    """

    __rm_omit_none__: ClassVar[bool] = True

    passed: bool = f.strict_bool()
    reason_codes: tuple[str, ...] = attrs.field(converter=_tuple, validator=_codes)
    semantic_reasoning_preserved: Literal[True] = f.const(True)
    rule: Literal[
        "standing_policy_checks_exact_owner_class_source_actor_scope_and_authority_without_semantic_routing"
    ] = f.const(INGEST_GUARD_RULE)
    field_path: str | None = f.optional_text(400)

    def __attrs_post_init__(self) -> None:
        if self.passed == bool(self.reason_codes):
            raise RecordValidationError(
                "a guard passes exactly when it has no reason codes",
                path="$.passed",
                code="inconsistent_guard",
            )


@frozen(kw_only=True)
class IngestWrite:
    """The provider write: planned, or what the provider said (created / unchanged / conflict)."""

    status: WriteStatus = f.enum("planned", "created", "unchanged", "conflict", "failed")
    requested_count: Literal[1] = f.const(1)
    write_count: int = f.integer(minimum=0, maximum=1)

    def __attrs_post_init__(self) -> None:
        if self.write_count != (1 if self.status == "created" else 0):
            raise RecordValidationError(
                "write_count is 1 exactly when the write created the record",
                path="$.write_count",
                code="invalid_value",
            )


# Every write outcome a receipt can carry, built once (a write has no other fields).
WRITES: Final[dict[str, IngestWrite]] = {
    status: IngestWrite(status=status, write_count=1 if status == "created" else 0)
    for status in get_args(WriteStatus)
}


@frozen(kw_only=True)
class NextRecall:
    """Where the record can be recalled: the caller's explicit function-boundary recall."""

    corpus_id: str = f.corpus_id()
    surface_ids: tuple[str, ...] = f.surface_list(min_items=1, max_items=12)
    mode: Literal["function_boundary"] = f.const("function_boundary")
    automatic_recall: Literal[False] = f.const(False)


def _optional_digest12(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is not None and (type(value) is not str or not _DIGEST12.fullmatch(value)):
        raise RecordValidationError(
            "must be 12 lower-case hex", path=f"$.{attribute.name}", code="invalid_format"
        )


def _optional_digest16(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is not None and (type(value) is not str or not _DIGEST16.fullmatch(value)):
        raise RecordValidationError(
            "must be 16 lower-case hex", path=f"$.{attribute.name}", code="invalid_format"
        )


AdapterSchema = Literal[
    "issue_fix_reward_memory_event_v0", "scoped_feedback_reward_memory_candidate_adapter_v0"
]


def _optional_provider_ref(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is not None and (type(value) is not str or not _PROVIDER_REF.fullmatch(value)):
        raise RecordValidationError(
            "must be an opaque provider- ref", path=f"$.{attribute.name}", code="invalid_format"
        )


# The §9.5 wrapper fields of each adapter (True: issue_fix_maintainer_feedback), and the
# constants among them.
_WRAPPER_VALUES: Final[dict[bool, dict[str, str]]] = {
    True: {
        "adapter_schema_version": "issue_fix_reward_memory_event_v0",
        "next_issue_fix_call": "run_issue_fix_patch_planning_reward_memory",
    },
    False: {
        "adapter_schema_version": "scoped_feedback_reward_memory_candidate_adapter_v0",
        "event_schema_version": "scoped_feedback_reward_memory_event_v0",
        "next_reward_memory_call": "explicit_function_boundary_recall",
    },
}
_WRAPPER_FIELDS: Final[dict[bool, frozenset[str]]] = {
    True: frozenset({"adapter_schema_version", "next_issue_fix_call", "issue_ref"}),
    False: frozenset(
        {
            "adapter_schema_version",
            "event_schema_version",
            "next_reward_memory_call",
            "feedback_ref",
        }
    ),
}


@frozen(kw_only=True)
class IngestReceipt:
    """``reward_memory_ingest_receipt_v0``: what one ingest did, public-safe."""

    ok: Literal[True] = f.const(True)
    schema_version: Literal["reward_memory_ingest_receipt_v0"] = f.const(INGEST_RECEIPT_SCHEMA)
    status: IngestStatus = f.enum(*INGEST_STATUSES)
    reason_codes: tuple[str, ...] = attrs.field(converter=_tuple, validator=_codes)
    adapter: Literal["issue_fix_maintainer_feedback", "scoped_feedback"] = f.enum(
        "issue_fix_maintainer_feedback", "scoped_feedback"
    )
    # None only when the event itself was refused (raw or unmodelled): no candidate exists.
    candidate_ref: str | None = f.optional_token()
    record_ref: str | None = f.optional_token()
    activation_ref: str | None = f.optional_token()
    corpus_id: str = f.corpus_id()
    policy_id: str = f.token()
    # sha256 of the canonical JSON of the whole standing policy, 12 hex (the target binds it).
    policy_digest: str = attrs.field(validator=_optional_digest12)
    surface_ids: tuple[str, ...] = f.surface_list(min_items=0, max_items=12)
    guard: IngestGuard = attrs.field(validator=attrs.validators.instance_of(IngestGuard))
    # Opaque: make_ref("target", provider, namespace, scope, peer, key); the same on a replay.
    target_ref: str | None = f.optional_token()
    provider_ref: str | None = attrs.field(default=None, validator=_optional_provider_ref)
    write: IngestWrite | None = None
    next_recall: NextRecall | None = None
    readback: RecallPacket | None = None
    provider_call_count: int = f.integer(minimum=0)
    deduplicated: bool = f.strict_bool()
    exact_readback_verified: bool = f.strict_bool()
    memory_available_for_recall: bool = f.strict_bool()
    external_writes_performed: bool = f.strict_bool()
    fail_open: Literal[True] = f.const(True)
    provider_failure_is_user_gate: Literal[False] = f.const(False)
    grants_new_action_authority: Literal[False] = f.const(False)
    raw_content_captured: Literal[False] = f.const(False)
    raw_provider_payload_captured: Literal[False] = f.const(False)
    # The adapter wrapper's fields (reference §9.5): which event, its summary's digest
    # (never the summary), the verification recall's evidence (§11.1) and the next call.
    # Optional on input: a receipt written before they existed still reads.
    adapter_schema_version: AdapterSchema | None = f.optional_enum(*get_args(AdapterSchema))
    event_schema_version: Literal["scoped_feedback_reward_memory_event_v0"] | None = (
        f.optional_enum("scoped_feedback_reward_memory_event_v0")
    )
    issue_ref: str | None = f.optional_text(160)
    feedback_ref: str | None = f.optional_text(160)
    event_summary_digest: str | None = attrs.field(default=None, validator=_optional_digest16)
    execution_evidence: ExecutionEvidence | None = None
    next_issue_fix_call: Literal["run_issue_fix_patch_planning_reward_memory"] | None = (
        f.optional_enum("run_issue_fix_patch_planning_reward_memory")
    )
    next_reward_memory_call: Literal["explicit_function_boundary_recall"] | None = f.optional_enum(
        "explicit_function_boundary_recall"
    )

    def __attrs_post_init__(self) -> None:
        activated = self.status == "activated"
        if self.exact_readback_verified != activated or self.memory_available_for_recall != (
            activated
        ):
            raise RecordValidationError(
                "exact_readback_verified and memory_available_for_recall hold exactly when "
                "the status is activated",
                path="$.memory_available_for_recall",
                code="inconsistent_receipt",
            )
        if (self.status == "guard_blocked") == self.guard.passed:
            raise RecordValidationError(
                "the status is guard_blocked exactly when the guard did not pass",
                path="$.status",
                code="inconsistent_receipt",
            )
        if self.status == "guard_blocked":
            expected: frozenset[str] = frozenset(self.guard.reason_codes)
        else:
            expected = STATUS_REASON_CODES[self.status]
        if not set(self.reason_codes) <= expected or (expected and not self.reason_codes):
            raise RecordValidationError(
                f"reason codes do not fit the status {self.status}",
                path="$.reason_codes",
                code="inconsistent_receipt",
            )
        if self.status in ("guard_blocked", "planned") and (
            self.provider_call_count or self.external_writes_performed or self.deduplicated
        ):
            raise RecordValidationError(
                f"a {self.status} ingest makes no provider call",
                path="$.provider_call_count",
                code="inconsistent_receipt",
            )
        if self.deduplicated and self.external_writes_performed:
            raise RecordValidationError(
                "a deduplicated ingest writes nothing",
                path="$.deduplicated",
                code="inconsistent_receipt",
            )
        self._check_wrapper()
        if self.execution_evidence is not None:
            from reward_memory.records.execution_evidence import evidence_of  # noqa: PLC0415

            if self.execution_evidence != evidence_of(self.readback):
                raise RecordValidationError(
                    "is derived from the receipt's readback (reference 9.5)",
                    path="$.execution_evidence",
                    code="inconsistent_receipt",
                )

    def _check_wrapper(self) -> None:
        """The §9.5 fields name this receipt's adapter, and only that adapter's fields."""
        issue_fix = self.adapter == "issue_fix_maintainer_feedback"
        own = _WRAPPER_FIELDS[issue_fix]
        for name, expected in _WRAPPER_VALUES[issue_fix].items():
            if getattr(self, name) not in (None, expected):
                raise RecordValidationError(
                    f"is {expected} for the {self.adapter} adapter",
                    path=f"$.{name}",
                    code="inconsistent_receipt",
                )
        for name in _WRAPPER_FIELDS[not issue_fix] - own:
            if getattr(self, name) is not None:
                raise RecordValidationError(
                    f"belongs to the other adapter's receipt (null for {self.adapter})",
                    path=f"$.{name}",
                    code="inconsistent_receipt",
                )
