"""The candidate vocabulary (schema names, reason codes, decisions) and its field helpers.

Part of :mod:`reward_memory.records.candidate`, which re-exports every public
name; kept apart so the records modules stay one concept each.
"""

from __future__ import annotations

from typing import Any, Final, Literal, get_args

import attrs

from reward_memory.errors import RecordValidationError
from reward_memory.records import _fields as f
from reward_memory.records import _memo as m
from reward_memory.records._fields import is_record

__all__ = [
    "AVAILABLE_REVIEW_DECISIONS",
    "CANDIDATE_SCHEMA",
    "CHECKPOINT_SCHEMA",
    "GUARD_RULE",
    "HARD_POLICY_ACTOR_ROLES",
    "PERSIST_NEXT_STEP",
    "PROPOSAL_SCHEMA",
    "REASON_CODES",
    "RECORDED_MISMATCH",
    "RETIRED_REASONS",
    "REVIEW_DECISIONS",
    "REVIEW_REASON_CODES",
    "REVIEW_REQUEST_SCHEMA",
    "REVIEW_SCHEMA",
    "REVIEW_STATUSES",
    "Decision",
    "RetiredReason",
    "ReviewStatus",
    "guard_reason_codes",
    "is_record",
    "review_reason_codes",
    "text_field",
    "token_list",
]

PROPOSAL_SCHEMA: Final = "reward_memory_candidate_proposal_v0"
CHECKPOINT_SCHEMA: Final = "reward_memory_authority_checkpoint_v0"
CANDIDATE_SCHEMA: Final = "reward_memory_candidate_v0"
REVIEW_SCHEMA: Final = "reward_memory_candidate_review_v0"
REVIEW_REQUEST_SCHEMA: Final = "reward_memory_candidate_review_request_v0"

# Roles whose verified feedback may derive hard-policy content (reference §2.1).
HARD_POLICY_ACTOR_ROLES: Final = frozenset(
    {"verified_repository_core_contributor", "verified_project_owner_or_operator"}
)

# The candidate guard's reason codes, in the fixed order they are reported.
# The first eleven are the original's (reference §5.1); `candidate_expired`
# is ours (differs from the original, which never looked at expiry here).
REASON_CODES: Final = (
    "source_freshness_not_current",
    "unresolved_higher_authority_conflict",
    "procedural_experience_current_artifact_unverified",
    "advisory_class_requested_action_authority",
    "hard_policy_missing_action_scope",
    "authority_checkpoint_unverified",
    "authority_actor_mismatch",
    "authority_actor_role_mismatch",
    "actor_role_cannot_derive_hard_policy",
    "authority_project_mismatch",
    "requested_action_scope_exceeds_verified_authority",
    "candidate_expired",
)
# Ours, on review packets only (last): review re-derives its target's guard, and
# a recorded verdict that disagrees with the derived one blocks.
RECORDED_MISMATCH: Final = "recorded_guard_verdict_mismatch"
REVIEW_REASON_CODES: Final = (*REASON_CODES, RECORDED_MISMATCH)
_REASON_RANK: Final = {code: rank for rank, code in enumerate(REVIEW_REASON_CODES)}
GUARD_RULE: Final = (
    "model_proposes_meaning_deterministic_guards_verify_scope_privacy_and_no_authority_expansion"
)

Decision = Literal["accept", "edit", "reject", "retire", "no_write"]
REVIEW_DECISIONS: Final[tuple[Decision, ...]] = get_args(Decision)
AVAILABLE_REVIEW_DECISIONS: Final = tuple(sorted(REVIEW_DECISIONS))
ReviewStatus = Literal["active", "review_ready", "rejected", "retired", "no_write", "guard_blocked"]
REVIEW_STATUSES: Final[tuple[ReviewStatus, ...]] = get_args(ReviewStatus)
PERSIST_NEXT_STEP: Final = "caller_uses_declared_corpus_write_authority_then_readback"
RetiredReason = Literal["rejected_in_review", "reviewed_retirement", "no_write_rationale"]
RETIRED_REASONS: Final = ("rejected_in_review", "reviewed_retirement", "no_write_rationale")


# -- field helpers --------------------------------------------------------------------------
#
# Stage-2 records are built on the per-call path from values an earlier record
# already checked (a proposal's summary becomes the candidate's, a review's
# refs become the review packet's). Their text and identifier checks are the
# shared grammars, memoised (reward_memory.records._memo): the same verdict and
# the same error with its path, paid once per distinct value.


def text_field(limit: int, *, optional: bool = False, default: str | None = None) -> Any:
    """Compact public-safe text (whitespace collapsed; over ``limit``: rejected, not cut)."""

    def convert(value: Any, field: attrs.Attribute[Any]) -> Any:
        if value is None and optional:
            return None
        text = m.compact_memo(value, limit, f"$.{field.name}")
        if not text.isascii():
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:
                # A lone surrogate (JSON can carry "\ud800"): it has no UTF-8 form,
                # so it could neither be hashed nor stored.
                raise RecordValidationError(
                    "must be valid Unicode text (it holds a lone surrogate)",
                    path=f"$.{field.name}",
                    code="invalid_format",
                ) from None
        return text

    converter = attrs.Converter(convert, takes_field=True)
    if optional:
        return f.tagged("optional_text", limit, default=None, converter=converter)
    if default is not None:
        return f.tagged("text", limit, converter=converter, default=default)
    return f.tagged("text", limit, converter=converter)


def token_list(*, max_items: int) -> Any:
    """A duplicate-free list of at most ``max_items`` tokens, returned sorted."""

    def convert(value: Any, field: attrs.Attribute[Any]) -> tuple[str, ...]:
        path = f"$.{field.name}"
        # A real sequence: not a string, a set or a mapping, nor a one-shot iterator.
        if not isinstance(value, list | tuple):
            raise RecordValidationError("must be a list", path=path, code="wrong_type")
        items = tuple(value)
        if len(items) > max_items:
            raise RecordValidationError(
                f"must hold at most {max_items} items", path=path, code="invalid_value"
            )
        for index, item in enumerate(items):
            m.check_token_memo(item, f"{path}[{index}]")
        if len(set(items)) != len(items):
            seen: set[str] = set()
            for index, item in enumerate(items):
                if item in seen:
                    raise RecordValidationError(
                        "must not repeat an item", path=f"{path}[{index}]", code="duplicate_item"
                    )
                seen.add(item)
        return items if len(items) < 2 else tuple(sorted(items))

    converter = attrs.Converter(convert, takes_field=True)
    return f.tagged("list", ("token", 0, max_items, False), factory=tuple, converter=converter)


def review_reason_codes(value: Any) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, list | tuple):
        raise RecordValidationError("must be a list", path="$.reason_codes", code="wrong_type")
    codes = tuple(value)
    ranks = []
    for index, code in enumerate(codes):
        rank = _REASON_RANK.get(code) if isinstance(code, str) else None
        if rank is None:
            raise RecordValidationError(
                "is not a candidate guard reason code",
                path=f"$.reason_codes[{index}]",
                code="invalid_value",
            )
        ranks.append(rank)
    if ranks != sorted(set(ranks)):
        raise RecordValidationError(
            "must list each reason once, in the guard's fixed order",
            path="$.reason_codes",
            code="invalid_value",
        )
    return codes


def guard_reason_codes(value: Any) -> tuple[str, ...]:
    codes = review_reason_codes(value)
    if RECORDED_MISMATCH in codes:
        raise RecordValidationError(
            "is not a candidate guard reason code",
            path=f"$.reason_codes[{codes.index(RECORDED_MISMATCH)}]",
            code="invalid_value",
        )
    return codes
