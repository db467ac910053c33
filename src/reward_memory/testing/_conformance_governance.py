"""The governance part of the provider conformance kit (mixed into ``ProviderConformance``).

What memory governance needs from every provider, beyond storing and finding:

- **delete means gone**: after a delete nothing of the document is readable or
  searchable, not even in another document's summary, and a retried delete is
  harmless;
- **a scope is exact**: a scope never sees a sibling whose name only extends its
  own (``…/a`` vs ``…/ab``, in the namespace, the scope ref or the actor peer),
  nor one matched through wildcard characters in a scope ref (``_`` and ``.`` are
  token characters; ``%``, ``*`` and ``?`` are refused before a provider sees
  them) or in a ref;
- **a query is text, never syntax**: wildcards (``%``, ``_``, ``*``, ``?``) and
  full-text syntax (quotes, ``NEAR``, ``AND``/``OR``/``NOT``, ``-``, ``^``,
  ``column:`` filters, brackets) never raise and never bring back a document
  from outside the scope.

Each test uses fresh, unique scopes and terms (letters only), so content never
holds a wildcard character by accident.
"""

from __future__ import annotations

import contextlib
import json
import uuid
from typing import TYPE_CHECKING, Final

import pytest

from reward_memory.errors import RecordValidationError
from reward_memory.providers.spi import ProviderScope

if TYPE_CHECKING:
    from reward_memory.providers.spi import Provider, ReadResult, SearchResult, WriteResult

__all__ = ["GovernanceConformance"]


def _letters(prefix: str) -> str:
    """A distinctive, letters-only term (the kit's usual ``_word``, kept local)."""
    return prefix + "".join(chr(ord("a") + int(c, 16) % 26) for c in uuid.uuid4().hex[:12])


def canary_record(canary: str) -> str:
    """A compact record whose summary *and* content carry ``canary`` (JSON, as the core writes)."""
    return json.dumps(
        {
            "schema_version": "reward_memory_active_record_v1",
            "content_summary": f"Keep fixes focused; canary {canary} in the summary.",
            "content": f"The whole rule text, with the canary {canary} inside it.",
            "shared": "retry backoff budget",
        },
        separators=(",", ":"),
    )


#: Queries made only of wildcard characters: no document holds them, so no hits.
_WILDCARD_QUERIES: Final = ("%", "_", "*", "?", "%%", "__", "**", "*:*", "%_%", "?*", ".*")

#: Query shapes that are syntax for some engine (``{t}`` is the sibling's term).
_SYNTAX_QUERIES: Final = (
    "{t}*",
    "{p}*",
    "{p}%",
    "%{p}%",
    "{p}_",
    "{p}?",
    '"{t}"',
    '"{t}',
    "'{t}'",
    "NEAR({t} {t})",
    "NEAR({t} shared, 2)",
    "{t} OR shared",
    "{t} AND shared",
    "shared NOT {t}",
    "-{t}",
    "+{t}",
    "^{t}",
    "terms:{t}",
    "content:{t}",
    "{{terms content}}: {t}",
    "({t}",
    "{t})",
    "[{t}]",
    "{t}\\",
    "{t};--",
    "' OR '1'='1",
    "\x00{t}",
)


class GovernanceConformance:
    """Governance tests; :class:`~reward_memory.testing.conformance.ProviderConformance`
    inherits them, and the same override guard applies.

    .. versionadded:: 0.2.0
    """

    # -- helpers (duplicated from the kit so this mixin stands alone) ---------------------

    @staticmethod
    def _g_write(provider: Provider, scope: ProviderScope, key: str, content: str) -> WriteResult:
        written = provider.write(scope=scope, key=key, content=content)
        assert written.status == "created"
        return written

    @staticmethod
    def _g_read(provider: Provider, scope: ProviderScope, ref: str) -> ReadResult:
        return provider.read(scope=scope, ref=ref)

    @staticmethod
    def _g_search(provider: Provider, scope: ProviderScope, query: str) -> SearchResult:
        result = provider.search(scope=scope, query=query, limit=10)
        assert len(result.hits) <= 10
        return result

    @staticmethod
    def _g_scope(suffix: str = "", **parts: str) -> ProviderScope:
        namespace = parts.get("namespace", f"rm-governance-{uuid.uuid4().hex[:10]}")
        return ProviderScope(
            namespace=namespace,
            scope_ref=parts.get("scope_ref", "project/main" + suffix),
            actor_peer_id=parts.get("actor_peer_id"),
        )

    # -- delete means gone ---------------------------------------------------------------

    def test_governance_deleted_content_is_neither_readable_nor_searchable(
        self, provider: Provider
    ) -> None:
        scope = self._g_scope()
        canary = _letters("canary")
        neighbour_text = "a kept note about retry backoff budget"
        doomed = self._g_write(provider, scope, "doc-canary", canary_record(canary))
        kept = self._g_write(provider, scope, "doc-kept", neighbour_text)
        # The canary is findable before the delete (the checks below can fail).
        assert doomed.ref in {hit.ref for hit in self._g_search(provider, scope, canary).hits}

        assert provider.delete(scope=scope, ref=doomed.ref).deleted is True

        read = self._g_read(provider, scope, doomed.ref)
        assert read.found is False
        assert read.content is None
        assert self._g_search(provider, scope, canary).hits == ()
        for query in ("retry backoff budget", f"{canary} retry", "canary summary content"):
            for hit in self._g_search(provider, scope, query).hits:
                assert hit.ref != doomed.ref
                assert canary not in hit.summary.lower()
        assert self._g_read(provider, scope, kept.ref).content == neighbour_text
        assert provider.inventory(scope=scope).record_count == 1
        # A retried delete is harmless and changes nothing.
        assert provider.delete(scope=scope, ref=doomed.ref).deleted is False
        assert self._g_read(provider, scope, kept.ref).content == neighbour_text

    def test_governance_deleted_content_stays_gone(self, provider: Provider) -> None:
        scope = self._g_scope()
        canary = _letters("canary")
        doomed = self._g_write(provider, scope, "doc-1", canary_record(canary))
        assert provider.delete(scope=scope, ref=doomed.ref).deleted is True
        # Later writes (the same key with new content, and others) never bring it back.
        again = self._g_write(provider, scope, "doc-1", "a new version without the token")
        for index in range(5):
            self._g_write(provider, scope, f"doc-more-{index}", f"more notes {index} shared")
        assert self._g_search(provider, scope, canary).hits == ()
        assert self._g_read(provider, scope, again.ref).content == (
            "a new version without the token"
        )

    # -- a scope is exact ----------------------------------------------------------------

    @staticmethod
    def _prefix_pairs() -> dict[str, tuple[ProviderScope, ProviderScope]]:
        ns = f"rm-governance-{uuid.uuid4().hex[:10]}"
        return {
            "scope_ref_a_vs_ab": (
                ProviderScope(namespace=ns, scope_ref="project/a"),
                ProviderScope(namespace=ns, scope_ref="project/ab"),
            ),
            "scope_ref_ab_vs_a": (
                ProviderScope(namespace=ns, scope_ref="project/ab"),
                ProviderScope(namespace=ns, scope_ref="project/a"),
            ),
            "scope_ref_child": (
                ProviderScope(namespace=ns, scope_ref="project/a"),
                ProviderScope(namespace=ns, scope_ref="project/a/b"),
            ),
            "namespace_a_vs_ab": (
                ProviderScope(namespace=ns + "a", scope_ref="main"),
                ProviderScope(namespace=ns + "ab", scope_ref="main"),
            ),
            "peer_a_vs_ab": (
                ProviderScope(namespace=ns, scope_ref="main", actor_peer_id="peer-a"),
                ProviderScope(namespace=ns, scope_ref="main", actor_peer_id="peer-ab"),
            ),
            "parts_shifted": (  # ("ab", "c") and ("a", "bc") must not collide when joined
                ProviderScope(namespace=ns + "ab", scope_ref="c"),
                ProviderScope(namespace=ns + "a", scope_ref="bc"),
            ),
            # Parts are compared exactly: case counts, and a separator a part may hold
            # (``/``, ``:``, ``.``) never joins two parts into one.
            "scope_ref_case": (
                ProviderScope(namespace=ns, scope_ref="team/a"),
                ProviderScope(namespace=ns, scope_ref="Team/A"),
            ),
            "namespace_case": (
                ProviderScope(namespace=ns + "x", scope_ref="main"),
                ProviderScope(namespace=ns + "X", scope_ref="main"),
            ),
            "peer_case": (
                ProviderScope(namespace=ns, scope_ref="main", actor_peer_id="peer-a"),
                ProviderScope(namespace=ns, scope_ref="main", actor_peer_id="Peer-A"),
            ),
            **{
                f"separator_{name}_namespace_scope": (
                    ProviderScope(namespace=ns + sep + "a", scope_ref="b"),
                    ProviderScope(namespace=ns, scope_ref="a" + sep + "b"),
                )
                for name, sep in (("slash", "/"), ("colon", ":"), ("dot", "."))
            },
            **{
                f"separator_{name}_scope_peer": (
                    ProviderScope(namespace=ns, scope_ref="main", actor_peer_id="p"),
                    ProviderScope(namespace=ns, scope_ref="main" + sep + "p"),
                )
                for name, sep in (("slash", "/"), ("colon", ":"), ("dot", "."))
            },
        }

    def _assert_unseen(self, provider: Provider, home: ProviderScope, away: ProviderScope) -> None:
        term = _letters("sibling")
        there = self._g_write(provider, away, "doc-1", f"sibling document {term} shared")
        assert self._g_read(provider, home, there.ref).found is False
        assert self._g_search(provider, home, term).hits == ()
        assert self._g_search(provider, home, "sibling document shared").hits == ()
        assert provider.inventory(scope=home).record_count == 0
        assert provider.delete(scope=home, ref=there.ref).deleted is False
        # The sibling itself is untouched.
        assert self._g_read(provider, away, there.ref).found is True
        assert [hit.ref for hit in self._g_search(provider, away, term).hits] == [there.ref]

    @pytest.mark.parametrize(
        "pair",
        [
            "scope_ref_a_vs_ab",
            "scope_ref_ab_vs_a",
            "scope_ref_child",
            "namespace_a_vs_ab",
            "peer_a_vs_ab",
            "parts_shifted",
            "scope_ref_case",
            "namespace_case",
            "peer_case",
            *(
                f"separator_{name}_{parts}"
                for parts in ("namespace_scope", "scope_peer")
                for name in ("slash", "colon", "dot")
            ),
        ],
    )
    def test_governance_a_scope_never_sees_a_sibling_that_extends_it(
        self, provider: Provider, pair: str
    ) -> None:
        home, away = self._prefix_pairs()[pair]
        self._assert_unseen(provider, home, away)

    @pytest.mark.parametrize(
        ("home_ref", "away_ref"),
        [
            ("project_main", "project-main"),  # SQL LIKE: _ is any one character
            ("project_main", "projectxmain"),
            ("project.main", "projectxmain"),  # regular expressions: . is any character
            ("project.main", "project-main"),
            ("project/#main", "project/main"),
            ("project:ma", "project:main"),
        ],
    )
    def test_governance_wildcards_in_a_scope_ref_match_nothing(
        self, provider: Provider, home_ref: str, away_ref: str
    ) -> None:
        home = self._g_scope(scope_ref=home_ref)
        away = ProviderScope(namespace=home.namespace, scope_ref=away_ref)
        self._assert_unseen(provider, home, away)

    @pytest.mark.parametrize("wildcard", ["%", "*", "?", "project%", "project*", "proj?ct"])
    def test_governance_wildcard_scope_refs_are_refused_before_any_provider(
        self, wildcard: str
    ) -> None:
        with pytest.raises(RecordValidationError):
            ProviderScope(namespace="rm-governance", scope_ref=wildcard)
        with pytest.raises(RecordValidationError):
            ProviderScope(namespace=wildcard, scope_ref="main")
        with pytest.raises(RecordValidationError):
            ProviderScope(namespace="rm-governance", scope_ref="main", actor_peer_id=wildcard)

    def test_governance_a_ref_pattern_matches_nothing(self, provider: Provider) -> None:
        scope = self._g_scope()
        written = self._g_write(provider, scope, "doc-1", "the one real document")
        ref = written.ref
        patterns = [ref[:-1], ref + "0", ref[:-1] + "_", ref[:-1] + ".", ref[:-1] + "%"]
        patterns += [ref[:-1] + "*", ref[: len(ref) // 2] + "%", "%", "_", "*"]
        for pattern in patterns:
            if pattern == ref:
                continue
            try:
                read = self._g_read(provider, scope, pattern)
            except RecordValidationError:
                continue  # not even a ref: refused, which is as good
            assert read.found is False, f"read({pattern!r}) found a document"
            assert read.content is None
            with contextlib.suppress(RecordValidationError):  # refused is as good
                assert provider.delete(scope=scope, ref=pattern).deleted is False
        assert self._g_read(provider, scope, ref).content == "the one real document"

    # -- a query is text, never syntax -----------------------------------------------------

    @pytest.mark.parametrize("query", _WILDCARD_QUERIES)
    def test_governance_a_wildcard_query_matches_nothing(
        self, provider: Provider, query: str
    ) -> None:
        home = self._g_scope()
        away = ProviderScope(namespace=home.namespace, scope_ref=home.scope_ref + "b")
        self._g_write(provider, home, "doc-1", "home notes about retry budget")
        self._g_write(provider, away, "doc-1", "sibling notes about retry budget")
        assert self._g_search(provider, home, query).hits == ()

    @pytest.mark.parametrize("shape", _SYNTAX_QUERIES)
    def test_governance_query_syntax_never_errors_or_escapes_the_scope(
        self, provider: Provider, shape: str
    ) -> None:
        home = self._g_scope()
        away = ProviderScope(namespace=home.namespace, scope_ref=home.scope_ref + "b")
        term = _letters("sibling")
        own = {
            self._g_write(provider, home, "doc-1", "home notes about shared retry budget").ref,
            self._g_write(provider, home, "doc-2", "terms content near not and or").ref,
        }
        self._g_write(provider, away, "doc-1", f"sibling {term} shared retry budget")
        query = shape.format(t=term, p=term[:8])
        result = self._g_search(provider, home, query)  # must not raise
        assert {hit.ref for hit in result.hits} <= own, f"{query!r} escaped the scope"
        for hit in result.hits:
            assert term not in hit.summary
