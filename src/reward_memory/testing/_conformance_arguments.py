"""The conformance kit's argument checks: bad keys, limits, queries, timeouts, content.

:class:`~reward_memory.testing.conformance.ProviderConformance` inherits them (the
same override guard applies); the SPI's check functions (``check_scope``,
``check_limit``, ``check_query``, ``check_timeout``, ``check_content``, and the token
grammar for keys) are what a provider calls to pass them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

import pytest

from reward_memory.errors import RecordValidationError
from reward_memory.providers.spi import MAX_CONTENT_BYTES, MAX_SEARCH_LIMIT

if TYPE_CHECKING:
    from collections.abc import Callable

    from reward_memory.providers.spi import Provider, ProviderScope

__all__ = ["ArgumentConformance"]

_BAD_KEYS: Final[dict[str, object]] = {
    "empty": "",
    "space_inside": "two words",
    "leading_space": " key",
    "trailing_newline": "key\n",
    "non_ascii": "ключ",
    "too_long": "k" * 201,
    "leading_punctuation": "-key",
    "query_chars": "key?x=1",
    "credential_shape": "sk-" + "a1" * 16,
    "not_a_string": 123,
    "none": None,
    "bytes": b"key",
}

_BAD_LIMITS: Final[dict[str, object]] = {
    "zero": 0,
    "negative": -1,
    "over_max": MAX_SEARCH_LIMIT + 1,
    "true": True,
    "false": False,
    "float": 1.5,
    "string": "3",
    "none": None,
}


class ArgumentConformance:
    """Bad arguments raise ``RecordValidationError`` and change nothing."""

    @staticmethod
    def _a_count(provider: Provider, scope: ProviderScope) -> int:
        return provider.inventory(scope=scope).record_count

    @pytest.mark.parametrize("case", list(_BAD_KEYS))
    def test_bad_key_is_rejected(self, provider: Provider, scope: ProviderScope, case: str) -> None:
        with pytest.raises(RecordValidationError):
            provider.write(scope=scope, key=_BAD_KEYS[case], content="x")  # type: ignore[arg-type]
        assert self._a_count(provider, scope) == 0

    @pytest.mark.parametrize("case", list(_BAD_LIMITS))
    def test_bad_limit_is_rejected(
        self, provider: Provider, scope: ProviderScope, case: str
    ) -> None:
        provider.write(scope=scope, key="doc-1", content="limit probe")
        with pytest.raises(RecordValidationError):
            provider.search(scope=scope, query="limit probe", limit=_BAD_LIMITS[case])  # type: ignore[arg-type]

    @pytest.mark.parametrize("query", [None, 3, b"bytes", ["a"], "half \ud800 a pair"])
    def test_bad_query_is_rejected(
        self, provider: Provider, scope: ProviderScope, query: object
    ) -> None:
        with pytest.raises(RecordValidationError):
            provider.search(scope=scope, query=query, limit=1)  # type: ignore[arg-type]

    @pytest.mark.parametrize("timeout", [0, -1, float("nan"), float("inf"), True, "1"])
    @pytest.mark.parametrize("operation", ["write", "read", "search", "delete", "inventory"])
    def test_bad_timeout_is_rejected(
        self, provider: Provider, scope: ProviderScope, operation: str, timeout: object
    ) -> None:
        calls: dict[str, Callable[[], object]] = {
            "write": lambda: provider.write(scope=scope, key="doc-1", content="x", timeout=timeout),  # type: ignore[arg-type]
            "read": lambda: provider.read(scope=scope, ref="r", timeout=timeout),  # type: ignore[arg-type]
            "search": lambda: provider.search(scope=scope, query="x", limit=1, timeout=timeout),  # type: ignore[arg-type]
            "delete": lambda: provider.delete(scope=scope, ref="r", timeout=timeout),  # type: ignore[arg-type]
            "inventory": lambda: provider.inventory(scope=scope, timeout=timeout),  # type: ignore[arg-type]
        }
        with pytest.raises(RecordValidationError):
            calls[operation]()
        assert self._a_count(provider, scope) == 0

    def test_a_lone_surrogate_in_content_is_rejected(
        self, provider: Provider, scope: ProviderScope
    ) -> None:
        with pytest.raises(RecordValidationError):
            provider.write(scope=scope, key="doc-1", content="half \ud800 a pair")
        assert self._a_count(provider, scope) == 0

    def test_content_must_be_a_string(self, provider: Provider, scope: ProviderScope) -> None:
        with pytest.raises(RecordValidationError):
            provider.write(scope=scope, key="doc-1", content=b"bytes")  # type: ignore[arg-type]
        assert self._a_count(provider, scope) == 0

    @pytest.mark.parametrize("unit", ["x", "é"])
    def test_oversized_content_is_rejected(
        self, provider: Provider, scope: ProviderScope, unit: str
    ) -> None:
        # The limit is in UTF-8 bytes: "é" * (limit // 2 + 1) is under it in characters.
        content = unit * (MAX_CONTENT_BYTES // len(unit.encode("utf-8")) + 1)
        with pytest.raises(RecordValidationError):
            provider.write(scope=scope, key="doc-1", content=content)
        assert self._a_count(provider, scope) == 0

    def test_content_at_the_limit_is_accepted(
        self, provider: Provider, scope: ProviderScope
    ) -> None:
        unit = "wörd "  # 6 UTF-8 bytes, several tokens per kilobyte
        content = unit * (MAX_CONTENT_BYTES // 6)
        content += "x" * (MAX_CONTENT_BYTES - len(content.encode("utf-8")))
        assert len(content.encode("utf-8")) == MAX_CONTENT_BYTES
        written = provider.write(scope=scope, key="doc-1", content=content)
        assert written.status == "created"
        assert provider.read(scope=scope, ref=written.ref).content == content
