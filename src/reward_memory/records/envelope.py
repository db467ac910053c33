"""The Stage-0 durable record envelope: what every remembered record must name.

Every durable record names its class, source, scope, authority, confidence
(with its basis), lifecycle state, supersession, revocation, expiry and
privacy. The seeds' rule "confidence never increases authority" is structural
here: :class:`RecordAuthority` is validated against the class alone, and
:class:`Confidence` is never consulted by that check.

Authority levels per class (the widest each class may ever hold):

=========================  ==============================  ===================
class                      authority levels                action scopes
=========================  ==============================  ===================
``run_bound_reward``       ``evidence``                    never
``hard_policy``            ``constraint`` or ``veto``      1..12, checkpointed
``soft_preference``        ``advisory``                    never
``procedural_experience``  ``advisory``                    never
``working_context``        ``evidence`` or ``advisory``    never
=========================  ==============================  ===================
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, Literal, get_args

import attrs

from reward_memory._frozen import frozen
from reward_memory.errors import RecordValidationError
from reward_memory.records import _fields as f

if TYPE_CHECKING:
    from reward_memory.records.active import ActiveRecord as ActiveRecordLike

__all__ = [
    "ACTION_AUTHORITY_CLASSES",
    "ADVISORY_CLASSES",
    "AUTHORITY_BY_CLASS",
    "CLASS_IDS",
    "LIFECYCLE_STATES",
    "AuthorityLevel",
    "ClassId",
    "Confidence",
    "ConfidenceLevel",
    "DurableEnvelope",
    "Expiry",
    "LifecycleState",
    "Privacy",
    "RecordAuthority",
    "RecordScope",
    "RecordSource",
    "Revocation",
    "Supersession",
    "check_envelope",
]

ClassId = Literal[
    "run_bound_reward", "hard_policy", "soft_preference", "procedural_experience", "working_context"
]
CLASS_IDS: Final[tuple[ClassId, ...]] = get_args(ClassId)
ADVISORY_CLASSES: Final[frozenset[str]] = frozenset(
    {"soft_preference", "procedural_experience", "working_context", "run_bound_reward"}
)
ACTION_AUTHORITY_CLASSES: Final[frozenset[str]] = frozenset({"hard_policy"})

AuthorityLevel = Literal["evidence", "advisory", "constraint", "veto"]
AUTHORITY_BY_CLASS: Final[dict[str, frozenset[str]]] = {
    "run_bound_reward": frozenset({"evidence"}),
    "hard_policy": frozenset({"constraint", "veto"}),
    "soft_preference": frozenset({"advisory"}),
    "procedural_experience": frozenset({"advisory"}),
    "working_context": frozenset({"evidence", "advisory"}),
}

ConfidenceLevel = Literal["low", "medium", "high"]
LifecycleState = Literal[
    "observed", "candidate", "active", "superseded", "revoked", "expired", "retired"
]
LIFECYCLE_STATES: Final[tuple[LifecycleState, ...]] = get_args(LifecycleState)
Visibility = Literal["private", "workspace", "public_safe"]
RetentionClass = Literal["ephemeral", "session_bound", "revision_bound", "durable_until_revoked"]


@frozen(kw_only=True)
class RecordSource:
    """Who said it, where, and when: kind, reference, actor (and role), observation time."""

    source_kind: str = f.token()
    source_ref: str = f.text(240)
    actor_ref: str = f.token()
    actor_role: str | None = f.optional_token()
    observed_at: str = f.timestamp()


@frozen(kw_only=True)
class RecordScope:
    """Where it applies: workspace/user, project/repository, surfaces, revision and identities."""

    workspace_ref: str = f.token()
    project_ref: str = f.token()
    surface_ids: tuple[str, ...] = f.surface_list(max_items=12)
    revision_ref: str | None = f.optional_token()
    user_ref: str | None = f.optional_token()
    peer_ref: str | None = f.optional_token()
    session_ref: str | None = f.optional_token()


@frozen(kw_only=True)
class RecordAuthority:
    """The force a record may have, bound to an independently verified checkpoint.

    ``checkpoint_ref`` names the caller's authority source; it is required for
    action authority and is never derived from the record's own claims.
    """

    level: AuthorityLevel = f.enum("evidence", "advisory", "constraint", "veto")
    action_scopes: tuple[str, ...] = f.token_list(max_items=12)
    checkpoint_ref: str | None = f.optional_token()

    @action_scopes.validator
    def _scopes_need_force(
        self, attribute: attrs.Attribute[tuple[str, ...]], value: tuple[str, ...]
    ) -> None:
        del attribute
        if value and self.level in ("evidence", "advisory"):
            raise RecordValidationError(
                "evidence and advisory authority cannot carry action scopes",
                path="$.action_scopes",
                code="authority_widened",
            )
        if self.level in ("constraint", "veto"):
            if not value:
                raise RecordValidationError(
                    "constraint or veto authority needs at least one action scope",
                    path="$.action_scopes",
                    code="invalid_value",
                )
            if self.checkpoint_ref is None:
                raise RecordValidationError(
                    "action authority needs the verified checkpoint it came from",
                    path="$.checkpoint_ref",
                    code="missing_field",
                )


@frozen(kw_only=True)
class Confidence:
    """Evidence quality with its basis. It never raises authority."""

    level: ConfidenceLevel = f.enum("low", "medium", "high")
    basis: str = f.text(240)


@frozen(kw_only=True)
class Supersession:
    """Lineage: what this record replaces, and what replaced it."""

    supersedes_refs: tuple[str, ...] = f.token_list(max_items=50)
    superseded_by_ref: str | None = f.optional_token()


@frozen(kw_only=True)
class Revocation:
    """An explicit, authorised revocation (absent fields: not revoked)."""

    revoked_by_ref: str | None = f.optional_token()
    revoked_at: str | None = f.optional_timestamp()
    reason: str | None = f.optional_text(240)


@frozen(kw_only=True)
class Expiry:
    """When the record stops applying, and why it was retired, if it was."""

    expires_at: str | None = f.optional_timestamp()
    retired_reason: str | None = f.optional_token()


@frozen(kw_only=True)
class Privacy:
    """Visibility, retention class, and the invariant that raw content was not captured."""

    visibility: Visibility = f.enum("private", "workspace", "public_safe")
    retention_class: RetentionClass = f.enum(
        "ephemeral", "session_bound", "revision_bound", "durable_until_revoked"
    )
    raw_content_captured: Literal[False] = f.const(False)


def check_envelope(envelope: DurableEnvelope | ActiveRecordLike) -> None:
    """The envelope's cross-field rules, on any record that carries the envelope's fields."""
    allowed = AUTHORITY_BY_CLASS[envelope.class_id]
    if envelope.authority.level not in allowed:
        raise RecordValidationError(
            f"{envelope.class_id} may hold only {' or '.join(sorted(allowed))} authority",
            path="$.authority.level",
            code="authority_widened",
        )
    _check_lifecycle(envelope)
    if (
        envelope.class_id == "working_context"
        and envelope.expiry.expires_at is None
        and envelope.scope.revision_ref is None
    ):
        raise RecordValidationError(
            "working context expires or is bound to a session/archive revision",
            path="$.expiry.expires_at",
            code="missing_field",
        )


_LIVE_STATES: Final[frozenset[str]] = frozenset({"observed", "candidate", "active"})


def _inconsistent(message: str, path: str) -> RecordValidationError:
    return RecordValidationError(message, path=path, code="inconsistent_lifecycle")


def _check_lifecycle(envelope: DurableEnvelope | ActiveRecordLike) -> None:
    """A revocation, supersession or retirement is complete and in force, or the record is invalid.

    - revocation: ``revoked_by_ref`` and ``revoked_at`` together (``reason`` only with
      them), exactly when ``lifecycle_state`` is ``revoked``;
    - ``superseded_by_ref`` and ``retired_reason`` only on a record that is no
      longer live (not observed, candidate or active);
    - ``superseded``, ``retired`` and ``expired`` each name their marker.

    So no "half-revoked" or "active but superseded" record can be built (or read back).
    """
    state = envelope.lifecycle_state
    revocation = envelope.revocation
    revoker, revoked_at = revocation.revoked_by_ref, revocation.revoked_at
    if (state == "revoked") != (revoker is not None):
        raise _inconsistent(
            "lifecycle_state revoked and revocation.revoked_by_ref go together",
            "$.revocation.revoked_by_ref",
        )
    if (revoker is None) != (revoked_at is None):
        raise _inconsistent(
            "a revocation names who revoked it and when, together", "$.revocation.revoked_at"
        )
    if revoker is None and revocation.reason is not None:
        raise _inconsistent("a revocation reason needs the revocation", "$.revocation.reason")
    live = state in _LIVE_STATES
    supersession, expiry = envelope.supersession, envelope.expiry
    if live and supersession.superseded_by_ref is not None:
        raise _inconsistent(
            f"a record in state {state} cannot be superseded (its state says superseded)",
            "$.supersession.superseded_by_ref",
        )
    if live and expiry.retired_reason is not None:
        raise _inconsistent(
            f"a record in state {state} cannot carry a retirement (its state says retired)",
            "$.expiry.retired_reason",
        )
    if state == "superseded" and supersession.superseded_by_ref is None:
        raise _inconsistent(
            "a superseded record names what superseded it", "$.supersession.superseded_by_ref"
        )
    if state == "expired" and expiry.expires_at is None:
        raise _inconsistent("an expired record names when it expired", "$.expiry.expires_at")
    if state == "retired" and expiry.retired_reason is None:
        raise _inconsistent("a retired record keeps a compact reason", "$.expiry.retired_reason")


@frozen(kw_only=True)
class DurableEnvelope:
    """The Stage-0 envelope every durable record carries (reference §2.2, completed).

    The original's concrete records carried only part of it (no authority,
    revocation, visibility or retention class); ours carries all of it.
    """

    schema_version: Literal["reward_memory_durable_envelope_v0"] = f.const(
        "reward_memory_durable_envelope_v0"
    )
    class_id: ClassId = f.enum(*CLASS_IDS)
    source: RecordSource
    scope: RecordScope
    authority: RecordAuthority
    confidence: Confidence
    lifecycle_state: LifecycleState = f.enum(*LIFECYCLE_STATES)
    supersession: Supersession = attrs.field(factory=Supersession)
    revocation: Revocation = attrs.field(factory=Revocation)
    expiry: Expiry = attrs.field(factory=Expiry)
    privacy: Privacy

    def __attrs_post_init__(self) -> None:
        check_envelope(self)
