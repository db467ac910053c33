"""The authority source: where a hard policy's verified checkpoint comes from.

Authority never comes from the event (reference §0, gap 12). An event *claims*
an actor, a role, a project and the action scopes it wants; the caller's
:class:`AuthoritySource` answers with a verified
:class:`~reward_memory.records.candidate.AuthorityCheckpoint` -- or with
``None``, and then nothing that needs authority activates.

:class:`AuthorityMap` is the shipped source, over an authority-map file
(:mod:`reward_memory.records.authority`). It answers only for an actor and role
it lists, for a project that grant names, while the grant is unexpired; and the
checkpoint's action scopes are the *intersection* of what the event asks and
what the grant holds, never more. Asking for a scope the grant lacks therefore
yields a checkpoint that does not cover the request, and the candidate guard
blocks it (``requested_action_scope_exceeds_verified_authority``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from reward_memory.errors import RecordValidationError
from reward_memory.grammars import parse_timestamp, resolve_now
from reward_memory.records.authority import AuthorityGrant, AuthorityMapFile
from reward_memory.records.candidate import AuthorityCheckpoint

if TYPE_CHECKING:
    import os
    from collections.abc import Mapping
    from datetime import datetime

__all__ = ["AuthorityMap", "AuthoritySource", "load_authority_map"]


@runtime_checkable
class AuthoritySource(Protocol):
    """The caller's authority: given what an event claims, a verified checkpoint or nothing.

    ``source_ref`` names the source (a standing policy's ``authority_source_ref``
    must equal it). ``checkpoint_for`` must not trust the claims: it answers
    from its own records, and its checkpoint's ``action_scopes`` never exceed
    what it itself holds for that actor.
    """

    @property
    def source_ref(self) -> str:
        """The ref of this authority source."""
        ...

    def checkpoint_for(
        self,
        *,
        actor_ref: str,
        actor_role: str,
        project_ref: str,
        action_scopes: tuple[str, ...],
        now: datetime,
    ) -> AuthorityCheckpoint | None:
        """A verified checkpoint for these claims, or ``None`` when the source does not vouch."""
        ...


class AuthorityMap:
    """An :class:`AuthoritySource` over a ``reward_memory_authority_map_v0`` record."""

    __slots__ = ("_by_actor", "_record")

    def __init__(self, record: AuthorityMapFile) -> None:
        if not isinstance(record, AuthorityMapFile):
            raise RecordValidationError(
                "an authority map is built from an AuthorityMapFile record",
                path="$",
                code="wrong_type",
            )
        self._record = record
        self._by_actor: dict[tuple[str, str], AuthorityGrant] = {
            (grant.actor_ref, grant.actor_role): grant for grant in record.grants
        }

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> AuthorityMap:
        """Read an authority-map file (bounded JSON; strict; field paths on error)."""
        return cls(load_authority_map(path))

    @classmethod
    def from_data(cls, data: AuthorityMapFile | Mapping[str, Any]) -> AuthorityMap:
        """From a record or a plain mapping (validated against the schema first)."""
        if isinstance(data, AuthorityMapFile):
            return cls(data)
        from reward_memory import wire  # noqa: PLC0415 - the converter only when needed

        return cls(wire.load(dict(data), AuthorityMapFile))

    @property
    def record(self) -> AuthorityMapFile:
        """The map's record."""
        return self._record

    @property
    def source_ref(self) -> str:
        """The map's source ref."""
        return self._record.source_ref

    def checkpoint_for(
        self,
        *,
        actor_ref: str,
        actor_role: str,
        project_ref: str,
        action_scopes: tuple[str, ...],
        now: datetime,
    ) -> AuthorityCheckpoint | None:
        """A verified checkpoint for a listed, unexpired actor+role+project; else ``None``."""
        moment = resolve_now(now)
        grant = self._by_actor.get((actor_ref, actor_role))
        if grant is None or project_ref not in grant.project_refs:
            return None
        if grant.expires_at is not None and parse_timestamp(grant.expires_at) <= moment:
            return None
        held = set(grant.action_scopes)
        return AuthorityCheckpoint(
            verified=True,
            source_ref=self._record.source_ref,
            actor_ref=actor_ref,
            actor_role=actor_role,
            project_ref=project_ref,
            action_scopes=tuple(sorted(scope for scope in set(action_scopes) if scope in held)),
        )

    def __repr__(self) -> str:
        return f"AuthorityMap(source_ref={self.source_ref!r}, grants={len(self._record.grants)})"


def load_authority_map(path: str | os.PathLike[str]) -> AuthorityMapFile:
    """Load and validate an authority-map file (``reward_memory_authority_map_v0``)."""
    from reward_memory import wire  # noqa: PLC0415

    return wire.load_file(path, AuthorityMapFile)
