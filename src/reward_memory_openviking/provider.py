"""``openviking``: the reward-memory provider over OpenViking's HTTP API (sync).

One pooled :class:`httpx.Client` per provider (keep-alive: sequential calls reuse
one TCP connection). Records are exact UTF-8 documents, one ``.json`` file per
key under the scope's records directory (see :mod:`._layout`); the operations
and their failure mapping are in :mod:`._protocol`, shared with the async twin
:class:`~reward_memory_openviking.aio.AsyncOpenVikingProvider`.

==========  ==================================================================
write       ``content/read`` (an existing record: ``unchanged`` or ``conflict``,
            nothing written), ``fs/mkdir`` of the record's own directory (the
            claim: one writer only), ``content/write`` with ``wait`` so a search
            finds it when the call returns (else ``index_pending``), then
            ``content/read`` again
read        ``content/read`` (404: not found)
search      ``search/find`` in the records directory, ``level: 2``; hits outside
            it are dropped client-side
delete      ``DELETE /fs`` of the record's directory with ``wait`` (retrying a
            ``409`` marked retryable)
inventory   ``/ready`` and ``fs/ls`` of the records directory
==========  ==================================================================

Isolation is the server's: an account's ``viking://resources`` is its own, a
user's ``viking://user/<u>`` is private to that user, and a scope under
``/peers/<p>/`` is sent with ``X-OpenViking-Actor-Peer: <p>`` (and must carry
that exact ``actor_peer_id``). The server's ``create`` write mode is an upsert,
so create-if-absent is made with the claim: of two writers racing on one new key
with different content, exactly one gets ``created`` (its content stays), the
other ``conflict``; a claim whose writer died is taken over after 2 s.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any, Self

from reward_memory.errors import ProviderConfigError, ProviderUnavailable, RecordValidationError
from reward_memory.grammars import check_token
from reward_memory.providers.spi import (
    SPI_VERSION,
    DeleteResult,
    Inventory,
    ProviderScope,
    ReadResult,
    SearchResult,
    WriteResult,
    check_content,
    check_limit,
    check_query,
    check_scope,
    check_timeout,
)
from reward_memory_openviking._layout import REF_PREFIX, parse_ref
from reward_memory_openviking._options import (
    MAX_TIMEOUT,
    Options,
    build_options,
    options_from_url,
)
from reward_memory_openviking._protocol import (
    PROVIDER_ID,
    Call,
    Deadline,
    Pause,
    Plan,
    Protocol,
    Receiving,
)
from reward_memory_openviking._replies import Reply

if TYPE_CHECKING:
    from types import TracebackType

    import httpx

__all__ = [
    "OpenVikingProvider",
    "check_call_arguments",
    "check_ref",
    "check_search_query",
    "searchable",
]

_NO_HITS = SearchResult()


def searchable(query: str) -> bool:
    """A query worth sending: one letter or digit at least (``%``, ``*``, ``?`` alone are not).

    An embedding search ranks every record for any text, so a query of wildcard or
    punctuation characters would "match" the whole scope; it finds nothing instead.
    """
    return any(ch.isalnum() for ch in query)


def check_ref(ref: object) -> tuple[str, str | None]:
    """The checked ref and its digest hex when it is one of this provider's refs (else None).

    One of our refs is a valid token by construction: the full check is for others.
    """
    ref_hex = parse_ref(ref) if type(ref) is str else None
    if ref_hex is None:
        return check_token(ref, "$.ref"), None
    return ref, ref_hex  # type: ignore[return-value]  # parse_ref accepted a str


def check_call_arguments(scope: object, timeout: object, default: float) -> tuple[Any, float]:
    """The checked scope and the call's time budget (its timeout, or the provider's).

    The SPI lets a call pass any finite timeout; one past MAX_TIMEOUT (the bound of
    the ``timeout`` option) is capped there, as the socket layer overflows on huge
    values (``timestamp out of range for platform time_t``).
    """
    checked = check_scope(scope)
    seconds = check_timeout(timeout)
    return checked, default if seconds is None else min(seconds, MAX_TIMEOUT)


def check_search_query(query: object) -> str:
    """The SPI's query check, plus: UTF-8 text (the query is sent as JSON)."""
    text = check_query(query)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise RecordValidationError(
            "must be encodable as UTF-8 (no lone surrogates)",
            path="$.query",
            code="invalid_value",
        ) from None
    return text


def _transport_error(exc: Exception, op: str) -> ProviderUnavailable:
    import httpx  # noqa: PLC0415 - loaded with the client, not with the class

    if isinstance(exc, httpx.TimeoutException):
        return ProviderUnavailable(
            f"openviking {op}: no answer in time", reason_code="provider_timeout"
        )
    return ProviderUnavailable(f"openviking {op}: {type(exc).__name__} (server unreachable)")


class OpenVikingProvider:
    """The OpenViking provider (id ``openviking``).

    Args:
        base_url: ``http(s)://host:port`` of the server (default
            ``$REWARD_MEMORY_OPENVIKING_URL`` or ``http://127.0.0.1:1933``).
        api_key: a user key (``api_key`` mode) or the root key (``trusted`` mode).
        api_key_env: the environment variable holding the key (default
            ``REWARD_MEMORY_OPENVIKING_API_KEY``).
        auth: ``"api_key"``, ``"trusted"`` (root key plus ``account`` and ``user``
            headers, for a gateway) or ``"dev"`` (no key; loopback dev servers).
            Default: trusted when an account is given, else api_key when a key is.
        account, user: the identity sent in trusted mode.
        root: where scopes whose ``scope_ref`` is not a ``viking://`` URI live
            (default ``viking://resources/reward-memory``).
        actor_peer: the one actor peer this provider acts for: a scope naming another
            peer (its ``actor_peer_id`` or its ``/peers/<peer>/`` segment) is refused
            (default: none; each scope still carries its own peer, and one under
            ``/peers/<peer>/`` must carry exactly that one).
        timeout: seconds per call when it passes ``timeout=None`` (default 10).
        retries: retries of a request the server marks retryable (default 3).
        wait_for_index: writes wait until the search index has the record (default
            true; false returns once the content is durable).
        processing_mode: ``"vectors_only"`` (default) or ``"semantic_and_vectors"``.
        score_threshold: hits scoring below this are dropped (scores are
            ``(cosine + 1) / 2``, so 0.5 is "unrelated"; default 0.55; 0 keeps all).
        transport: an :class:`httpx.BaseTransport` (tests inject faults with one).
            Without one, every socket operation of a call gets at most the time left
            before the call's deadline; a given transport gets httpx's per-operation
            timeouts, and the body is checked against the deadline chunk by chunk.

    Raises:
        ProviderConfigError: an unknown option or a value it cannot use (the message
            names the option, never the value). Nothing is contacted.

    .. versionadded:: 0.1.0
    """

    provider_id: str = PROVIDER_ID
    spi_version: int = SPI_VERSION

    def __init__(
        self,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        api_key_env: str | None = None,
        auth: str | None = None,
        account: str | None = None,
        user: str | None = None,
        root: str | None = None,
        actor_peer: str | None = None,
        timeout: float | None = None,
        retries: int | None = None,
        wait_for_index: bool | None = None,
        processing_mode: str | None = None,
        score_threshold: float | None = None,
        transport: httpx.BaseTransport | None = None,
        **unknown: object,
    ) -> None:
        # httpx is imported here, not with the module: listing the installed providers
        # (discovery imports every provider module) must not pay ~150 ms for it.
        import httpx  # noqa: PLC0415

        given: dict[str, Any] = dict(unknown)  # an unknown name is refused by build_options
        given |= {
            name: value
            for name, value in (
                ("base_url", base_url),
                ("api_key", api_key),
                ("api_key_env", api_key_env),
                ("auth", auth),
                ("account", account),
                ("user", user),
                ("root", root),
                ("actor_peer", actor_peer),
                ("timeout", timeout),
                ("retries", retries),
                ("wait_for_index", wait_for_index),
                ("processing_mode", processing_mode),
                ("score_threshold", score_threshold),
            )
            if value is not None
        }
        if transport is not None and not isinstance(transport, httpx.BaseTransport):
            raise ProviderConfigError(
                "openviking provider option 'transport' must be an httpx.BaseTransport"
            )
        self._options: Options = build_options(given)
        self._protocol = Protocol(self._options)
        from reward_memory_openviking._deadline import bounded, deadline_transport  # noqa: PLC0415

        if transport is None:
            transport = deadline_transport()
        self._client = httpx.Client(
            base_url=self._options.base_url,
            headers=self._options.headers(),
            timeout=self._options.timeout,
            transport=transport,
            trust_env=False,  # no proxy from the environment between us and the server
            follow_redirects=False,
        )
        self._http_error: type[Exception] = httpx.HTTPError
        self._bounded = bounded
        self._lock = threading.Lock()
        self._closed = False

    @classmethod
    def from_url(cls, url: str) -> Self:
        """Build from ``openviking://host:port?auth=trusted&account=a&user=u&api_key_env=K``.

        ``openviking://`` alone uses the environment defaults; ``tls=true`` means
        https. A URL never carries a key. Nothing is contacted.

        Raises:
            ProviderConfigError: another scheme, credentials or a key in the URL, a
                fragment, a malformed query, or an unknown or invalid option.
        """
        return cls(**options_from_url(url, cls.provider_id))

    @property
    def options(self) -> Options:
        """The checked options (the key is not in their ``repr``)."""
        return self._options

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return f"<OpenVikingProvider {self._options.auth} {state}>"

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    # -- the SPI ----------------------------------------------------------------------

    def write(
        self, *, scope: ProviderScope, key: str, content: str, timeout: float | None = None
    ) -> WriteResult:
        """Store ``content`` under ``key`` once; see the SPI for the statuses."""
        scope, seconds = check_call_arguments(scope, timeout, self._options.timeout)
        key = check_token(key, "$.key")
        check_content(content)
        layout = self._protocol.layout(scope)
        deadline = Deadline(seconds, "write")
        return self._drive(self._protocol.write(deadline, layout, key, content), deadline)  # type: ignore[no-any-return]

    def read(self, *, scope: ProviderScope, ref: str, timeout: float | None = None) -> ReadResult:
        """Return exactly what was written under ``ref`` in ``scope``, or not found."""
        scope, seconds = check_call_arguments(scope, timeout, self._options.timeout)
        ref, ref_hex = check_ref(ref)
        layout = self._protocol.layout(scope)
        deadline = Deadline(seconds, "read")
        if ref_hex is None:
            miss = ReadResult(ref=ref, found=False)
            return self._drive(self._protocol.probe(deadline, miss), deadline)  # type: ignore[no-any-return]
        return self._drive(self._protocol.read(deadline, layout, ref, ref_hex), deadline)  # type: ignore[no-any-return]

    def read_key(
        self, *, scope: ProviderScope, key: str, timeout: float | None = None
    ) -> ReadResult:
        """What ``read`` gives for the ref a write of ``key`` answers with (optional SPI).

        A ref is derived from the scope and the key, so this is one ``content/read``.
        """
        scope, seconds = check_call_arguments(scope, timeout, self._options.timeout)
        key = check_token(key, "$.key")
        layout = self._protocol.layout(scope)
        ref_hex = layout.ref_hex(key)
        deadline = Deadline(seconds, "read")
        plan = self._protocol.read(deadline, layout, REF_PREFIX + ref_hex, ref_hex)
        return self._drive(plan, deadline)  # type: ignore[no-any-return]

    def search(
        self, *, scope: ProviderScope, query: str, limit: int, timeout: float | None = None
    ) -> SearchResult:
        """At most ``limit`` hits from the scope's records, best first."""
        scope, seconds = check_call_arguments(scope, timeout, self._options.timeout)
        query = check_search_query(query)
        limit = check_limit(limit)
        layout = self._protocol.layout(scope)
        deadline = Deadline(seconds, "search")
        if not searchable(query):
            return self._drive(self._protocol.probe(deadline, _NO_HITS), deadline)  # type: ignore[no-any-return]
        return self._drive(self._protocol.search(deadline, layout, query, limit), deadline)  # type: ignore[no-any-return]

    def delete(
        self, *, scope: ProviderScope, ref: str, timeout: float | None = None
    ) -> DeleteResult:
        """Remove ``ref`` (and its index entries); a missing ref gives ``deleted=False``."""
        scope, seconds = check_call_arguments(scope, timeout, self._options.timeout)
        ref, ref_hex = check_ref(ref)
        layout = self._protocol.layout(scope)
        deadline = Deadline(seconds, "delete")
        if ref_hex is None:
            miss = DeleteResult(ref=ref, deleted=False)
            return self._drive(self._protocol.probe(deadline, miss), deadline)  # type: ignore[no-any-return]
        return self._drive(self._protocol.delete(deadline, layout, ref, ref_hex), deadline)  # type: ignore[no-any-return]

    def inventory(self, *, scope: ProviderScope, timeout: float | None = None) -> Inventory:
        """Availability (``/ready``), presence and record count of the scope's directory."""
        scope, seconds = check_call_arguments(scope, timeout, self._options.timeout)
        layout = self._protocol.layout(scope)
        deadline = Deadline(seconds, "inventory")
        return self._drive(self._protocol.inventory(deadline, layout), deadline)  # type: ignore[no-any-return]

    def close(self) -> None:
        """Close the connection pool; later operations raise ``ProviderUnavailable``."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._client.close()

    # -- the driver -----------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise ProviderUnavailable("the openviking provider is closed")

    def _drive(self, plan: Plan, deadline: Deadline) -> Any:
        self._check_open()
        client = self._client
        try:
            step = next(plan)
            while True:
                if isinstance(step, Pause):
                    time.sleep(step.seconds)
                    step = plan.send(Reply(0, b""))
                    continue
                step = plan.send(self._send(client, step, deadline.op))
        except StopIteration as done:
            return done.value
        finally:
            plan.close()

    def _send(self, client: httpx.Client, call: Call, op: str) -> Reply:
        body = Receiving(call.timeout, op)
        try:
            with (
                self._bounded(call.timeout),
                client.stream(
                    call.method,
                    call.path,
                    params=call.params,
                    json=call.json,
                    headers=call.headers,
                    timeout=call.timeout,
                ) as response,
            ):
                body.announced(response.headers.get("content-length"))
                for chunk in response.iter_bytes():
                    body.take(chunk)
                return body.reply(response.status_code)
        except self._http_error as exc:
            raise _transport_error(exc, op) from None
        except RuntimeError:  # the client was closed by another thread meanwhile
            raise ProviderUnavailable("the openviking provider is closed") from None
