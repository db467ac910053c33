"""Stage-3 application records: the model's decision, the receipt, the application packet.

- :class:`ModelDecision` -- what the caller's model callback may return instead of
  a plain mapping (``outcome``, ``output``, ``memory_refs``, ``reasoning_summary``,
  ``current_artifact_verified``). It is checked by :func:`reward_memory.application.apply`,
  not here, so a bad decision fails open instead of raising.
- :class:`ApplicationReceipt` (``reward_memory_application_receipt_v0``) -- hashed
  memory refs, the model's compact reasoning summary and current-artifact
  verification; never raw provider content, never new authority.
- :class:`ApplicationResult` (``reward_memory_application_v0``) -- the receipt, the
  output the caller should use, and whether that output is the base output.

Invariants (enforced here): ``applied`` requires at least one memory ref digest,
a verified current artifact and a read-back recall; every non-model outcome
(``failed``, ``not_available``, ``available_not_applied``) carries no memory ref
digests and keeps the base output.
"""

from __future__ import annotations

import re
from typing import Any, Final, Literal, get_args

from reward_memory._frozen import frozen
from reward_memory.errors import RecordValidationError
from reward_memory.records import _fields as f
from reward_memory.records import _memo as m
from reward_memory.records.recall import MODES, QUERY_KINDS, Mode, QueryEvidence, QueryKind

__all__ = [
    "APPLICATION_SCHEMA",
    "MODEL_OUTCOMES",
    "OUTCOMES",
    "RECEIPT_SCHEMA",
    "ApplicationReceipt",
    "ApplicationResult",
    "ModelDecision",
    "ModelOutcome",
    "Outcome",
]

APPLICATION_SCHEMA: Final = "reward_memory_application_v0"
RECEIPT_SCHEMA: Final = "reward_memory_application_receipt_v0"

ModelOutcome = Literal["applied", "ignored", "refuted"]
MODEL_OUTCOMES: Final[tuple[ModelOutcome, ...]] = get_args(ModelOutcome)
Outcome = Literal[
    "applied", "ignored", "refuted", "failed", "not_available", "available_not_applied"
]
OUTCOMES: Final[tuple[Outcome, ...]] = get_args(Outcome)
_SHORT_HEX: Final = re.compile(r"[0-9a-f]{16}")
_MODE_SET: Final = frozenset(MODES)
_QUERY_KIND_SET: Final = frozenset(QUERY_KINDS)
_OUTCOME_SET: Final = frozenset(OUTCOMES)
_RECEIPT_FLAGS: Final = (
    ("model_reasoning_preserved", True),
    ("grants_new_action_authority", False),
    ("external_writes_performed", False),
    ("raw_content_captured", False),
)


@frozen(kw_only=True)
class ModelDecision:
    """A model callback's decision (a typed alternative to returning a mapping).

    ``memory_refs`` name items of *this* recall: each is an item's raw
    ``memory_ref`` or its opaque ``provider_ref``. Nothing is validated on
    construction: :func:`reward_memory.application.apply` reads each field once,
    checks the decision and turns any problem into a ``failed`` receipt (fail
    open). For ``ignored`` / ``refuted`` the output must equal the base by value
    (the callback's own copy of it will do); the caller then gets its base back.
    """

    outcome: str
    output: Any
    memory_refs: tuple[str, ...] = ()
    reasoning_summary: str
    current_artifact_verified: bool


def _check_digests(value: Any) -> None:
    path = "$.memory_ref_digests"
    if type(value) is not tuple:
        raise RecordValidationError("must be a list", path=path, code="wrong_type")
    for index, item in enumerate(value):
        if type(item) is not str or _SHORT_HEX.fullmatch(item) is None:
            raise RecordValidationError(
                "must be 16 lower-case hex", path=f"{path}[{index}]", code="invalid_format"
            )
    if len(value) > 1 and list(value) != sorted(set(value)):
        raise RecordValidationError(
            "must be sorted and free of duplicates", path=path, code="invalid_value"
        )


@frozen(kw_only=True)
class ApplicationReceipt:
    """``reward_memory_application_receipt_v0``: what the model did with a recall, compactly."""

    schema_version: Literal["reward_memory_application_receipt_v0"] = f.const(RECEIPT_SCHEMA)
    application_id: str
    artifact_ref: str | None = None
    corpus_id: str
    surface_id: str
    mode: Mode
    query_kind: QueryKind
    query_evidence: tuple[QueryEvidence, ...]
    outcome: Outcome
    memory_ref_digests: tuple[str, ...]
    reasoning_summary: str
    current_artifact_verified: bool
    result_readback_verified: bool
    provider_call_count: int
    model_reasoning_preserved: Literal[True] = m.flag(True)
    grants_new_action_authority: Literal[False] = m.flag(False)
    external_writes_performed: Literal[False] = m.flag(False)
    raw_content_captured: Literal[False] = m.flag(False)

    def __attrs_post_init__(self) -> None:
        # One pass over every field (a receipt is built on every application).
        if (
            self.model_reasoning_preserved is not True
            or self.grants_new_action_authority is not False
            or self.external_writes_performed is not False
            or self.raw_content_captured is not False
        ):
            m.check_flags(self, _RECEIPT_FLAGS)  # type: ignore[unreachable]  # untyped callers
        m.require_token(self.application_id, "$.application_id")
        m.require_optional_token(self.artifact_ref, "$.artifact_ref")
        m.require_corpus(self.corpus_id, "$.corpus_id")
        m.require_surface(self.surface_id, "$.surface_id")
        m.require_choice(self.mode, _MODE_SET, "$.mode")
        m.require_choice(self.query_kind, _QUERY_KIND_SET, "$.query_kind")
        m.require_records(self.query_evidence, QueryEvidence, "$.query_evidence")
        m.require_choice(self.outcome, _OUTCOME_SET, "$.outcome")
        _check_digests(self.memory_ref_digests)
        m.check_text_memo(self.reasoning_summary, 500, "$.reasoning_summary")
        m.require_bool(self.current_artifact_verified, "$.current_artifact_verified")
        m.require_bool(self.result_readback_verified, "$.result_readback_verified")
        m.require_count(self.provider_call_count, "$.provider_call_count")
        if self.outcome == "applied":
            if not self.memory_ref_digests:
                raise RecordValidationError(
                    "an applied receipt names the memory it applied",
                    path="$.memory_ref_digests",
                    code="invalid_value",
                )
            if not self.current_artifact_verified:
                raise RecordValidationError(
                    "an applied receipt requires current-artifact verification",
                    path="$.current_artifact_verified",
                    code="invalid_value",
                )
            if not self.result_readback_verified:
                raise RecordValidationError(
                    "an applied receipt requires a read-back recall",
                    path="$.result_readback_verified",
                    code="invalid_value",
                )
        if self.outcome not in MODEL_OUTCOMES and self.memory_ref_digests:
            raise RecordValidationError(
                f"a {self.outcome} receipt carries no memory refs",
                path="$.memory_ref_digests",
                code="invalid_value",
            )


@frozen(kw_only=True)
class ApplicationResult:
    """``reward_memory_application_v0``: the output to use, and the receipt saying why."""

    ok: Literal[True] = m.flag(True)
    schema_version: Literal["reward_memory_application_v0"] = f.const(APPLICATION_SCHEMA)
    status: Outcome = f.enum(*OUTCOMES)
    output: Any
    receipt: ApplicationReceipt
    fail_open_preserved_base: bool = f.strict_bool()

    def __attrs_post_init__(self) -> None:
        m.check_flags(self, (("ok", True),))
        if self.status != self.receipt.outcome:
            raise RecordValidationError(
                "status must equal the receipt outcome", path="$.status", code="invalid_value"
            )
        if self.status not in MODEL_OUTCOMES and not self.fail_open_preserved_base:
            raise RecordValidationError(
                f"a {self.status} application keeps the base output",
                path="$.fail_open_preserved_base",
                code="invalid_value",
            )


# Trusted constructors (library-internal): for receipts and results that
# reward_memory.application.apply assembles from checked parts; see
# reward_memory.records._memo.trusted. Public constructors keep every check.
trusted_receipt: Final = m.trusted(ApplicationReceipt)
trusted_result: Final = m.trusted(ApplicationResult)
