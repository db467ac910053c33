"""The ingest receipt's adapter-wrapper fields (reference §9.5) and execution evidence (§11.1).

Which event (its schema, its ref), a digest of its compact summary (never the text),
what the verification recall proves, and the next call: derived by ingest, checked by
the receipt record, published by the schema.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest

from _ingest_support import ingest_hard, ingest_soft, soft_event_data
from reward_memory import schemas, wire
from reward_memory.errors import RecordValidationError
from reward_memory.records.execution_evidence import evidence_of
from reward_memory.testing import InMemoryProvider

SCOPED_ADAPTER = "scoped_feedback_reward_memory_candidate_adapter_v0"


def _loaded(receipt: Any) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(json.dumps(wire.dump(receipt)))
    assert schemas.validate(data) == "reward_memory_ingest_receipt_v0"
    assert wire.load(data) == receipt
    return data


def test_an_issue_fix_receipt_names_its_event_and_next_call() -> None:
    data = _loaded(ingest_hard(provider=InMemoryProvider(), execute=True))
    assert data["status"] == "activated"
    assert data["adapter_schema_version"] == "issue_fix_reward_memory_event_v0"
    assert data["next_issue_fix_call"] == "run_issue_fix_patch_planning_reward_memory"
    assert data["issue_ref"] == "github:example/repository#42"
    for other in ("event_schema_version", "feedback_ref", "next_reward_memory_call"):
        assert data[other] is None


def test_a_scoped_feedback_receipt_names_its_event_and_next_call() -> None:
    data = _loaded(ingest_soft(provider=InMemoryProvider(), execute=True))
    assert data["adapter_schema_version"] == "scoped_feedback_reward_memory_candidate_adapter_v0"
    assert data["event_schema_version"] == "scoped_feedback_reward_memory_event_v0"
    assert data["next_reward_memory_call"] == "explicit_function_boundary_recall"
    assert data["feedback_ref"] == "feedback:review:7"
    assert data["issue_ref"] is None
    assert data["next_issue_fix_call"] is None


@pytest.mark.parametrize("spaced", [False, True])
def test_the_summary_digest_is_of_the_compact_summary_never_the_text(spaced: bool) -> None:
    summary = "Lead the review summary with the risk."
    given = "  Lead the review   summary\nwith the risk. " if spaced else summary
    data = _loaded(ingest_soft(soft_event_data(given), provider=InMemoryProvider()))
    assert data["event_summary_digest"] == hashlib.sha256(summary.encode()).hexdigest()[:16]
    assert summary not in json.dumps(data)


def test_a_refused_event_has_no_summary_digest() -> None:
    data = _loaded(ingest_soft(soft_event_data(comment_body="raw"), provider=InMemoryProvider()))
    assert data["status"] == "guard_blocked"
    assert data["event_summary_digest"] is None
    assert data["adapter_schema_version"] == "scoped_feedback_reward_memory_candidate_adapter_v0"


def test_the_evidence_follows_the_verification_recall() -> None:
    verified = _loaded(ingest_soft(provider=InMemoryProvider(), execute=True))
    evidence = verified["execution_evidence"]
    assert evidence["verified_result"] == "ingest_exact_readback_verified"
    assert evidence["unknowns"] == []
    minimum = evidence["minimum_evidence"]
    assert minimum["query_kind"] == "ingest_verification"
    assert minimum["provider_call_count"] == verified["readback"]["provider_call_count"]
    assert minimum["query_evidence"] == verified["readback"]["query_evidence"]

    planned = _loaded(ingest_soft(provider=InMemoryProvider(), execute=False))["execution_evidence"]
    assert planned["verified_result"] == "ingest_provider_not_called"
    assert planned["unknowns"] == [
        "provider_result_unknown",
        "query_evidence_unknown",
        "exact_recall_readback_unknown",
    ]

    lagging = InMemoryProvider()
    with lagging.set_faults(search_misses=True):
        pending = _loaded(ingest_soft(provider=lagging, execute=True))
    assert pending["status"] == "committed_pending"
    assert pending["execution_evidence"]["verified_result"] == (
        "ingest_provider_called_without_verified_readback"
    )
    assert pending["execution_evidence"]["unknowns"] == ["exact_recall_readback_unknown"]


@pytest.mark.parametrize(
    ("edit", "path"),
    [
        (lambda d: d.update(next_reward_memory_call="explicit_function_boundary_recall"),
         "$.next_reward_memory_call"),
        (lambda d: d.update(adapter_schema_version=SCOPED_ADAPTER), "$.adapter_schema_version"),
        (lambda d: d.update(feedback_ref="feedback:1"), "$.feedback_ref"),
        (lambda d: d["execution_evidence"].update(verified_result="ingest_provider_not_called"),
         "$.execution_evidence.verified_result"),
        (lambda d: d["execution_evidence"].update(unknowns=["provider_result_unknown"]),
         "$.execution_evidence.unknowns"),
    ],
)  # fmt: skip
def test_a_receipt_whose_wrapper_fields_disagree_is_refused(edit: Any, path: str) -> None:
    data = _loaded(ingest_hard(provider=InMemoryProvider(), execute=True))
    edit(data)
    with pytest.raises(RecordValidationError) as caught:
        wire.load(data)
    assert caught.value.path == path


def test_a_receipt_written_before_the_wrapper_fields_still_reads() -> None:
    data = _loaded(ingest_soft(provider=InMemoryProvider()))
    for name in (
        "adapter_schema_version", "event_schema_version", "issue_ref", "feedback_ref",
        "event_summary_digest", "execution_evidence", "next_issue_fix_call",
        "next_reward_memory_call",
    ):  # fmt: skip
        del data[name]
    assert schemas.validate(data) == "reward_memory_ingest_receipt_v0"
    assert wire.load(data).adapter_schema_version is None


def test_evidence_of_no_recall_is_the_not_called_verdict() -> None:
    assert evidence_of(None).verified_result == "ingest_provider_not_called"


def test_evidence_that_is_not_the_readbacks_is_refused() -> None:
    """The evidence is computed from the receipt's own readback: a dry run carrying an
    activated run's evidence (or the reverse) does not load."""
    activated = _loaded(ingest_soft(provider=InMemoryProvider(), execute=True))
    planned = _loaded(ingest_soft(provider=InMemoryProvider(), execute=False))
    for target, source in ((planned, activated), (activated, planned)):
        forged = json.loads(json.dumps(target))
        forged["execution_evidence"] = source["execution_evidence"]
        with pytest.raises(RecordValidationError) as caught:
            wire.load(forged)
        assert caught.value.path == "$.execution_evidence"


def test_the_schema_refuses_the_other_adapters_wrapper_fields() -> None:
    """The published schema agrees with the record (_check_wrapper)."""
    issue_fix = _loaded(ingest_hard(provider=InMemoryProvider(), execute=True))
    scoped = _loaded(ingest_soft(provider=InMemoryProvider(), execute=True))
    for data, name, value in (
        (issue_fix, "feedback_ref", "feedback:1"),
        (issue_fix, "next_reward_memory_call", "explicit_function_boundary_recall"),
        (scoped, "issue_ref", "github:example/repository#42"),
        (scoped, "next_issue_fix_call", "run_issue_fix_patch_planning_reward_memory"),
    ):
        forged = {**data, name: value}
        with pytest.raises(RecordValidationError) as caught:
            schemas.validate(forged)
        assert caught.value.path == f"$.{name}"


def test_a_failed_write_names_what_the_provider_said() -> None:
    """As a recall attempt does: a timeout is provider_timeout beside the failed step (the
    receipt said only provider_write_failed)."""
    provider = InMemoryProvider()
    with provider.set_faults(times_out=True):
        data = _loaded(ingest_soft(provider=provider, execute=True))
    assert data["status"] == "provider_unavailable"
    assert "provider_timeout" in data["reason_codes"]
    assert data["reason_codes"] == sorted(data["reason_codes"])
