"""``reward-memory candidate-review``: propose a candidate and review it (fixture or --input).

``--case issue-fix-verified-contributor`` (the default) builds the reference
§5.3 fixture through the Issue Fix adapter and reviews it as reviewer
``github:user:maintainer`` with ``review_ref review:fixture:<decision>``
(``--decision``, default ``accept``). ``retire`` first accepts
(``review:fixture:accept-before-retire``), then retires. It prints the review
packet (the original also embedded the adapter packet under ``adapter``; ours
prints a schema-valid packet only and names the adapter in the text view).

``--input FILE`` reads a ``reward_memory_candidate_review_request_v0`` document
(a proposal, the caller's authority checkpoint, the reviews to apply in order,
optionally ``now``) and prints the last ``reward_memory_candidate_review_v0``
packet. The reviews come from the file, so ``--decision`` is refused with it.
With ``--authority FILE`` (an authority map, as ``ingest-event`` takes) the
checkpoint is what that map vouches for the proposal's actor, role, project and
action scopes -- never one the request file writes itself, which is then refused.

Nothing is persisted or written. A guard-blocked candidate is an answer
(exit 0), not an error; bad input prints an error packet and exits 2.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from reward_memory.cli._common import Outcome
from reward_memory.errors import RecordValidationError

if TYPE_CHECKING:
    import argparse

    from reward_memory.records.review import CandidateReview

CASES: Final = ("issue-fix-verified-contributor",)
DECISIONS: Final = ("accept", "edit", "reject", "retire", "no_write")
FIXTURE_REVIEWER: Final = "github:user:maintainer"
FIXTURE_REASONING: Final = "The compact evidence and scope were reviewed."
FIXTURE_EDIT: Final = (
    "Keep focused fixes within the affected module unless current evidence requires a broader "
    "surface."
)


def configure(parser: argparse.ArgumentParser) -> None:
    """``--case`` or ``--input``, and ``--decision`` for the fixture."""
    source = parser.add_mutually_exclusive_group()
    source.add_argument(
        "--case", choices=CASES, help="a built-in fixture (default: issue-fix-verified-contributor)"
    )
    source.add_argument(
        "--input",
        metavar="FILE",
        help="a reward_memory_candidate_review_request_v0 JSON document (- for stdin)",
    )
    parser.add_argument(
        "--decision", choices=DECISIONS, help="the fixture's review decision (default: accept)"
    )
    parser.add_argument(
        "--authority",
        metavar="FILE",
        help="an authority-map file: the checkpoint comes from it, not from the --input "
        "file (which must then carry none)",
    )


def run(args: argparse.Namespace) -> Outcome:
    """Run the fixture or the request file; print the resulting review packet."""
    if args.input is not None:
        if args.decision is not None:
            raise RecordValidationError(
                "--decision applies to --case; an --input request names its own reviews",
                path="--decision",
                code="invalid_argument",
            )
        return _run_request(args.input, args.authority)
    if args.authority is not None:
        raise RecordValidationError(
            "--authority applies to --input (the fixture names its own checkpoint)",
            path="--authority",
            code="invalid_argument",
        )
    return _run_fixture(args.decision or "accept")


def _run_fixture(decision: str) -> Outcome:
    from reward_memory.adapters.issue_fix import verified_contributor_candidate
    from reward_memory.candidates import review
    from reward_memory.records._plain import to_plain
    from reward_memory.records.candidate import ReviewDecision

    adapter = verified_contributor_candidate()
    target: Any = adapter.shared_candidate
    if decision == "retire":
        target = review(target, _fixture_decision("accept", "review:fixture:accept-before-retire"))
    edited = FIXTURE_EDIT if decision == "edit" else None
    result = review(
        target,
        ReviewDecision(
            decision=decision,  # type: ignore[arg-type]
            reviewer_ref=FIXTURE_REVIEWER,
            review_ref=f"review:fixture:{decision}",
            reasoning_summary=FIXTURE_REASONING,
            edited_content_summary=edited,
        ),
    )
    # The JSON view is the review packet alone, so `schema validate` accepts it;
    # the adapter's provenance (issue and surface) shows in the text view.
    lines = (*_lines(result), f"  adapter: {adapter.schema_version} ({adapter.surface_id})")
    return Outcome(packet=to_plain(result), text_lines=lines)


def _fixture_decision(decision: str, review_ref: str) -> Any:
    from reward_memory.records.candidate import ReviewDecision

    return ReviewDecision(
        decision=decision,  # type: ignore[arg-type]
        reviewer_ref=FIXTURE_REVIEWER,
        review_ref=review_ref,
        reasoning_summary=FIXTURE_REASONING,
    )


def _run_request(name: str, authority_file: str | None) -> Outcome:
    from reward_memory._boundary import strict_packet
    from reward_memory.candidates import propose, review
    from reward_memory.cli._common import read_json_object
    from reward_memory.grammars import parse_timestamp, resolve_now
    from reward_memory.records._plain import to_plain
    from reward_memory.records.review import CandidateReviewRequest

    request = strict_packet(read_json_object(name), CandidateReviewRequest)
    now = None if request.now is None else parse_timestamp(request.now, "$.now")
    checkpoint = request.authority_checkpoint
    if authority_file is not None:
        # Authority from the caller's authority source, never from the request file.
        if checkpoint is not None:
            raise RecordValidationError(
                "with --authority the checkpoint comes from the authority map: remove it here",
                path="$.authority_checkpoint",
                code="invalid_argument",
            )
        checkpoint = _checkpoint_from(authority_file, request.proposal, resolve_now(now))
    target: Any = propose(request.proposal, checkpoint, now=now)
    for index, decision in enumerate(request.reviews):
        try:
            target = review(target, decision, checkpoint=checkpoint, now=now)
        except RecordValidationError as exc:
            # The precondition belongs to the index-th review of the request.
            raise RecordValidationError(
                exc.message, path=f"$.reviews[{index}].decision", code=exc.code
            ) from None
    return Outcome(packet=to_plain(target), text_lines=_lines(target))


def _checkpoint_from(authority_file: str, proposal: Any, now: Any) -> Any:
    """What the authority map vouches for the proposal's claim (``None``: nothing)."""
    from reward_memory.authority import AuthorityMap
    from reward_memory.errors import InputError
    from reward_memory.ingestion import _ask_authority

    try:
        source = AuthorityMap.from_file(authority_file)
    except InputError as exc:
        raise RecordValidationError(
            exc.message, path="--authority" if exc.path == "$" else exc.path, code=exc.code
        ) from None
    return _ask_authority(source, proposal, now)


def _lines(result: CandidateReview) -> tuple[str, ...]:
    return (
        f"  candidate_ref: {result.record.candidate_ref}",
        f"  guard_passed: {str(result.guard_passed).lower()}",
        f"  persistence_next_step: {result.persistence_next_step}",
    )
