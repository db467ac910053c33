"""``reward-memory operator-control --input FILE --action edit|retire|revoke|purge [--execute]``.

``FILE`` is a ``reward_memory_operator_control_request_v0`` (its ``action``,
``control_ref``, ``reasoning_summary`` and ``edited_content_summary`` may be
left out: ``--action``, ``--control-ref``, ``--reasoning-summary`` and
``--edited-content-summary`` supply them, and must agree when both are given),
or the original's ``{reviewed_record, corpus, operator_checkpoint}`` (reference
§15.2; a dry run only, with ``--control-ref`` and ``--reasoning-summary``). An
executed retire / revoke / purge also needs ``--provider URL`` and ``--binding
FILE`` (one ``ProviderBinding`` object: where the corpus lives; checked against
the corpus declaration as recall checks it, so a binding for another scope is
``guard_blocked``). A dry run (the default) makes zero provider calls and
prints ``control_ready``; an edit never writes (its replacement candidate goes
to review; given ``--provider`` and ``--binding`` it reads the record first, and
one already purged, revoked or retired is a ``lineage_conflict``). Prints the
``reward_memory_operator_control_v0`` packet: a refused
checkpoint is ``guard_blocked`` with reason codes (exit 0); a provider that fails
is a status (exit 0, retry with the same input); bad input is an error packet
(exit 2). No path or scope ref is printed.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    import argparse

    from reward_memory.cli._common import Outcome

__all__ = ["configure", "run"]

ACTIONS: Final = ("edit", "retire", "revoke", "purge")
REQUEST_SCHEMA: Final = "reward_memory_operator_control_request_v0"


def configure(parser: argparse.ArgumentParser) -> None:
    """Add this verb's options."""
    parser.add_argument("--input", required=True, metavar="FILE", help="the control request")
    parser.add_argument("--action", required=True, choices=ACTIONS, help="the control")
    parser.add_argument(
        "--execute", action="store_true", help="write and read back (default: a dry run)"
    )
    parser.add_argument("--provider", metavar="URL", help="provider URL (required to execute)")
    parser.add_argument(
        "--binding", metavar="FILE", help="the corpus's provider binding (required to execute)"
    )
    parser.add_argument("--control-ref", metavar="REF", help="the control's ref")
    parser.add_argument("--reasoning-summary", metavar="TEXT", help="why (compact)")
    parser.add_argument("--edited-content-summary", metavar="TEXT", help="an edit's new summary")


def _bad(message: str, path: str, code: str = "invalid_value") -> Exception:
    from reward_memory.errors import RecordValidationError

    return RecordValidationError(message, path=path, code=code)


_FLAGS: Final = (
    ("control_ref", "control_ref"),
    ("reasoning_summary", "reasoning_summary"),
    ("edited_content_summary", "edited_content_summary"),
)
_ORIGINAL_KEYS: Final = frozenset({"reviewed_record", "corpus", "operator_checkpoint"})


def _original_form(args: argparse.Namespace, data: dict[str, Any]) -> Any:
    """The original's ``{reviewed_record, corpus, operator_checkpoint}`` (reference §15.2).

    A dry run only, as the original was: the reviewed record is an accepted
    review, not the stored record, so its active record is rebuilt here just to
    name it (``record_ref`` is the corpus and the candidate); no provider is
    written from it. ``--control-ref`` and ``--reasoning-summary`` are required.
    """
    from reward_memory._boundary import strict_packet, strict_record
    from reward_memory.activation import activate
    from reward_memory.records.candidate import AuthorityCheckpoint
    from reward_memory.records.corpus import CorpusDeclaration
    from reward_memory.records.operator import OperatorCheckpoint, OperatorControlRequest
    from reward_memory.records.review import CandidateReview

    unknown = sorted(set(data) - _ORIGINAL_KEYS)
    if unknown:
        raise _bad("unknown field", f"$.{unknown[0]}", "unknown_field")
    for key in sorted(_ORIGINAL_KEYS):
        if not isinstance(data.get(key), dict):
            raise _bad(
                "must be an object",
                f"$.{key}",
                "missing_field" if key not in data else "wrong_type",
            )
    if args.execute:
        raise _bad(
            "the reviewed-record input is a dry run; execute a "
            f"{REQUEST_SCHEMA} (it names the stored record)",
            "--execute",
            "usage_error",
        )
    for flag in ("control_ref", "reasoning_summary"):
        if getattr(args, flag) is None:
            raise _bad(
                "the reviewed-record input needs this flag",
                f"--{flag.replace('_', '-')}",
                "missing_field",
            )
    review = _under(
        "$.reviewed_record", lambda: strict_packet(data["reviewed_record"], CandidateReview)
    )

    def corpus() -> Any:
        return strict_record(
            CorpusDeclaration,
            data["corpus"],
            "reward_memory_corpus_registry_v0",
            definition="CorpusDeclaration",
        )

    declared = _under("$.corpus", corpus)
    raw = {"schema_version": "reward_memory_operator_checkpoint_v0", **data["operator_checkpoint"]}
    operator = _under("$.operator_checkpoint", lambda: strict_packet(raw, OperatorCheckpoint))
    candidate = review.record
    # Only to rebuild the record's identity for this dry run: never written, never recalled.
    naming = AuthorityCheckpoint(
        verified=True,
        source_ref=operator.source_ref,
        actor_ref=candidate.source.actor_ref,
        actor_role=candidate.source.actor_role,
        project_ref=candidate.scope.project_ref,
        action_scopes=candidate.requested_action_scopes,
    )
    record = _under("$.reviewed_record", lambda: activate(review, declared, checkpoint=naming))
    return OperatorControlRequest(
        control_ref=args.control_ref,
        action=args.action,
        record=record,
        corpus=declared,
        operator_checkpoint=operator,
        reasoning_summary=args.reasoning_summary,
        edited_content_summary=args.edited_content_summary,
        accepted_review=review if args.action == "edit" else None,
    )


def _under(prefix: str, build: Any) -> Any:
    from reward_memory.errors import RecordValidationError

    try:
        return build()
    except RecordValidationError as exc:
        path = exc.path if isinstance(exc.path, str) and exc.path.startswith("$") else "$"
        raise _bad(exc.message, prefix + path[1:], exc.code) from None


def run(args: argparse.Namespace) -> Outcome:
    """Validate the request, run the control, print the packet."""
    from reward_memory._boundary import strict_packet
    from reward_memory.cli._common import Outcome, read_json_object
    from reward_memory.operator import operator_control
    from reward_memory.records._plain import to_plain
    from reward_memory.records.operator import OperatorControlRequest

    data = read_json_object(args.input)
    if "schema_version" not in data and "reviewed_record" in data:
        request = _original_form(args, data)
    else:
        if data.setdefault("action", args.action) != args.action:
            raise _bad("the request's action is not --action", "$.action", "action_mismatch")
        for flag, key in _FLAGS:
            value = getattr(args, flag)
            if value is not None and data.setdefault(key, value) != value:
                raise _bad(f"the request's {key} is not --{flag.replace('_', '-')}", f"$.{key}")
        if "schema_version" not in data:
            raise _bad("schema_version is missing", "$.schema_version", "schema_version_missing")
        if data["schema_version"] != REQUEST_SCHEMA:
            raise _bad(
                f"expected a {REQUEST_SCHEMA} object",
                "$.schema_version",
                "schema_version_unsupported",
            )
        # One strict pass; the schema runs only to name an error (reward_memory._boundary).
        request = strict_packet(data, OperatorControlRequest)
    provider, binding = _store(args)
    try:
        control = operator_control(
            request,
            provider=provider,  # an unreachable stand-in fails open
            binding=binding,
            execute=args.execute,
        )
    finally:
        if provider is not None:
            with contextlib.suppress(Exception):
                provider.close()
    packet = to_plain(control)
    if args.format != "text":  # json, and the original's markdown view (reference 15.1)
        return Outcome(packet=packet)
    # The shared summary would print the whole replacement review ("decision"): say less.
    from reward_memory.cli._common import write_text

    receipt = control.receipt
    lines = [
        control.schema_version,
        f"  status: {control.status}",
        f"  action: {control.action}",
        f"  reason_codes: {', '.join(control.reason_codes) or '-'}",
        f"  result_state: {receipt.result_state if receipt else '-'}",
        f"  next_step: {receipt.next_step if receipt else '-'}",
        f"  provider_call_count: {control.provider_call_count}",
    ]
    if control.decision is not None:
        lines.append(f"  replacement_candidate: {control.decision.record.candidate_ref}")
    write_text("\n".join(lines) + "\n")
    return Outcome(packet=packet, printed=True)


def _store(args: argparse.Namespace) -> tuple[Any, Any]:
    """(the provider, its binding) the control uses: both to execute a write; both, for
    reads only, for an edit; else none (a flag given and not used is refused)."""
    writes = args.execute and args.action != "edit"
    if writes and (args.binding is None or args.provider is None):
        raise _bad(
            "--execute needs --provider and --binding",
            "--provider" if args.provider is None else "--binding",
            "missing_field",
        )
    binding = None
    if args.binding is not None:
        from reward_memory.cli._explain import read_bindings

        found = read_bindings(args.binding)
        if len(found) != 1:
            raise _bad("--binding holds one provider binding", "--binding", "invalid_value")
        binding = found[0]
    provider = None
    # An edit given the store looks at the record first (reads only): one already
    # purged, revoked or retired gets no replacement (the library's rule).
    looks = args.action == "edit" and args.provider is not None and binding is not None
    if not (writes or looks):
        for option, given in (("--provider", args.provider), ("--binding", args.binding)):
            if given is not None:  # it would be taken and ignored: a dry run reads nothing
                raise _bad(
                    f"{option} is used only with --execute (or by an edit given both)",
                    option,
                    "invalid_value",
                )
    if writes or looks:
        from reward_memory.cli._recall import _open

        provider = _open(args.provider)
    return provider, binding
