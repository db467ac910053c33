"""``reward-memory ingest-event --input FILE [--goal-id G --agent-id A] [--execute]``.

Two routes (reference §15.3), both printing the ``reward_memory_ingest_receipt_v0``:

* **Configured** (``--goal-id`` and ``--agent-id``, given together): the
  experiment is resolved from ``--activation`` (default
  ``.reward-memory/activation.json``) and its config v1; the event goes to the
  ingest corpus of the surface it names, under that corpus's standing policy
  and binding. ``FILE`` is the compact event itself, or ``{event, observed_at?,
  adapter?}`` (a given adapter must be the configured one). A dry run
  (``planned``, zero provider calls) unless ``--execute``; executing builds the
  config's provider and fails open (``provider_unavailable``, exit 0).
* **Full packet** (no goal, no agent): the original's public fixture --
  ``{adapter, event, corpus, standing_policy, provider_binding, observed_at}``
  in one document -- stays readable as a **dry-run evaluation only**. It never
  reaches a provider: ``--execute`` without a configured goal and an
  allowlisted agent is an error packet (exit 2), so nobody bypasses the
  default-off experiment by supplying a binding directly.

The hard-policy checkpoint comes from ``--authority`` (an authority-map file),
never from the event; without it a hard-policy event is ``guard_blocked``
(``authority_source_missing``). ``--observed-at`` (else the input's
``observed_at``) is the first-observation time: required with ``--execute``, so a
replay deduplicates instead of conflicting; a dry run defaults to now.

Bad input (unreadable file, unknown keys, an unavailable experiment, an
unconfigured surface, a mismatched adapter, an event that is no modelled event:
an unknown field, unsafe text) is an error packet naming the field, exit 2 (the
library's ``ingest`` reports such an event as ``guard_blocked``). An event the
guards refuse, raw content included, is a receipt (``guard_blocked``), exit 0.
No path or scope ref is printed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from reward_memory.cli._common import add_activation_option

if TYPE_CHECKING:
    import argparse

    from reward_memory.authority import AuthorityMap
    from reward_memory.cli._common import Outcome

__all__ = ["configure", "run"]

EVENT_SCHEMAS: Final = frozenset(
    {"issue_fix_reward_memory_event_v0", "scoped_feedback_reward_memory_event_v0"}
)
CONFIGURED_KEYS: Final = frozenset({"adapter", "event", "observed_at"})
FIXTURE_KEYS: Final = frozenset(
    {"adapter", "event", "corpus", "standing_policy", "provider_binding", "observed_at"}
)
STANDING_POLICY_SCHEMA: Final = "reward_memory_standing_policy_v0"
ADAPTERS: Final = ("issue_fix_maintainer_feedback", "scoped_feedback")


def configure(parser: argparse.ArgumentParser) -> None:
    """Add this verb's options."""
    parser.add_argument("--input", required=True, metavar="FILE", help="the event (or packet)")
    parser.add_argument("--goal-id", metavar="G", help="the configured goal (with --agent-id)")
    parser.add_argument("--agent-id", metavar="A", help="the allowlisted agent (with --goal-id)")
    add_activation_option(parser)
    parser.add_argument("--authority", metavar="FILE", help="the authority-map file")
    parser.add_argument("--observed-at", metavar="T", help="first-observation time (UTC)")
    parser.add_argument(
        "--execute", action="store_true", help="write and verify (default: a dry run)"
    )


def _bad(message: str, path: str, code: str = "invalid_value") -> Exception:
    from reward_memory.errors import RecordValidationError

    return RecordValidationError(message, path=path, code=code)


def _under(prefix: str, exc: Any) -> Exception:
    """Re-root a record error's path under ``prefix`` (``$.x`` -> ``$.corpus.x``)."""
    path = exc.path if isinstance(exc.path, str) else "$"
    return _bad(exc.message, prefix + path[1:], exc.code)


def _authority(name: str | None) -> AuthorityMap | None:
    if name is None:
        return None
    from reward_memory.authority import AuthorityMap
    from reward_memory.errors import InputError

    try:
        return AuthorityMap.from_file(name)
    except InputError as exc:
        raise _bad(exc.message, "--authority" if exc.path == "$" else exc.path, exc.code) from None


def _observed(args: argparse.Namespace, data: dict[str, Any]) -> Any:
    value = args.observed_at if args.observed_at is not None else data.get("observed_at")
    if value is None:
        if args.execute:
            raise _bad(
                "--execute needs the first-observation time (--observed-at or observed_at), "
                "so a replay deduplicates",
                "--observed-at",
                "missing_field",
            )
        from reward_memory.grammars import resolve_now

        return resolve_now(None)
    if not isinstance(value, str):
        raise _bad("must be a timestamp string", "$.observed_at", "wrong_type")
    from reward_memory.grammars import parse_timestamp

    try:
        parse_timestamp(value)
    except Exception:  # noqa: BLE001 - any malformed time is bad input
        path = "--observed-at" if args.observed_at is not None else "$.observed_at"
        raise _bad("must be an aware ISO-8601 timestamp", path, "invalid_format") from None
    return value


def _split(data: dict[str, Any], allowed: frozenset[str]) -> None:
    # A root with a schema_version (or without an `event` while holding event fields)
    # is an event whose version this verb does not read: name that, not its first key.
    if "schema_version" in data and "schema_version" not in allowed:
        raise _bad(
            f"schema_version must be one of: {', '.join(sorted(EVENT_SCHEMAS))}",
            "$.schema_version",
            "schema_version_unsupported",
        )
    if "event" not in data and {"content_summary", "surface_id"} & set(data):
        raise _bad(
            "an event names its schema_version (or the input wraps it as `event`)",
            "$.schema_version",
            "schema_version_missing",
        )
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise _bad("ingest input contains an unsupported field", f"$.{unknown[0]}", "unknown_field")
    if not isinstance(data.get("event"), dict):
        raise _bad(
            "event must be an object",
            "$.event",
            "missing_field" if "event" not in data else "wrong_type",
        )


def run(args: argparse.Namespace) -> Outcome:
    """Route, ingest (dry run unless ``--execute``) and print the receipt."""
    from reward_memory.cli._common import read_json_object

    if (args.goal_id is None) != (args.agent_id is None):
        raise _bad("--goal-id and --agent-id must be supplied together", "--goal-id", "usage_error")
    if args.goal_id is None and args.execute:
        raise _bad(
            "--execute requires an enabled experiment route via --goal-id and --agent-id",
            "--execute",
            "usage_error",
        )
    data = read_json_object(args.input)
    authority = _authority(args.authority)
    if args.goal_id is not None:
        return _configured(args, data, authority)
    return _fixture(args, data, authority)


# The option to name when the experiment is unavailable: what the reason is about.
_UNAVAILABLE_OPTION: Final = {
    "agent_not_allowlisted": "--agent-id",
    "activation_missing": "--activation",
    "activation_invalid": "--activation",
}


def _configured(
    args: argparse.Namespace, data: dict[str, Any], authority: AuthorityMap | None
) -> Outcome:
    from reward_memory.author import Experiment
    from reward_memory.errors import RecordValidationError
    from reward_memory.experiment import resolve_experiment

    version = data.get("schema_version")
    if version is not None and not isinstance(version, str):  # a list is unhashable, too
        raise _bad("must be a schema version string", "$.schema_version", "wrong_type")
    wrapped = version not in EVENT_SCHEMAS
    if not wrapped:
        data = {"event": data}  # the compact event itself
    _split(data, CONFIGURED_KEYS)
    event = data["event"]
    observed_at = _observed(args, data)
    try:
        runtime = resolve_experiment(args.activation, goal_id=args.goal_id, agent_id=args.agent_id)
    except RecordValidationError as exc:
        option = {"$.goal_id": "--goal-id", "$.agent_id": "--agent-id"}.get(exc.path, exc.path)
        raise _bad(exc.message, option, exc.code) from None
    if not runtime.available:
        reason = runtime.reason_code
        raise _bad(
            f"the experiment is unavailable for this agent: {runtime.status} ({reason})",
            _UNAVAILABLE_OPTION.get(reason or "", "--goal-id"),
            "experiment_unavailable",
        )
    surface_id = event.get("surface_id")
    if not isinstance(surface_id, str):
        where = "$.event.surface_id" if wrapped else "$.surface_id"
        if surface_id is None:
            raise _bad("the event names no surface", where, "missing_field")
        raise _bad("must be a surface id (a string)", where, "wrong_type")
    adapter = data.get("adapter")
    if adapter is not None and not isinstance(adapter, str):
        raise _bad("must be a string", "$.adapter", "wrong_type")
    try:
        route = runtime.surface(surface_id, adapter=adapter)
    except RecordValidationError as exc:
        where = "$.event.surface_id" if wrapped else "$.surface_id"
        path = {"$.surface_id": where}.get(exc.path, exc.path)
        raise _bad(exc.message, path, exc.code) from None
    from reward_memory.hooks import INGEST_ADAPTERS

    _check_event(INGEST_ADAPTERS[route.adapter], event, wrapped)
    with Experiment(runtime, authority=authority) as memory:
        hook = memory.ingest(event, observed_at=observed_at, execute=args.execute)
    if hook.receipt is None:  # the router refused it before the ingest core ran
        raise _bad("the event could not be routed", "$.event", hook.reason_code or "invalid_value")
    return _outcome(hook.receipt)


# Where the schemas define the fixture's embedded records.
_DEFINITIONS: Final = {
    "corpus": ("reward_memory_corpus_registry_v0", "CorpusDeclaration"),
    "provider_binding": ("reward_memory_recall_input_v0", "ProviderBinding"),
}


def _fixture(
    args: argparse.Namespace, data: dict[str, Any], authority: AuthorityMap | None
) -> Outcome:
    from reward_memory._boundary import strict_record
    from reward_memory.errors import RecordValidationError
    from reward_memory.ingestion import ingest
    from reward_memory.records.corpus import CorpusDeclaration
    from reward_memory.records.recall import ProviderBinding
    from reward_memory.records.standing_policy import StandingPolicy

    _split(data, FIXTURE_KEYS)
    for key in ("adapter", "corpus", "standing_policy", "provider_binding"):
        if key not in data:
            raise _bad("the full-packet input needs this field", f"$.{key}", "missing_field")
    adapter = data["adapter"]
    if adapter not in ADAPTERS:
        raise _bad(
            "adapter is unsupported; semantic routing is intentionally not inferred",
            "$.adapter",
            "invalid_value",
        )
    parts: dict[str, Any] = {}
    for key, cls in (
        ("corpus", CorpusDeclaration),
        ("standing_policy", StandingPolicy),
        ("provider_binding", ProviderBinding),
    ):
        if not isinstance(data[key], dict):
            raise _bad("must be an object", f"$.{key}", "wrong_type")
        try:
            # One strict pass per part (never cattrs, which would coerce 777 to
            # "777"); the standing policy has its own schema, corpus and binding
            # are definitions of the schemas that embed them.
            if cls is StandingPolicy:
                parts[key] = strict_record(cls, data[key], STANDING_POLICY_SCHEMA)
            else:
                schema, definition = _DEFINITIONS[key]
                parts[key] = strict_record(cls, data[key], schema, definition=definition)
        except RecordValidationError as exc:
            raise _under(f"$.{key}", exc) from None
    _check_event(adapter, data["event"], wrapped=True)
    try:
        receipt = ingest(
            data["event"],
            adapter=adapter,
            corpus=parts["corpus"],
            standing_policy=parts["standing_policy"],
            binding=parts["provider_binding"],
            observed_at=_observed(args, data),
            authority=authority,
            execute=False,  # a dry-run evaluation only: no provider is ever built here
        )
    except RecordValidationError as exc:
        # The library names its own argument (binding.scope_ref): the file names the field.
        if isinstance(exc.path, str) and exc.path.startswith("binding."):
            raise _bad(exc.message, "$.provider_" + exc.path, exc.code) from None
        raise
    return _outcome(receipt)


def _check_event(adapter: str, event: Any, wrapped: bool) -> None:
    """An input that is no modelled event (an unknown field, unsafe text) is bad input at
    the CLI (DESIGN §8: an error packet naming the field, exit 2); the library's ingest
    reports it as a ``guard_blocked`` receipt, as it does raw content here too (seeds)."""
    from reward_memory.errors import RecordValidationError
    from reward_memory.ingestion import _ALIASES, _event_proposal, _event_refusal

    try:
        _event_proposal(_ALIASES.get(adapter, adapter), event)
    except RecordValidationError as exc:
        if _event_refusal(exc) == "event_raw_content_refused":
            return  # raw input is the guard's to refuse (seeds): a guard_blocked receipt
        raise _under("$.event", exc) if wrapped else exc from None


def _outcome(receipt: Any) -> Outcome:
    from reward_memory.cli._common import Outcome
    from reward_memory.records._plain import to_plain

    packet = to_plain(receipt)  # what wire.dump gives (tests/test_plain.py), without cattrs
    lines = [
        f"  deduplicated={packet.get('deduplicated')} "
        f"exact_readback={packet.get('exact_readback_verified')} "
        f"provider_calls={packet.get('provider_call_count')}",
    ]
    return Outcome(packet=packet, text_lines=tuple(lines))
