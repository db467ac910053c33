"""Operator controls, explain and the Stage-4 gate against the real OpenViking server.

Issue 10 item 3 (end to end): "revoke stops recall; purge leaves nothing readable or
findable; ``explain``, ``health-check`` and ``evaluate --provider`` work against it."
Issue 9 item 4: revoke and purge act "on every provider", through SPI operations only.
Each test takes a fresh account, so nothing is shared with another test.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _server import LocalOpenViking, Tenant
from tests._operator_support import (
    NOW,
    binding,
    ingest_soft,
    recall_soft,
    request,
    stored_record,
)

from reward_memory.evaluation import evaluate
from reward_memory.lineage import explain
from reward_memory.operator import operator_control
from reward_memory_openviking import OpenVikingProvider

SUMMARY = "Lead the review summary with the risk."
SCRIPT = Path(sys.executable).with_name("reward-memory")
# The evaluation's query is one short sentence against whole JSON records; with the
# test stub's hashed-feature embeddings their scores sit right at the provider's
# default relevance cut (0.55), so the gate runs with the cut at "unrelated" (0.5).
EVAL_URL = "openviking://{host}?api_key_env=RM_TEST_OV_EVAL_KEY&score_threshold=0.5"
MakeProvider = Callable[..., OpenVikingProvider]


def _control(provider: OpenVikingProvider, record: Any, action: str) -> Any:
    return operator_control(
        request(record, action, provider_id="openviking"),
        provider=provider,
        binding=binding("openviking"),
        execute=True,
        now=NOW,
    )


def _stored(provider: OpenVikingProvider) -> tuple[Any, Any]:
    receipt = ingest_soft(provider)
    assert receipt.status == "activated", receipt
    return receipt, stored_record(provider, receipt)


def test_revoke_stops_recall_on_the_next_call(
    fresh_tenant: Tenant, make_provider: MakeProvider
) -> None:
    provider = make_provider(fresh_tenant)
    _, record = _stored(provider)
    assert recall_soft(provider).packet.result_count == 1
    control = _control(provider, record, "revoke")
    assert control.status == "completed", control
    assert control.receipt.readback_verified is True
    after = recall_soft(provider)
    assert after.packet.result_count == 0


def test_purge_leaves_nothing_readable_or_findable_and_explain_shows_it(
    fresh_tenant: Tenant, make_provider: MakeProvider
) -> None:
    provider = make_provider(fresh_tenant)
    receipt, record = _stored(provider)
    scope = binding("openviking").provider_scope
    old_refs = [hit.ref for hit in provider.search(scope=scope, query=SUMMARY, limit=5).hits]
    assert old_refs
    control = _control(provider, record, "purge")
    assert control.status == "completed", control
    assert control.receipt.result_state == "purged"
    for ref in old_refs:
        read = provider.read(scope=scope, ref=ref)
        assert not read.found or SUMMARY not in read.content
    for query in (SUMMARY, "review summary risk", record.record_ref.removeprefix("record:")):
        for hit in provider.search(scope=scope, query=query, limit=20).hits:
            assert SUMMARY not in hit.summary
            read = provider.read(scope=scope, ref=hit.ref)
            assert not read.found or SUMMARY not in read.content
    assert recall_soft(provider).packet.result_count == 0

    lineage = explain(receipt, provider=provider, bindings=(binding("openviking"),))
    assert "purged" in {link.status for link in lineage.links}
    assert SUMMARY not in repr(lineage)


def test_the_stage4_gate_opens_on_the_server(
    openviking: LocalOpenViking, fresh_tenant: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RM_TEST_OV_EVAL_KEY", fresh_tenant.key)
    host = openviking.base_url.removeprefix("http://")
    evaluation = evaluate(provider=EVAL_URL.format(host=host))
    assert evaluation.release_gate.status == "ready_for_bounded_dogfood", [
        (case.case_id, case.failed_assertions, case.failure_kind, case.evidence)
        for case in evaluation.cases
        if not case.passed
    ]


def test_the_evaluate_verb_against_the_server(
    openviking: LocalOpenViking, fresh_tenant: Tenant
) -> None:
    host = openviking.base_url.removeprefix("http://")
    env = {**os.environ, "RM_TEST_OV_EVAL_KEY": fresh_tenant.key}
    done = subprocess.run(
        [
            str(SCRIPT),
            "evaluate",
            "--format",
            "json",
            "--provider",
            EVAL_URL.format(host=host),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    packet = json.loads(done.stdout)
    assert done.returncode == 0, packet
    assert packet["release_gate"]["status"] == "ready_for_bounded_dogfood"
    assert fresh_tenant.key not in done.stdout


def test_a_replay_after_a_revoke_is_refused_on_the_server(
    fresh_tenant: Tenant, make_provider: MakeProvider
) -> None:
    """Ingest never brings back a record an operator closed (it reads the closed marker
    by key: one ``content/read``, no search)."""
    provider = make_provider(fresh_tenant)
    _, record = _stored(provider)
    assert _control(provider, record, "revoke").status == "completed"
    again = ingest_soft(provider)
    assert again.status == "conflict"
    assert "record_closed_by_operator" in again.reason_codes
    assert recall_soft(provider).packet.result_count == 0
