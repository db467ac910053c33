"""The standing policy (``reward_memory_standing_policy_v0``, reference §9.1).

One approval of an exact boundary, replacing per-comment approval: the corpus
owner, the reviewer, the authority source, the exact workspace / project /
surfaces (and identities), the one memory class, the source kinds, the
verified actor roles and the action scopes an ingested candidate may carry.

It narrows what a verified checkpoint may activate; it never substitutes for
one and never grants authority of its own. So, beyond the original's field
rules (strict keys, sorted unique lists, ``raw_content_captured`` false), a
policy is refused when it would allow an action scope that names a credential,
a repository write, a publication or production (:data:`FORBIDDEN_SCOPE_WORDS`,
code ``authority_expansion_forbidden``): inference "never creates credentials,
repository write authority, publish/production scope" (seeds, minimal ingest
loop). Cross-project authority cannot be expressed: the scope names exactly one
project.
"""

from __future__ import annotations

import functools
import itertools
import re
from typing import ClassVar, Final, Literal

import attrs

from reward_memory._frozen import frozen
from reward_memory.errors import RecordValidationError
from reward_memory.records import _fields as f
from reward_memory.records._candidate_class import CANDIDATE_CLASSES, no_raw_content

__all__ = [
    "FORBIDDEN_SCOPE_WORDS",
    "STANDING_POLICY_SCHEMA",
    "PolicyScope",
    "StandingPolicy",
    "names_forbidden_authority",
]

STANDING_POLICY_SCHEMA: Final = "reward_memory_standing_policy_v0"
# Words that, as one word of an action scope, name an authority no standing policy
# may hand out: the words themselves and their inflections (``writes``, ``publishing``,
# ``deployment``, ``creds``). An action scope's words are its segments (split on
# ``: . _ - /``), camelCase split too (``repoWrite``), each also read joined with the
# next (``api_key``).
FORBIDDEN_SCOPE_WORDS: Final = frozenset(
    {
        "admin",
        "commit",
        "credential",
        "credentials",
        "delete",
        "deploy",
        "merge",
        "password",
        "prod",
        "production",
        "publish",
        "push",
        "release",
        "secret",
        "secrets",
        "sudo",
        "token",
        "tokens",
        "write",
    }
)
_FORBIDDEN_WORD: Final = re.compile(
    r"admin(?:s|istrators?|istration)?"
    r"|cred(?:s|entials?)?"
    r"|deploy(?:s|ed|er|ers|ing|ments?)?"
    r"|merg(?:e|es|ed|er|ers|ing)"
    r"|pass(?:words?|wds?)|pwd"
    r"|prod|productions?"
    r"|publish(?:es|ed|er|ers|ing)?|publications?"
    r"|push(?:es|ed|er|ing)?"
    r"|releas(?:e|es|ed|er|ing)"
    r"|secrets?"
    r"|sudo(?:ers?)?"
    r"|tokens?"
    r"|writ(?:e|es|er|ers|ing|ten|able)"
    r"|commit(?:s|ted|ter|ting)?"
    r"|delet(?:e|es|ed|ing|ions?)"
    r"|(?:api|ssh|private|signing)keys?"
)
# Roots distinctive enough to refuse inside a word too (``readwrite``, ``overwrite``,
# ``forcepush``, ``accesstoken``, ``secretkey``, ``upload``): none is part of an ordinary
# word an action scope would use. Short or common stems (``prod``, ``cred``, ``sudo``,
# ``admin``, ``merge``) stay whole words only (``reproduce``, ``credit``, ``pseudo``).
_FORBIDDEN_ROOT: Final = re.compile(
    r"writ(?:e|ing|ten|able)|push|tokens?|secret|publish|deploy|commit|delet(?:e|ing|ion)"
    r"|upload|passw|credential|(?:api|ssh|private|signing|access|secret|session|auth)_?keys?"
)
_SEGMENTS: Final = re.compile(r"[:._/-]+")
_CAMEL: Final = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_CANDIDATE_CLASS_SET: Final = frozenset(CANDIDATE_CLASSES)


@frozen(kw_only=True)
class PolicyScope:
    """The exact boundary: one workspace, one project, 1-12 surfaces, optional identities."""

    # Identity fields are left out of the wire form when unset, as in the original.
    __rm_omit_none__: ClassVar[bool] = True

    workspace_ref: str = f.token()
    project_ref: str = f.token()
    surface_ids: tuple[str, ...] = f.surface_list(min_items=1, max_items=12)
    user_ref: str | None = f.optional_token()
    peer_ref: str | None = f.optional_token()
    session_ref: str | None = f.optional_token()


def _candidate_classes(value: tuple[str, ...]) -> None:
    for index, item in enumerate(value):
        if item not in _CANDIDATE_CLASS_SET:
            raise RecordValidationError(
                "must be a candidate class (hard_policy, soft_preference, procedural_experience)",
                path=f"$.allowed_target_classes[{index}]",
                code="invalid_value",
            )


@functools.lru_cache(maxsize=1024)
def names_forbidden_authority(scope: str) -> bool:
    """Whether an action scope names an authority no standing policy may hand out.

    Pure in the scope, and asked for every acting record recall reads: kept for the
    few scopes a corpus uses (a miss splits and matches each word, a few µs).
    """
    words = [
        word.lower() for segment in _SEGMENTS.split(scope) for word in _CAMEL.split(segment) if word
    ]
    match, inside = _FORBIDDEN_WORD.fullmatch, _FORBIDDEN_ROOT.search
    return (
        any(match(word) or inside(word) for word in words)
        or any(match(first + second) for first, second in itertools.pairwise(words))
        or any(inside(first + second) for first, second in itertools.pairwise(words))
    )


def _no_authority_expansion(value: tuple[str, ...]) -> None:
    for index, scope in enumerate(value):
        if names_forbidden_authority(scope):
            raise RecordValidationError(
                "a standing policy never allows credential, write, publish or production scope",
                path=f"$.allowed_action_scopes[{index}]",
                code="authority_expansion_forbidden",
            )


@frozen(kw_only=True)
class StandingPolicy:
    """``reward_memory_standing_policy_v0``: one approval of an exact ingest boundary."""

    schema_version: Literal["reward_memory_standing_policy_v0"] = f.const(STANDING_POLICY_SCHEMA)
    policy_id: str = f.token()
    owner_ref: str = f.token()
    reviewer_ref: str = f.token()
    authority_source_ref: str = f.token()
    enabled: bool = f.strict_bool()
    auto_activate: bool = f.strict_bool()
    scope: PolicyScope = attrs.field(validator=attrs.validators.instance_of(PolicyScope))
    allowed_target_classes: tuple[str, ...] = f.token_list(min_items=1)
    allowed_source_kinds: tuple[str, ...] = f.token_list(min_items=1)
    allowed_actor_roles: tuple[str, ...] = f.token_list(min_items=1)
    allowed_action_scopes: tuple[str, ...] = f.token_list()
    raw_content_captured: Literal[False] = no_raw_content()

    def __attrs_post_init__(self) -> None:
        _candidate_classes(self.allowed_target_classes)
        _no_authority_expansion(self.allowed_action_scopes)
