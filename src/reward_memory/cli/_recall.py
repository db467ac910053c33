"""``reward-memory recall --input FILE [--provider URL]``: one guarded recall.

FILE is a ``reward_memory_recall_input_v0`` object: the corpus declaration, the
request, the caller's read-authority checkpoint and the provider binding. The
provider is chosen with ``--provider`` (default: the embedded SQLite store at
its default location, ``sqlite://``). The public ``reward_memory_recall_v0``
packet is printed; it never holds raw content or raw query text.

A provider that cannot be opened or reached is a status
(``provider_unavailable``, exit 0), never a user gate; bad input of any kind is
an error packet with exit 2.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any, NoReturn

from reward_memory.cli._common import Outcome, read_json_object

if TYPE_CHECKING:
    import argparse

    from reward_memory.providers.spi import Provider, ProviderScope

DEFAULT_PROVIDER = "sqlite://"


def configure(parser: argparse.ArgumentParser) -> None:
    """``--input FILE`` (``-`` for stdin) and ``--provider URL``."""
    parser.add_argument(
        "--input",
        required=True,
        metavar="FILE",
        help="a reward_memory_recall_input_v0 JSON file (- for stdin)",
    )
    parser.add_argument(
        "--provider",
        default=DEFAULT_PROVIDER,
        metavar="URL",
        help="provider URL, e.g. sqlite:///abs/path/memory.db or memory:// (default: sqlite://)",
    )


class _Unreachable:
    """Stands in for a provider that could not be opened: every operation is unavailable."""

    provider_id = "unreachable"
    spi_version = 1

    def __init__(self, reason_code: str) -> None:
        self._reason_code = reason_code

    def _fail(self) -> NoReturn:
        from reward_memory.errors import ProviderUnavailable

        raise ProviderUnavailable("the provider could not be opened", reason_code=self._reason_code)

    def search(self, *, scope: ProviderScope, query: str, limit: int, timeout: Any = None) -> Any:
        del scope, query, limit, timeout
        self._fail()

    def read(self, *, scope: ProviderScope, ref: str, timeout: Any = None) -> Any:
        del scope, ref, timeout
        self._fail()

    def close(self) -> None:
        """Nothing to release."""


def _open(url: str) -> Provider | _Unreachable:
    from reward_memory.errors import ProviderUnavailable
    from reward_memory.providers.discovery import get_provider

    try:
        return get_provider(url)
    except ProviderUnavailable as exc:
        return _Unreachable(exc.reason_code)
    except OSError:
        return _Unreachable("provider_unavailable")


def run(args: argparse.Namespace) -> Outcome:
    """Validate the input, open the provider, recall, print the public packet."""
    from reward_memory._boundary import strict_record
    from reward_memory.errors import RecordValidationError
    from reward_memory.guarded_recall import recall
    from reward_memory.records._plain import to_plain as as_plain
    from reward_memory.records.recall import RECALL_INPUT_SCHEMA, RecallInput

    data = read_json_object(args.input)
    if "schema_version" not in data:
        raise RecordValidationError(
            "schema_version is missing", path="$.schema_version", code="schema_version_missing"
        )
    if data["schema_version"] != RECALL_INPUT_SCHEMA:
        raise RecordValidationError(
            f"expected a {RECALL_INPUT_SCHEMA} object",
            path="$.schema_version",
            code="schema_version_unsupported",
        )
    # One strict pass at the boundary (the schema names an error only): no
    # jsonschema, no cattrs converter at start-up.
    given = strict_record(RecallInput, data, RECALL_INPUT_SCHEMA)
    provider = _open(args.provider)
    try:
        session = recall(
            given.request,
            corpus=given.corpus,
            checkpoint=given.read_authority_checkpoint,
            binding=given.provider_binding,
            provider=provider,  # type: ignore[arg-type]
        )
    finally:
        # Closing never turns a result into an error.
        with contextlib.suppress(Exception):
            provider.close()
    packet = session.packet
    lines = [
        f"  result_count: {packet.result_count}",
        f"  provider_call_count: {packet.provider_call_count}",
    ]
    if packet.reason_code is not None:
        lines.append(f"  reason_code: {packet.reason_code}")
    lines.extend(
        f"  - {result.memory_ref} {result.candidate_ref} ({result.target_class})"
        for result in packet.results
    )
    return Outcome(packet=as_plain(packet), text_lines=tuple(lines))
