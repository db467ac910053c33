"""The candidate classes and the raw-content flag, apart from the candidate records.

:mod:`reward_memory.records.candidate` re-exports both; the split only lets a
standing policy (a config, ``experiment-status``) be read without building
every candidate record class at CLI start-up.
"""

from __future__ import annotations

from typing import Any, Final, Literal, get_args

from reward_memory.errors import RecordValidationError
from reward_memory.records._fields import tagged

__all__ = ["CANDIDATE_CLASSES", "CandidateClass", "no_raw_content"]

CandidateClass = Literal["hard_policy", "soft_preference", "procedural_experience"]
# The durable, reusable classes a candidate may target (reference §2.1).
CANDIDATE_CLASSES: Final[tuple[CandidateClass, ...]] = get_args(CandidateClass)


def _no_raw_content(value: Any) -> Literal[False]:
    if not isinstance(value, bool):
        raise RecordValidationError(
            "must be a boolean", path="$.raw_content_captured", code="wrong_type"
        )
    if value:
        raise RecordValidationError(
            "must be false: raw content (chat, transcripts, comment bodies) is never captured",
            path="$.raw_content_captured",
            code="raw_content_captured",
        )
    return False


def no_raw_content() -> Any:
    """The required ``raw_content_captured`` input flag: a real boolean, and false.

    A converter rather than a validator: converters run first, in field order,
    so it is checked before any other field (as in the original).
    """
    # To the one-pass builder it is the constant false (the same verdict).
    return tagged("const", False, converter=_no_raw_content)
