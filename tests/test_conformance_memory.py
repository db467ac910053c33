"""The in-memory provider (and a third-party one) against the conformance kit."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import pytest

from _distributions import DATA
from reward_memory.testing import InMemoryProvider
from reward_memory.testing.conformance import ProviderConformance

if TYPE_CHECKING:
    from pathlib import Path

    from reward_memory.providers.spi import Provider

pytest_plugins = ["pytester"]


class TestInMemoryConformance(ProviderConformance):
    def make_provider(self, tmp_path: Path) -> Provider:
        return InMemoryProvider()

    def make_unavailable_provider(self, tmp_path: Path) -> Provider | None:
        return InMemoryProvider(unavailable=True)

    def make_timeout_provider(self, tmp_path: Path) -> Provider | None:
        return InMemoryProvider(slow_seconds=30.0)


class TestMemoryThroughDiscoveryConformance(ProviderConformance):
    """The same provider, built the way applications build it."""

    def make_provider(self, tmp_path: Path) -> Provider:
        from reward_memory.providers.discovery import get_provider

        return get_provider("memory://")

    def make_unavailable_provider(self, tmp_path: Path) -> Provider | None:
        from reward_memory.providers.discovery import get_provider

        return get_provider("memory://?unavailable=true")

    def make_timeout_provider(self, tmp_path: Path) -> Provider | None:
        from reward_memory.providers.discovery import get_provider

        return get_provider("memory://?slow_seconds=30")


class TestThirdPartyConformance(ProviderConformance):
    """A provider written only against the public SPI (tests/data/thirdparty_provider)."""

    def make_provider(self, tmp_path: Path) -> Provider:
        sys.path.insert(0, str(DATA / "thirdparty_provider"))
        try:
            from rm_thirdparty_provider import ThirdPartyProvider
        finally:
            sys.path.remove(str(DATA / "thirdparty_provider"))
        return ThirdPartyProvider()


# -- the kit itself ----------------------------------------------------------------------


def test_kit_base_class_is_not_collected_and_needs_make_provider(tmp_path: Path) -> None:
    assert not ProviderConformance.__name__.startswith("Test")
    with pytest.raises(NotImplementedError):
        ProviderConformance().make_provider(tmp_path)
    assert ProviderConformance().make_unavailable_provider(tmp_path) is None
    assert ProviderConformance().make_timeout_provider(tmp_path) is None


def test_override_without_xfail_is_caught() -> None:
    class Cheating(ProviderConformance):
        def test_exact_readback(self, *args: object, **kwargs: object) -> None:
            pass

    with pytest.raises(pytest.fail.Exception, match="test_exact_readback"):
        Cheating().test_no_overrides_DO_NOT_OVERRIDE()


def test_replacing_the_kits_helpers_is_caught() -> None:
    """The scope pairs and helpers decide what a standard test checks: a subclass that
    redefines them (to pass a leaky provider) fails the guard, by name."""

    class Rigged(ProviderConformance):
        @staticmethod
        def _prefix_pairs() -> dict[str, Any]:
            return {}

        @staticmethod
        def _neighbours(scope: Any) -> dict[str, Any]:
            return {}

    with pytest.raises(pytest.fail.Exception, match="_neighbours, _prefix_pairs"):
        Rigged().test_no_overrides_DO_NOT_OVERRIDE()


def test_override_with_xfail_reason_is_allowed() -> None:
    class Honest(ProviderConformance):
        @pytest.mark.xfail(reason="no emoji support yet")
        def test_exact_readback(self, *args: object, **kwargs: object) -> None:
            raise AssertionError

    Honest().test_no_overrides_DO_NOT_OVERRIDE()


def test_override_with_xfail_without_reason_is_caught() -> None:
    class Vague(ProviderConformance):
        @pytest.mark.xfail
        def test_search_limit(self, *args: object, **kwargs: object) -> None:
            raise AssertionError

    with pytest.raises(pytest.fail.Exception, match="test_search_limit"):
        Vague().test_no_overrides_DO_NOT_OVERRIDE()


# -- the kit catches broken providers (mutants run in a nested pytest session) ----------

_MUTANTS = '''
from reward_memory.providers.spi import ProviderScope, SearchHit, SearchResult
from reward_memory.testing import InMemoryProvider
from reward_memory.testing.conformance import ProviderConformance


class PeerBlind(InMemoryProvider):
    """Forgets the actor peer: every peer shares one store."""

    def _enter_scope(self, scope):
        return ProviderScope(namespace=scope.namespace, scope_ref=scope.scope_ref)

    def write(self, *, scope, **kw):
        return super().write(scope=self._enter_scope(scope), **kw)

    def read(self, *, scope, **kw):
        return super().read(scope=self._enter_scope(scope), **kw)

    def search(self, *, scope, **kw):
        return super().search(scope=self._enter_scope(scope), **kw)

    def delete(self, *, scope, **kw):
        return super().delete(scope=self._enter_scope(scope), **kw)

    def inventory(self, *, scope, **kw):
        return super().inventory(scope=self._enter_scope(scope), **kw)


class Trimming(InMemoryProvider):
    """Strips trailing whitespace on write."""

    def write(self, *, content, **kw):
        trimmed = content.rstrip() if isinstance(content, str) else content
        return super().write(content=trimmed, **kw)


class Limitless(InMemoryProvider):
    """Ignores the search limit."""

    def search(self, *, limit, **kw):
        return super().search(limit=100, **kw)


class PrefixScoped(InMemoryProvider):
    """Finds a scope's documents by prefix (``LIKE 'ref%'``): a sibling that extends it leaks."""

    def search(self, *, scope, query, limit, timeout=None):
        hits = []
        for other in self.scopes():
            same_head = (other.namespace, other.actor_peer_id) == (
                scope.namespace,
                scope.actor_peer_id,
            )
            if same_head and other.scope_ref.startswith(scope.scope_ref):
                hits.extend(super().search(scope=other, query=query, limit=limit).hits)
        return SearchResult(hits=tuple(hits[:limit]))


class Ghostly(InMemoryProvider):
    """Forgets to drop a deleted document from its search results."""

    def __init__(self, **kw):
        super().__init__(**kw)
        self._ghosts = {}

    def delete(self, *, scope, ref, timeout=None):
        hits = super().search(scope=scope, query=self.documents(scope).get(ref, ""), limit=1)
        self._ghosts.setdefault(scope, []).extend(hits.hits[:1])
        return super().delete(scope=scope, ref=ref, timeout=timeout)

    def search(self, *, scope, query, limit, timeout=None):
        found = super().search(scope=scope, query=query, limit=limit, timeout=timeout).hits
        words = set(query.lower().split())
        ghosts = [g for g in self._ghosts.get(scope, []) if words & set(g.summary.lower().split())]
        return SearchResult(hits=tuple((*found, *ghosts)[:limit]))


class Globbing(InMemoryProvider):
    """Treats a query of wildcards as "everything"."""

    def search(self, *, scope, query, limit, timeout=None):
        if query.strip("%*?_.") == "":
            docs = self.documents(scope)
            return SearchResult(hits=tuple(SearchHit(ref=r, summary="x") for r in docs)[:limit])
        return super().search(scope=scope, query=query, limit=limit, timeout=timeout)


class TestPrefixScoped(ProviderConformance):
    def make_provider(self, tmp_path):
        return PrefixScoped()


class TestGhostly(ProviderConformance):
    def make_provider(self, tmp_path):
        return Ghostly()


class TestGlobbing(ProviderConformance):
    def make_provider(self, tmp_path):
        return Globbing()


class TestPeerBlind(ProviderConformance):
    def make_provider(self, tmp_path):
        return PeerBlind()


class TestTrimming(ProviderConformance):
    def make_provider(self, tmp_path):
        return Trimming()


class TestLimitless(ProviderConformance):
    def make_provider(self, tmp_path):
        return Limitless()


class _Remapped(InMemoryProvider):
    """Maps each caller scope to an internal one (subclasses say how)."""

    def _inner(self, scope):
        return scope

    def write(self, *, scope, **kw):
        return super().write(scope=self._inner(scope), **kw)

    def read(self, *, scope, **kw):
        return super().read(scope=self._inner(scope), **kw)

    def search(self, *, scope, **kw):
        return super().search(scope=self._inner(scope), **kw)

    def delete(self, *, scope, **kw):
        return super().delete(scope=self._inner(scope), **kw)

    def inventory(self, *, scope, **kw):
        return super().inventory(scope=self._inner(scope), **kw)


class CaseFolding(_Remapped):
    """Compares scopes case-insensitively (COLLATE NOCASE, lower-cased paths)."""

    def _inner(self, scope):
        peer = scope.actor_peer_id
        return ProviderScope(
            namespace=scope.namespace.lower(),
            scope_ref=scope.scope_ref.lower(),
            actor_peer_id=None if peer is None else peer.lower(),
        )


class SlashJoined(_Remapped):
    """Joins the three parts with ``/``, which a part may hold: parts shift into each other."""

    def _inner(self, scope):
        joined = f"{scope.namespace}/{scope.scope_ref}/{scope.actor_peer_id or ''}".rstrip("/")
        return ProviderScope(namespace="joined", scope_ref=joined[:200])


class NulCutting(InMemoryProvider):
    """A C-string backend: content ends at the first NUL."""

    def write(self, *, content, **kw):
        if isinstance(content, str):
            content = content.split("\\x00", 1)[0]
        return super().write(content=content, **kw)


class KeyFolding(InMemoryProvider):
    """Compares keys case-insensitively."""

    def write(self, *, key, **kw):
        return super().write(key=key.lower() if isinstance(key, str) else key, **kw)


class TimeoutBlind(InMemoryProvider):
    """Never checks its timeout argument."""

    def search(self, *, timeout=None, **kw):
        return super().search(**kw)


class TestCaseFolding(ProviderConformance):
    def make_provider(self, tmp_path):
        return CaseFolding()


class TestSlashJoined(ProviderConformance):
    def make_provider(self, tmp_path):
        return SlashJoined()


class TestNulCutting(ProviderConformance):
    def make_provider(self, tmp_path):
        return NulCutting()


class TestKeyFolding(ProviderConformance):
    def make_provider(self, tmp_path):
        return KeyFolding()


class TestTimeoutBlind(ProviderConformance):
    def make_provider(self, tmp_path):
        return TimeoutBlind()
'''


def test_the_kit_fails_broken_providers(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_mutants=_MUTANTS)
    result = pytester.runpytest(
        "-q", "-p", "no:cacheprovider", "-k", "isolation or readback or limit"
    )
    failed = {
        line.split("::", 2)[1] + "::" + line.split("::", 2)[2].split(" ")[0]
        for line in result.outlines
        if line.startswith("FAILED ")
    }
    assert "TestPeerBlind::test_scope_isolation[peer_vs_none]" in failed
    assert "TestPeerBlind::test_scope_isolation[peer_vs_peer]" in failed
    assert "TestPeerBlind::test_scope_isolation[namespace]" not in failed
    assert "TestTrimming::test_exact_readback[trailing_whitespace]" in failed
    assert "TestTrimming::test_exact_readback[crlf]" in failed
    assert "TestTrimming::test_exact_readback[unicode]" not in failed
    assert "TestLimitless::test_search_limit[1-1]" in failed
    assert "TestLimitless::test_search_limit[10-4]" not in failed


def test_the_governance_kit_fails_leaky_providers(pytester: pytest.Pytester) -> None:
    """Issue 9 item 7: nothing searchable after delete; no sibling scope; no wildcard match."""
    pytester.makepyfile(test_mutants=_MUTANTS)
    result = pytester.runpytest(
        "-q", "-p", "no:cacheprovider", "-k", "(PrefixScoped or Ghostly or Globbing) and governance"
    )
    failed = {
        line.split("::", 2)[1] + "::" + line.split("::", 2)[2].split(" ")[0]
        for line in result.outlines
        if line.startswith("FAILED ")
    }
    prefix = "TestPrefixScoped::test_governance_a_scope_never_sees_a_sibling_that_extends_it"
    assert f"{prefix}[scope_ref_a_vs_ab]" in failed
    assert f"{prefix}[scope_ref_child]" in failed
    assert f"{prefix}[scope_ref_ab_vs_a]" not in failed  # "ab" is not a prefix of "a"
    assert (
        "TestGhostly::test_governance_deleted_content_is_neither_readable_nor_searchable" in failed
    )
    assert "TestGlobbing::test_governance_a_wildcard_query_matches_nothing[%]" in failed
    assert "TestGlobbing::test_governance_a_wildcard_query_matches_nothing[*]" in failed
    assert not any(name.startswith("TestGlobbing::test_governance_deleted") for name in failed)


def test_the_kit_fails_providers_that_fold_shift_or_cut(pytester: pytest.Pytester) -> None:
    """Scopes compared by case or joined by a separator a part may hold, content cut at
    a NUL, keys folded, a timeout never checked: each fails the kit by name."""
    pytester.makepyfile(test_mutants=_MUTANTS)
    result = pytester.runpytest(
        "-q",
        "-p",
        "no:cacheprovider",
        "-k",
        "CaseFolding or SlashJoined or NulCutting or KeyFolding or TimeoutBlind",
    )
    failed = {
        line.split("::", 2)[1] + "::" + line.split("::", 2)[2].split(" ")[0]
        for line in result.outlines
        if line.startswith("FAILED ")
    }
    sibling = "test_governance_a_scope_never_sees_a_sibling_that_extends_it"
    assert f"TestCaseFolding::{sibling}[scope_ref_case]" in failed
    assert f"TestCaseFolding::{sibling}[namespace_case]" in failed
    assert f"TestCaseFolding::{sibling}[peer_case]" in failed
    assert f"TestCaseFolding::{sibling}[scope_ref_a_vs_ab]" not in failed
    assert f"TestSlashJoined::{sibling}[separator_slash_namespace_scope]" in failed
    assert f"TestSlashJoined::{sibling}[separator_slash_scope_peer]" in failed
    assert f"TestSlashJoined::{sibling}[separator_colon_scope_peer]" not in failed
    assert "TestNulCutting::test_exact_readback[nul]" in failed
    assert "TestNulCutting::test_exact_readback[ascii]" not in failed
    assert "TestKeyFolding::test_keys_differing_in_case_are_different_documents" in failed
    assert "TestTimeoutBlind::test_bad_timeout_is_rejected[search-0]" in failed
    assert "TestTimeoutBlind::test_bad_timeout_is_rejected[write-0]" not in failed
