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

The read side (``read_grants``): :meth:`AuthorityMap.read_checkpoint_for` is the
optional extension :class:`reward_memory.author.Experiment` asks for a read
checkpoint per corpus. It answers only for a listed, unexpired reader (the
agent id) whose read grant names that corpus id, the corpus's project and the
surface, and only when the caller's observed context is that corpus's own
workspace and project. The checkpoint carries the corpus's own scope and read
authority and the map's source ref -- never more. A corpus scoped to a user,
peer or session gets no answer from the map (it holds no identities): give such
a corpus a ``read_authority`` callable of your own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final, Protocol, runtime_checkable

from reward_memory.errors import RecordValidationError
from reward_memory.grammars import parse_timestamp, resolve_now
from reward_memory.records.authority import AuthorityGrant, AuthorityMapFile, ReadGrant
from reward_memory.records.candidate import AuthorityCheckpoint

if TYPE_CHECKING:
    import os
    from collections.abc import Mapping
    from datetime import datetime

    from reward_memory.hooks import RecallContext
    from reward_memory.records.corpus import CorpusDeclaration
    from reward_memory.records.recall import ReadAuthorityCheckpoint

__all__ = ["AuthorityMap", "AuthoritySource", "load_authority_map"]

_ANSWERS_MAX: Final = 1024
_STR: Final = frozenset({str})


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

    __slots__ = ("_answers", "_by_actor", "_by_reader", "_expiry", "_record")

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
        self._by_reader: dict[str, ReadGrant] = {
            grant.reader_ref: grant for grant in record.read_grants
        }
        self._expiry: dict[tuple[str, str], datetime | None] = {
            key: None if grant.expires_at is None else parse_timestamp(grant.expires_at)
            for key, grant in self._by_actor.items()
        }
        # Each distinct claim's checkpoint, built (and validated) once: the map is
        # immutable, so the answer is a function of the claim (expiry aside,
        # which is checked on every call).
        self._answers: dict[tuple[str, str, str, tuple[str, ...]], AuthorityCheckpoint] = {}

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> AuthorityMap:
        """Read an authority-map file (bounded JSON; strict; field paths on error)."""
        return cls(load_authority_map(path))

    @classmethod
    def from_data(cls, data: AuthorityMapFile | Mapping[str, Any]) -> AuthorityMap:
        """From a record or a plain mapping (validated against the schema first)."""
        if isinstance(data, AuthorityMapFile):
            return cls(data)
        return cls(_structure(dict(data)))

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
        expiry = self._expiry[grant.actor_ref, grant.actor_role]
        if expiry is not None and expiry <= moment:
            return None
        cacheable = (
            type(actor_ref) is str
            and type(actor_role) is str
            and type(project_ref) is str
            and type(action_scopes) is tuple
            and _STR.issuperset(map(type, action_scopes))  # exact strings (no generator frame)
        )
        if cacheable:
            key = (actor_ref, actor_role, project_ref, action_scopes)
            known = self._answers.get(key)
            if known is not None:
                return known
        held = set(grant.action_scopes)
        answer = AuthorityCheckpoint(
            verified=True,
            source_ref=self._record.source_ref,
            actor_ref=actor_ref,
            actor_role=actor_role,
            project_ref=project_ref,
            action_scopes=tuple(sorted(scope for scope in set(action_scopes) if scope in held)),
        )
        if cacheable:
            if len(self._answers) >= _ANSWERS_MAX:
                self._answers.clear()
            self._answers[key] = answer
        return answer

    def read_checkpoint_for(
        self,
        *,
        corpus: CorpusDeclaration,
        surface_id: str,
        context: RecallContext,
        agent_id: str,
        now: datetime,
    ) -> ReadAuthorityCheckpoint | None:
        """A verified read checkpoint for a listed reader of this corpus and surface; else ``None``.

        ``None`` (the recall guard then blocks that corpus, zero provider calls)
        unless: ``agent_id`` has an unexpired read grant naming ``corpus``'s id,
        its project and ``surface_id``; the corpus declares ``surface_id``; the
        context observes the corpus's own workspace and project; and the corpus
        sets no user, peer or session identity.
        """
        moment = resolve_now(now)
        grant = self._by_reader.get(agent_id) if isinstance(agent_id, str) else None
        if grant is None:
            return None
        if grant.expires_at is not None and parse_timestamp(grant.expires_at) <= moment:
            return None
        scope = corpus.scope
        if (
            corpus.corpus_id not in grant.corpus_ids
            or scope.project_ref not in grant.project_refs
            or surface_id not in grant.surface_ids
            or surface_id not in scope.surface_ids
            or context.workspace_ref != scope.workspace_ref
            or context.project_ref != scope.project_ref
        ):
            return None
        if (
            scope.user_ref is not None
            or scope.peer_ref is not None
            or scope.session_ref is not None
        ):
            return None  # the map lists readers, not identities: never vouch for one
        from reward_memory.records.recall import ReadAuthorityCheckpoint  # noqa: PLC0415

        return ReadAuthorityCheckpoint(
            verified=True,
            corpus_id=corpus.corpus_id,
            workspace_ref=scope.workspace_ref,
            project_ref=scope.project_ref,
            surface_id=surface_id,
            read_authority=corpus.read_authority,
            source_ref=self._record.source_ref,
        )

    def __repr__(self) -> str:
        return (
            f"AuthorityMap(source_ref={self.source_ref!r}, grants={len(self._record.grants)}, "
            f"read_grants={len(self._record.read_grants)})"
        )


def load_authority_map(path: str | os.PathLike[str]) -> AuthorityMapFile:
    """Load and validate an authority-map file (``reward_memory_authority_map_v0``)."""
    from reward_memory import jsonio  # noqa: PLC0415
    from reward_memory._boundary import strict_record  # noqa: PLC0415
    from reward_memory.records.authority import AUTHORITY_MAP_SCHEMA  # noqa: PLC0415

    # Parsed JSON: one strict pass (the schema names an error only). The CLI
    # reads a map on every ingest-event, so neither jsonschema nor cattrs here.
    return strict_record(AuthorityMapFile, jsonio.read(path), AUTHORITY_MAP_SCHEMA)


def _structure(data: Any) -> AuthorityMapFile:
    # One schema, one record: not wire.load's union of every packet (slow to build,
    # and the CLI reads a map on every ingest-event).
    from reward_memory import schemas, wire  # noqa: PLC0415
    from reward_memory.records.authority import AUTHORITY_MAP_SCHEMA  # noqa: PLC0415

    schemas.validate(data, AUTHORITY_MAP_SCHEMA)
    return wire.structure(data, AuthorityMapFile)
