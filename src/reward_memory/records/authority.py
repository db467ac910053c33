"""The authority-map file (``reward_memory_authority_map_v0``): the caller's verified actors.

One file names its ``source_ref`` (the authority source a standing policy's
``authority_source_ref`` must name) and 1-100 grants. A grant is one verified
actor in one role, the projects it may speak for (1-12, exact refs; a grant
never spans "all projects") and the action scopes it holds (0-12), with an
optional expiry. Strict: unknown fields are refused with their path, lists are
sorted and duplicate-free, and an actor+role appears in at most one grant (two
grants for one actor and role would make the answer depend on their order).

An optional ``read_grants`` list (0-100) is the read side: each names one
verified reader (an agent id), the exact projects, surfaces and corpus ids it
may read (1-12 each) and an optional expiry; a reader appears in one read grant
only. :meth:`reward_memory.authority.AuthorityMap.read_checkpoint_for` answers
from it.

The file is the *caller's* statement of verified authority: it is read, never
inferred from an event. :class:`reward_memory.authority.AuthorityMap` answers
from it.
"""

from __future__ import annotations

from typing import Any, ClassVar, Final, Literal

import attrs

from reward_memory._frozen import frozen
from reward_memory.errors import RecordValidationError
from reward_memory.grammars import check_corpus_id
from reward_memory.records import _fields as f

__all__ = [
    "AUTHORITY_MAP_SCHEMA",
    "MAX_GRANTS",
    "AuthorityGrant",
    "AuthorityMapFile",
    "ReadGrant",
]

AUTHORITY_MAP_SCHEMA: Final = "reward_memory_authority_map_v0"
MAX_GRANTS: Final = 100


@frozen(kw_only=True)
class AuthorityGrant:
    """One verified actor in one role: the exact projects and action scopes it holds."""

    __rm_omit_none__: ClassVar[bool] = True

    actor_ref: str = f.token()
    actor_role: str = f.token()
    project_refs: tuple[str, ...] = f.token_list(min_items=1)
    action_scopes: tuple[str, ...] = f.token_list()
    # After this instant the grant answers nothing (aware timestamp; optional).
    expires_at: str | None = f.optional_timestamp()


def _corpus_ids() -> Any:
    # f.corpus_id_list allows an empty list; a read grant names 1-12 corpora.
    return attrs.field(
        converter=f._list_converter(check_corpus_id, min_items=1, max_items=12, keep_order=False)
    )


@frozen(kw_only=True)
class ReadGrant:
    """One verified reader (an agent id): the exact projects, surfaces and corpora it may read."""

    __rm_omit_none__: ClassVar[bool] = True

    reader_ref: str = f.token()
    project_refs: tuple[str, ...] = f.token_list(min_items=1)
    surface_ids: tuple[str, ...] = f.surface_list(min_items=1, max_items=12)
    corpus_ids: tuple[str, ...] = _corpus_ids()
    # After this instant the read grant answers nothing (aware timestamp; optional).
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


def _read_grants(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if not isinstance(value, tuple):
        raise RecordValidationError("must be a list", path="$.read_grants", code="wrong_type")
    if len(value) > MAX_GRANTS:
        raise RecordValidationError(
            f"must hold at most {MAX_GRANTS} read grants",
            path="$.read_grants",
            code="invalid_value",
        )
    seen: set[str] = set()
    for index, grant in enumerate(value):
        if not isinstance(grant, ReadGrant):
            raise RecordValidationError(
                "must be a ReadGrant", path=f"$.read_grants[{index}]", code="wrong_type"
            )
        # Two read grants for one reader would make the answer depend on their order.
        if grant.reader_ref in seen:
            raise RecordValidationError(
                "a reader appears in one read grant only",
                path=f"$.read_grants[{index}]",
                code="duplicate_item",
            )
        seen.add(grant.reader_ref)


@frozen(kw_only=True)
class AuthorityMapFile:
    """``reward_memory_authority_map_v0``: the source ref and its verified grants."""

    schema_version: Literal["reward_memory_authority_map_v0"] = f.const(AUTHORITY_MAP_SCHEMA)
    source_ref: str = f.token()
    grants: tuple[AuthorityGrant, ...] = attrs.field(converter=_as_tuple, validator=_grants)
    read_grants: tuple[ReadGrant, ...] = attrs.field(
        factory=tuple, converter=_as_tuple, validator=_read_grants
    )
    raw_content_captured: Literal[False] = f.const(False)
