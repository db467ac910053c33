"""The in-memory fixture provider: call log, fault switches, snapshots, threads."""

from __future__ import annotations

import re
import subprocess
import sys
import threading
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reward_memory.errors import ProviderConfigError, ProviderUnavailable, RecordValidationError
from reward_memory.providers.spi import Provider, ProviderScope
from reward_memory.testing import Faults, InMemoryProvider, ProviderCall
from reward_memory.testing import _memory_index as _memory

pytest_plugins = ["reward_memory.testing.pytest_plugin"]

SCOPE = ProviderScope(namespace="ns", scope_ref="memory-tests")
PEER = ProviderScope(namespace="ns", scope_ref="memory-tests", actor_peer_id="peer-a")


@pytest.fixture
def provider() -> InMemoryProvider:
    return InMemoryProvider()


# -- call log ----------------------------------------------------------------------------


def test_a_fresh_provider_has_no_calls(provider: InMemoryProvider) -> None:
    assert provider.calls == ()
    assert provider.call_count() == 0
    assert set(provider.call_counts().values()) == {0}


def test_every_operation_is_logged_with_its_scope(provider: InMemoryProvider) -> None:
    ref = provider.write(scope=SCOPE, key="doc-1", content="alpha beta").ref
    provider.read(scope=SCOPE, ref=ref)
    provider.search(scope=PEER, query="alpha", limit=3)
    provider.delete(scope=SCOPE, ref=ref)
    provider.inventory(scope=SCOPE)
    provider.close()
    assert provider.calls == (
        ProviderCall(op="write", scope=SCOPE, target="doc-1"),
        ProviderCall(op="read", scope=SCOPE, target=ref),
        ProviderCall(op="search", scope=PEER, target="alpha"),
        ProviderCall(op="delete", scope=SCOPE, target=ref),
        ProviderCall(op="inventory", scope=SCOPE, target=None),
        ProviderCall(op="close", scope=None, target=None),
    )
    assert provider.call_count() == 6
    assert provider.call_count("write") == 1
    assert provider.call_counts() == {
        "close": 1, "delete": 1, "inventory": 1, "read": 1, "search": 1, "write": 1,
    }  # fmt: skip


def test_calls_is_a_snapshot(provider: InMemoryProvider) -> None:
    before = provider.calls
    provider.inventory(scope=SCOPE)
    assert before == ()
    assert isinstance(provider.calls, tuple)
    assert len(provider.calls) == 1


def test_failed_and_rejected_calls_are_logged_too(provider: InMemoryProvider) -> None:
    with pytest.raises(RecordValidationError):
        provider.write(scope=SCOPE, key="bad key", content="x")
    with provider.set_faults(unavailable=True), pytest.raises(ProviderUnavailable):
        provider.read(scope=SCOPE, ref="memory:0")
    assert [call.op for call in provider.calls] == ["write", "read"]


def test_call_count_rejects_an_unknown_operation(provider: InMemoryProvider) -> None:
    with pytest.raises(RecordValidationError):
        provider.call_count("upsert")  # type: ignore[arg-type]


def test_reset_calls_and_clear(provider: InMemoryProvider) -> None:
    provider.write(scope=SCOPE, key="doc-1", content="kept")
    provider.set_faults(corrupt_readback=True)
    provider.reset_calls()
    assert provider.call_count() == 0
    assert list(provider.documents(SCOPE).values()) == ["kept"]
    provider.write(scope=SCOPE, key="doc-2", content="also")
    provider.clear()
    assert provider.call_count() == 0
    assert provider.documents(SCOPE) == {}
    assert provider.scopes() == ()
    assert provider.faults.corrupt_readback is True  # clear() keeps the switches


# -- snapshots -------------------------------------------------------------------------


def test_documents_and_scopes_are_snapshots(provider: InMemoryProvider) -> None:
    first = provider.write(scope=SCOPE, key="doc-1", content="one\r\n").ref
    provider.write(scope=PEER, key="doc-1", content="peer one")
    documents = provider.documents(SCOPE)
    assert documents == {first: "one\r\n"}
    documents.clear()
    assert provider.documents(SCOPE) == {first: "one\r\n"}
    assert set(provider.scopes()) == {SCOPE, PEER}
    assert provider.documents(ProviderScope(namespace="ns", scope_ref="empty")) == {}


def test_state_is_per_instance() -> None:
    first, second = InMemoryProvider(), InMemoryProvider()
    first.write(scope=SCOPE, key="doc-1", content="only here")
    first.set_faults(unavailable=True)
    assert second.documents(SCOPE) == {}
    assert second.call_count() == 0
    assert second.faults == Faults()


# -- fault switches ------------------------------------------------------------------------


def test_unavailable(provider: InMemoryProvider) -> None:
    provider.set_faults(unavailable=True)
    with pytest.raises(ProviderUnavailable) as caught:
        provider.inventory(scope=SCOPE)
    assert caught.value.reason_code == "provider_unavailable"


def test_times_out() -> None:
    provider = InMemoryProvider(times_out=True)
    with pytest.raises(ProviderUnavailable) as caught:
        provider.write(scope=SCOPE, key="doc-1", content="x")
    assert caught.value.reason_code == "provider_timeout"
    assert provider.documents(SCOPE) == {}


def test_slow_within_the_timeout_answers() -> None:
    provider = InMemoryProvider(slow_seconds=0.05)
    started = time.monotonic()
    assert provider.inventory(scope=SCOPE, timeout=5.0).available is True
    assert time.monotonic() - started >= 0.05


def test_slow_beyond_the_timeout_times_out() -> None:
    provider = InMemoryProvider(slow_seconds=10.0)
    started = time.monotonic()
    with pytest.raises(ProviderUnavailable) as caught:
        provider.search(scope=SCOPE, query="x", limit=1, timeout=0.05)
    elapsed = time.monotonic() - started
    assert caught.value.reason_code == "provider_timeout"
    assert 0.05 <= elapsed < 2.0


def test_default_timeout_applies_when_a_call_passes_none() -> None:
    provider = InMemoryProvider(slow_seconds=10.0, default_timeout=0.05)
    with pytest.raises(ProviderUnavailable) as caught:
        provider.inventory(scope=SCOPE)
    assert caught.value.reason_code == "provider_timeout"


@pytest.mark.parametrize("content", ["", "text", "\r\n", "😀"])
def test_corrupt_readback(content: str) -> None:
    provider = InMemoryProvider(corrupt_readback=True)
    ref = provider.write(scope=SCOPE, key="doc-1", content=content).ref
    read = provider.read(scope=SCOPE, ref=ref)
    assert read.found is True
    assert read.content != content
    assert provider.documents(SCOPE) == {ref: content}  # stored exactly; only readback lies


def test_search_misses_the_last_write(provider: InMemoryProvider) -> None:
    provider.set_faults(search_misses=True)
    first = provider.write(scope=SCOPE, key="doc-1", content="shared term").ref
    assert provider.search(scope=SCOPE, query="shared", limit=5).hits == ()
    assert provider.read(scope=SCOPE, ref=first).content == "shared term"
    second = provider.write(scope=SCOPE, key="doc-2", content="shared term again").ref
    assert [hit.ref for hit in provider.search(scope=SCOPE, query="shared", limit=5).hits] == [
        first
    ]
    provider.set_faults(search_misses=False)
    refs = [hit.ref for hit in provider.search(scope=SCOPE, query="shared", limit=5).hits]
    assert refs == [first, second]


def test_arguments_are_checked_before_faults() -> None:
    provider = InMemoryProvider(unavailable=True)
    with pytest.raises(RecordValidationError):
        provider.write(scope=SCOPE, key="", content="x")
    with pytest.raises(RecordValidationError):
        provider.search(scope=SCOPE, query="x", limit=0)
    with pytest.raises(RecordValidationError):
        provider.read(scope=SCOPE, ref="x", timeout=-1)
    with pytest.raises(RecordValidationError):
        provider.inventory(scope="ns/scope")  # type: ignore[arg-type]


def test_set_faults_as_a_context_manager_restores(provider: InMemoryProvider) -> None:
    provider.set_faults(slow_seconds=0.001)
    with provider.set_faults(unavailable=True) as faults:
        assert faults == Faults(unavailable=True, slow_seconds=0.001)
        with provider.set_faults(unavailable=False, times_out=True):
            assert provider.faults == Faults(times_out=True, slow_seconds=0.001)
        assert provider.faults == Faults(unavailable=True, slow_seconds=0.001)
    assert provider.faults == Faults(slow_seconds=0.001)


def test_set_faults_restores_after_an_error(provider: InMemoryProvider) -> None:
    with pytest.raises(ProviderUnavailable), provider.set_faults(unavailable=True):
        provider.inventory(scope=SCOPE)
    assert provider.faults == Faults()
    assert provider.inventory(scope=SCOPE).available is True


def test_set_faults_without_with_stays(provider: InMemoryProvider) -> None:
    provider.set_faults(corrupt_readback=True)
    assert provider.faults.corrupt_readback is True


def test_set_faults_validates() -> None:
    provider = InMemoryProvider()
    with pytest.raises(RecordValidationError):
        provider.set_faults(slow_seconds=-1)
    with pytest.raises(RecordValidationError):
        provider.set_faults(unavailable=1)  # type: ignore[arg-type]
    assert provider.faults == Faults()


# -- construction ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "options",
    [
        {"slow_seconds": -0.5},
        {"slow_seconds": float("nan")},
        {"slow_seconds": True},
        {"unavailable": "yes"},
        {"default_timeout": 0},
    ],
)
def test_bad_option_values(options: dict[str, object]) -> None:
    with pytest.raises(ProviderConfigError, match=next(iter(options))):
        InMemoryProvider(**options)  # type: ignore[arg-type]


def test_from_url_options() -> None:
    provider = InMemoryProvider.from_url(
        "memory://?unavailable=false&times_out=0&corrupt_readback=yes&search_misses=on"
        "&slow_seconds=0.5&default_timeout=2"
    )
    assert provider.faults == Faults(corrupt_readback=True, search_misses=True, slow_seconds=0.5)
    assert InMemoryProvider.from_url("memory://").faults == Faults()
    assert InMemoryProvider.from_url("memory://?").faults == Faults()


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("sqlite://", "starts with memory://"),
        ("memory:", "starts with memory://"),
        ("memory://somewhere", "no location"),
        ("memory:///home/alice/x", "no location"),
        ("memory://?x#frag", "no location or fragment"),
        ("memory://?colour=red", "unknown option 'colour'"),
        ("memory://?unavailable=1&unavailable=0", "given twice"),
        ("memory://?unavailable=perhaps", "true or false"),
        ("memory://?slow_seconds=soon", "number of seconds"),
        ("memory://?slow_seconds=-1", "non-negative"),
        ("memory://?=1", "unknown option"),
    ],
)
def test_from_url_rejects(url: str, problem: str) -> None:
    with pytest.raises(ProviderConfigError) as caught:
        InMemoryProvider.from_url(url)
    assert problem in str(caught.value)
    assert "alice" not in str(caught.value)


def test_closed_provider_is_unavailable(provider: InMemoryProvider) -> None:
    provider.close()
    provider.close()
    with pytest.raises(ProviderUnavailable, match="closed"):
        provider.inventory(scope=SCOPE)


def test_satisfies_the_protocol(provider: InMemoryProvider) -> None:
    assert isinstance(provider, Provider)
    assert InMemoryProvider.provider_id == "memory"


# -- search ranking ------------------------------------------------------------------------


def test_search_ranks_by_term_overlap_then_age(provider: InMemoryProvider) -> None:
    one = provider.write(scope=SCOPE, key="doc-1", content="apple").ref
    both = provider.write(scope=SCOPE, key="doc-2", content="Apple and BANANA").ref
    other = provider.write(scope=SCOPE, key="doc-3", content="banana").ref
    provider.write(scope=SCOPE, key="doc-4", content="cherry")
    hits = provider.search(scope=SCOPE, query="apple banana", limit=10).hits
    assert [hit.ref for hit in hits] == [both, one, other]
    assert [hit.score for hit in hits] == [2.0, 1.0, 1.0]
    assert hits[0].summary == "Apple and BANANA"
    assert provider.search(scope=SCOPE, query="  ", limit=10).hits == ()


def test_search_summary_is_compact(provider: InMemoryProvider) -> None:
    provider.write(scope=SCOPE, key="doc-1", content="word\n\n\tword " * 100)
    (hit,) = provider.search(scope=SCOPE, query="word", limit=1).hits
    assert len(hit.summary) <= 160
    assert "\n" not in hit.summary


# -- threads ----------------------------------------------------------------------------


def test_thread_safety_smoke() -> None:
    provider = InMemoryProvider()
    errors: list[BaseException] = []
    threads_n, writes_n = 8, 150

    def work(index: int) -> None:
        scope = ProviderScope(namespace="ns", scope_ref=f"thread-{index % 2}")
        try:
            for i in range(writes_n):
                ref = provider.write(scope=scope, key=f"t{index}-{i}", content=f"{index} {i}").ref
                assert provider.read(scope=scope, ref=ref).content == f"{index} {i}"
                provider.search(scope=scope, query=str(i), limit=5)
                if i % 10 == 0:
                    with provider.set_faults(search_misses=True):
                        provider.inventory(scope=scope)
        except BaseException as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(threads_n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert provider.call_count("write") == threads_n * writes_n
    assert provider.call_count("read") == threads_n * writes_n
    total = sum(
        len(provider.documents(ProviderScope(namespace="ns", scope_ref=f"thread-{k}")))
        for k in (0, 1)
    )
    assert total == threads_n * writes_n


# -- packaging ------------------------------------------------------------------------------


def test_testing_package_does_not_import_pytest() -> None:
    probe = (
        "import sys, reward_memory.testing, reward_memory.testing.memory; "
        "assert 'pytest' not in sys.modules and '_pytest' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", probe], check=True)


# -- the opt-in pytest fixtures ----------------------------------------------------------


def test_rm_memory_provider_fixture(rm_memory_provider: InMemoryProvider) -> None:
    assert isinstance(rm_memory_provider, InMemoryProvider)
    assert rm_memory_provider.call_count() == 0


def test_rm_provider_scope_is_per_test(
    rm_provider_scope: ProviderScope, request: pytest.FixtureRequest
) -> None:
    assert rm_provider_scope.namespace == "rm-test"
    assert rm_provider_scope.scope_ref.startswith("test:")
    assert rm_provider_scope.actor_peer_id is None


def test_rm_sqlite_provider_fixture(request: pytest.FixtureRequest) -> None:
    provider = request.getfixturevalue("rm_sqlite_provider")
    assert provider.provider_id == "sqlite"
    scope = request.getfixturevalue("rm_provider_scope")
    ref = provider.write(scope=scope, key="doc-1", content="exact \r\n").ref
    assert provider.read(scope=scope, ref=ref).content == "exact \r\n"


def test_a_delete_leaves_nothing_of_the_document_behind(provider: InMemoryProvider) -> None:
    """Issue 9 item 5 ("purge means gone"), on the memory provider: no operation, snapshot
    or internal index keeps a byte of a deleted document."""
    canary = "qzcanarymemory"
    doomed = provider.write(scope=SCOPE, key="doc-1", content=f"summary {canary} shared words")
    kept = provider.write(scope=SCOPE, key="doc-2", content="kept shared words")
    assert provider.search(scope=SCOPE, query=canary, limit=5).hits  # built its cached hit
    assert provider.delete(scope=SCOPE, ref=doomed.ref).deleted is True
    assert provider.read(scope=SCOPE, ref=doomed.ref).found is False
    assert provider.search(scope=SCOPE, query=canary, limit=5).hits == ()
    hits = provider.search(scope=SCOPE, query="shared words", limit=5).hits
    assert [hit.ref for hit in hits] == [kept.ref]
    assert all(canary not in hit.summary for hit in hits)
    assert all(canary not in content for content in provider.documents(SCOPE).values())
    space = provider._spaces[SCOPE]
    assert canary not in space.postings  # the inverted index forgot its terms
    assert all(canary not in document.content for document in space.by_sequence.values())


# -- the index terms: the fast ASCII path finds exactly the regex's words -------------------


@given(st.text(alphabet=st.characters(max_codepoint=127)))
def test_ascii_terms_are_the_regex_words(text: str) -> None:
    """The search must stay honest: the ASCII shortcut indexes the very words
    ``\\w+`` finds on the case-folded text."""
    assert _memory._terms(text) == frozenset(re.findall(r"\w+", text.casefold()))


@given(st.text())
def test_any_text_terms_are_the_regex_words(text: str) -> None:
    assert _memory._terms(text) == frozenset(re.findall(r"\w+", text.casefold()))


def test_a_ref_given_as_a_str_subclass_reads_the_same_document() -> None:
    """A ref held as a ``str`` subclass (``numpy.str_``, say) is the same ref: read finds
    what delete would remove."""

    class Ref(str):
        __slots__ = ()

    provider = InMemoryProvider()
    written = provider.write(scope=SCOPE, key="k", content="body")
    read = provider.read(scope=SCOPE, ref=Ref(written.ref))
    assert (read.found, read.content) == (True, "body")
