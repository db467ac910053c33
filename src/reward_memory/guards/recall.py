"""The Stage-3 recall guard: ordered reason codes, decided before any provider call.

Pure functions over typed records: no I/O, no provider, no clock. Every reason
is collected (the guard does not stop at the first), in this fixed order:

1. ``corpus_class_not_durable_recall_memory`` (``run_bound_reward``, ``working_context``)
2. ``corpus_not_active``
3. ``workspace_scope_mismatch``, ``project_scope_mismatch``
4. ``user_ref_scope_mismatch``, ``peer_ref_scope_mismatch``,
   ``session_ref_scope_mismatch`` -- for each identity field the corpus sets
5. ``surface_scope_mismatch``
6. ``unresolved_conflict``
7. ``source_truth_not_current``, ``source_revision_mismatch``, ``source_age_exceeded``
8. ``request_revision_mismatch``
9. ``read_authority_<identity>_scope_mismatch`` (identity fields the corpus sets),
   ``read_authority_unverified``, ``read_authority_source_missing``, then
   ``read_authority_<key>_mismatch`` for ``corpus_id``, ``workspace_ref``,
   ``project_ref``, ``surface_id``, ``read_authority`` and the identity fields
   the corpus sets
10. provider binding (differs from the original, which raised instead):
    ``provider_binding_corpus_mismatch``, ``provider_binding_provider_mismatch``,
    ``provider_binding_scope_digest_mismatch``,
    ``provider_binding_actor_peer_missing``, ``provider_binding_actor_peer_mismatch``,
    then ours: ``provider_binding_peer_scope_mismatch`` (a peer-scoped corpus
    served as, or under the URI of, another peer), ``provider_binding_actor_peer_unscoped``
    (an actor peer that neither the corpus nor the URI names),
    ``provider_binding_scope_ref_ambiguous`` (dot segments, empty inner segments,
    two ``/peers/`` segments), ``provider_binding_request_peer_mismatch`` and
    ``provider_binding_checkpoint_peer_mismatch`` (the request or checkpoint
    names another peer than the binding acts as)

Steps 1-9 reproduce the original's order exactly (reference §7.1). A binding
whose ``scope_ref`` is under ``/peers/<peer>/`` must carry exactly that
``actor_peer_id``; the peer is never inferred from the URI for the provider call.
A corpus whose scope sets ``peer_ref`` binds recall to exactly that peer,
whatever the URI looks like (a ref ``peer:alice`` names the provider peer
``alice``, see :func:`peer_matches`).

A packet that arrives as data is re-guarded by :func:`packet_reasons`: all of
the above from the packet's content, plus the structural
``query_count_outside_mode`` and ``limit_out_of_range``, and
``recorded_guard_verdict_mismatch`` when the recorded verdict disagrees. A
guard verdict is never read from data (DESIGN.md §4).

What depends only on the corpus (its class and lifecycle verdicts, the identity
fields it sets, its surfaces, its freshness mode) is derived once per
:class:`CorpusDeclaration` object, and the binding verdict once per
(binding, corpus) pair: both records are frozen, so the memo is exact.
"""

from __future__ import annotations

import functools
import hashlib
from typing import TYPE_CHECKING, Any, Final

from reward_memory.records.corpus import CorpusDeclaration
from reward_memory.records.recall import (
    MAX_LIMIT,
    QUERY_BOUNDS,
    FreshnessContext,
    ProviderBinding,
)

if TYPE_CHECKING:
    from reward_memory.records.recall import (
        NormalizedRecallRequest,
        ReadAuthorityCheckpoint,
        RecallRequest,
        RecallRequestPacket,
    )

__all__ = [
    "BINDING_REASON_CODES",
    "IDENTITY_FIELDS",
    "RECORDED_MISMATCH",
    "STRUCTURE_REASON_CODES",
    "actor_peer_reasons",
    "binding_reasons",
    "packet_reasons",
    "peer_matches",
    "peer_of_scope_ref",
    "recall_reasons",
    "request_reasons",
    "scope_ref_ambiguous",
    "structure_reasons",
]

IDENTITY_FIELDS: Final = ("user_ref", "peer_ref", "session_ref")
NON_RECALL_CLASSES: Final = frozenset({"run_bound_reward", "working_context"})
_CURRENT_MODES: Final = frozenset({"source_truth_bound", "execution_bound"})
_REVISION_MODES: Final = frozenset({"revision_bound", "session_archive_bound"})
_CHECKPOINT_KEYS: Final = (
    "corpus_id",
    "workspace_ref",
    "project_ref",
    "surface_id",
    "read_authority",
)
_PEERS: Final = "/peers/"
_PEER_PREFIX: Final = "peer:"
BINDING_REASON_CODES: Final = (
    "provider_binding_corpus_mismatch",
    "provider_binding_provider_mismatch",
    "provider_binding_scope_digest_mismatch",
    "provider_binding_actor_peer_missing",
    "provider_binding_actor_peer_mismatch",
    "provider_binding_peer_scope_mismatch",
    "provider_binding_actor_peer_unscoped",
    "provider_binding_scope_ref_ambiguous",
    "provider_binding_request_peer_mismatch",
    "provider_binding_checkpoint_peer_mismatch",
)
STRUCTURE_REASON_CODES: Final = ("query_count_outside_mode", "limit_out_of_range")
RECORDED_MISMATCH: Final = "recorded_guard_verdict_mismatch"
# What a packet guarded without a binding may lack (and the actor-peer reasons,
# which only a binding can produce).
_STRUCTURE_AND_BINDING: Final = frozenset({*BINDING_REASON_CODES, *STRUCTURE_REASON_CODES})
_NO_FRESHNESS: Final = FreshnessContext(source_truth_current=False)


_MEMO_SIZE: Final = 256


class _CorpusView:
    """What the request guard needs from one corpus, derived once per corpus object."""

    __slots__ = (
        "corpus_id",
        "current_bound",
        "head",
        "identities",
        "max_age_seconds",
        "project_ref",
        "read_authority",
        "request_revision_bound",
        "revision_bound",
        "source_revision",
        "surface_ids",
        "time_bound",
        "workspace_ref",
    )

    def __init__(self, corpus: CorpusDeclaration) -> None:
        scope = corpus.scope
        freshness = corpus.freshness
        head: list[str] = []
        if corpus.class_id in NON_RECALL_CLASSES:
            head.append("corpus_class_not_durable_recall_memory")
        if corpus.lifecycle.state != "active":
            head.append("corpus_not_active")
        self.head = tuple(head)
        self.workspace_ref = scope.workspace_ref
        self.project_ref = scope.project_ref
        # Identity fields the corpus sets (an unset corpus field is not checked):
        # (name, expected, request reason, read-authority scope reason, checkpoint reason).
        self.identities = tuple(
            (
                name,
                expected,
                f"{name}_scope_mismatch",
                f"read_authority_{name}_scope_mismatch",
                f"read_authority_{name}_mismatch",
            )
            for name in IDENTITY_FIELDS
            if (expected := getattr(scope, name)) is not None
        )
        self.surface_ids = frozenset(scope.surface_ids)
        mode = freshness.mode
        self.current_bound = mode in _CURRENT_MODES
        self.revision_bound = mode in _REVISION_MODES
        self.time_bound = mode == "time_bound"
        self.request_revision_bound = mode == "revision_bound"
        self.source_revision = freshness.source_revision
        self.max_age_seconds = freshness.max_age_seconds
        self.corpus_id = corpus.corpus_id
        self.read_authority = corpus.read_authority


# Keyed by id(); each entry keeps its key objects alive, so an id is never reused
# while its entry exists. Only exact (frozen) record types are memoised.
_VIEWS: dict[int, tuple[CorpusDeclaration, _CorpusView]] = {}
_BINDINGS: dict[tuple[int, int], tuple[ProviderBinding, CorpusDeclaration, tuple[str, ...]]] = {}


def _view(corpus: CorpusDeclaration) -> _CorpusView:
    if type(corpus) is not CorpusDeclaration:
        return _CorpusView(corpus)
    entry = _VIEWS.get(id(corpus))
    if entry is not None and entry[0] is corpus:
        return entry[1]
    view = _CorpusView(corpus)
    if len(_VIEWS) >= _MEMO_SIZE:
        _VIEWS.clear()
    _VIEWS[id(corpus)] = (corpus, view)
    return view


def request_reasons(
    request: RecallRequest | NormalizedRecallRequest,
    corpus: CorpusDeclaration,
    checkpoint: ReadAuthorityCheckpoint,
) -> tuple[str, ...]:
    """The request guard of reference §7.1, every reason in its fixed order."""
    view = _view(corpus)
    reasons = list(view.head)
    add = reasons.append
    workspace_ref = request.workspace_ref
    project_ref = request.project_ref
    surface_id = request.surface_id
    if workspace_ref != view.workspace_ref:
        add("workspace_scope_mismatch")
    if project_ref != view.project_ref:
        add("project_scope_mismatch")
    identities = view.identities
    mismatched: list[Any] = []
    if identities:
        mismatched = [ident for ident in identities if getattr(request, ident[0]) != ident[1]]
        reasons.extend(ident[2] for ident in mismatched)
    if surface_id not in view.surface_ids:
        add("surface_scope_mismatch")
    if request.conflict_state != "clear":
        add("unresolved_conflict")
    # A request packet loaded from data may carry no freshness observations: then
    # nothing proves freshness, and every freshness mode fails closed.
    context = request.freshness_context or _NO_FRESHNESS
    if view.current_bound and not context.source_truth_current:
        add("source_truth_not_current")
    if view.revision_bound and context.source_revision != view.source_revision:
        add("source_revision_mismatch")
    if view.time_bound and (
        context.age_seconds is None
        or view.max_age_seconds is None
        or context.age_seconds > view.max_age_seconds
    ):
        add("source_age_exceeded")
    if view.request_revision_bound and request.revision_ref != view.source_revision:
        add("request_revision_mismatch")
    if mismatched:
        reasons.extend(ident[3] for ident in mismatched)
    if not checkpoint.verified:
        add("read_authority_unverified")
    if checkpoint.source_ref is None:
        add("read_authority_source_missing")
    # The checkpoint must name this corpus, the request's workspace, project and
    # surface, and the corpus's read authority (in _CHECKPOINT_KEYS order).
    if checkpoint.corpus_id != view.corpus_id:
        add("read_authority_corpus_id_mismatch")
    if checkpoint.workspace_ref != workspace_ref:
        add("read_authority_workspace_ref_mismatch")
    if checkpoint.project_ref != project_ref:
        add("read_authority_project_ref_mismatch")
    if checkpoint.surface_id != surface_id:
        add("read_authority_surface_id_mismatch")
    if checkpoint.read_authority != view.read_authority:
        add("read_authority_read_authority_mismatch")
    for ident in identities:
        if getattr(checkpoint, ident[0]) != ident[1]:
            add(ident[4])
    return tuple(reasons) if reasons else ()


def peer_of_scope_ref(scope_ref: str) -> str | None:
    """The ``<peer>`` of a scope under ``/peers/<peer>/`` (``""`` when empty), else ``None``.

    Used only to *check* a binding's explicit ``actor_peer_id``; it is never
    used as the actor peer of a provider call.
    """
    index = scope_ref.find(_PEERS)
    if index < 0:
        return None
    return scope_ref[index + len(_PEERS) :].split("/", 1)[0]


@functools.lru_cache(maxsize=1024)
def _scope_digest_matches(scope_ref: str, declared: str) -> bool:
    full = hashlib.sha256(scope_ref.encode("utf-8")).hexdigest()
    if declared.startswith("sha256:"):
        return declared == f"sha256:{full}"
    return declared == full[: len(declared)] and len(declared) == 16


def binding_reasons(binding: ProviderBinding, corpus: CorpusDeclaration) -> tuple[str, ...]:
    """Whether a provider binding belongs to the corpus, as ordered reason codes.

    - ``provider_binding_corpus_mismatch``: the binding names another corpus;
    - ``provider_binding_provider_mismatch``: another provider id than the corpus's;
    - ``provider_binding_scope_digest_mismatch``: the corpus declares a
      ``provider_scope_ref_digest`` and the binding's ``scope_ref`` does not hash to it;
    - ``provider_binding_actor_peer_missing`` / ``..._mismatch``: the scope is under
      ``/peers/<peer>/`` and the binding carries no ``actor_peer_id``, or another one.
    """
    if type(binding) is not ProviderBinding or type(corpus) is not CorpusDeclaration:
        return _binding_reasons(binding, corpus)
    key = (id(binding), id(corpus))
    entry = _BINDINGS.get(key)
    if entry is not None and entry[0] is binding and entry[1] is corpus:
        return entry[2]
    reasons = _binding_reasons(binding, corpus)
    if len(_BINDINGS) >= _MEMO_SIZE:
        _BINDINGS.clear()
    _BINDINGS[key] = (binding, corpus, reasons)
    return reasons


def peer_matches(peer_ref: str, provider_peer: str) -> bool:
    """Whether a scope's ``peer_ref`` names the provider peer ``provider_peer``.

    Scopes spell identities as refs (``peer:alice``), providers as bare ids
    (``alice``): a ref matches its own bare id, or the identical string.
    """
    return peer_ref == provider_peer or peer_ref == _PEER_PREFIX + provider_peer


def scope_ref_ambiguous(scope_ref: str) -> bool:
    """Whether a scope URI could name another place than it reads as.

    Dot segments, percent-escapes, backslashes, empty inner segments and more
    than one ``/peers/`` segment let a URI that *looks* like one identity's
    scope resolve to another's; such a binding is refused, not interpreted.
    """
    if "%" in scope_ref or "\\" in scope_ref or scope_ref.count(_PEERS) > 1:
        return True
    _, sep, path = scope_ref.partition("://")
    segments = (path if sep else scope_ref).split("/")
    inner = segments[1:-1] if len(segments) > 2 else []
    return any(seg in (".", "..") for seg in segments) or "" in inner


def _binding_reasons(binding: ProviderBinding, corpus: CorpusDeclaration) -> tuple[str, ...]:
    reasons: list[str] = []
    if binding.corpus_id != corpus.corpus_id:
        reasons.append("provider_binding_corpus_mismatch")
    if binding.provider_id != corpus.provider_id:
        reasons.append("provider_binding_provider_mismatch")
    declared = corpus.provider_scope_ref_digest
    if declared is not None and not _scope_digest_matches(binding.scope_ref, declared):
        reasons.append("provider_binding_scope_digest_mismatch")
    actor = binding.actor_peer_id
    uri_peer = peer_of_scope_ref(binding.scope_ref)
    corpus_peer = corpus.scope.peer_ref
    if (uri_peer is not None or corpus_peer is not None) and actor is None:
        reasons.append("provider_binding_actor_peer_missing")
    if uri_peer is not None and actor is not None and actor != uri_peer:
        reasons.append("provider_binding_actor_peer_mismatch")
    # A peer-scoped corpus binds recall to exactly its peer: the binding acts as
    # that peer and its URI names no other, whatever the URI otherwise looks like.
    if corpus_peer is not None and (
        (actor is not None and not peer_matches(corpus_peer, actor))
        or (uri_peer is not None and not peer_matches(corpus_peer, uri_peer))
    ):
        reasons.append("provider_binding_peer_scope_mismatch")
    if actor is not None and uri_peer is None and corpus_peer is None:
        # An actor identity nothing in the corpus or the scope asks for.
        reasons.append("provider_binding_actor_peer_unscoped")
    if scope_ref_ambiguous(binding.scope_ref):
        reasons.append("provider_binding_scope_ref_ambiguous")
    return tuple(reasons)


def actor_peer_reasons(
    binding: ProviderBinding,
    corpus: CorpusDeclaration,
    request: RecallRequest | NormalizedRecallRequest,
    checkpoint: ReadAuthorityCheckpoint,
) -> tuple[str, ...]:
    """The request and checkpoint name no other peer than the one the binding acts as.

    Only where the corpus itself sets no ``peer_ref`` (the request guard checks
    that case): a binding acting as peer P under a ``/peers/P/`` scope cannot
    serve a request, or a checkpoint, that names peer Q.
    """
    actor = binding.actor_peer_id
    if actor is None or corpus.scope.peer_ref is not None:
        return ()
    reasons: list[str] = []
    if request.peer_ref is not None and not peer_matches(request.peer_ref, actor):
        reasons.append("provider_binding_request_peer_mismatch")
    if checkpoint.peer_ref is not None and not peer_matches(checkpoint.peer_ref, actor):
        reasons.append("provider_binding_checkpoint_peer_mismatch")
    return tuple(reasons)


def structure_reasons(request: RecallRequest | NormalizedRecallRequest) -> tuple[str, ...]:
    """The mode's query cap and the limit, re-checked on whatever the request claims.

    The records refuse these shapes when built; this is the seam's own check on
    the packet it acts on (a packet is data, and a guard is never read from data).
    """
    reasons: list[str] = []
    low, high = QUERY_BOUNDS.get(request.mode, (1, 0))
    if not low <= len(request.queries) <= high:
        reasons.append("query_count_outside_mode")
    limit = request.limit
    if type(limit) is not int or not 1 <= limit <= MAX_LIMIT:
        reasons.append("limit_out_of_range")
    return tuple(reasons)


def packet_reasons(packet: RecallRequestPacket, binding: ProviderBinding) -> tuple[str, ...]:
    """Re-derive the whole verdict of a request packet from its content, with ``binding``.

    Request (scope, identity, surface, conflict, freshness, checkpoint), the
    mode's query cap and the limit, then the binding. When the packet's
    recorded verdict is neither this nor this without the binding part (a packet
    guarded without a binding), ``recorded_guard_verdict_mismatch`` is appended:
    a recorded verdict that disagrees with the derived one blocks.
    """
    request = packet.request
    corpus = packet.corpus
    checkpoint = packet.read_authority_checkpoint
    own = request_reasons(request, corpus, checkpoint) + structure_reasons(request)
    bound = binding_reasons(binding, corpus) + actor_peer_reasons(
        binding, corpus, request, checkpoint
    )
    derived = own + bound
    recorded = packet.guard.reason_codes
    recorded_own = tuple(r for r in recorded if r not in _STRUCTURE_AND_BINDING)
    derived_own = tuple(r for r in own if r not in _STRUCTURE_AND_BINDING)
    if recorded_own != derived_own or not set(recorded) <= set(derived):
        return (*derived, RECORDED_MISMATCH)
    return derived


def recall_reasons(
    request: RecallRequest,
    corpus: CorpusDeclaration,
    checkpoint: ReadAuthorityCheckpoint,
    binding: ProviderBinding | None = None,
) -> tuple[str, ...]:
    """The request guard followed by the binding guard (when a binding is given)."""
    reasons = request_reasons(request, corpus, checkpoint)
    if binding is None:
        return reasons
    return (
        reasons
        + binding_reasons(binding, corpus)
        + actor_peer_reasons(binding, corpus, request, checkpoint)
    )
