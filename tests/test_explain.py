"""Explain: a receipt's lineage from refs alone, each stored link checked through the provider.

Contract: DESIGN §10 ("an explain view of a receipt's lineage (event -> candidate
-> review -> active record -> recall -> application)"), issue 9 item 6 ("say
which links are verified, missing, revoked or purged. Never raw content") and
its Done-when ("the canary purge test finds 0 bytes; explain then shows the
tombstone").
"""

from __future__ import annotations

import json
from typing import Any

import attrs
import pytest
from tests._experiment_support import config_data
from tests._ingest_support import HARD_SCOPE_REF, SOFT_SCOPE_REF, ingest_hard
from tests._operator_support import (
    NOW,
    binding,
    corpus,
    ingest_soft,
    recall_soft,
    request,
    stored_record,
)

from reward_memory import wire
from reward_memory.application import apply
from reward_memory.errors import RecordValidationError
from reward_memory.lineage import _EXPLAINERS, Planned, explain, register_explainer
from reward_memory.operator import operator_control
from reward_memory.providers.sqlite import SQLiteProvider
from reward_memory.records._plain import load_plain
from reward_memory.records.experiment import ExperimentConfig
from reward_memory.testing import InMemoryProvider

SUMMARY = "Lead the review summary with the risk."


def _statuses(explanation: Any) -> list[tuple[str, str]]:
    return [(link.stage, link.status) for link in explanation.links]


def _public(explanation: Any) -> str:
    text = json.dumps(wire.dump(explanation))
    assert SUMMARY not in text
    assert SOFT_SCOPE_REF not in text
    assert HARD_SCOPE_REF not in text
    return text


@pytest.fixture
def provider() -> InMemoryProvider:
    return InMemoryProvider()


def _control(provider: Any, record: Any, action: str) -> Any:
    control = operator_control(
        request(record, action, provider_id=provider.provider_id),
        provider=provider,
        binding=binding(provider.provider_id),
        execute=True,
        now=NOW,
    )
    assert control.status == "completed"
    return control


def test_without_a_provider_every_stored_link_is_not_checked(provider: Any) -> None:
    receipt = ingest_soft(provider)
    explanation = explain(receipt)
    assert explanation.provider_checked is False
    assert explanation.provider_call_count == 0
    assert [(link.stage, link.status, link.reason_code) for link in explanation.links] == [
        ("event", "not_checked", "receipt_keeps_no_ref"),
        ("candidate", "not_checked", "no_provider"),
        ("review", "not_checked", "no_provider"),
        ("active_record", "not_checked", "no_provider"),
    ]
    _public(explanation)


def test_an_ingest_receipt_is_verified_through_the_provider(provider: Any) -> None:
    receipt = ingest_soft(provider)
    record = stored_record(provider, receipt)
    explanation = explain(receipt, provider=provider, bindings=[binding()])
    assert explanation.status == "explained"
    assert explanation.provider_checked is True
    assert _statuses(explanation)[1:] == [
        ("candidate", "verified"),
        ("review", "verified"),
        ("active_record", "verified"),
    ]
    refs = {link.stage: link.ref for link in explanation.links}
    assert refs["candidate"] == receipt.candidate_ref
    assert refs["active_record"] == receipt.record_ref
    assert refs["review"] == record.review.review_ref
    _public(explanation)


@pytest.mark.parametrize(
    ("action", "status"), [("revoke", "revoked"), ("purge", "purged"), ("retire", "retired")]
)
def test_a_controlled_record_shows_its_state(provider: Any, action: str, status: str) -> None:
    receipt = ingest_soft(provider)
    _control(provider, stored_record(provider, receipt), action)
    explanation = explain(wire.dump(receipt), provider=provider, bindings=[binding()])
    assert _statuses(explanation)[1:] == [
        ("candidate", status),
        ("review", status),
        ("active_record", status),
    ]
    _public(explanation)


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_explain_shows_the_tombstone_of_a_purge(kind: str, tmp_path: Any) -> None:
    provider = InMemoryProvider() if kind == "memory" else SQLiteProvider(path=tmp_path / "m.db")
    receipt = ingest_soft(provider)
    control = _control(provider, stored_record(provider, receipt), "purge")
    for given in (control, control.receipt, wire.dump(control.receipt)):
        explanation = explain(given, provider=provider, bindings=[binding(kind)])
        assert _statuses(explanation) == [
            ("event", "not_checked"),
            ("active_record", "purged"),
            ("operator_control", "verified"),
        ]
        _public(explanation)
    provider.close()


def test_a_record_never_written_is_missing(provider: Any) -> None:
    ingest_soft(provider, summary="Another preference the corpus holds.")  # the corpus exists
    receipt = ingest_soft(InMemoryProvider())  # written to another store
    explanation = explain(receipt, provider=provider, bindings=[binding()])
    assert _statuses(explanation)[1:] == [
        ("candidate", "missing"),
        ("review", "missing"),
        ("active_record", "missing"),
    ]


def test_a_store_without_the_corpus_is_no_check(provider: Any) -> None:
    """A mistyped store holds no corpus there at all: 'missing' would say the record is
    gone (it said so, of a store that never held anything)."""
    receipt = ingest_soft(InMemoryProvider())
    explanation = explain(receipt, provider=provider, bindings=[binding()])
    reasons = {link.stage: (link.status, link.reason_code) for link in explanation.links}
    assert reasons["active_record"] == ("not_checked", "corpus_absent")


def test_a_recall_packet_names_each_result(provider: Any) -> None:
    ingest_soft(provider)
    session = recall_soft(provider)
    explanation = explain(session.packet, provider=provider, bindings=[binding()])
    assert _statuses(explanation) == [
        ("event", "not_checked"),
        ("candidate", "verified"),
        ("review", "verified"),
        ("active_record", "verified"),
        ("recall", "verified"),
    ]


def test_a_recall_that_did_not_complete_is_not_a_verified_link() -> None:
    """A guard-blocked or failed recall packet states no verified recall."""
    down = InMemoryProvider(unavailable=True)
    session = recall_soft(down)
    assert session.packet.status == "provider_unavailable"
    explanation = explain(session.packet)
    assert explanation.links[-1].stage == "recall"
    assert explanation.links[-1].status == "not_checked"
    assert explanation.links[-1].reason_code == "receipt_not_completed"


@pytest.mark.parametrize("execute", [False, True])
def test_a_control_that_did_not_complete_is_not_a_verified_link(execute: bool) -> None:
    """A dry run (``control_ready``) or a failed control states no verified control."""
    provider = InMemoryProvider()
    record = stored_record(provider, ingest_soft(provider))
    with provider.set_faults(unavailable=True):
        control = operator_control(
            request(record, "retire", provider_id="memory"),
            provider=provider,
            binding=binding(),
            execute=execute,
            now=NOW,
        )
    assert control.status == ("provider_unavailable" if execute else "control_ready")
    link = explain(control).links[-1]
    assert (link.stage, link.status, link.reason_code) == (
        "operator_control",
        "not_checked",
        "receipt_not_completed",
    )


def test_an_application_receipt_keeps_only_digests(provider: Any) -> None:
    ingest_soft(provider)
    session = recall_soft(provider)
    from reward_memory.records.application import ModelDecision

    result = apply(
        "base",
        session,
        application_id="application:1",
        artifact_ref="artifact:1",
        apply_memory=lambda base, got: ModelDecision(
            outcome="applied",
            output=base + " (risk first)",
            memory_refs=(got[0].memory_ref,),
            reasoning_summary="The preference applies.",
            current_artifact_verified=True,
        ),
    )
    assert result.status == "applied"
    for given in (result, result.receipt, wire.dump(result.receipt)):
        explanation = explain(given, provider=provider, bindings=[binding()])
        links = [(link.stage, link.status, link.reason_code) for link in explanation.links]
        assert links == [
            ("event", "not_checked", "receipt_keeps_no_ref"),
            ("active_record", "not_checked", "receipt_keeps_digest_only"),
            # Digests only: what the receipt's flags claim is no provider readback.
            ("recall", "not_checked", "receipt_keeps_digest_only"),
            ("application", "verified", None),
        ]
        assert explanation.provider_call_count == 0


@pytest.mark.parametrize("base", [{"candidates": ["a", "b"]}, ["a"], "plan", None])
def test_an_application_packet_explains_whatever_its_output(provider: Any, base: Any) -> None:
    """The output is the caller's (any JSON value: a plan object, a list, text)."""
    ingest_soft(provider)
    result = apply(
        base, recall_soft(provider), application_id="application:1", artifact_ref="artifact:1"
    )
    explanation = explain(wire.dump(result))
    assert explanation.links[-1].stage == "application"
    assert json.dumps(base) not in json.dumps(wire.dump(explanation)) or base is None


def test_scopes_come_from_the_experiment_config() -> None:
    provider = InMemoryProvider()
    receipt = ingest_hard(provider=provider)
    assert receipt.status == "activated"
    config = load_plain(config_data(), ExperimentConfig)
    explanation = explain(receipt, provider=provider, config=config)
    assert _statuses(explanation)[-1] == ("active_record", "verified")


def test_a_config_whose_scope_does_not_fit_its_corpus_never_loads() -> None:
    """So explain never checks a corpus in a scope its declaration does not name."""
    data = config_data()
    data["corpora"][0]["corpus"]["provider_scope_ref_digest"] = "0" * 16
    with pytest.raises(RecordValidationError):
        load_plain(data, ExperimentConfig)


def test_a_corpus_without_a_binding_is_not_checked(provider: Any) -> None:
    receipt = ingest_soft(provider)
    explanation = explain(receipt, provider=provider)
    assert explanation.links[-1].reason_code == "no_binding_for_corpus"
    other = explain(receipt, provider=provider, bindings=[binding("sqlite")])
    assert other.links[-1].reason_code == "binding_does_not_fit_corpus"


def test_an_unavailable_provider_fails_open(provider: Any) -> None:
    receipt = ingest_soft(provider)
    with provider.set_faults(unavailable=True):
        explanation = explain(receipt, provider=provider, bindings=[binding()])
    assert explanation.status == "provider_unavailable"
    assert explanation.links[-1].status == "not_checked"
    assert explanation.links[-1].reason_code == "provider_unavailable"


def test_a_guard_blocked_ingest_never_reached_the_record(provider: Any) -> None:
    from tests._ingest_support import hard_event_data

    receipt = ingest_hard(hard_event_data(raw_content_captured=True), provider=provider)
    assert receipt.status == "guard_blocked"
    explanation = explain(receipt, provider=provider, bindings=[binding()])
    assert [link.reason_code for link in explanation.links[1:]] == ["not_reached"] * 3


def test_an_unknown_receipt_kind_is_refused() -> None:
    with pytest.raises(RecordValidationError) as caught:
        explain({"schema_version": "reward_memory_corpus_registry_v0"})
    assert caught.value.code == "receipt_kind_unsupported"
    with pytest.raises(RecordValidationError):
        explain({"schema_version": "reward_memory_ingest_receipt_v0", "extra": 1})


def test_a_refused_control_has_nothing_to_explain(provider: Any) -> None:
    from tests._operator_support import checkpoint

    receipt = ingest_soft(provider)
    record = stored_record(provider, receipt)
    refused = operator_control(
        request(record, "purge", operator_checkpoint=checkpoint("purge", verified=False)), now=NOW
    )
    with pytest.raises(RecordValidationError) as caught:
        explain(refused)
    assert caught.value.path == "$.receipt"


def test_a_new_receipt_kind_plugs_in(provider: Any) -> None:
    @attrs.frozen
    class DogfoodReceipt:
        schema_version: str = "test_dogfood_receipt_v0"
        application_id: str = "application:9"

    def explainer(receipt: Any) -> tuple[str | None, list[Planned]]:
        return None, [Planned(stage="application", ref=receipt.application_id, status="verified")]

    register_explainer("test_dogfood_receipt_v0", explainer)
    try:
        explanation = explain(DogfoodReceipt())
    finally:
        del _EXPLAINERS["test_dogfood_receipt_v0"]
    assert _statuses(explanation) == [("application", "verified")]
    assert wire.load(wire.dump(explanation)) == explanation


# -- verified means the provider agrees with the receipt (issue 9 item 6) -----------------


class _NoDelete(InMemoryProvider):
    """Fault injection: deletes fail, so a revoke or purge stops half-way (partial)."""

    def delete(self, **kwargs: Any) -> Any:
        from reward_memory.errors import ProviderUnavailable

        raise ProviderUnavailable("delete refused")


@pytest.mark.parametrize("action", ["revoke", "purge"])
def test_a_half_done_control_leaves_the_record_verified_not_closed(action: str) -> None:
    provider = _NoDelete()
    receipt = ingest_soft(provider)
    record = stored_record(provider, receipt)
    control = operator_control(
        request(record, action), provider=provider, binding=binding(), execute=True, now=NOW
    )
    assert control.status == "partial"
    explanation = explain(receipt, provider=provider, bindings=[binding()])
    (active,) = [link for link in explanation.links if link.stage == "active_record"]
    assert (active.status, active.reason_code) == ("verified", "closing_control_incomplete")


class _NoDeleteOver:
    """Fault injection: the same store, but its deletes fail (a purge stops half-way)."""

    def __init__(self, inner: InMemoryProvider) -> None:
        self._inner = inner
        self.provider_id, self.spi_version = inner.provider_id, inner.spi_version

    def delete(self, **kwargs: Any) -> Any:
        from reward_memory.errors import ProviderUnavailable

        raise ProviderUnavailable("delete refused")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def test_a_retired_copy_left_beside_a_tombstone_is_never_purged() -> None:
    """A retired record whose purge stopped half-way: the tombstone is there, and so is
    the retired copy with the content. Explain says retired (content still there), and
    the purge is not in effect."""
    provider = InMemoryProvider()
    receipt = ingest_soft(provider)
    record = stored_record(provider, receipt)
    retired = operator_control(
        request(record, "retire"), provider=provider, binding=binding(), execute=True, now=NOW
    )
    assert retired.status == "completed"
    purge = operator_control(
        request(record, "purge"),
        provider=_NoDeleteOver(provider),  # type: ignore[arg-type]
        binding=binding(),
        execute=True,
        now=NOW,
    )
    assert purge.status == "partial"
    explanation = explain(receipt, provider=provider, bindings=[binding()])
    (active,) = [link for link in explanation.links if link.stage == "active_record"]
    assert (active.status, active.reason_code) == ("retired", "closing_control_incomplete")
    assert purge.receipt is not None
    control = explain(purge.receipt, provider=provider, bindings=[binding()]).links[-1]
    assert control.status != "verified"


def test_a_forged_completed_control_is_not_verified(provider: Any) -> None:
    """A dry-run revoke receipt edited to say completed: the provider shows the record
    live, so the control is not in effect; with no provider it is not checked at all."""
    record = stored_record(provider, ingest_soft(provider))
    dry = operator_control(request(record, "revoke"), now=NOW)
    assert dry.receipt is not None
    forged = wire.dump(dry.receipt)
    forged.update(status="completed", readback_verified=True)
    with_provider = explain(forged, provider=provider, bindings=[binding()])
    control = with_provider.links[-1]
    assert (control.stage, control.status, control.reason_code) == (
        "operator_control",
        "missing",
        "control_not_in_effect",
    )
    alone = explain(forged)
    assert alone.links[-1].status == "not_checked"


def test_a_receipt_naming_another_activation_is_missing(provider: Any) -> None:
    receipt = ingest_soft(provider)
    for field, value in (("activation_ref", "activation:" + "3" * 20), ("policy_digest", "0" * 12)):
        tampered = wire.dump(receipt)
        tampered[field] = value
        explanation = explain(tampered, provider=provider, bindings=[binding()])
        (active,) = [link for link in explanation.links if link.stage == "active_record"]
        assert (active.status, active.reason_code) == ("missing", "receipt_disagrees_with_record")


def test_a_record_an_edit_replaced_is_inactive(provider: Any) -> None:
    """After an edit's replacement is written, the old record no longer influences recall:
    explain says inactive (superseded), not verified."""
    from reward_memory._canonical_text import canonical_text
    from reward_memory.activation import activate
    from reward_memory.candidates import review
    from reward_memory.records.candidate import ReviewDecision

    receipt = ingest_soft(provider)
    record = stored_record(provider, receipt)
    edit = operator_control(request(record, "edit"), provider=provider, binding=binding(), now=NOW)
    assert edit.decision is not None
    accepted = review(
        edit.decision,
        ReviewDecision(
            decision="accept",
            reviewer_ref=record.review.reviewer_ref,
            review_ref="review:replacement",
            reasoning_summary="The owner accepts the edited summary.",
        ),
        now=NOW,
    )
    replacement = activate(accepted, corpus(), checkpoint=None, now=NOW)
    provider.write(
        scope=binding().provider_scope, key="replacement", content=canonical_text(replacement)
    )
    explanation = explain(receipt, provider=provider, bindings=[binding()])
    (active,) = [link for link in explanation.links if link.stage == "active_record"]
    assert (active.status, active.reason_code) == ("inactive", "superseded")


def test_a_dogfood_receipt_and_a_recall_hook_packet_are_explained() -> None:
    from tests.test_dogfood import built

    dogfood = explain(built("applied"))
    assert dogfood.receipt_schema == "reward_memory_dogfood_receipt_v1"
    assert dogfood.links[-1].stage == "application"
    assert {link.stage for link in dogfood.links} >= {"event", "active_record", "recall"}
