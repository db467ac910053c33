"""The provider conformance kit: one test class a provider author subclasses.

::

    from reward_memory.testing.conformance import ProviderConformance

    class TestMyProvider(ProviderConformance):
        def make_provider(self, tmp_path):
            return MyProvider(path=tmp_path / "store")

        # optional: a provider whose transport is down, to prove ProviderUnavailable
        def make_unavailable_provider(self, tmp_path):
            return MyProvider(url="http://127.0.0.1:9")

It covers what :mod:`reward_memory.providers.spi` promises: exact readback,
idempotent writes, scope isolation (namespace, scope_ref and actor peer),
search limits and scope, delete semantics, inventory, timeouts and
unavailability, and argument validation; and the governance part
(:mod:`reward_memory.testing._conformance_governance`, tests named
``test_governance_*``): nothing readable or searchable after a delete, exact
scopes (no sibling that only extends a name, nothing matched through wildcard
characters in a scope ref, a ref or a query), and query text that is never
syntax. Every test uses a fresh, unique scope, so a provider backed by a shared
server can run the suite too.

Do not override a standard test to make it pass. If your provider cannot meet
one yet, override it with ``@pytest.mark.xfail(reason="...")`` so the gap is
visible; ``test_no_overrides_DO_NOT_OVERRIDE`` fails on any other override
(the guard from langchain's standard tests).

This module imports pytest; :mod:`reward_memory.testing` itself does not.
"""

from __future__ import annotations

import time
import uuid
from typing import TYPE_CHECKING, Any, ClassVar, Final

import pytest

from reward_memory.digests import sha256_hex
from reward_memory.errors import ProviderUnavailable
from reward_memory.providers.spi import (
    MAX_SEARCH_LIMIT,
    SPI_VERSION,
    DeleteResult,
    Inventory,
    Provider,
    ProviderScope,
    ReadResult,
    SearchResult,
    WriteResult,
)
from reward_memory.records.providers import PROVIDER_ID
from reward_memory.testing._conformance_arguments import ArgumentConformance
from reward_memory.testing._conformance_governance import GovernanceConformance

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

__all__ = ["ProviderConformance", "exact_readback_samples"]

# A mix of 1-, 2-, 3- and 4-byte UTF-8 characters, CRLF and a lone CR, repeated to ~1 MiB.
_LARGE_UNIT: Final = "ascii text, Grüße, 記憶, 😀👩‍💻\r\nline\rtab\t "
_LARGE: Final = _LARGE_UNIT * ((1024 * 1024) // len(_LARGE_UNIT.encode("utf-8")) + 1)


def exact_readback_samples() -> dict[str, str]:
    """Content that must come back byte for byte (name -> content)."""
    return {
        "ascii": "plain ascii content",
        "unicode": "Grüße, 記憶, Ελληνικά, עברית, русский",
        "emoji": "🧠💾 👩‍👩‍👧‍👦 🏳️‍🌈 1️⃣ 👍🏽",
        "empty": "",
        "single_space": " ",
        "crlf": "first line\r\nsecond line\r\n",
        "lone_cr": "first\rsecond",
        "newline_only": "\n",
        "trailing_whitespace": "text with trailing spaces and tabs  \t  \n\n",
        "leading_whitespace": "\n\n   indented text",
        "tabs_and_blank_lines": "a\t\tb\n\n\n\tc",
        "nfc": "caf\u00e9",
        "nfd": "cafe\u0301",
        "zero_width_and_bidi": "a\u200bb\u200dc\u202ed\ufeffe",
        "json_like": '{"rule": "prefer \\"small\\" diffs", "n": [1, 2.50, null]}',
        "markdown": "# Title\n\n- item *one*\n- item `two`\n\n```py\nprint('x')\n```\n",
        "control_chars": "bell\x07 escape\x1b[0m form\x0cfeed vertical\x0btab",
        "nul": "before\x00after",  # a C-string backend cuts here
        "line_separators": "a\u2028b\u2029c\x85d",  # splitlines() would rewrite these
        "leading_bom": "\ufeffstarts with a byte order mark",
        "large_1mib": _LARGE,
    }


_READBACK: Final = exact_readback_samples()


def _word(prefix: str) -> str:
    """A distinctive, letters-only search term (safe for any full-text tokenizer)."""
    letters = "".join(chr(ord("a") + int(c, 16) % 26) for c in uuid.uuid4().hex[:10])
    return f"{prefix}{letters}"


class ProviderConformance(ArgumentConformance, GovernanceConformance):
    """The standard tests every provider must pass. Subclass it as ``Test<YourProvider>``.

    Implement :meth:`make_provider`; optionally :meth:`make_unavailable_provider`
    and :meth:`make_timeout_provider` (tests that need them are skipped, with the
    reason, while they return ``None``). The provider is closed after each test.

    .. versionadded:: 0.1.0
    """

    #: The per-call timeout (seconds) the timeout tests pass to ``make_timeout_provider``'s
    #: provider; it must give up with ``ProviderUnavailable`` well within
    #: ``timeout_grace_seconds`` of it.
    timeout_probe_seconds: ClassVar[float] = 0.1
    timeout_grace_seconds: ClassVar[float] = 2.0

    # -- hooks ----------------------------------------------------------------------------

    def make_provider(self, tmp_path: Path) -> Provider:
        """Return a fresh, working provider; ``tmp_path`` is this test's own directory."""
        raise NotImplementedError("subclasses of ProviderConformance implement make_provider")

    def make_unavailable_provider(self, tmp_path: Path) -> Provider | None:
        """Return a provider whose backend cannot be reached, or ``None`` to skip."""
        return None

    def make_timeout_provider(self, tmp_path: Path) -> Provider | None:
        """Return a provider slower than ``timeout_probe_seconds``, or ``None`` to skip."""
        return None

    # -- fixtures -------------------------------------------------------------------------

    @pytest.fixture
    def provider(self, tmp_path: Path) -> Iterator[Provider]:
        """The provider under test (closed afterwards)."""
        built = self.make_provider(tmp_path)
        try:
            yield built
        finally:
            built.close()

    @pytest.fixture
    def scope(self) -> ProviderScope:
        """A fresh scope no other test uses."""
        return ProviderScope(namespace=f"rm-conformance-{uuid.uuid4().hex[:12]}", scope_ref="main")

    # -- helpers --------------------------------------------------------------------------

    @staticmethod
    def _write(provider: Provider, scope: ProviderScope, key: str, content: str) -> WriteResult:
        result = provider.write(scope=scope, key=key, content=content)
        assert isinstance(result, WriteResult)
        return result

    @staticmethod
    def _read(provider: Provider, scope: ProviderScope, ref: str) -> ReadResult:
        result = provider.read(scope=scope, ref=ref)
        assert isinstance(result, ReadResult)
        return result

    @staticmethod
    def _search(provider: Provider, scope: ProviderScope, query: str, limit: int) -> SearchResult:
        result = provider.search(scope=scope, query=query, limit=limit)
        assert isinstance(result, SearchResult)
        assert len(result.hits) <= limit
        assert all(isinstance(hit.summary, str) for hit in result.hits)
        refs = [hit.ref for hit in result.hits]
        assert len(refs) == len(set(refs)), "a search returned the same ref twice"
        return result

    @staticmethod
    def _count(provider: Provider, scope: ProviderScope) -> int:
        inventory = provider.inventory(scope=scope)
        assert isinstance(inventory, Inventory)
        assert inventory.available is True
        return inventory.record_count

    # -- the guard ----------------------------------------------------------------------

    def test_no_overrides_DO_NOT_OVERRIDE(self) -> None:
        """A standard test may only be overridden to mark it ``xfail`` with a reason."""
        offenders = []
        for name in dir(ProviderConformance):  # the governance tests it inherits included
            if not name.startswith("test_") or name == "test_no_overrides_DO_NOT_OVERRIDE":
                continue
            standard = getattr(ProviderConformance, name)
            current = getattr(type(self), name)
            if current is standard:
                continue
            marks = getattr(current, "pytestmark", [])
            if not any(mark.name == "xfail" and mark.kwargs.get("reason") for mark in marks):
                offenders.append(name)
        if offenders:
            pytest.fail(
                "standard conformance tests were overridden without "
                f"@pytest.mark.xfail(reason=...): {', '.join(sorted(offenders))}"
            )
        # Nor may the tests' own machinery be swapped: the helpers, the scope pairs
        # and the fixtures decide what a standard test checks (the hooks are make_*
        # and the timeout settings).
        import inspect  # noqa: PLC0415 - the guard only

        swapped = sorted(
            name
            for klass in ProviderConformance.__mro__
            if klass is not object
            for name in vars(klass)
            if (
                name in ("provider", "scope")
                or (name.startswith("_") and not name.startswith("__"))
            )
            and inspect.getattr_static(type(self), name)
            is not inspect.getattr_static(ProviderConformance, name)
        )
        if swapped:
            pytest.fail(f"the conformance kit's own helpers were replaced: {', '.join(swapped)}")

    # -- identity -----------------------------------------------------------------------

    def test_satisfies_the_protocol(self, provider: Provider) -> None:
        assert isinstance(provider, Provider)
        assert isinstance(provider.provider_id, str)
        assert PROVIDER_ID.fullmatch(provider.provider_id)
        assert provider.spi_version == SPI_VERSION

    # -- exact readback -----------------------------------------------------------------

    @pytest.mark.parametrize("sample", list(_READBACK))
    def test_exact_readback(self, provider: Provider, scope: ProviderScope, sample: str) -> None:
        content = _READBACK[sample]
        written = self._write(provider, scope, f"doc-{sample}", content)
        assert written.status == "created"
        assert written.content_sha256 == sha256_hex(content)
        read = self._read(provider, scope, written.ref)
        assert read.found is True
        assert read.ref == written.ref
        assert read.content is not None
        assert len(read.content) == len(content)
        assert read.content == content, "readback differs from what was written"

    def test_readback_of_many_documents(self, provider: Provider, scope: ProviderScope) -> None:
        refs = {
            self._write(provider, scope, f"doc-{name}", content).ref: content
            for name, content in _READBACK.items()
            if name != "large_1mib"
        }
        assert len(refs) == len(_READBACK) - 1, "different keys must give different refs"
        for ref, content in refs.items():
            assert self._read(provider, scope, ref).content == content

    def test_read_unknown_ref_is_not_found(self, provider: Provider, scope: ProviderScope) -> None:
        other = ProviderScope(namespace=scope.namespace, scope_ref="elsewhere")
        ref = self._write(provider, other, "doc-1", "somewhere else").ref
        read = self._read(provider, scope, ref)
        assert read.found is False
        assert read.content is None

    # -- idempotent writes ----------------------------------------------------------------

    def test_same_key_same_content_is_unchanged(
        self, provider: Provider, scope: ProviderScope
    ) -> None:
        first = self._write(provider, scope, "doc-1", "the same content")
        second = self._write(provider, scope, "doc-1", "the same content")
        assert first.status == "created"
        assert second.status == "unchanged"
        assert second.ref == first.ref
        assert second.content_sha256 == first.content_sha256 == sha256_hex("the same content")
        assert self._count(provider, scope) == 1

    def test_same_key_other_content_is_a_conflict(
        self, provider: Provider, scope: ProviderScope
    ) -> None:
        first = self._write(provider, scope, "doc-1", "the original")
        second = self._write(provider, scope, "doc-1", "something else")
        assert second.status == "conflict"
        read = self._read(provider, scope, first.ref)
        assert read.content == "the original", "a conflicting write changed the document"
        assert self._count(provider, scope) == 1
        third = self._write(provider, scope, "doc-1", "the original")
        assert third.status == "unchanged"
        assert third.ref == first.ref

    def test_whitespace_variants_are_different_content(
        self, provider: Provider, scope: ProviderScope
    ) -> None:
        first = self._write(provider, scope, "doc-1", "line\n")
        assert self._write(provider, scope, "doc-1", "line\r\n").status == "conflict"
        assert self._write(provider, scope, "doc-1", "line").status == "conflict"
        assert self._write(provider, scope, "doc-1", "line\n ").status == "conflict"
        assert self._read(provider, scope, first.ref).content == "line\n"

    def test_keys_differing_in_case_are_different_documents(
        self, provider: Provider, scope: ProviderScope
    ) -> None:
        upper = self._write(provider, scope, "Doc-1", "upper")
        lower = self._write(provider, scope, "doc-1", "lower")
        assert upper.status == lower.status == "created", "keys are compared exactly"
        assert upper.ref != lower.ref
        assert self._read(provider, scope, upper.ref).content == "upper"
        assert self._read(provider, scope, lower.ref).content == "lower"

    def test_same_content_under_two_keys(self, provider: Provider, scope: ProviderScope) -> None:
        first = self._write(provider, scope, "doc-1", "shared content")
        second = self._write(provider, scope, "doc-2", "shared content")
        assert first.status == second.status == "created"
        assert first.ref != second.ref
        assert self._count(provider, scope) == 2
        assert self._read(provider, scope, first.ref).content == "shared content"
        assert self._read(provider, scope, second.ref).content == "shared content"

    # -- scope isolation -------------------------------------------------------------------

    @staticmethod
    def _neighbours(scope: ProviderScope) -> dict[str, tuple[ProviderScope, ProviderScope]]:
        """Pairs of scopes that differ in exactly one part."""
        namespace, ref = scope.namespace, scope.scope_ref
        return {
            "namespace": (scope, ProviderScope(namespace=namespace + "-other", scope_ref=ref)),
            "scope_ref": (scope, ProviderScope(namespace=namespace, scope_ref=ref + "-other")),
            "peer_vs_none": (
                scope,
                ProviderScope(namespace=namespace, scope_ref=ref, actor_peer_id="peer-b"),
            ),
            "none_vs_peer": (
                ProviderScope(namespace=namespace, scope_ref=ref, actor_peer_id="peer-a"),
                scope,
            ),
            "peer_vs_peer": (
                ProviderScope(namespace=namespace, scope_ref=ref, actor_peer_id="peer-a"),
                ProviderScope(namespace=namespace, scope_ref=ref, actor_peer_id="peer-b"),
            ),
        }

    @pytest.mark.parametrize(
        "difference", ["namespace", "scope_ref", "peer_vs_none", "none_vs_peer", "peer_vs_peer"]
    )
    def test_scope_isolation(
        self, provider: Provider, scope: ProviderScope, difference: str
    ) -> None:
        home, away = self._neighbours(scope)[difference]
        term = _word("isolated")
        written = self._write(provider, home, "doc-1", f"home document {term}")
        # Nothing of it is visible from the other scope ...
        assert self._read(provider, away, written.ref).found is False
        assert self._search(provider, away, term, 10).hits == ()
        assert self._count(provider, away) == 0
        # ... and a delete there does not touch it.
        assert provider.delete(scope=away, ref=written.ref).deleted is False
        assert self._read(provider, home, written.ref).content == f"home document {term}"
        # The same key in the other scope is a different document, not a conflict.
        there = self._write(provider, away, "doc-1", f"away document {term}")
        assert there.status == "created"
        assert self._read(provider, home, written.ref).content == f"home document {term}"
        assert self._read(provider, away, there.ref).content == f"away document {term}"
        assert [hit.ref for hit in self._search(provider, home, term, 10).hits] == [written.ref]
        assert [hit.ref for hit in self._search(provider, away, term, 10).hits] == [there.ref]
        assert self._count(provider, home) == 1
        assert self._count(provider, away) == 1

    # -- search ------------------------------------------------------------------------

    def _seed(self, provider: Provider, scope: ProviderScope, term: str, count: int) -> set[str]:
        return {
            self._write(provider, scope, f"doc-{i}", f"document {i} mentions {term} here").ref
            for i in range(count)
        }

    @pytest.mark.parametrize(("limit", "expected"), [(1, 1), (3, 3), (4, 4), (10, 4)])
    def test_search_limit(
        self, provider: Provider, scope: ProviderScope, limit: int, expected: int
    ) -> None:
        term = _word("limit")
        refs = self._seed(provider, scope, term, 4)
        hits = self._search(provider, scope, term, limit).hits
        assert len(hits) == expected
        assert {hit.ref for hit in hits} <= refs

    def test_search_max_limit(self, provider: Provider, scope: ProviderScope) -> None:
        term = _word("maxlimit")
        refs = self._seed(provider, scope, term, 3)
        hits = self._search(provider, scope, term, MAX_SEARCH_LIMIT).hits
        assert {hit.ref for hit in hits} == refs

    def test_search_finds_the_matching_document_first(
        self, provider: Provider, scope: ProviderScope
    ) -> None:
        term = _word("needle")
        self._write(provider, scope, "doc-hay-1", "an unrelated note about tabs and spaces")
        wanted = self._write(provider, scope, "doc-needle", f"the {term} is in this one")
        self._write(provider, scope, "doc-hay-2", "another unrelated note about commit messages")
        hits = self._search(provider, scope, term, 3).hits
        assert hits, "a document containing the query term was not found"
        assert hits[0].ref == wanted.ref

    def test_search_empty_scope(self, provider: Provider, scope: ProviderScope) -> None:
        assert self._search(provider, scope, _word("nothing"), 5).hits == ()

    def test_search_summary_is_short(self, provider: Provider, scope: ProviderScope) -> None:
        term = _word("summary")
        content = f"{term} " + "long body text " * 2000
        self._write(provider, scope, "doc-long", content)
        hits = self._search(provider, scope, term, 1).hits
        assert len(hits) == 1
        assert len(hits[0].summary) < len(content)

    # -- delete -------------------------------------------------------------------------

    def test_delete_then_read_is_not_found(self, provider: Provider, scope: ProviderScope) -> None:
        term = _word("deleted")
        written = self._write(provider, scope, "doc-1", f"to be deleted {term}")
        result = provider.delete(scope=scope, ref=written.ref)
        assert isinstance(result, DeleteResult)
        assert result.deleted is True
        assert self._read(provider, scope, written.ref).found is False
        assert written.ref not in {hit.ref for hit in self._search(provider, scope, term, 5).hits}
        assert self._count(provider, scope) == 0

    def test_delete_missing_is_not_an_error(self, provider: Provider, scope: ProviderScope) -> None:
        written = self._write(provider, scope, "doc-1", "short-lived")
        assert provider.delete(scope=scope, ref=written.ref).deleted is True
        again = provider.delete(scope=scope, ref=written.ref)
        assert isinstance(again, DeleteResult)
        assert again.deleted is False

    def test_delete_leaves_other_documents(self, provider: Provider, scope: ProviderScope) -> None:
        kept = self._write(provider, scope, "doc-kept", "kept")
        gone = self._write(provider, scope, "doc-gone", "gone")
        assert provider.delete(scope=scope, ref=gone.ref).deleted is True
        assert self._read(provider, scope, kept.ref).content == "kept"
        assert self._count(provider, scope) == 1

    def test_rewrite_after_delete(self, provider: Provider, scope: ProviderScope) -> None:
        first = self._write(provider, scope, "doc-1", "first version")
        assert provider.delete(scope=scope, ref=first.ref).deleted is True
        second = self._write(provider, scope, "doc-1", "second version")
        assert second.status == "created"
        assert self._read(provider, scope, second.ref).content == "second version"
        assert self._count(provider, scope) == 1

    # -- inventory ----------------------------------------------------------------------

    def test_inventory_of_an_empty_scope(self, provider: Provider, scope: ProviderScope) -> None:
        inventory = provider.inventory(scope=scope)
        assert isinstance(inventory, Inventory)
        assert inventory.provider_id == provider.provider_id
        assert inventory.available is True
        assert inventory.record_count == 0

    def test_inventory_counts(self, provider: Provider, scope: ProviderScope) -> None:
        refs = [self._write(provider, scope, f"doc-{i}", f"content {i}").ref for i in range(3)]
        inventory = provider.inventory(scope=scope)
        assert inventory.record_count == 3
        assert inventory.corpus_present is True
        self._write(provider, scope, "doc-0", "content 0")  # unchanged
        self._write(provider, scope, "doc-1", "changed")  # conflict
        assert self._count(provider, scope) == 3
        provider.delete(scope=scope, ref=refs[0])
        assert self._count(provider, scope) == 2

    # -- timeouts and unavailability -------------------------------------------------------

    def test_every_call_accepts_a_timeout(self, provider: Provider, scope: ProviderScope) -> None:
        written = provider.write(scope=scope, key="doc-1", content="timed", timeout=30.0)
        assert provider.read(scope=scope, ref=written.ref, timeout=30.0).content == "timed"
        provider.search(scope=scope, query="timed", limit=1, timeout=30.0)
        assert provider.inventory(scope=scope, timeout=30.0).record_count == 1
        assert provider.delete(scope=scope, ref=written.ref, timeout=30.0).deleted is True

    def _operations(
        self, provider: Provider, scope: ProviderScope, timeout: float | None
    ) -> dict[str, Callable[[], Any]]:
        return {
            "write": lambda: provider.write(scope=scope, key="doc-1", content="x", timeout=timeout),
            "read": lambda: provider.read(scope=scope, ref="doc-1", timeout=timeout),
            "search": lambda: provider.search(scope=scope, query="x", limit=1, timeout=timeout),
            "delete": lambda: provider.delete(scope=scope, ref="doc-1", timeout=timeout),
        }

    @pytest.fixture
    def unavailable_provider(self, tmp_path: Path) -> Iterator[Provider]:
        """The provider from :meth:`make_unavailable_provider`, or skip."""
        place = tmp_path / "unavailable"
        place.mkdir()
        built = self.make_unavailable_provider(place)
        if built is None:
            pytest.skip("make_unavailable_provider() returns None for this provider")
        try:
            yield built
        finally:
            built.close()

    @pytest.fixture
    def timeout_provider(self, tmp_path: Path) -> Iterator[Provider]:
        """The provider from :meth:`make_timeout_provider`, or skip."""
        place = tmp_path / "timeout"
        place.mkdir()
        built = self.make_timeout_provider(place)
        if built is None:
            pytest.skip("make_timeout_provider() returns None for this provider")
        try:
            yield built
        finally:
            built.close()

    @pytest.mark.parametrize("operation", ["write", "read", "search", "delete"])
    def test_unavailable_raises_provider_unavailable(
        self, unavailable_provider: Provider, scope: ProviderScope, operation: str
    ) -> None:
        call = self._operations(unavailable_provider, scope, None)[operation]
        with pytest.raises(ProviderUnavailable):
            call()

    def test_unavailable_inventory(
        self, unavailable_provider: Provider, scope: ProviderScope
    ) -> None:
        """Inventory either raises ``ProviderUnavailable`` or reports ``available=False``."""
        try:
            inventory = unavailable_provider.inventory(scope=scope)
        except ProviderUnavailable:
            return
        assert inventory.available is False
        assert inventory.record_count == 0

    @pytest.mark.parametrize("operation", ["write", "read", "search", "delete", "inventory"])
    def test_timeout_raises_provider_unavailable(
        self, timeout_provider: Provider, scope: ProviderScope, operation: str
    ) -> None:
        probe = self.timeout_probe_seconds
        calls = self._operations(timeout_provider, scope, probe)
        calls["inventory"] = lambda: timeout_provider.inventory(scope=scope, timeout=probe)
        started = time.monotonic()
        with pytest.raises(ProviderUnavailable) as caught:
            calls[operation]()
        assert time.monotonic() - started < probe + self.timeout_grace_seconds
        assert caught.value.reason_code == "provider_timeout"
