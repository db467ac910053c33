"""Which parsed readbacks belong to one corpus and surface (the recall item filter)."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Final

from reward_memory._recall.readback import Parsed, identity
from reward_memory.records.corpus import CorpusDeclaration

if TYPE_CHECKING:
    from datetime import datetime

    from reward_memory.records.active import ActiveRecord
    from reward_memory.records.standing_policy import StandingPolicy

__all__ = ["ACTING_LEVELS", "ItemFilter", "filter_of", "static_fit", "within_policy"]

#: The authority levels that give a record force over an action (hard policy).
ACTING_LEVELS: Final = frozenset({"constraint", "veto"})

_FILTER_CACHE_SIZE: Final = 256


class ItemFilter:
    """What the item filter compares every readback against, for one corpus and surface.

    Built once per (corpus object, surface) and kept (see :func:`filter_of`): the
    corpus is a frozen record. A readback fits when :func:`static_fit` (exact
    corpus, class and identities; requested surface; surfaces inside the corpus;
    the corpus revision when revision-bound; live; no authority a standing policy
    could never grant) and :meth:`fits_at` ``now``.
    """

    __slots__ = (
        "corpus",
        "corpus_surfaces",
        "exposed",
        "identity",
        "max_age",
        "revision",
        "surface_id",
    )

    def __init__(self, corpus: CorpusDeclaration, surface_id: str) -> None:
        freshness = corpus.freshness
        self.corpus = corpus  # keeps the corpus alive while this filter is cached by its id
        self.identity = identity(corpus.corpus_id, corpus.class_id, corpus.scope)
        self.corpus_surfaces = frozenset(corpus.scope.surface_ids)
        self.surface_id = surface_id
        # The revisions a record may be bound to: the corpus's own (revision-bound), or it
        # and none (an archive-bound corpus takes records naming no revision, as its ingest
        # does); any in every other mode.
        self.revision: frozenset[str | None] | None = (
            frozenset({freshness.source_revision})
            if freshness.mode == "revision_bound"
            else frozenset({freshness.source_revision, None})
            if freshness.mode == "session_archive_bound"
            else None
        )
        # A time-bound corpus ages its records too (its max_age_seconds is required).
        max_age = freshness.max_age_seconds if freshness.mode == "time_bound" else None
        self.max_age = None if max_age is None else timedelta(seconds=max_age)
        # The corpus may expose summaries; each record's own visibility must allow it too.
        self.exposed = corpus.privacy.visibility == "public_safe"

    def fits_at(self, parsed: Parsed, now: datetime) -> bool:
        """Unexpired at ``now`` and, in a time-bound corpus, no older than ``max_age_seconds``
        at ``now`` and not from after it (a record with no time is of unknown age, so not
        recalled there)."""
        expires = parsed.expires_at
        if expires is not None and now >= expires:
            return False
        max_age = self.max_age
        if max_age is None:
            return True
        born = parsed.born_at
        # Born after ``now``: not yet observed at ``now`` (as corpus health reads it).
        return born is not None and born <= now and now - born <= max_age

    def exposes(self, parsed: Parsed) -> bool:
        """Whether the public packet may show this record's summary (corpus and record agree)."""
        return self.exposed and parsed.public


def static_fit(item_filter: ItemFilter, parsed: Parsed) -> bool:
    """Everything but time and the standing policy. Not cached: the comparisons cost less
    than a cache lookup, insertion and eviction on a record read for the first time."""
    return (
        parsed.identity == item_filter.identity
        and parsed.live
        and parsed.grantable
        and item_filter.surface_id in parsed.surfaces
        and parsed.surfaces <= item_filter.corpus_surfaces
        and (item_filter.revision is None or parsed.revision_ref in item_filter.revision)
    )


_FILTERS: dict[tuple[int, str], ItemFilter] = {}


def filter_of(corpus: CorpusDeclaration, surface_id: str) -> ItemFilter:
    """The item filter of ``corpus`` and ``surface_id`` (memoised per corpus object)."""
    if type(corpus) is not CorpusDeclaration:
        return ItemFilter(corpus, surface_id)
    key = (id(corpus), surface_id)
    found = _FILTERS.get(key)
    if found is not None and found.corpus is corpus:
        return found
    made = ItemFilter(corpus, surface_id)
    if len(_FILTERS) >= _FILTER_CACHE_SIZE:
        _FILTERS.clear()
    _FILTERS[key] = made
    return made


def within_policy(record: ActiveRecord, policy: StandingPolicy) -> bool:
    """Whether an acting record's authority is exactly what ``policy`` could activate.

    Ingest under a standing policy writes ``constraint`` authority over action
    scopes the policy allows, checkpointed by the policy's authority source, for
    a class, source kind and actor role it allows. A stored record claiming more
    (``veto``, another scope, another checkpoint) was not activated under it:
    memory never widens authority, so recall passes over it.
    """
    authority, source = record.authority, record.source
    return (
        authority.level == "constraint"
        and authority.checkpoint_ref == policy.authority_source_ref
        and set(authority.action_scopes).issubset(policy.allowed_action_scopes)
        and record.class_id in policy.allowed_target_classes
        and source.source_kind in policy.allowed_source_kinds
        and source.actor_role in policy.allowed_actor_roles
    )
