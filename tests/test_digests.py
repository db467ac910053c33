"""Canonical JSON, sha256 references and the original's legacy encodings, pinned.

A changed byte here is a changed identity: candidate refs, activation refs and
provider targets would stop matching records already stored. Change these
values only together with a schema version bump.
"""

from __future__ import annotations

import datetime
import enum
import functools
import hashlib
import json
import math
import re
import uuid
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reward_memory.digests import (
    REF_HEX_LENGTH,
    canonical_json,
    digest_hex,
    legacy_json,
    make_ref,
    sha256_hex,
    short_digest,
)

FIXED: dict[str, Any] = {"b": 1, "a": [1, 2.5, None, True, "\u00e9"], "c": {"z": "x", "y": ""}}
FIXED_BYTES = b'{"a":[1,2.5,null,true,"\xc3\xa9"],"b":1,"c":{"y":"","z":"x"}}'
FIXED_DIGEST = "fae199755d254328322c77d0c46ca2d53efa004b1a1f18a7f8af1be42bb2b6bb"


def test_canonical_json_exact_bytes() -> None:
    assert canonical_json(FIXED) == FIXED_BYTES


def test_digest_hex_is_sha256_of_the_canonical_bytes() -> None:
    assert digest_hex(FIXED) == FIXED_DIGEST
    assert digest_hex(FIXED) == hashlib.sha256(FIXED_BYTES).hexdigest()


def test_make_ref_prefix_and_length() -> None:
    ref = make_ref("candidate", FIXED)
    assert ref == "candidate:" + FIXED_DIGEST[:20]
    assert re.fullmatch(r"candidate:[0-9a-f]{20}", ref)
    assert REF_HEX_LENGTH == 20
    assert make_ref("activation", FIXED, length=12) == "activation:" + FIXED_DIGEST[:12]


@pytest.mark.parametrize(("prefix", "length"), [("", 20), ("candidate", 0), ("candidate", 65)])
def test_make_ref_rejects_bad_arguments(prefix: str, length: int) -> None:
    with pytest.raises(ValueError):
        make_ref(prefix, FIXED, length=length)


def test_short_digest_is_16_hex_of_raw_sha256() -> None:
    # The FIPS 180-2 test vector: sha256("abc") = ba7816bf8f01cfea414140de5dae2223...
    assert short_digest("abc") == "ba7816bf8f01cfea"
    assert short_digest(b"abc") == "ba7816bf8f01cfea"
    assert re.fullmatch(r"[0-9a-f]{16}", short_digest("viking://resources/x"))


def test_sha256_hex_str_is_utf8_bytes() -> None:
    assert sha256_hex("\u00e9") == sha256_hex("\u00e9".encode())
    assert sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"


# Legacy encodings of the original (reference §1.5) ---------------------------

LEGACY_OBJECT: dict[str, Any] = {"b": "\u00e9", "a": [1, {"d": 2, "c": None}]}


@pytest.mark.parametrize(
    ("style", "expected"),
    [
        ("J1", '{"a": [1, {"c": null, "d": 2}], "b": "\u00e9"}'),
        ("J2", '{"a":[1,{"c":null,"d":2}],"b":"\u00e9"}'),
        ("J3", '{"a": [1, {"c": null, "d": 2}], "b": "\\u00e9"}'),
        ("J4", '{"a":[1,{"c":null,"d":2}],"b":"\\u00e9"}'),
    ],
)
def test_legacy_json_exact_strings(style: Any, expected: str) -> None:
    assert legacy_json(LEGACY_OBJECT, style) == expected


def test_legacy_json_rejects_nan() -> None:
    with pytest.raises(ValueError):
        legacy_json({"x": math.nan}, "J2")


def test_golden_candidate_ref_from_the_reference_fixture() -> None:
    """Reference §5.3 fixture, hashed as §1.5 says: J1, sha256, first 20 hex.

    Every input is given in the reference; the expected ref is its golden value.
    """
    hashed = {
        "target_class": "hard_policy",
        "content_summary": (
            "Keep focused fixes within the affected module unless broader evidence is present."
        ),
        "source": {
            "source_kind": "maintainer_correction",
            "source_ref": "github:example/repository#42:comment:1",
            "actor_ref": "github:user:maintainer",
            "actor_role": "verified_repository_core_contributor",
        },
        "scope": {
            "workspace_ref": "workspace:example",
            "project_ref": "repository:example",
            "surface_ids": ["issue_fix.patch_planning"],
            "revision_ref": "revision:abc123",
        },
        "guard_context": {
            "source_freshness": "current",
            "conflict_state": "clear",
            "current_artifact_verified": True,
        },
        "requested_action_scopes": ["issue_fix:scope_selection"],
    }
    ref = "candidate:" + sha256_hex(legacy_json(hashed, "J1"))[:20]
    assert ref == "candidate:0e073f348a2a6c3ffc3c"
    # The canonical (new) encoding of the same object is a different identity.
    assert make_ref("candidate", hashed) != ref


def test_golden_record_ref_of_the_reference_fixture() -> None:
    """The fixture's candidate in the authority_policy_sources corpus: record_ref is the
    canonical digest of {corpus_id, candidate_ref} (item 12: what revoke and purge name)."""
    value = {
        "corpus_id": "authority_policy_sources",
        "candidate_ref": "candidate:0e073f348a2a6c3ffc3c",
    }
    assert digest_hex(value)[:20] == "b64c233d55738c7bf335"
    assert make_ref("record", value) == "record:b64c233d55738c7bf335"


def test_canonical_json_of_a_cycle_is_refused() -> None:
    # The encoder's own cycle check is off (the key walk sees every value first).
    cycle: list[Any] = []
    cycle.append(cycle)
    with pytest.raises(RecursionError):
        canonical_json(cycle)
    loop: dict[str, Any] = {}
    loop["self"] = loop
    with pytest.raises(RecursionError):
        digest_hex(loop)


# Properties -------------------------------------------------------------------

_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
)
_JSON = st.recursive(
    _SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=5),
        st.dictionaries(st.text(max_size=8), children, max_size=5),
    ),
    max_leaves=25,
)


def _reordered(value: Any, rnd: Any) -> Any:
    if isinstance(value, dict):
        items = [(key, _reordered(item, rnd)) for key, item in value.items()]
        rnd.shuffle(items)
        return dict(items)
    if isinstance(value, list):
        return [_reordered(item, rnd) for item in value]
    return value


@given(_JSON, st.randoms(use_true_random=False))
def test_canonical_json_is_stable_under_key_order(value: Any, rnd: Any) -> None:
    assert canonical_json(_reordered(value, rnd)) == canonical_json(value)
    assert digest_hex(_reordered(value, rnd)) == digest_hex(value)


@given(_JSON)
def test_canonical_json_is_valid_utf8_json(value: Any) -> None:
    data = canonical_json(value)
    text = data.decode("utf-8")  # strict: raises on invalid UTF-8
    assert json.loads(text) == value
    # Sorted keys, no insignificant whitespace: the same bytes as the original's J2.
    assert text == legacy_json(value, "J2")
    assert canonical_json(json.loads(text)) == data


@given(_JSON)
def test_tuples_encode_as_arrays(value: Any) -> None:
    assert canonical_json((value, [value])) == canonical_json([value, [value]])


@given(_JSON, st.sampled_from([math.nan, math.inf, -math.inf]))
def test_canonical_json_rejects_nan_and_infinities(value: Any, bad: float) -> None:
    with pytest.raises(ValueError):
        canonical_json([value, bad])
    with pytest.raises(ValueError):
        canonical_json({"nested": {"deeper": [value, {"x": bad}]}})


@pytest.mark.parametrize("value", [{1: "a"}, {"ok": {None: 1}}, [{True: 1}], {(1, 2): 3}])
def test_canonical_json_rejects_non_string_keys(value: Any) -> None:
    # json.dumps would turn 1 into "1": {1: x} and {"1": x} must not share a digest.
    with pytest.raises(TypeError):
        canonical_json(value)


@pytest.mark.parametrize("value", [{"a": {1, 2}}, b"bytes", object()])
def test_canonical_json_rejects_non_json_values(value: Any) -> None:
    with pytest.raises(TypeError):
        canonical_json(value)


def test_canonical_json_rejects_lone_surrogates() -> None:
    with pytest.raises(ValueError, match="UTF-8"):
        canonical_json({"text": "\ud800"})


# The orjson fast path is exact: the bytes, and the errors, of the standard encoder.
# (Session contract: orjson is exact only where we make it so.)

_ANY_SCALAR = st.one_of(
    _SCALARS,
    st.integers(),  # beyond 64 bits too: orjson refuses them, the standard path writes them
    st.floats(),  # NaN/inf: the standard path refuses them; small floats are spelled apart
    st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF), max_size=8),
    st.sampled_from(["\ud800", "a\udfff", "\U0001f600", "\uffff", "\x7f", "\u2028"]),
)
_ANY = st.recursive(
    _ANY_SCALAR,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.lists(children, max_size=4).map(tuple),
        st.dictionaries(
            st.one_of(st.text(max_size=4), st.sampled_from(["\uffff", "\U00010000", "\ue000"])),
            children,
            max_size=4,
        ),
    ),
    max_leaves=20,
)


def _outcome(encode: Any, value: Any) -> Any:
    try:
        return encode(value)
    except (TypeError, ValueError, RecursionError) as exc:
        return type(exc)


@given(_ANY)
def test_canonical_json_fast_path_equals_the_standard_encoder(value: Any) -> None:
    from reward_memory.digests import _stdlib_json

    assert _outcome(canonical_json, value) == _outcome(_stdlib_json, value)


class _Str(str):
    __slots__ = ()


class _Colour(enum.Enum):
    RED = "red"


class _Level(enum.IntEnum):
    ONE = 1


@pytest.mark.parametrize(
    "value",
    [
        {"when": datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)},
        [uuid.UUID(int=7)],
        {"c": _Colour.RED},
        {"level": _Level.ONE},
        {"s": _Str("x")},
        {_Str("k"): 1},
        [0.00005, 1e16, -0.0],
        {"big": 2**64, "small": -(2**63) - 1, "edge": 2**64 - 1},
        functools.reduce(lambda inner, _: [inner], range(300), []),  # beyond orjson's depth
        {"\U00010000": 1, "\uffff": 2, "\ue000": 3},
    ],
)
def test_canonical_json_fast_path_edge_cases(value: Any) -> None:
    from reward_memory.digests import _stdlib_json

    assert _outcome(canonical_json, value) == _outcome(_stdlib_json, value)


def test_without_orjson_the_standard_encoder_writes_everything(monkeypatch: Any) -> None:
    """orjson is a declared dependency, but an install without it gives the same bytes."""
    from reward_memory import digests, ingestion
    from reward_memory.adapters.issue_fix import verified_contributor_event

    event = verified_contributor_event()
    with_orjson = (canonical_json(FIXED), ingestion.canonical_text(event))
    monkeypatch.setattr(digests, "_DUMPS", [None])
    assert (canonical_json(FIXED), ingestion.canonical_text(event)) == with_orjson
    assert canonical_json(FIXED) == FIXED_BYTES


def test_once_warm_the_orjson_writer_writes_and_gives_the_same_bytes(monkeypatch: Any) -> None:
    """The fast path is really taken (so the equality properties above test it)."""
    from reward_memory import digests

    monkeypatch.setattr(digests, "_DUMPS", [])
    monkeypatch.setattr(digests, "_WARMUP", [0])
    for _ in range(digests._STDLIB_FIRST + 1):
        assert canonical_json(FIXED) == FIXED_BYTES
    writer = digests._DUMPS[0]
    assert writer is not None
    used: list[Any] = []

    def spy(value: Any) -> bytes:
        used.append(value)
        return writer(value)

    monkeypatch.setattr(digests, "_DUMPS", [spy])
    plain = {"b": 1, "a": [1, None, True, "\u00e9"], "c": ("x",)}
    assert canonical_json(plain) == '{"a":[1,null,true,"\u00e9"],"b":1,"c":["x"]}'.encode()
    assert canonical_json(FIXED) == FIXED_BYTES  # it holds a float: the standard encoder
    assert used == [plain]


_RACE = """
import threading
from reward_memory import digests
start = threading.Barrier(32)
errors = []
def run(thread):
    start.wait()
    for index in range(40):
        try:
            digests.canonical_json({"k": f"{thread}-{index}"})
        except Exception as exc:
            errors.append(repr(exc))
threads = [threading.Thread(target=run, args=(t,)) for t in range(32)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print(len(errors), errors[:1])
"""


def test_threads_writing_the_first_values_never_see_a_half_imported_orjson() -> None:
    """The writer switches to orjson after the first values; while one thread imports it,
    the others must wait for the import, not use the module it has half initialised.
    (Before the fix most fresh processes failed here.)"""
    import subprocess
    import sys

    for _ in range(3):  # a fresh process each time: the switch happens once per process
        run = subprocess.run(
            [sys.executable, "-c", _RACE], capture_output=True, text=True, check=True, timeout=60
        )
        assert run.stdout.strip() == "0 []", run.stdout
