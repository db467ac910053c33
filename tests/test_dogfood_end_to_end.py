"""Dogfood over real recalls and real applications, on both built-in providers.

Seeds: "Stage 5 adds one thin evidence layer over the Stage 3 application
receipt" and "must use a corpus-owner-approved record, exact provider readback,
and real module outcomes". Here the application receipts are not built by hand:
active records are written to a real provider (in memory, and a real SQLite
file), recalled through the guarded seam and applied by a model callback; the
dogfood receipts are derived from what that produced.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

import pytest

from _recall_support import (
    NOW,
    OTHER_SURFACE,
    PROJECT,
    SURFACE,
    WORKSPACE,
    active_record,
    binding,
    checkpoint,
    content_of,
    corpus,
    request,
    store,
)
from reward_memory.application import apply
from reward_memory.dogfood import build_batch, build_receipt
from reward_memory.guarded_recall import recall
from reward_memory.records._plain import to_plain
from reward_memory.records.corpus import CorpusScope
from reward_memory.records.dogfood import READY
from test_dogfood_batch import control, evaluation

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from reward_memory.providers.spi import Provider
    from reward_memory.records.application import ApplicationReceipt

ISSUE_FIX = "issue_fix.patch_planning"
BASE = {"candidates": ["broad_generic_patch", "focused_fix"]}


@pytest.fixture(params=["memory", "sqlite"])
def provider(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Provider]:
    from test_recall import open_provider

    opened = open_provider(request.param, tmp_path)
    try:
        yield opened
    finally:
        opened.close()


def _corpus() -> Any:
    return corpus(
        scope=CorpusScope(
            workspace_ref=WORKSPACE,
            project_ref=PROJECT,
            surface_ids=(SURFACE, OTHER_SURFACE, ISSUE_FIX),
        )
    )


def _decide(outcome: str | None) -> Any:
    def model(base: Any, items: Any) -> Any:
        if outcome is None:
            raise RuntimeError("the model crashed")
        output = (
            {"candidates": list(reversed(base["candidates"]))} if outcome == "applied" else base
        )
        return {
            "outcome": outcome,
            "output": output,
            "memory_refs": [items[0].memory_ref] if outcome != "ignored" else [],
            "reasoning_summary": f"the model {outcome} the recalled preference",
            "current_artifact_verified": True,
        }

    return model


def _applied(
    provider: Provider, surface: str, outcome: str | None, n: int
) -> tuple[ApplicationReceipt, list[str]]:
    session = recall(
        request(surface_id=surface),
        corpus=_corpus(),
        checkpoint=checkpoint(surface_id=surface),
        binding=binding(),
        provider=provider,
        now=NOW,
    )
    raw_refs = [item.memory_ref for item in session.items]
    result = apply(
        BASE,
        session,
        application_id=f"application:{surface}:{n}",
        artifact_ref=f"artifact:pr-{n}",
        apply_memory=_decide(outcome),
    )
    return result.receipt, raw_refs


def _observation(receipt: ApplicationReceipt, family: str, domain: str) -> dict[str, Any]:
    return {
        "raw_content_captured": False,
        "domain_family": family,
        "domain_id": domain,
        "application_receipt": to_plain(receipt),
        "module_outcome": {
            "artifact_ref": receipt.artifact_ref,
            "outcome_verified": True,
            "outcome_ref": f"outcome:{receipt.application_id}",
            "outcome_status": "merged",
            "summary": "The module's change was checked against the current artifact.",
        },
        "cost": {
            "latency_ms": 12,
            "model_tokens": 900,
            "provider_call_count": receipt.provider_call_count,
        },
        "intervention": {"count": 0, "summary": None},
    }


def test_real_applications_settle_into_a_ready_batch(provider: Provider) -> None:
    records = [
        active_record(0, surfaces=(ISSUE_FIX,)),
        active_record(1, surfaces=(SURFACE,)),
        active_record(2, surfaces=(OTHER_SURFACE,)),
    ]
    for record in records:
        store(provider, record)
    applied, applied_refs = _applied(provider, ISSUE_FIX, "applied", 0)
    ignored, _ = _applied(provider, SURFACE, "ignored", 1)
    refuted, refuted_refs = _applied(provider, OTHER_SURFACE, "refuted", 2)
    receipts = [
        build_receipt(_observation(applied, "issue_fix", "issue_fix.patch_planning")),
        build_receipt(_observation(ignored, "loopx", "loopx.reviewer_artifact")),
        build_receipt(_observation(refuted, "loopx", "loopx.reviewer_notification")),
    ]
    assert [r.application_disposition for r in receipts] == ["applied", "not_applied", "refuted"]
    assert receipts[0].memory_ref_digests == (
        hashlib.sha256(applied_refs[0].encode()).hexdigest()[:16],
    )
    assert receipts[2].memory_ref_digests == (
        hashlib.sha256(refuted_refs[0].encode()).hexdigest()[:16],
    )
    batch = build_batch(receipts, [control("edit"), control("retire")], evaluation())
    assert (batch.status, batch.reason_codes) == (READY, ())
    text = json.dumps(to_plain(batch))
    for record in records:
        assert record.content_summary not in text  # no raw provider content
        assert content_of(record) not in text
    for ref in (*applied_refs, *refuted_refs):
        assert ref not in text  # raw provider refs never: only their digests


def test_a_failed_model_and_an_empty_recall_are_misses(provider: Provider) -> None:
    store(provider, active_record(0, surfaces=(SURFACE,)))
    failed, _ = _applied(provider, SURFACE, None, 0)
    empty, _ = _applied(provider, ISSUE_FIX, "applied", 1)  # nothing stored there
    assert (failed.outcome, empty.outcome) == ("failed", "not_available")
    for receipt, family, domain in (
        (failed, "loopx", "loopx.reviewer_artifact"),
        (empty, "issue_fix", "issue_fix.patch_planning"),
    ):
        dogfood = build_receipt(_observation(receipt, family, domain))
        assert dogfood.application_disposition == "not_applied"
        assert dogfood.memory_ref_digests == ()
