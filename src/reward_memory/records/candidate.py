"""Stage-2 records: the proposal, the authority checkpoint and the candidate.

Inputs (validated in full when built, by Python callers or by :func:`wire.load`):

- :class:`Proposal` (``reward_memory_candidate_proposal_v0``) -- a model-proposed
  compact candidate: target class, content summary, source, scope, reasoning
  (confidence *with its basis*), guard context, requested action scopes,
  optional expiry. ``raw_content_captured`` is required and must be false.
- :class:`AuthorityCheckpoint` (``reward_memory_authority_checkpoint_v0``) -- the
  caller's independently verified authority for an actor, role, project and
  action scopes. It comes from the caller's own authority source, never from
  the proposal's claims (differs from the original, whose ingest path built it
  from the event itself).
- :class:`ReviewDecision` -- one review: accept / edit / reject / retire / no_write.

Packets:

- :class:`CandidatePacket` (``reward_memory_candidate_v0``) -- the guarded candidate.

The review packet and the review request are in :mod:`reward_memory.records.review`
(a review re-derives its target's guard: a recorded verdict is never trusted).

A :class:`Candidate` always carries the ``candidate_ref`` of its own content: it
is computed when the record is built without one and checked when one is
given, so a packet whose content was altered after the fact fails to load.

What the ref covers (issue item 12): everything the candidate hands on to the
active record that says what it claims or how long it lives -- class, content,
source, scope, guard context and requested authority (the original's J1
object, reference §1.5), and, each only when set, the expiry, the observation
time and the refs it supersedes (ours: the original ignored them, so two
candidates differing only in expiry shared a ref). A candidate that has none of
the three keeps the original's ref byte for byte (the reference fixture is
still ``candidate:0e073f348a2a6c3ffc3c``). Timestamps are hashed in their
normalised spelling, so two spellings of one instant are one candidate.
Renewing or shortening an expiry is therefore a new candidate with a new ref.

Not hashed: the lifecycle *state* and ``retired_reason`` (a review moves the
same candidate through candidate, active, retired: retire must name the ref
that was accepted), the constant privacy flag, and the model's reasoning --
its summary, confidence and basis are its assessment of the evidence, never
the claim and never authority (confidence cannot raise it). The active record
copies the confidence, and its ``activation_ref`` covers it. Because the
expiry is part of the identity, a closed (rejected, retired, no-write) record
keeps its ``expires_at`` (differs from the original, which dropped it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Final, Literal, get_args

import attrs

from reward_memory.errors import RecordValidationError
from reward_memory.records import _fields as f
from reward_memory.records import _memo as m

# Re-exported: these live apart so a standing policy can be read without
# building every candidate class (see records/_candidate_class.py).
from reward_memory.records._candidate_class import (
    CANDIDATE_CLASSES,
    CandidateClass,
    no_raw_content,
)
from reward_memory.records._candidate_ref import candidate_hashed_object, candidate_ref_of
from reward_memory.records._plain import to_plain
from reward_memory.records.envelope import ConfidenceLevel, RecordScope

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = [
    "AVAILABLE_REVIEW_DECISIONS",
    "CANDIDATE_CLASSES",
    "CANDIDATE_SCHEMA",
    "CHECKPOINT_SCHEMA",
    "GUARD_RULE",
    "HARD_POLICY_ACTOR_ROLES",
    "PERSIST_NEXT_STEP",
    "PROPOSAL_SCHEMA",
    "REASON_CODES",
    "RECORDED_MISMATCH",
    "REVIEW_DECISIONS",
    "REVIEW_REASON_CODES",
    "REVIEW_REQUEST_SCHEMA",
    "REVIEW_SCHEMA",
    "REVIEW_STATUSES",
    "UNVERIFIED_CHECKPOINT",
    "AuthorityCheckpoint",
    "Candidate",
    "CandidateClass",
    "CandidateGuard",
    "CandidateGuardContext",
    "CandidateLifecycle",
    "CandidatePacket",
    "CandidatePrivacy",
    "CandidateReasoning",
    "CandidateSource",
    "Decision",
    "Proposal",
    "RetiredReason",
    "ReviewDecision",
    "ReviewStatus",
    "candidate_hashed_object",
    "candidate_ref_of",
    "is_record",
    "no_raw_content",
    "review_reason_codes",
    "text_field",
    "to_plain",
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
_RETIRED_REASONS: Final = ("rejected_in_review", "reviewed_retirement", "no_write_rationale")


# -- field helpers --------------------------------------------------------------------------
#
# Stage-2 records are built on the per-call path from values an earlier record
# already checked (a proposal's summary becomes the candidate's, a review's
# refs become the review packet's). Their text and identifier checks are the
# shared grammars, memoised (reward_memory.records._memo): the same verdict and
# the same error with its path, paid once per distinct value.


def text_field(limit: int, *, optional: bool = False) -> Any:
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
    return f.tagged("text", limit, converter=converter)


def _token_list(*, max_items: int) -> Any:
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


def is_record(cls: type[Any]) -> Any:
    """Validator: the field holds a ``cls`` record (a dict or another record is refused)."""

    def validate(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
        if not isinstance(value, cls):
            raise RecordValidationError(
                f"must be a {cls.__name__}", path=f"$.{attribute.name}", code="wrong_type"
            )

    validate.rm_record = cls  # type: ignore[attr-defined]  # a nested record: the builder builds it
    return validate


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


def _guard_reason_codes(value: Any) -> tuple[str, ...]:
    codes = review_reason_codes(value)
    if RECORDED_MISMATCH in codes:
        raise RecordValidationError(
            "is not a candidate guard reason code",
            path=f"$.reason_codes[{codes.index(RECORDED_MISMATCH)}]",
            code="invalid_value",
        )
    return codes


# -- inputs ---------------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class CandidateSource:
    """Where the evidence came from: kind, compact reference, actor and the actor's role."""

    source_kind: str = f.token()
    source_ref: str = text_field(240)
    actor_ref: str = f.token()
    actor_role: str = f.token()


@attrs.frozen(kw_only=True)
class CandidateReasoning:
    """The model's compact reasoning, and its confidence *with the basis* for it.

    Confidence describes evidence quality only: no guard and no activation
    reads it, so it can never raise authority.
    """

    summary: str = text_field(500)
    confidence: ConfidenceLevel = f.enum("low", "medium", "high")
    confidence_basis: str = text_field(240)


@attrs.frozen(kw_only=True)
class CandidateGuardContext:
    """The caller's current observations the guard needs: freshness, conflicts, artifact proof."""

    source_freshness: Literal["current", "stale", "unknown"] = f.enum("current", "stale", "unknown")
    conflict_state: Literal["clear", "unresolved"] = f.enum("clear", "unresolved")
    current_artifact_verified: bool = f.strict_bool()


@attrs.frozen(kw_only=True)
class Proposal:
    """``reward_memory_candidate_proposal_v0``: a model-proposed compact candidate."""

    # expires_at and observed_at are left out of the wire form when absent.
    __rm_omit_none__: ClassVar[bool] = True

    schema_version: Literal["reward_memory_candidate_proposal_v0"] = f.const(PROPOSAL_SCHEMA)
    raw_content_captured: Literal[False] = no_raw_content()
    target_class: CandidateClass = f.enum(*CANDIDATE_CLASSES)
    content_summary: str = text_field(500)
    source: CandidateSource = attrs.field(validator=is_record(CandidateSource))
    scope: RecordScope = attrs.field(validator=is_record(RecordScope))
    reasoning: CandidateReasoning = attrs.field(validator=is_record(CandidateReasoning))
    guard_context: CandidateGuardContext = attrs.field(validator=is_record(CandidateGuardContext))
    requested_action_scopes: tuple[str, ...] = _token_list(max_items=12)
    expires_at: str | None = f.optional_timestamp()
    # When the source evidence was first observed; the active record's
    # source.observed_at (the activation time when absent). Part of candidate_ref when set.
    observed_at: str | None = f.optional_timestamp()


@attrs.frozen(kw_only=True)
class AuthorityCheckpoint:
    """``reward_memory_authority_checkpoint_v0``: authority verified by the caller's own source.

    For ``hard_policy`` the guard requires it to be verified, to name its
    ``source_ref``, and to bind the same actor, role and project as the
    proposal, with the requested action scopes a subset of ``action_scopes``.
    """

    schema_version: Literal["reward_memory_authority_checkpoint_v0"] = f.const(CHECKPOINT_SCHEMA)
    verified: bool = f.strict_bool()
    source_ref: str | None = f.optional_token()
    actor_ref: str | None = f.optional_token()
    actor_role: str | None = f.optional_token()
    project_ref: str | None = f.optional_token()
    action_scopes: tuple[str, ...] = _token_list(max_items=12)


UNVERIFIED_CHECKPOINT: Final = AuthorityCheckpoint(verified=False)


@attrs.frozen(kw_only=True)
class ReviewDecision:
    """One review of a candidate (or of a previous review's record).

    ``edited_content_summary`` is required for ``edit`` and refused otherwise.
    """

    decision: Decision = f.enum(*REVIEW_DECISIONS)
    reviewer_ref: str = f.token()
    review_ref: str = f.token()
    reasoning_summary: str = text_field(500)
    edited_content_summary: str | None = text_field(500, optional=True)

    def __attrs_post_init__(self) -> None:
        if self.decision == "edit" and self.edited_content_summary is None:
            raise RecordValidationError(
                "an edit names the edited content summary",
                path="$.edited_content_summary",
                code="missing_field",
            )
        if self.decision != "edit" and self.edited_content_summary is not None:
            raise RecordValidationError(
                "edited_content_summary applies only to an edit",
                path="$.edited_content_summary",
                code="invalid_value",
            )


# -- the candidate --------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class CandidateLifecycle:
    """Where the candidate stands: candidate, active (accepted) or retired (closed).

    ``expires_at`` is kept in every state: it is part of the candidate's ref.
    """

    __rm_omit_none__: ClassVar[bool] = True

    state: Literal["candidate", "active", "retired"] = f.enum("candidate", "active", "retired")
    supersedes_refs: tuple[str, ...] = _token_list(max_items=50)
    expires_at: str | None = f.optional_timestamp()
    retired_reason: RetiredReason | None = attrs.field(default=None)

    def __attrs_post_init__(self) -> None:
        if self.retired_reason is not None and self.retired_reason not in _RETIRED_REASONS:
            raise RecordValidationError(
                f"must be one of: {', '.join(_RETIRED_REASONS)}",
                path="$.retired_reason",
                code="invalid_value",
            )
        if (self.state == "retired") != (self.retired_reason is not None):
            raise RecordValidationError(
                "a retired record keeps its retired_reason, and only a retired record has one",
                path="$.retired_reason",
                code="inconsistent_lifecycle",
            )


@attrs.frozen(kw_only=True)
class CandidatePrivacy:
    """The stated invariant: no raw content was captured."""

    raw_content_captured: Literal[False] = f.const(False)


_NO_RAW: Final = CandidatePrivacy()


@attrs.frozen(kw_only=True)
class Candidate:
    """The normalised candidate record (the ``candidate`` of ``reward_memory_candidate_v0``).

    Reviews copy it with a new lifecycle; an edit replaces the content summary
    and so gets a new ``candidate_ref``.
    """

    __rm_omit_none__: ClassVar[bool] = True

    schema_version: Literal["reward_memory_candidate_v0"] = f.const(CANDIDATE_SCHEMA)
    target_class: CandidateClass = f.enum(*CANDIDATE_CLASSES)
    content_summary: str = text_field(500)
    source: CandidateSource = attrs.field(validator=is_record(CandidateSource))
    scope: RecordScope = attrs.field(validator=is_record(RecordScope))
    reasoning: CandidateReasoning = attrs.field(validator=is_record(CandidateReasoning))
    guard_context: CandidateGuardContext = attrs.field(validator=is_record(CandidateGuardContext))
    requested_action_scopes: tuple[str, ...] = _token_list(max_items=12)
    lifecycle: CandidateLifecycle = attrs.field(validator=is_record(CandidateLifecycle))
    privacy: CandidatePrivacy = attrs.field(default=_NO_RAW, validator=is_record(CandidatePrivacy))
    # Computed from the content when left empty; checked against it when given.
    candidate_ref: str = f.tagged("derived", None, default="")
    observed_at: str | None = f.optional_timestamp()

    def __attrs_post_init__(self) -> None:
        ref = candidate_ref_of(
            target_class=self.target_class,
            content_summary=self.content_summary,
            source=self.source,
            scope=self.scope,
            guard_context=self.guard_context,
            requested_action_scopes=self.requested_action_scopes,
            expires_at=self.lifecycle.expires_at,
            observed_at=self.observed_at,
            supersedes_refs=self.lifecycle.supersedes_refs,
        )
        if not self.candidate_ref:
            object.__setattr__(self, "candidate_ref", ref)
        elif self.candidate_ref != ref:
            raise RecordValidationError(
                "does not match the candidate's content (it is derived from it)",
                path="$.candidate_ref",
                code="digest_mismatch",
            )

    @property
    def expires_at(self) -> str | None:
        """The candidate's expiry (from its lifecycle)."""
        return self.lifecycle.expires_at

    @classmethod
    def of_proposal(cls, proposal: Proposal) -> Candidate:
        """The fresh candidate a proposal becomes (``propose``): its content, ``candidate`` state.

        Every field is the proposal's, already checked by the same helpers
        (class, summary, source, scope, reasoning, guard context, scopes,
        observation time); the lifecycle carries its expiry, and the ref is
        computed as the constructor computes it.
        """
        if type(proposal) is not Proposal:
            raise RecordValidationError("must be a Proposal", code="wrong_type")
        expires = proposal.expires_at
        lifecycle = (
            _FRESH if expires is None else CandidateLifecycle(state="candidate", expires_at=expires)
        )
        made: Candidate = object.__new__(cls)
        for name, put in _CANDIDATE_SETTERS:
            put(made, getattr(proposal, name))
        _set_version(made, CANDIDATE_SCHEMA)
        _set_lifecycle(made, lifecycle)
        _set_privacy(made, _NO_RAW)
        _set_ref(made, "")
        made.__attrs_post_init__()
        return made

    def with_lifecycle(self, lifecycle: CandidateLifecycle) -> Candidate:
        """This candidate moved to ``lifecycle`` (a review's accept, reject, retire, no_write).

        The same candidate: everything it says is this record's (already
        checked), and the ref does not hash the state or ``retired_reason``,
        so only the lifecycle is checked -- a record and one that keeps this
        one's expiry and supersedes refs. Any other lifecycle changes the
        identity and goes through the constructor (a new ``candidate_ref``).
        """
        if type(lifecycle) is not CandidateLifecycle:
            raise RecordValidationError(
                "must be a CandidateLifecycle", path="$.lifecycle", code="wrong_type"
            )
        current = self.lifecycle
        if (
            lifecycle.expires_at != current.expires_at
            or lifecycle.supersedes_refs != current.supersedes_refs
        ):
            return attrs.evolve(self, lifecycle=lifecycle, candidate_ref="")
        moved = _copy_candidate(self)
        object.__setattr__(moved, "lifecycle", lifecycle)
        return moved


def _copier() -> Callable[[Candidate], Candidate]:
    """A straight-line copy of a candidate's fields (slots), generated once."""
    names = [field.name for field in attrs.fields(Candidate)]
    namespace: dict[str, Any] = {"_new": object.__new__, "_cls": Candidate}
    lines = ["def copy(record):", "    made = _new(_cls)"]
    for index, name in enumerate(names):
        namespace[f"_put{index}"] = Candidate.__dict__[name].__set__
        lines.append(f"    _put{index}(made, record.{name})")
    lines.append("    return made")
    exec(compile("\n".join(lines), "<candidate copy>", "exec"), namespace)  # noqa: S102 - field names only
    copy: Callable[[Candidate], Candidate] = namespace["copy"]
    return copy


_copy_candidate: Final = _copier()
# The fields a candidate takes from its proposal (same names, same helpers).
_CANDIDATE_SETTERS: Final = tuple(
    (name, Candidate.__dict__[name].__set__)
    for name in (
        "target_class",
        "content_summary",
        "source",
        "scope",
        "reasoning",
        "guard_context",
        "requested_action_scopes",
        "observed_at",
    )
)
_set_version: Final = Candidate.__dict__["schema_version"].__set__
_set_lifecycle: Final = Candidate.__dict__["lifecycle"].__set__
_set_privacy: Final = Candidate.__dict__["privacy"].__set__
_set_ref: Final = Candidate.__dict__["candidate_ref"].__set__
_FRESH: Final = CandidateLifecycle(state="candidate")
assert {name for name, _ in _CANDIDATE_SETTERS} | {
    "schema_version",
    "lifecycle",
    "privacy",
    "candidate_ref",
} == set(attrs.fields_dict(Candidate)), "of_proposal sets every field"


@attrs.frozen(kw_only=True)
class CandidateGuard:
    """The guard's verdict: passed, and every reason code in the fixed order."""

    passed: bool = f.strict_bool()
    reason_codes: tuple[str, ...] = attrs.field(converter=_guard_reason_codes)
    rule: Literal[
        "model_proposes_meaning_deterministic_guards_verify_scope_privacy_and_no_authority_expansion"
    ] = f.const(GUARD_RULE)
    semantic_reasoning_preserved: Literal[True] = f.const(True)

    def __attrs_post_init__(self) -> None:
        if self.passed == bool(self.reason_codes):
            raise RecordValidationError(
                "a guard passes exactly when it has no reason codes",
                path="$.passed",
                code="inconsistent_guard",
            )


def _decisions(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


@attrs.frozen(kw_only=True)
class CandidatePacket:
    """``reward_memory_candidate_v0``: the guarded candidate (returned even when blocked)."""

    ok: Literal[True] = f.const(True)
    schema_version: Literal["reward_memory_candidate_v0"] = f.const(CANDIDATE_SCHEMA)
    status: Literal["review_ready", "guard_blocked"] = f.enum("review_ready", "guard_blocked")
    candidate: Candidate = attrs.field(validator=is_record(Candidate))
    authority_checkpoint: AuthorityCheckpoint = attrs.field(
        validator=is_record(AuthorityCheckpoint)
    )
    guard: CandidateGuard = attrs.field(validator=is_record(CandidateGuard))
    available_review_decisions: tuple[str, ...] = attrs.field(
        default=AVAILABLE_REVIEW_DECISIONS, converter=_decisions
    )
    candidate_persisted: Literal[False] = f.const(False)
    provider_write_performed: Literal[False] = f.const(False)
    external_writes_performed: Literal[False] = f.const(False)
    raw_content_captured: Literal[False] = f.const(False)

    def __attrs_post_init__(self) -> None:
        if self.available_review_decisions != AVAILABLE_REVIEW_DECISIONS:
            raise RecordValidationError(
                f"must be {list(AVAILABLE_REVIEW_DECISIONS)}",
                path="$.available_review_decisions",
                code="invalid_value",
            )
        if (self.status == "review_ready") != self.guard.passed:
            raise RecordValidationError(
                "status is review_ready exactly when the guard passed",
                path="$.status",
                code="inconsistent_guard",
            )
        if (
            self.candidate.lifecycle.state != "candidate"
            or self.candidate.lifecycle.supersedes_refs
        ):
            raise RecordValidationError(
                "a fresh candidate is in state candidate and supersedes nothing",
                path="$.candidate.lifecycle",
                code="inconsistent_lifecycle",
            )
