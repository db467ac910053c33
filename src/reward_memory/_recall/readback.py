"""Parsing one provider readback into an active record (v1, or legacy v0 read as advisory).

A readback is untrusted text: anything that does not parse into a valid record
is ``None`` (skipped silently, never an error). The record is
:func:`~reward_memory.records.active.load_stored`'s (one strict pass, the same
rules as any stored record); the parse is cached per exact content string, so a
hot recall decodes and validates a readback once.
"""

from __future__ import annotations

import functools
import hashlib
from datetime import datetime
from typing import Final

from reward_memory.grammars import parse_timestamp
from reward_memory.records.active import (
    ActiveRecord,
    LegacyActiveRecord,
    load_stored,
    record_ref_of,
)
from reward_memory.records.corpus import CorpusScope  # noqa: TC001 - used at run time
from reward_memory.records.envelope import ClassId, RecordScope  # noqa: TC001 - attrs fields
from reward_memory.records.standing_policy import names_forbidden_authority

__all__ = ["Parsed", "identity", "parse", "written"]

_PARSE_CACHE_SIZE: Final = 2048
_UNSET: Final = object()
_new: Final = object.__new__
_STORED_LENGTH: Final = len("2026-01-01T00:00:00Z")
_STORED_FRACTION: Final = len("2026-01-01T00:00:00.000001Z")


class Parsed:
    """A readback parsed into a record, plus what the item filter needs (cached).

    Compared and hashed by identity: one object per distinct readback content.
    ``identity`` is (corpus, class, workspace, project, user, peer, session), the
    tuple an item must share exactly with its corpus. ``record_key`` is the
    record's ``record_ref`` (corpus and candidate: which memory it is, checked
    when the record is built), so the same record stored under several refs,
    re-serialised, or activated twice reaches the model once.

    A plain slotted class, not an attrs record: it is built once per record read
    for the first time (the cold recall path) from a record that is already
    validated, so it has nothing to check; its slots are set directly (no
    keyword call: :func:`_parsed_v1`). ``born_at`` (wanted only in a time-bound
    corpus) and the content digest are computed on first use.
    """

    record: ActiveRecord | LegacyActiveRecord
    legacy: bool
    identity: tuple[str | None, ...]  # (corpus, class, workspace, project, user, peer, session)
    surfaces: frozenset[str]
    revision_ref: str | None
    candidate_ref: str
    class_id: ClassId
    content_summary: str
    live: bool  # lifecycle active (not revoked, superseded or retired: envelope.py)
    # No action scope a standing policy could never grant (credential, write, publish,
    # production: such a record was not activated here, whatever it claims).
    grantable: bool
    expires_at: datetime | None  # read on every recall of the record: kept parsed
    stamps: tuple[str | None, ...]  # the times its age may start at (source, activation)
    public: bool  # the record's own visibility is public_safe
    supersedes: tuple[str, ...]  # the refs this record supersedes
    record_key: str
    content: str  # the exact readback (kept for the digest, computed on first use)
    authority_level: str
    _digest: str | None
    _born: datetime | object | None

    __slots__ = (
        "_born",
        "_digest",
        "authority_level",
        "candidate_ref",
        "class_id",
        "content",
        "content_summary",
        "expires_at",
        "grantable",
        "identity",
        "legacy",
        "live",
        "public",
        "record",
        "record_key",
        "revision_ref",
        "stamps",
        "supersedes",
        "surfaces",
    )

    @property
    def content_digest(self) -> str:
        """sha256 (hex) of the readback's canonical text (computed on first use)."""
        digest = self._digest
        if digest is None:
            digest = self._digest = _digest_of(self.content)
        return digest

    @property
    def born_at(self) -> datetime | None:
        """The record's earliest time (source observation or activation): its age starts here."""
        if self._born is _UNSET:
            self._born = _earliest(*self.stamps)
        return self._born  # type: ignore[return-value]


def identity(
    corpus_id: str, class_id: str, scope: RecordScope | CorpusScope
) -> tuple[str | None, ...]:
    """The (corpus, class, workspace, project, user, peer, session) tuple items must match."""
    return (
        corpus_id,
        class_id,
        scope.workspace_ref,
        scope.project_ref,
        scope.user_ref,
        scope.peer_ref,
        scope.session_ref,
    )


def _digest_of(content: str) -> str:
    # canonical_text (reference §8.3): CRLF -> LF, then one trailing newline removed.
    text = content.replace("\r\n", "\n")
    if text.endswith("\n"):
        text = text[:-1]
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _earliest(*stamps: str | None) -> datetime | None:
    moments = [parse_timestamp(stamp) for stamp in stamps if stamp is not None]
    return min(moments) if moments else None


def _moment(stamp: str) -> datetime:
    """:func:`parse_timestamp` of a record's timestamp, read by ``fromisoformat`` directly.

    A record holds its timestamps in the stored spelling (``YYYY-MM-DDTHH:MM:SSZ``,
    ``.ffffff`` when non-zero). That layout (separators in place, ASCII) is read by
    ``fromisoformat``, which checks the digits and the calendar and gives the same
    instant at offset zero; anything else, or anything it refuses, takes
    ``parse_timestamp`` (``tests/test_recall_readback.py`` holds the two equal).
    """
    size = len(stamp)
    if (
        (size == _STORED_LENGTH or (size == _STORED_FRACTION and stamp[19] == "."))
        and stamp[-1] == "Z"
        and stamp[10] == "T"
        and stamp[4] == stamp[7] == "-"
        and stamp[13] == stamp[16] == ":"
        and stamp.isascii()
    ):
        try:
            return datetime.fromisoformat(stamp)
        except ValueError:
            pass
    return parse_timestamp(stamp)


def _parsed_v1(record: ActiveRecord, content: str) -> Parsed:
    # The envelope rules leave a live record no revocation, supersession or
    # retirement (no half-revoked record builds): its state says it all.
    parsed = _new(Parsed)
    scope = record.scope
    class_id = record.class_id
    expires = record.expiry.expires_at
    parsed.record = record
    parsed.legacy = False
    parsed.identity = (
        record.corpus_id,
        class_id,
        scope.workspace_ref,
        scope.project_ref,
        scope.user_ref,
        scope.peer_ref,
        scope.session_ref,
    )
    parsed.surfaces = frozenset(scope.surface_ids)
    parsed.revision_ref = scope.revision_ref
    parsed.candidate_ref = record.candidate_ref
    parsed.class_id = class_id
    parsed.content_summary = record.content_summary
    parsed.live = record.lifecycle_state == "active"
    scopes = record.authority.action_scopes
    parsed.grantable = not scopes or not any(map(names_forbidden_authority, scopes))
    parsed.expires_at = None if expires is None else _moment(expires)
    parsed.stamps = (record.source.observed_at, record.activated_at)
    parsed.public = record.privacy.visibility == "public_safe"
    parsed.supersedes = record.supersession.supersedes_refs
    parsed.record_key = record.record_ref
    parsed.content = content
    parsed.authority_level = record.authority.level
    parsed._digest = None
    parsed._born = _UNSET
    return parsed


def _parsed_v0(record: LegacyActiveRecord, content: str) -> Parsed:
    scope = record.scope
    lifecycle = record.lifecycle
    expires = lifecycle.expires_at
    parsed = _new(Parsed)
    parsed.record = record
    parsed.legacy = True
    parsed.identity = identity(record.corpus_id, record.target_class, scope)
    parsed.surfaces = frozenset(scope.surface_ids)
    parsed.revision_ref = scope.revision_ref
    parsed.candidate_ref = record.candidate_ref
    parsed.class_id = record.target_class
    parsed.content_summary = record.content_summary
    parsed.live = lifecycle.state == "active"
    # No authority block: advisory, no action scopes. A hard policy needs the verified
    # authority a v0 record cannot name (no checkpoint, no actor to vouch for): anyone
    # who can write to the scope could write one, so it is never recalled.
    parsed.grantable = record.target_class != "hard_policy"
    parsed.expires_at = None if expires is None else _moment(expires)
    # A v0 source carries no time: a legacy record's age starts at its activation.
    parsed.stamps = (record.activated_at,)
    parsed.public = False  # v0 has no visibility: its summary is never exposed
    parsed.supersedes = lifecycle.supersedes_refs
    parsed.record_key = record_ref_of(record.corpus_id, record.candidate_ref)
    parsed.content = content
    # A legacy record has no authority block: it is advisory, whatever its class.
    parsed.authority_level = "advisory"
    parsed._digest = None
    parsed._born = _UNSET
    return parsed


def written(record: ActiveRecord, content: str) -> Parsed:
    """The parse of ``content`` that the writer who serialised ``record`` into it knows.

    Only for the ingest loop, which wrote ``content`` as the canonical JSON of
    ``record``'s plain form itself, so decoding ``content`` would give this very
    record (``tests/test_ingest.py`` holds the two equal). It is handed to that
    call's verification recall only, for the exact content it wrote: nothing is
    kept, so any other readback -- a later recall, one byte of difference -- is
    decoded as usual.
    """
    return _parsed_v1(record, content)


@functools.lru_cache(maxsize=_PARSE_CACHE_SIZE)
def parse(content: str) -> Parsed | None:
    """Parse one readback (cached per exact content string); ``None`` when unusable.

    The record is :func:`~reward_memory.records.active.load_stored`'s, so a
    readback is held to exactly the rules (and the one strict pass) of any
    stored record; whatever it refuses is skipped.
    """
    try:
        record = load_stored(content)
        if type(record) is ActiveRecord:
            return _parsed_v1(record, content)
        return _parsed_v0(record, content)  # type: ignore[arg-type]  # the other stored type
    except Exception:  # noqa: BLE001 - corrupt readback is skipped, never an error
        return None
