"""The in-memory provider's index: the fast paths give exactly what the plain ones give.

Contract (DESIGN.md, the fixture provider): the memory provider is a real store with
real search semantics, so its shortcuts must not change a term, a summary or a read.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reward_memory.digests import make_ref
from reward_memory.errors import ProviderUnavailable, RecordValidationError
from reward_memory.providers.spi import ProviderScope
from reward_memory.testing import InMemoryProvider
from reward_memory.testing._memory_index import SUMMARY_LENGTH, _summary, _terms
from reward_memory.testing.memory import _memory_ref

_WORDS = re.compile(r"\w+")
_TEXT = st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=127), max_size=400)
_SPACED = st.lists(
    st.one_of(st.sampled_from([" ", "\n", "\t", "  \r\n ", "\x0b"]), st.text(min_size=1)),
    max_size=200,
).map("".join)
SCOPE = ProviderScope(namespace="rm-test", scope_ref="project:index")


@given(_TEXT)
def test_ascii_terms_are_the_casefolded_word_matches(text: str) -> None:
    assert _terms(text) == frozenset(_WORDS.findall(text.casefold()))


@given(st.text(max_size=200))
def test_any_text_terms_are_the_casefolded_word_matches(text: str) -> None:
    assert _terms(text) == frozenset(_WORDS.findall(text.casefold()))


@given(_SPACED)
def test_summary_shortcut_equals_collapsing_the_whole_text(text: str) -> None:
    assert _summary(text) == " ".join(text.split())[:SUMMARY_LENGTH]


def test_summary_of_a_long_document_with_a_long_last_word() -> None:
    text = "word " * 100 + "x" * 5000
    assert _summary(text) == " ".join(text.split())[:SUMMARY_LENGTH]
    spaced = " " * 700 + "late start"
    assert _summary(spaced) == "late start"


def test_read_key_after_delete_and_rewrite_finds_the_new_document() -> None:
    provider = InMemoryProvider()
    first = provider.write(scope=SCOPE, key="doc-1", content="first words")
    assert provider.delete(scope=SCOPE, ref=first.ref).deleted
    assert provider.read_key(scope=SCOPE, key="doc-1").found is False
    assert provider.read_key(scope=SCOPE, key="doc-1").ref == first.ref
    again = provider.write(scope=SCOPE, key="doc-1", content="second words")
    assert again.status == "created"
    assert again.ref == first.ref
    assert provider.read_key(scope=SCOPE, key="doc-1").content == "second words"
    assert provider.search(scope=SCOPE, query="first", limit=3).hits == ()
    assert [hit.ref for hit in provider.search(scope=SCOPE, query="second", limit=3).hits] == [
        first.ref
    ]


def test_replayed_write_reports_the_stored_digest() -> None:
    provider = InMemoryProvider()
    created = provider.write(scope=SCOPE, key="doc-1", content="same text")
    assert provider.write(scope=SCOPE, key="doc-1", content="same text") == created.__class__(
        ref=created.ref, status="unchanged", content_sha256=created.content_sha256
    )
    conflict = provider.write(scope=SCOPE, key="doc-1", content="other text")
    assert conflict.status == "conflict"
    assert conflict.content_sha256 == created.content_sha256


def test_handover_keeps_the_index_independent() -> None:
    provider = InMemoryProvider()
    provider.write(scope=SCOPE, key="doc-1", content="alpha beta")
    successor = provider.handover()
    successor.write(scope=SCOPE, key="doc-2", content="alpha gamma")
    assert len(successor.search(scope=SCOPE, query="alpha", limit=5).hits) == 2
    assert successor.read_key(scope=SCOPE, key="doc-1").content == "alpha beta"


def test_a_handed_over_provider_refuses_every_change_and_keeps_nothing() -> None:
    """The documents move to the successor (no copy): the closed object cannot touch them."""
    provider = InMemoryProvider()
    written = provider.write(scope=SCOPE, key="doc-1", content="alpha beta")
    successor = provider.handover()
    with pytest.raises(ProviderUnavailable):
        provider.write(scope=SCOPE, key="doc-2", content="alpha gamma")
    with pytest.raises(ProviderUnavailable):
        provider.delete(scope=SCOPE, ref=written.ref)
    with pytest.raises(ProviderUnavailable):
        provider.read(scope=SCOPE, ref=written.ref)
    with pytest.raises(ProviderUnavailable):
        provider.search(scope=SCOPE, query="alpha", limit=5)
    provider.clear()  # the closed object's own (empty) state only
    assert successor.read(scope=SCOPE, ref=written.ref).content == "alpha beta"
    assert [hit.ref for hit in successor.search(scope=SCOPE, query="alpha", limit=5).hits] == [
        written.ref
    ]
    assert successor.delete(scope=SCOPE, ref=written.ref).deleted
    assert not successor.search(scope=SCOPE, query="alpha", limit=5).hits


_VOCABULARY = ("alpha", "beta", "gamma", "delta", "common", "field", "rare")


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["write", "write", "write", "delete"]),
            st.integers(min_value=0, max_value=120),
            st.lists(st.sampled_from(_VOCABULARY), min_size=1, max_size=5),
        ),
        min_size=40,
        max_size=260,
    ),
    st.lists(st.sampled_from(_VOCABULARY), min_size=1, max_size=4),
    st.integers(min_value=1, max_value=12),
)
def test_search_ranks_like_a_brute_force_scan(
    operations: list[tuple[str, int, list[str]]], query: list[str], limit: int
) -> None:
    """Common terms kept as complements (a scope of 32+ documents) rank as plain postings do.

    Contract: "most shared terms, then oldest first", over exactly the live documents.
    """
    provider = InMemoryProvider()
    live: dict[str, tuple[int, frozenset[str]]] = {}  # ref -> (write order, terms)
    order = 0
    for op, number, words in operations:
        key = f"doc-{number}"
        if op == "write":
            # Most documents hold "common" and "field": they become complements.
            content = " ".join(["common", "field", *words]) if number % 5 else " ".join(words)
            written = provider.write(scope=SCOPE, key=key, content=content)
            if written.status == "created":
                order += 1
                live[written.ref] = (order, frozenset(content.split()))
        else:
            ref = provider.read_key(scope=SCOPE, key=key).ref
            deleted = provider.delete(scope=SCOPE, ref=ref).deleted
            assert deleted == (ref in live)
            live.pop(ref, None)
    wanted = frozenset(query)
    scored = [
        (-len(wanted & terms), written, ref)
        for ref, (written, terms) in live.items()
        if wanted & terms
    ]
    expected = [(ref, float(-shared)) for shared, _, ref in sorted(scored)[:limit]]
    hits = provider.search(scope=SCOPE, query=" ".join(query), limit=limit).hits
    assert [(hit.ref, hit.score) for hit in hits] == expected
    successor = provider.handover()
    assert successor.search(scope=SCOPE, query=" ".join(query), limit=limit).hits == hits


_TOKENS = st.text(alphabet=st.characters(codec="utf-8"), min_size=1, max_size=40)


@given(_TOKENS, _TOKENS, st.one_of(st.none(), _TOKENS), _TOKENS)
def test_memory_refs_are_make_ref_of_scope_and_key(
    namespace: str, scope_ref: str, peer: str | None, key: str
) -> None:
    """A ref is an identity: hashing the scope part once must not change one byte of it."""
    scope = ProviderScope.__new__(ProviderScope)  # any strings: the ref derivation only
    object.__setattr__(scope, "namespace", namespace)
    object.__setattr__(scope, "scope_ref", scope_ref)
    object.__setattr__(scope, "actor_peer_id", peer)
    expected = make_ref("memory", [namespace, scope_ref, peer, key])
    assert _memory_ref(scope, key) == expected


def test_written_refs_are_make_ref_of_scope_and_key() -> None:
    provider = InMemoryProvider()
    peer_scope = ProviderScope(
        namespace="rm-test", scope_ref="project:index", actor_peer_id="peer-1"
    )
    for scope in (SCOPE, peer_scope):
        written = provider.write(scope=scope, key="doc-1", content="text")
        assert written.ref == make_ref(
            "memory", [scope.namespace, scope.scope_ref, scope.actor_peer_id, "doc-1"]
        )
        assert provider.read_key(scope=scope, key="doc-2").ref == make_ref(
            "memory", [scope.namespace, scope.scope_ref, scope.actor_peer_id, "doc-2"]
        )


def test_read_key_under_corrupt_readback_returns_altered_content_for_the_same_ref() -> None:
    provider = InMemoryProvider()
    written = provider.write(scope=SCOPE, key="doc-1", content="exact words")
    with provider.set_faults(corrupt_readback=True):
        read = provider.read_key(scope=SCOPE, key="doc-1")
    assert read.ref == written.ref
    assert read.found is True
    assert read.content != "exact words"
    assert provider.read_key(scope=SCOPE, key="doc-1").content == "exact words"


def test_reading_a_malformed_ref_is_still_refused_with_its_path() -> None:
    """A read looks a stored ref up before checking it: anything else is still checked."""
    provider = InMemoryProvider()
    written = provider.write(scope=SCOPE, key="doc-1", content="words")
    assert provider.read(scope=SCOPE, ref=written.ref).content == "words"
    for bad in ("", " memory:x", "memory:\n", 12):
        with pytest.raises(RecordValidationError) as refused:
            provider.read(scope=SCOPE, ref=bad)  # type: ignore[arg-type]
        assert refused.value.path == "$.ref"
    assert provider.read(scope=SCOPE, ref="memory:00000000000000000000").found is False
    with provider.set_faults(unavailable=True), pytest.raises(ProviderUnavailable):
        provider.read(scope=SCOPE, ref=written.ref)
