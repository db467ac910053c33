"""Runtime-hook records: the automatic recall and ingest hook packets (reference §10.5-10.6).

- :class:`RecallHookPacket` (``reward_memory_automatic_recall_hook_v0``): what a
  walk over one surface's corpora did -- every attempt's public recall packet,
  the application receipt, and provider-call telemetry. Never the output (it is
  the caller's data, not a packet field).
- :class:`IngestHookPacket` (``reward_memory_automatic_ingest_hook_v0``): the
  ingest receipt the hook got from the ingest core, and its telemetry.

``trigger`` says whether the automatic hook ran (``automatic``: it needs the
config's flag) or the module author called the seam explicitly (``explicit``).
Both are fail-open: no packet grants authority, captures raw content or makes
a provider failure a user gate.
"""

from __future__ import annotations

from typing import Any, Final, Literal, get_args

import attrs

from reward_memory._frozen import frozen
from reward_memory.errors import RecordValidationError
from reward_memory.grammars import check_surface_id
from reward_memory.records import _fields as f
from reward_memory.records.application import ApplicationReceipt
from reward_memory.records.ingest import IngestReceipt
from reward_memory.records.recall import MODES, Mode, RecallPacket

__all__ = [
    "INGEST_HOOK_SCHEMA",
    "INGEST_HOOK_STATUSES",
    "RECALL_HOOK_SCHEMA",
    "RECALL_HOOK_STATUSES",
    "IngestHookPacket",
    "IngestHookStatus",
    "IngestHookTelemetry",
    "RecallHookPacket",
    "RecallHookStatus",
    "RecallHookTelemetry",
    "Trigger",
]

RECALL_HOOK_SCHEMA: Final = "reward_memory_automatic_recall_hook_v0"
INGEST_HOOK_SCHEMA: Final = "reward_memory_automatic_ingest_hook_v0"
Trigger = Literal["automatic", "explicit"]
RecallHookStatus = Literal[
    "disabled",
    "guard_rejected",
    "not_available",
    "available_not_applied",
    "applied",
    "ignored",
    "refuted",
    "failed",
    "provider_unavailable",
]
RECALL_HOOK_STATUSES: Final[tuple[RecallHookStatus, ...]] = get_args(RecallHookStatus)
IngestHookStatus = Literal[
    "disabled",
    "guard_rejected",
    "guard_blocked",
    "planned",
    "provider_unavailable",
    "conflict",
    "committed_pending",
    "readback_unverified",
    "activated",
]
INGEST_HOOK_STATUSES: Final[tuple[IngestHookStatus, ...]] = get_args(IngestHookStatus)
_MAX_ATTEMPTS: Final = 50  # a surface holds at most 50 corpora


def _tuple(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


def _packets(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    path = f"$.{attribute.name}"
    if not isinstance(value, tuple) or len(value) > _MAX_ATTEMPTS:
        raise RecordValidationError(
            f"must be a list of at most {_MAX_ATTEMPTS} recall packets",
            path=path,
            code="wrong_type",
        )
    for index, item in enumerate(value):
        if not isinstance(item, RecallPacket):
            raise RecordValidationError(
                "must be a RecallPacket", path=f"{path}[{index}]", code="wrong_type"
            )


def _optional_surface(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is not None:
        check_surface_id(value, f"$.{attribute.name}")


def _optional(cls: type[Any]) -> Any:
    def validate(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
        if value is not None and not isinstance(value, cls):
            raise RecordValidationError(
                f"must be a {cls.__name__} or null", path=f"$.{attribute.name}", code="wrong_type"
            )

    return attrs.field(default=None, validator=validate)


@frozen(kw_only=True)
class RecallHookTelemetry:
    """Provider-call telemetry of one walk.

    ``provider_call_cap`` bounds ``provider_call_count``: per configured corpus,
    ``max_queries`` searches and at most ``limit`` reads for each.
    """

    profile_id: str | None = f.optional_token()
    mode: Mode | None = attrs.field(
        default=None, validator=attrs.validators.optional(attrs.validators.in_(MODES))
    )
    query_count: int = f.integer(default=0)
    max_queries_per_corpus: int = f.integer(default=0)
    configured_corpus_count: int = f.integer(default=0)
    attempted_corpus_count: int = f.integer(default=0)
    provider_call_count: int = f.integer(default=0)
    provider_call_cap: int = f.integer(default=0)
    result_readback_verified: bool = f.strict_bool(default=False)

    def __attrs_post_init__(self) -> None:
        if self.attempted_corpus_count > self.configured_corpus_count:
            raise RecordValidationError(
                "more corpora attempted than configured",
                path="$.attempted_corpus_count",
                code="invalid_value",
            )
        if self.provider_call_count > self.provider_call_cap:
            raise RecordValidationError(
                "provider calls exceed the cap", path="$.provider_call_count", code="invalid_value"
            )


@frozen(kw_only=True)
class RecallHookPacket:
    """``reward_memory_automatic_recall_hook_v0``: one walk over a surface's corpora.

    ``hit_corpus_id`` is the corpus whose exact-readback recall was applied
    (the first ``completed`` one in configured order), else null.
    """

    ok: Literal[True] = f.const(True)
    schema_version: Literal["reward_memory_automatic_recall_hook_v0"] = f.const(RECALL_HOOK_SCHEMA)
    surface_id: str = f.surface_id()
    trigger: Trigger = f.enum(*get_args(Trigger))
    status: RecallHookStatus = f.enum(*RECALL_HOOK_STATUSES)
    reason_code: str | None = f.optional_token()
    automatic_recall: bool = f.strict_bool()
    hit_corpus_id: str | None = f.optional_corpus_id()
    recall_attempts: tuple[RecallPacket, ...] = attrs.field(
        default=(), converter=_tuple, validator=_packets
    )
    application: ApplicationReceipt | None = _optional(ApplicationReceipt)
    telemetry: RecallHookTelemetry = attrs.field(
        factory=RecallHookTelemetry,
        validator=attrs.validators.instance_of(RecallHookTelemetry),
    )
    fail_open_preserved_base: bool = f.strict_bool()
    fail_open: Literal[True] = f.const(True)
    provider_failure_is_user_gate: Literal[False] = f.const(False)
    grants_new_action_authority: Literal[False] = f.const(False)
    external_writes_performed: Literal[False] = f.const(False)
    raw_content_captured: Literal[False] = f.const(False)

    def __attrs_post_init__(self) -> None:
        if self.status == "applied" and (self.application is None or self.fail_open_preserved_base):
            raise RecordValidationError(
                "applied needs an application receipt and a changed output",
                path="$.status",
                code="invalid_value",
            )
        if self.status in ("disabled", "guard_rejected") and self.telemetry.provider_call_count:
            raise RecordValidationError(
                "a disabled or rejected hook makes no provider call",
                path="$.telemetry.provider_call_count",
                code="invalid_value",
            )


@frozen(kw_only=True)
class IngestHookTelemetry:
    """``provider_sync_count`` is 1 when the ingest reached the provider's write."""

    provider_sync_count: int = f.integer(default=0, maximum=1)
    provider_call_count: int = f.integer(default=0)
    exact_readback_verified: bool = f.strict_bool(default=False)
    deduplicated: bool = f.strict_bool(default=False)
    provider_available: bool = f.strict_bool(default=True)


@frozen(kw_only=True)
class IngestHookPacket:
    """``reward_memory_automatic_ingest_hook_v0``: one event through the ingest core.

    ``status`` is the receipt's status when the ingest core ran, else
    ``disabled`` or ``guard_rejected`` (``reason_code`` says why, no receipt,
    zero provider calls).
    """

    ok: Literal[True] = f.const(True)
    schema_version: Literal["reward_memory_automatic_ingest_hook_v0"] = f.const(INGEST_HOOK_SCHEMA)
    surface_id: str | None = attrs.field(default=None, validator=_optional_surface)
    trigger: Trigger = f.enum(*get_args(Trigger))
    status: IngestHookStatus = f.enum(*INGEST_HOOK_STATUSES)
    reason_code: str | None = f.optional_token()
    automatic_ingest: bool = f.strict_bool()
    receipt: IngestReceipt | None = _optional(IngestReceipt)
    telemetry: IngestHookTelemetry = attrs.field(
        factory=IngestHookTelemetry,
        validator=attrs.validators.instance_of(IngestHookTelemetry),
    )
    external_writes_performed: bool = f.strict_bool(default=False)
    fail_open: Literal[True] = f.const(True)
    provider_failure_is_user_gate: Literal[False] = f.const(False)
    grants_new_action_authority: Literal[False] = f.const(False)
    raw_content_captured: Literal[False] = f.const(False)

    def __attrs_post_init__(self) -> None:
        if (self.receipt is None) != (self.status in ("disabled", "guard_rejected")):
            raise RecordValidationError(
                "a receipt exactly when the ingest core ran", path="$.receipt", code="invalid_value"
            )
        if self.receipt is not None and self.receipt.status != self.status:
            raise RecordValidationError(
                "the status is the receipt's", path="$.status", code="invalid_value"
            )
