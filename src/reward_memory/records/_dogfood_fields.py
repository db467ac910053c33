"""Shared parts of the Stage-5 dogfood records: the constants, the vocabularies and
the small validators the receipt and batch modules both use."""

from __future__ import annotations

from typing import Any, Final, Literal, get_args

import attrs

from reward_memory.errors import RecordValidationError
from reward_memory.grammars import check_digest

RECEIPT_SCHEMA: Final = "reward_memory_dogfood_receipt_v1"
BATCH_SCHEMA: Final = "reward_memory_dogfood_batch_v1"
INPUT_SCHEMA: Final = "reward_memory_dogfood_input_v1"
READY: Final = "ready_for_bounded_issue_fix_pilot"
ISSUE_FIX_SURFACE: Final = "issue_fix.patch_planning"
MAX_RECEIPTS: Final = 24
MAX_CONTROLS: Final = 8
MAX_DIGESTS: Final = 16
MAX_COUNT: Final = 1_000_000_000

DomainFamily = Literal["issue_fix", "loopx"]
DOMAIN_FAMILIES: Final[tuple[DomainFamily, ...]] = get_args(DomainFamily)
Disposition = Literal["applied", "not_applied", "refuted"]
DISPOSITIONS: Final[tuple[Disposition, ...]] = get_args(Disposition)
# The application outcome decides; every outcome the model did not own is a miss.
DISPOSITION_OF: Final[dict[str, Disposition]] = {
    "applied": "applied",
    "refuted": "refuted",
    "ignored": "not_applied",
    "failed": "not_applied",
    "not_available": "not_applied",
    "available_not_applied": "not_applied",
}
MODEL_OUTCOMES: Final = frozenset({"applied", "ignored", "refuted"})
ControlAction = Literal["edit", "retire", "revoke", "purge"]
CONTROL_ACTIONS: Final[tuple[ControlAction, ...]] = get_args(ControlAction)
REQUIRED_CONTROLS: Final = ("edit", "retire")
UtilityStatus = Literal["not_requested", "accepted", "rejected"]
UTILITY_REASONS: Final[dict[str, str | None]] = {
    "not_requested": "utility_attribution_not_requested",
    "accepted": None,
    "rejected": "utility_attribution_rejected",
}


def bad(message: str, path: str, code: str = "invalid_value") -> RecordValidationError:
    return RecordValidationError(message, path=path, code=code)


def to_tuple(value: Any, field: attrs.Attribute[Any]) -> tuple[Any, ...]:
    if not isinstance(value, list | tuple):
        raise bad("must be a list", f"$.{field.name}", "wrong_type")
    return tuple(value)


def tuple_field(**kwargs: Any) -> Any:
    """A field holding a list, kept as a tuple (a string or a mapping is refused)."""
    return attrs.field(converter=attrs.Converter(to_tuple, takes_field=True), **kwargs)


def record_of(cls: type[Any], *, optional: bool = False) -> Any:
    """A validator: the field holds a ``cls`` record (Python callers build these too)."""

    def validate(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
        if not (isinstance(value, cls) or (optional and value is None)):
            raise bad(f"must be a {cls.__name__} record", f"$.{attribute.name}", "wrong_type")

    return validate


def each_of(cls: type[Any]) -> Any:
    """A validator: every item of the tuple is a ``cls`` record."""

    def validate(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
        for index, item in enumerate(value):
            if not isinstance(item, cls):
                raise bad(
                    f"must be a {cls.__name__} record", f"$.{attribute.name}[{index}]", "wrong_type"
                )

    return validate


def counted_items(low: int, high: int) -> Any:
    """A validator: the tuple holds ``low``-``high`` items (the schema's minItems/maxItems)."""

    def validate(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
        if not low <= len(value) <= high:
            raise bad(f"holds {low}-{high} items", f"$.{attribute.name}", "invalid_value")

    return validate


def digest_list(value: Any) -> tuple[str, ...]:
    path = "$.memory_ref_digests"
    if not isinstance(value, list | tuple):
        raise bad("must be a list", path, "wrong_type")
    items = tuple(value)
    if len(items) > MAX_DIGESTS:
        raise bad(f"must hold at most {MAX_DIGESTS} digests", path)
    for index, item in enumerate(items):
        check_digest(item, f"{path}[{index}]")
    if list(items) != sorted(set(items)):
        raise bad("must be sorted and free of duplicates", path)
    return items


def check_domain(
    family: str, domain_id: str, surface_id: str, *, surface_path: str = "$.surface_id"
) -> None:
    """The domain id is in its family, and the family fits the application's surface."""
    if not (domain_id.startswith(f"{family}.") and len(domain_id) > len(family) + 1):
        raise bad(f"must start with {family}. (the domain family)", "$.domain_id")
    # An Issue Fix result is one on Issue Fix's fixed surface, and a LoopX domain
    # result is not an Issue Fix one relabelled: the family is checked, not trusted.
    if family == "issue_fix" and surface_id != ISSUE_FIX_SURFACE:
        raise bad(f"an issue_fix result is on {ISSUE_FIX_SURFACE}", surface_path)
    if family == "loopx" and surface_id.startswith("issue_fix."):
        raise bad("a loopx domain result is not on an issue_fix surface", surface_path)
