"""The authority-map file (``reward_memory_authority_map_v0``): the caller's verified actors.

One file names its ``source_ref`` (the authority source a standing policy's
``authority_source_ref`` must name) and 1-100 grants. A grant is one verified
actor in one role, the projects it may speak for (1-12, exact refs; a grant
never spans "all projects") and the action scopes it holds (0-12), with an
optional expiry. Strict: unknown fields are refused with their path, lists are
sorted and duplicate-free, and an actor+role appears in at most one grant (two
grants for one actor and role would make the answer depend on their order).

The file is the *caller's* statement of verified authority: it is read, never
inferred from an event. :class:`reward_memory.authority.AuthorityMap` answers
from it.
"""

from __future__ import annotations

from typing import Any, ClassVar, Final, Literal

import attrs

from reward_memory.errors import RecordValidationError
from reward_memory.records import _fields as f

__all__ = ["AUTHORITY_MAP_SCHEMA", "MAX_GRANTS", "AuthorityGrant", "AuthorityMapFile"]

AUTHORITY_MAP_SCHEMA: Final = "reward_memory_authority_map_v0"
MAX_GRANTS: Final = 100


@attrs.frozen(kw_only=True)
class AuthorityGrant:
    """One verified actor in one role: the exact projects and action scopes it holds."""

    __rm_omit_none__: ClassVar[bool] = True

    actor_ref: str = f.token()
    actor_role: str = f.token()
    project_refs: tuple[str, ...] = f.token_list(min_items=1)
    action_scopes: tuple[str, ...] = f.token_list()
    # After this instant the grant answers nothing (aware timestamp; optional).
    expires_at: str | None = f.optional_timestamp()


def _as_tuple(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


def _grants(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if not isinstance(value, tuple):
        raise RecordValidationError("must be a list", path="$.grants", code="wrong_type")
    if not 1 <= len(value) <= MAX_GRANTS:
        raise RecordValidationError(
            f"must hold between 1 and {MAX_GRANTS} grants", path="$.grants", code="invalid_value"
        )
    seen: set[tuple[str, str]] = set()
    for index, grant in enumerate(value):
        if not isinstance(grant, AuthorityGrant):
            raise RecordValidationError(
                "must be an AuthorityGrant", path=f"$.grants[{index}]", code="wrong_type"
            )
        key = (grant.actor_ref, grant.actor_role)
        if key in seen:
            raise RecordValidationError(
                "an actor and role appear in one grant only",
                path=f"$.grants[{index}]",
                code="duplicate_item",
            )
        seen.add(key)


@attrs.frozen(kw_only=True)
class AuthorityMapFile:
    """``reward_memory_authority_map_v0``: the source ref and its verified grants."""

    schema_version: Literal["reward_memory_authority_map_v0"] = f.const(AUTHORITY_MAP_SCHEMA)
    source_ref: str = f.token()
    grants: tuple[AuthorityGrant, ...] = attrs.field(converter=_as_tuple, validator=_grants)
    raw_content_captured: Literal[False] = f.const(False)
