"""The explain view of one receipt (``reward_memory_explain_v0``): its lineage, link by link.

event -> candidate -> review -> active record -> recall -> application (and an
operator control, when the receipt is one). Each link names a public-safe ref
(a hashed ref or an opaque token, never a scope ref, a path or content) and a
status:

================  ==================================================================
``verified``      the receipt in hand, or a provider readback that agrees with it
``missing``       checked: no document in the corpus scope reads back as it
``revoked``       checked: a revocation record names it (recall can no longer read it)
``purged``        checked: a purge tombstone names it (its content is deleted)
``retired``       checked: it reads back retired
``inactive``      checked: it reads back superseded or expired
``not_checked``   no provider or no binding for its corpus, the receipt keeps only a
                  digest, or the provider failed (``reason_code`` says which)
================  ==================================================================

A link is ``verified`` against the provider only when the record reads back as
the receipt names it (its activation ref and review ref too): a receipt edited
to name another activation is ``missing`` (``receipt_disagrees_with_record``).
A live copy wins over a tombstone (``closing_control_incomplete``: a control that
stopped half-way left it recallable), and so does a retired copy (``retired``, same
reason: its content is still there); a live record that another live record
supersedes is ``inactive`` (``superseded``). An operator control is ``verified``
only when the provider shows the record in the state it leaves (revoked, purged,
retired), else ``missing`` (``control_not_in_effect``); a recall only when every
record it returned is verified; a receipt that keeps digests only is never
checked. The application link is the receipt in hand.
"""

from __future__ import annotations

from typing import Any, Final, Literal, get_args

import attrs

from reward_memory._frozen import frozen
from reward_memory.records import _fields as f

__all__ = ["LINK_STAGES", "LINK_STATUSES", "ExplainLink", "Explanation"]

EXPLAIN_SCHEMA: Final = "reward_memory_explain_v0"
LinkStage = Literal[
    "event", "candidate", "review", "active_record", "recall", "application", "operator_control"
]
LINK_STAGES: Final[tuple[LinkStage, ...]] = get_args(LinkStage)
LinkStatus = Literal[
    "verified", "missing", "revoked", "purged", "retired", "inactive", "not_checked"
]
LINK_STATUSES: Final[tuple[LinkStatus, ...]] = get_args(LinkStatus)
LINK_REASONS: Final[tuple[str, ...]] = (
    "no_provider",
    "no_binding_for_corpus",
    "binding_does_not_fit_corpus",
    "provider_unavailable",
    "receipt_keeps_digest_only",
    "receipt_keeps_no_ref",
    "not_reached",
    "receipt_not_completed",
    # A verified record a purge or revoke named but did not finish closing (partial).
    "closing_control_incomplete",
    # A record or control that reads back, but not as the receipt says.
    "receipt_disagrees_with_record",
    "control_not_in_effect",
    "superseded",
    "records_not_all_verified",
    # The store holds no corpus in the binding's scope at all (a mistyped store).
    "corpus_absent",
)
ExplainStatus = Literal["explained", "provider_unavailable"]


def _links(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


def _link_list(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    from reward_memory.errors import RecordValidationError  # noqa: PLC0415

    if not isinstance(value, tuple) or not 1 <= len(value) <= 64:
        raise RecordValidationError(
            "must be a list of 1 to 64 links", path=f"$.{attribute.name}", code="invalid_value"
        )
    for index, item in enumerate(value):
        if not isinstance(item, ExplainLink):
            raise RecordValidationError(
                "must be an ExplainLink", path=f"$.{attribute.name}[{index}]", code="wrong_type"
            )


@frozen(kw_only=True)
class ExplainLink:
    """One link of the lineage: its stage, a public-safe ref, its status, and why if unchecked."""

    stage: LinkStage = f.enum(*LINK_STAGES)
    ref: str | None = f.optional_token()
    status: LinkStatus = f.enum(*LINK_STATUSES)
    reason_code: str | None = attrs.field(
        default=None,
        validator=attrs.validators.optional(attrs.validators.in_(LINK_REASONS)),
    )


@frozen(kw_only=True)
class Explanation:
    """``reward_memory_explain_v0``: a receipt's lineage, and what the provider confirms."""

    ok: Literal[True] = f.const(True)
    schema_version: Literal["reward_memory_explain_v0"] = f.const(EXPLAIN_SCHEMA)
    status: ExplainStatus = f.enum("explained", "provider_unavailable")
    receipt_schema: str = f.token()
    corpus_id: str | None = f.optional_corpus_id()
    links: tuple[ExplainLink, ...] = attrs.field(converter=_links, validator=_link_list)
    provider_checked: bool = f.strict_bool()
    provider_call_count: int = f.integer(minimum=0)
    raw_content_captured: Literal[False] = f.const(False)
    scope_refs_exposed: Literal[False] = f.const(False)
    grants_new_action_authority: Literal[False] = f.const(False)
