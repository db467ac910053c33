"""``reward_memory._frozen.frozen``: attrs' own ``__repr__``/``__eq__``/``__hash__``, shared.

Each record class is held to a twin made by ``attrs.frozen`` itself from the same
fields: the same repr, the same equality and equal hashes for equal records, over
generated values and over real records of the library.
"""

from __future__ import annotations

from typing import Any

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from reward_memory._frozen import frozen
from reward_memory.adapters.issue_fix import issue_fix_proposal, verified_contributor_event
from reward_memory.records.active import ActiveRecord


@frozen(kw_only=True)
class Point:
    x: int
    y: Any = None
    label: str = attrs.field(default="", eq=False)
    secret: str = attrs.field(default="", repr=False)
    shown: str = attrs.field(default="", repr=lambda value: f"<{len(value)} chars>")
    unhashed: int = attrs.field(default=0, hash=False)


@attrs.frozen(kw_only=True)
class Twin:
    x: int
    y: Any = None
    label: str = attrs.field(default="", eq=False)
    secret: str = attrs.field(default="", repr=False)
    shown: str = attrs.field(default="", repr=lambda value: f"<{len(value)} chars>")
    unhashed: int = attrs.field(default=0, hash=False)


@frozen(kw_only=True)
class One:
    x: int


@frozen
class Empty:
    pass


values = st.recursive(
    st.none() | st.integers() | st.text(max_size=5) | st.booleans(),
    lambda inner: st.tuples(inner, inner) | st.frozensets(st.integers(), max_size=3),
    max_leaves=6,
)
points = st.fixed_dictionaries(
    {
        "x": st.integers(-3, 3),
        "y": values,
        "label": st.sampled_from(["", "a"]),
        "secret": st.sampled_from(["", "s"]),
        "shown": st.text(max_size=3),
        "unhashed": st.integers(0, 2),
    }
)


def _name_free(text: str) -> str:
    return text.replace("Twin(", "Point(", 1)


@given(points, points)
def test_eq_and_hash_behave_as_attrs(left: dict[str, Any], right: dict[str, Any]) -> None:
    ours = (Point(**left), Point(**right))
    theirs = (Twin(**left), Twin(**right))
    assert (ours[0] == ours[1]) is (theirs[0] == theirs[1])
    assert (ours[0] != ours[1]) is (theirs[0] != theirs[1])
    if ours[0] == ours[1]:
        assert hash(ours[0]) == hash(ours[1])
    assert hash(Point(**left)) == hash(ours[0])  # a pure function of the hashed fields


@given(points)
def test_repr_is_attrs_repr(data: dict[str, Any]) -> None:
    assert repr(Point(**data)) == _name_free(repr(Twin(**data)))


def test_fields_left_out_of_eq_and_hash_are_left_out() -> None:
    assert Point(x=1, label="a") == Point(x=1, label="b")
    assert Point(x=1, unhashed=1) != Point(x=1, unhashed=2)  # compared, not hashed
    assert hash(Point(x=1, unhashed=1)) == hash(Point(x=1, unhashed=2))
    assert "secret" not in repr(Point(x=1, secret="hunter2"))


def test_another_class_is_not_equal_even_with_the_same_fields() -> None:
    assert Point(x=1) != Twin(x=1)
    assert Point(x=1).__eq__(Twin(x=1)) is NotImplemented
    assert Point(x=1) != (1,)
    assert {Point(x=1), Point(x=1), Point(x=2)} == {Point(x=1), Point(x=2)}


def test_one_field_and_no_field() -> None:
    assert One(x=1) == One(x=1) != One(x=2)
    assert hash(One(x=1)) == hash(One(x=1))
    assert repr(One(x=1)) == "One(x=1)"
    assert Empty() == Empty()
    assert hash(Empty()) == hash(Empty())
    assert repr(Empty()) == "Empty()"


def test_a_method_the_class_defines_is_kept() -> None:
    @frozen(kw_only=True)
    class Own:
        x: int

        def __repr__(self) -> str:
            return "own"

    assert repr(Own(x=1)) == "own"
    assert Own(x=1) == Own(x=1)


def test_explicit_options_are_attrs_own() -> None:
    @frozen(kw_only=True, eq=False)
    class Identity:
        x: int

    first = Identity(x=1)
    assert first != Identity(x=1)
    assert first == first  # identity is what eq=False leaves


def test_a_field_with_an_eq_key_is_refused() -> None:
    with pytest.raises(TypeError, match="eq key"):

        @frozen(kw_only=True)
        class Folded:
            name: str = attrs.field(eq=str.casefold)


def test_records_stay_frozen_slotted_attrs_classes() -> None:
    record = Point(x=1)
    assert attrs.has(Point)
    assert not hasattr(record, "__dict__")
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        record.x = 2  # type: ignore[misc]
    assert attrs.evolve(record, x=2) == Point(x=2)


def _twin_of(cls: type[Any]) -> type[Any]:
    """The class attrs itself makes of ``cls``'s fields (nested records unchanged)."""
    these = {
        a.name: attrs.field(
            default=a.default, eq=a.eq, hash=a.hash, repr=a.repr, kw_only=True, init=a.init
        )
        for a in attrs.fields(cls)
    }
    return attrs.make_class(cls.__name__, these, frozen=True, kw_only=True)


@pytest.mark.parametrize(
    "record",
    [
        issue_fix_proposal(verified_contributor_event()),
        verified_contributor_event(),
    ],
    ids=["proposal", "event"],
)
def test_library_records_repr_and_compare_as_attrs_would(record: Any) -> None:
    twin_class = _twin_of(type(record))
    values = {a.name: getattr(record, a.name) for a in attrs.fields(type(record)) if a.init}
    twin = twin_class(**values)
    assert repr(record) == repr(twin)
    assert record == attrs.evolve(record)
    assert hash(record) == hash(attrs.evolve(record))


def test_active_record_hash_follows_its_fields() -> None:
    names = [a.name for a in attrs.fields(ActiveRecord) if a.eq]
    assert names == [a.name for a in attrs.fields(ActiveRecord)]
    assert ActiveRecord.__eq__ is Point.__eq__  # one shared function, not one per class
    assert ActiveRecord.__repr__ is Point.__repr__
