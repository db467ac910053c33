"""The ingest loop's verification recall request (issue 8: "one exact-corpus, exact-surface
function-boundary recall returns it").

The request is built per call from a template validated once per corpus and
scope, plus this call's query (two bare hex digests) and clock. It must be
exactly the request the validating constructors build -- so the recall it runs
is a real recall of that corpus and surface, guarded like any other.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from types import SimpleNamespace
from typing import Any

import attrs
from hypothesis import given, settings
from hypothesis import strategies as st

from _ingest_support import NOW, hard_corpus, hard_policy, ingest_hard, soft_corpus
from reward_memory import _ingest_provider as steps
from reward_memory.grammars import normalize_timestamp
from reward_memory.guarded_recall import build_recall_request
from reward_memory.records.envelope import RecordScope
from reward_memory.records.recall import ReadAuthorityCheckpoint, RecallRequest

_HEX = st.text(alphabet="0123456789abcdef", min_size=20, max_size=20)
_OPTIONAL = st.sampled_from([None, "user:one", "peer:two:3"])
_SCOPES = st.builds(
    RecordScope,
    workspace_ref=st.sampled_from(["workspace:example", "workspace:other"]),
    project_ref=st.sampled_from(["repository:example", "repository:other"]),
    surface_ids=st.sampled_from(
        [("issue_fix.patch_planning",), ("a.b", "issue_fix.patch_planning")]
    ),
    revision_ref=st.sampled_from([None, "revision:abc123"]),
    user_ref=_OPTIONAL,
    peer_ref=_OPTIONAL,
    session_ref=_OPTIONAL,
)
_MOMENTS = st.datetimes(
    min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)
)


def _record(scope: RecordScope, candidate: str, activation: str) -> Any:
    return SimpleNamespace(
        scope=scope,
        candidate_ref=f"candidate:{candidate}",
        activation_ref=f"activation:{activation}",
    )


@settings(max_examples=300, deadline=None)
@given(
    scope=_SCOPES,
    candidate=_HEX,
    activation=_HEX,
    moment=_MOMENTS,
    soft=st.booleans(),
    source_ref=st.sampled_from([None, "repository:authority-map"]),
)
def test_the_verification_request_is_the_validated_request(
    scope: RecordScope,
    candidate: str,
    activation: str,
    moment: datetime,
    soft: bool,
    source_ref: str | None,
) -> None:
    corpus = soft_corpus() if soft else hard_corpus()
    checkpoint, request = steps.verification_request(
        corpus, source_ref, _record(scope, candidate, activation), moment
    )
    validated = steps.validated_request(
        scope,
        corpus.freshness.source_revision,
        query=f"{candidate} {activation}",
        observed_at=normalize_timestamp(moment.isoformat()),
    )
    assert type(request) is RecallRequest
    assert request == validated
    assert request.normalized == validated.normalized
    assert request.query_evidence == validated.query_evidence
    # Rebuilt through the public constructor: every field passes its validators.
    assert attrs.evolve(request) == request
    assert checkpoint == ReadAuthorityCheckpoint(
        verified=True,
        corpus_id=corpus.corpus_id,
        workspace_ref=scope.workspace_ref,
        project_ref=scope.project_ref,
        surface_id=scope.surface_ids[0],
        read_authority=corpus.read_authority,
        source_ref=source_ref,
        user_ref=scope.user_ref,
        peer_ref=scope.peer_ref,
        session_ref=scope.session_ref,
    )


def test_the_verification_recall_is_an_exact_function_boundary_recall() -> None:
    """Mode function_boundary, one query, the corpus's own surface; guarded as any recall."""
    corpus = hard_corpus()
    scope = RecordScope(
        workspace_ref=corpus.scope.workspace_ref,
        project_ref=corpus.scope.project_ref,
        surface_ids=corpus.scope.surface_ids,
        revision_ref="revision:abc123",
    )
    policy = hard_policy()
    record = _record(scope, "1" * 20, "2" * 20)
    checkpoint, request = steps.verification_request(
        corpus, policy.authority_source_ref, record, NOW
    )
    assert request.mode == "function_boundary"
    assert request.query_kind == "ingest_verification"
    assert request.surface_id == corpus.scope.surface_ids[0]
    assert [q.query for q in request.queries] == [f"{'1' * 20} {'2' * 20}"]
    assert build_recall_request(request, corpus=corpus, checkpoint=checkpoint).status == "ready"
    # Another clock, another record: the same template, this call's values.
    later = NOW + timedelta(seconds=5)
    _, again = steps.verification_request(
        corpus, policy.authority_source_ref, _record(scope, "3" * 20, "4" * 20), later
    )
    assert again.observed_at == normalize_timestamp(later.isoformat())
    assert again.queries[0].query == f"{'3' * 20} {'4' * 20}"
    assert again.queries != request.queries


@settings(max_examples=300, deadline=None)
@given(
    moment=st.datetimes(
        min_value=datetime(1900, 1, 1), max_value=datetime(2200, 1, 1), timezones=st.timezones()
    )
)
def test_the_verification_clock_is_stored_as_every_timestamp_is(moment: datetime) -> None:
    """The request's observed_at is the clock's stored spelling (format_utc): what
    normalize_timestamp gives for its ISO text, wherever that text is a timestamp."""
    from reward_memory.errors import RecordValidationError
    from reward_memory.grammars import format_utc, parse_timestamp

    scope = RecordScope(
        workspace_ref="workspace:example",
        project_ref="repository:example",
        surface_ids=("issue_fix.patch_planning",),
    )
    _, request = steps.verification_request(
        hard_corpus(), None, _record(scope, "1" * 20, "2" * 20), moment
    )
    assert request.observed_at == format_utc(moment)
    assert parse_timestamp(request.observed_at) == moment.astimezone(UTC)
    try:
        expected = normalize_timestamp(moment.isoformat())
    except RecordValidationError:
        return  # an offset with seconds has no ISO timestamp spelling: format_utc still has one
    assert request.observed_at == expected


def test_a_clock_whose_offset_has_seconds_still_verifies_what_it_wrote() -> None:
    """Provider failures fail open and only programmer errors raise: an aware clock is
    no error, whatever its offset. (Its ISO text, ``+05:53:28``, is no timestamp
    spelling: the verification request once re-parsed it and raised after the write.)"""
    from reward_memory.testing.memory import InMemoryProvider

    provider = InMemoryProvider()
    odd = NOW.astimezone(timezone(timedelta(hours=5, minutes=53, seconds=28)))
    receipt = ingest_hard(provider=provider, now=odd)
    assert receipt.status == "activated"
    assert receipt.readback is not None
    assert receipt.readback.result_readback_verified is True
    assert attrs.evolve(receipt) == receipt  # rebuilt through the validating constructor
