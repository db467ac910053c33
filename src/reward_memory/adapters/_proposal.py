"""The proposal an adapter maps an already-typed event onto.

Every field of the proposal is a field of the event under the same grammar
(tokens, surface id, class, the token list) or one of its exact-type nested
records (source, reasoning, guard context), so an event that is itself an
exact-type record already passed every check the proposal would run -- but
one: the proposal's summary must also be valid Unicode (no lone surrogate),
which the event's text field does not ask. The proposal is then set without
re-running the validators (the fresh summary was scanned once, when the event
was typed); anything else -- another type, an observation time to normalise,
a surrogate -- goes through the validating constructors, with their errors.
``tests/test_adapters.py`` holds the two builds equal, errors included.
"""

from __future__ import annotations

from typing import Any, Final

from reward_memory.records import _memo as m
from reward_memory.records.candidate import (
    PROPOSAL_SCHEMA,
    CandidateGuardContext,
    CandidateReasoning,
    CandidateSource,
    Proposal,
)
from reward_memory.records.envelope import RecordScope

__all__ = ["event_proposal", "validated_proposal"]

_make_proposal: Final = m.trusted(Proposal)
_make_scope: Final = m.trusted(RecordScope)


def event_proposal(
    typed: Any, scope: dict[str, Any], *, derivable: bool, observed_at: str | None
) -> Proposal:
    """The proposal of ``typed`` (an adapter's event record) with ``scope``'s fields."""
    summary = typed.content_summary
    if (
        derivable
        and observed_at is None
        and type(typed.source) is CandidateSource
        and type(typed.reasoning) is CandidateReasoning
        and type(typed.guard_context) is CandidateGuardContext
        and type(summary) is str
        and _unicode(summary)
    ):
        return _make_proposal(
            schema_version=PROPOSAL_SCHEMA,
            raw_content_captured=False,
            target_class=typed.target_class,
            content_summary=summary,
            source=typed.source,
            scope=_make_scope(**scope),
            reasoning=typed.reasoning,
            guard_context=typed.guard_context,
            requested_action_scopes=typed.requested_action_scopes,
            expires_at=None,
            observed_at=None,
        )
    return validated_proposal(typed, scope, observed_at=observed_at)


def validated_proposal(typed: Any, scope: dict[str, Any], *, observed_at: str | None) -> Proposal:
    """The same proposal through the validating constructors."""
    return Proposal(
        raw_content_captured=False,
        target_class=typed.target_class,
        content_summary=typed.content_summary,
        source=typed.source,
        scope=RecordScope(**scope),
        reasoning=typed.reasoning,
        guard_context=typed.guard_context,
        requested_action_scopes=typed.requested_action_scopes,
        observed_at=observed_at,
    )


def _unicode(text: str) -> bool:
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
