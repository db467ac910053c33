"""End to end through the public API and the CLI, against the real server.

Issue 10 item 3: "a config whose binding names ``openviking`` -> ingest (activated,
exact readback) -> recall -> apply -> receipts; replay is idempotent; ...
``health-check`` [the ``providers --check`` verb] and ``recall --provider`` work
against it." The provider is built the way a deployment builds it: from the
config's provider id through the entry point, configured by the environment.
(Revoke, purge, explain and evaluate come with the operator-controls issue: add
them here with ``fresh_tenant`` / ``experiment`` below.)
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from _server import LocalOpenViking, Tenant

import reward_memory as rm
from _recall_support import (
    active_record,
    binding,
    checkpoint,
    content_of,
    corpus,
    request,
    scope_of,
)
from reward_memory import jsonio, schemas, wire
from reward_memory.digests import short_digest
from reward_memory.records.recall import RecallInput
from reward_memory_openviking import OpenVikingProvider

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "experiment"
GOAL = "issue-fix"
AGENT = "agent:patcher"
SURFACE = "issue_fix.patch_planning"
FIRST_OBSERVED = "2026-11-01T12:00:00Z"
SCRIPT = Path(sys.executable).with_name("reward-memory")


def narrow_the_plan(base_output: dict[str, Any], items: Any) -> dict[str, Any]:
    policy = items[0]
    return {
        "outcome": "applied",
        "output": {**base_output, "files": ["src/parser/module.py"]},
        "memory_refs": [policy.memory_ref],
        "reasoning_summary": "The maintainer's policy fits: the bug is local to the module.",
        "current_artifact_verified": True,
    }


def openviking_config(scope_ref: str) -> dict[str, Any]:
    """The example config with its binding (and corpus) on OpenViking at ``scope_ref``."""
    config = json.loads((EXAMPLES / "config.json").read_text(encoding="utf-8"))
    config["project_provider_binding"]["provider_id"] = "openviking"
    config["project_provider_binding"]["corpus_scopes"][0]["scope_ref"] = scope_ref
    declared = config["corpora"][0]["corpus"]
    declared["provider_id"] = "openviking"
    declared["provider_scope_ref_digest"] = hashlib.sha256(scope_ref.encode()).hexdigest()[:16]
    return config


OpenExperiment = Callable[[], rm.Experiment]


@pytest.fixture
def experiment(
    openviking: LocalOpenViking,
    fresh_tenant: Tenant,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[tuple[OpenExperiment, str]]:
    """``(open, scope_ref)``: opens the example experiment bound to OpenViking (a fresh account).

    Nothing injects the provider: ``open_experiment`` builds it from the config's
    provider id, and the provider reads the server and key from the environment.
    """
    scope_ref = f"viking://resources/e2e-{uuid.uuid4().hex[:10]}/issue-fix-policies"
    (tmp_path / "config.json").write_text(json.dumps(openviking_config(scope_ref)), "utf-8")
    activation = tmp_path / "activation.json"
    rm.configure_goal(
        activation, goal_id=GOAL, config_path="config.json", agents=[AGENT], execute=True
    )
    monkeypatch.setenv("REWARD_MEMORY_OPENVIKING_URL", openviking.base_url)
    monkeypatch.setenv("REWARD_MEMORY_OPENVIKING_API_KEY", fresh_tenant.key)
    opened: list[rm.Experiment] = []

    def open_it() -> rm.Experiment:
        memory = rm.open_experiment(
            activation, goal_id=GOAL, agent_id=AGENT, authority=EXAMPLES / "authority.json"
        )
        opened.append(memory)
        return memory

    yield open_it, scope_ref
    for memory in opened:
        memory.close()


def test_ingest_recall_apply_and_replay(
    experiment: tuple[OpenExperiment, str], fresh_tenant: Tenant, openviking: LocalOpenViking
) -> None:
    open_it, scope_ref = experiment
    event = jsonio.read(str(EXAMPLES / "event.json"))
    with open_it() as memory:
        ingested = memory.ingest(event, observed_at=FIRST_OBSERVED, execute=True)
        packet = wire.dump(ingested)
        schemas.validate(packet)
        assert packet["status"] == "activated", packet
        assert packet["receipt"]["exact_readback_verified"] is True
        assert packet["receipt"]["deduplicated"] is False

        outcome = memory.recall(
            SURFACE,
            queries=["keep focused fixes within the affected module"],
            base_output={"files": ["src/parser/module.py", "src/generic/listing.py"]},
            apply_memory=narrow_the_plan,
            application_id="application:e2e:1",
            artifact_ref="revision:abc123",
        )
        assert outcome.status == "applied", wire.dump(outcome.packet)
        assert outcome.output["files"] == ["src/parser/module.py"]
        recall_packet = wire.dump(outcome.packet)
        schemas.validate(recall_packet)
        assert recall_packet["telemetry"]["result_readback_verified"] is True
        assert recall_packet["application"]["outcome"] == "applied"
        # Receipts are public-safe: no server URI, no key, no scope path.
        text = json.dumps([packet, recall_packet])
        assert "viking://" not in text
        assert fresh_tenant.key not in text
        assert openviking.base_url not in text

    # A replay (a new process would do the same) is the same candidate and target.
    with open_it() as memory:
        again = wire.dump(memory.ingest(event, observed_at=FIRST_OBSERVED, execute=True))
        assert again["receipt"]["deduplicated"] is True, again
        assert again["receipt"]["record_ref"] == packet["receipt"]["record_ref"]

    # Exactly one record on the server, in the scope the config names.
    with OpenVikingProvider(base_url=openviking.base_url, api_key=fresh_tenant.key) as direct:
        scope = rm.ProviderScope(namespace="reward_memory", scope_ref=scope_ref)
        assert direct.inventory(scope=scope).record_count == 1


def test_a_server_that_goes_away_fails_open(
    experiment: tuple[OpenExperiment, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fail open: a recall against an unreachable server keeps the base output."""
    open_it, _ = experiment
    monkeypatch.setenv("REWARD_MEMORY_OPENVIKING_URL", "http://127.0.0.1:9")
    base = {"files": ["a.py", "b.py"]}
    with open_it() as memory:
        outcome = memory.recall(
            SURFACE,
            queries=["keep focused fixes within the affected module"],
            base_output=base,
            apply_memory=narrow_the_plan,
            application_id="application:e2e:2",
        )
        assert outcome.status == "provider_unavailable"
        assert outcome.output == base
        ingested = wire.dump(
            memory.ingest(
                jsonio.read(str(EXAMPLES / "event.json")),
                observed_at=FIRST_OBSERVED,
                execute=True,
            )
        )
        assert ingested["status"] != "activated"


# -- the CLI, as a real process ---------------------------------------------------------


def cli(*argv: str, key: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "RM_TEST_OV_KEY": key}
    return subprocess.run(
        [str(SCRIPT), *argv], capture_output=True, text=True, env=env, timeout=60, check=False
    )


def test_cli_recall_and_provider_check(
    openviking: LocalOpenViking, fresh_tenant: Tenant, tmp_path: Path
) -> None:
    scope_ref = f"viking://resources/cli-{uuid.uuid4().hex[:10]}/review-policy"
    bound = binding(scope_ref=scope_ref, provider_id="openviking")
    with OpenVikingProvider(base_url=openviking.base_url, api_key=fresh_tenant.key) as direct:
        for index in range(2):
            direct.write(
                scope=scope_of(bound),
                key=f"record-{index}",
                content=content_of(active_record(index)),
            )
    given = RecallInput(
        corpus=corpus(provider_id="openviking", provider_scope_ref_digest=short_digest(scope_ref)),
        request=request(),
        read_authority_checkpoint=checkpoint(),
        provider_binding=bound,
    )
    path = tmp_path / "input.json"
    path.write_text(json.dumps(wire.dump(given)), encoding="utf-8")
    port = openviking.port
    url = f"openviking://127.0.0.1:{port}?api_key_env=RM_TEST_OV_KEY"

    done = cli(
        "recall", "--input", str(path), "--provider", url, "--format", "json", key=fresh_tenant.key
    )
    assert done.returncode == 0, done.stderr
    packet = json.loads(done.stdout)
    schemas.validate(packet)
    assert packet["status"] == "completed"
    assert packet["result_count"] == 2
    assert fresh_tenant.key not in done.stdout
    assert "viking://" not in done.stdout

    check = cli("providers", "--check", url, "--format", "json", key=fresh_tenant.key)
    assert check.returncode == 0, check.stderr
    checked = json.loads(check.stdout)["check"]
    assert (checked["provider_id"], checked["status"]) == ("openviking", "available")
    assert checked["provider_available"] is True
    assert fresh_tenant.key not in check.stdout

    # A wrong key is a status (provider_unavailable), never a traceback.
    wrong = cli(
        "recall", "--input", str(path), "--provider", url, "--format", "json", key="cm0.bad.key"
    )
    assert wrong.returncode == 0, wrong.stderr
    assert json.loads(wrong.stdout)["status"] == "provider_unavailable"
    assert "Traceback" not in wrong.stderr
