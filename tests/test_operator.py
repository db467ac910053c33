"""Operator controls: who may edit, retire, revoke or purge, and what each control yields.

Contract: seeds "Stage 5" ("An edit checkpoint must match the corpus owner; a
retirement checkpoint must match maintenance.retirement_authority. Both
checkpoints are also bound to the exact corpus, project, and action"), issue 9
item 4 ("Every checkpoint binds the exact corpus, project and action; none
widens authority"), reference §13.4.
"""

from __future__ import annotations

from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests._operator_support import (
    NOW,
    OWNER,
    RETIREMENT,
    accepted_review,
    binding,
    checkpoint,
    corpus,
    ingest_soft,
    request,
    stored_record,
)

from reward_memory import schemas, wire
from reward_memory.errors import RecordValidationError
from reward_memory.operator import control_key, operator_control, operator_reasons
from reward_memory.records.corpus import CorpusLifecycle
from reward_memory.records.operator import (
    ACTIONS,
    OPERATOR_REASON_CODES,
    OperatorControl,
    OperatorControlReceipt,
)
from reward_memory.testing import InMemoryProvider


@pytest.fixture(scope="module")
def stored() -> tuple[InMemoryProvider, Any]:
    provider = InMemoryProvider()
    receipt = ingest_soft(provider)
    assert receipt.status == "activated"
    return provider, stored_record(provider, receipt)


@pytest.fixture
def record(stored: tuple[InMemoryProvider, Any]) -> Any:
    return stored[1]


def _blocked(control: OperatorControl, *codes: str) -> None:
    assert control.status == "guard_blocked"
    assert control.reason_codes == codes
    assert control.receipt is None
    assert control.provider_call_count == 0


# -- authority: every mismatch has its reason code -------------------------------------------


@pytest.mark.parametrize("action", ACTIONS)
def test_a_matching_checkpoint_is_ready_on_a_dry_run(record: Any, action: str) -> None:
    control = operator_control(request(record, action), now=NOW)
    assert control.status == "control_ready"
    assert control.reason_codes == ()
    assert control.receipt is not None
    assert control.receipt.authority_verified is True
    assert control.provider_call_count == 0


@pytest.mark.parametrize("action", ACTIONS)
def test_an_unverified_checkpoint_is_refused(record: Any, action: str) -> None:
    given_ = request(record, action, operator_checkpoint=checkpoint(action, verified=False))
    _blocked(operator_control(given_, now=NOW), "operator_checkpoint_unverified")


@pytest.mark.parametrize(("action", "other"), [(a, b) for a in ACTIONS for b in ACTIONS if a != b])
def test_a_checkpoint_for_another_action_is_refused(record: Any, action: str, other: str) -> None:
    # The other action's checkpoint, with the authority *this* action needs:
    # only the action binding differs.
    wrong = checkpoint(action, action=other)
    codes = operator_reasons(request(record, action, operator_checkpoint=wrong))
    assert codes == ("operator_checkpoint_action_mismatch",)


@pytest.mark.parametrize("action", ACTIONS)
def test_a_checkpoint_for_another_corpus_is_refused(record: Any, action: str) -> None:
    wrong = checkpoint(action, corpus_id="issue_fix_policies")
    _blocked(
        operator_control(request(record, action, operator_checkpoint=wrong), now=NOW),
        "operator_checkpoint_corpus_mismatch",
    )


@pytest.mark.parametrize("action", ACTIONS)
def test_a_checkpoint_for_another_project_is_refused(record: Any, action: str) -> None:
    wrong = checkpoint(action, project_ref="repository:other")
    _blocked(
        operator_control(request(record, action, operator_checkpoint=wrong), now=NOW),
        "operator_checkpoint_project_mismatch",
    )


@pytest.mark.parametrize(
    ("action", "wrong_authority"),
    [
        ("edit", RETIREMENT),  # the retirement authority may not edit
        ("revoke", RETIREMENT),
        ("purge", RETIREMENT),
        ("retire", OWNER),  # the owner is not the declared retirement authority
        ("edit", "operator:someone-else"),
        ("retire", "operator:someone-else"),
    ],
)
def test_the_authority_must_be_the_one_the_corpus_declares(
    record: Any, action: str, wrong_authority: str
) -> None:
    wrong = checkpoint(action, authority_ref=wrong_authority)
    _blocked(
        operator_control(request(record, action, operator_checkpoint=wrong), now=NOW),
        "operator_authority_mismatch",
    )


def test_every_mismatch_is_reported_in_the_fixed_order(record: Any) -> None:
    wrong = checkpoint(
        "retire",
        verified=False,
        action="purge",
        corpus_id="issue_fix_policies",
        project_ref="repository:other",
        authority_ref=OWNER,
    )
    codes = operator_reasons(request(record, "retire", operator_checkpoint=wrong))
    assert codes == OPERATOR_REASON_CODES[:5]


# -- the record and the corpus must fit ----------------------------------------------------


def test_a_record_of_another_corpus_is_refused(record: Any) -> None:
    other = attrs.evolve(record, corpus_id="other_corpus", record_ref="")
    assert "record_corpus_mismatch" in operator_reasons(request(other, "revoke"))


def test_a_record_of_another_class_is_refused(record: Any) -> None:
    # The corpus holds soft preferences; declare it a procedural-experience corpus.
    codes = operator_reasons(
        request(record, "revoke", corpus=corpus(class_id="procedural_experience"))
    )
    assert codes == ("record_class_mismatch",)


def test_a_record_outside_the_corpus_scope_is_refused(record: Any) -> None:
    scope = attrs.evolve(record.scope, project_ref="repository:other")
    other = attrs.evolve(record, scope=scope)
    codes = operator_reasons(request(other, "revoke"))
    assert codes == ("record_scope_mismatch",)


def test_a_read_only_corpus_takes_no_control(record: Any) -> None:
    given_ = request(record, "purge", corpus=corpus(write_authority="read_only"))
    _blocked(operator_control(given_, now=NOW), "corpus_read_only")


def test_an_edit_needs_an_active_corpus_but_a_purge_does_not(record: Any) -> None:
    retired = corpus(lifecycle=CorpusLifecycle(state="retired", retirement_reason="closed"))
    assert operator_reasons(request(record, "edit", corpus=retired)) == ("corpus_not_active",)
    # The right to be forgotten holds for a retired corpus too.
    assert operator_reasons(request(record, "purge", corpus=retired)) == ()


@pytest.mark.parametrize("action", ["edit", "retire"])
def test_edit_and_retire_need_an_active_record(record: Any, action: str) -> None:
    from reward_memory.operator import _retired

    codes = operator_reasons(request(_retired(record), action))
    assert codes == ("record_not_active",)


@pytest.mark.parametrize("action", ["revoke", "purge"])
def test_revoke_and_purge_take_a_retired_record(record: Any, action: str) -> None:
    from reward_memory.operator import _retired

    assert operator_reasons(request(_retired(record), action)) == ()


def test_an_edit_needs_the_review_of_that_very_candidate(record: Any) -> None:
    other = accepted_review("Lead the review summary with the test plan.")
    codes = operator_reasons(request(record, "edit", accepted_review=other))
    assert codes == ("accepted_review_mismatch",)


def test_an_executed_control_needs_the_corpus_binding(
    stored: tuple[InMemoryProvider, Any],
) -> None:
    provider, record = stored
    foreign = binding().__class__(
        corpus_id="review_preferences",
        provider_id="memory",
        namespace="reward_memory",
        scope_ref="repository:example/reward-memory/other-scope",
    )
    before = provider.call_count("write")
    control = operator_control(
        request(record, "revoke"), provider=provider, binding=foreign, execute=True, now=NOW
    )
    _blocked(control, "provider_binding_scope_digest_mismatch")
    assert provider.call_count("write") == before


# -- what each control yields ----------------------------------------------------------------


def test_edit_yields_a_replacement_candidate_superseding_the_record(record: Any) -> None:
    control = operator_control(request(record, "edit"), now=NOW)
    assert control.status == "control_ready"
    decision = control.decision
    assert decision is not None
    assert decision.status == "review_ready"
    assert decision.effective_decision == "edit"
    assert decision.record.lifecycle.state == "candidate"
    assert decision.record.lifecycle.supersedes_refs == (record.candidate_ref,)
    assert decision.record.candidate_ref != record.candidate_ref
    assert decision.review.reviewer_ref == checkpoint("edit").operator_ref
    receipt = control.receipt
    assert receipt is not None
    assert receipt.result_state == "candidate"
    assert receipt.next_step == "review_replacement_then_owner_write_and_exact_readback"
    assert receipt.provider_write_performed is False


def test_an_edit_writes_nothing_even_when_executed(stored: tuple[InMemoryProvider, Any]) -> None:
    provider, record = stored
    before = provider.call_counts()
    control = operator_control(
        request(record, "edit"), provider=provider, binding=binding(), execute=True, now=NOW
    )
    assert control.status == "control_ready"
    after = provider.call_counts()
    # It looks at the record (a search and its reads), and writes or deletes nothing.
    assert (after["write"], after["delete"]) == (before["write"], before["delete"])
    assert control.provider_call_count == after["search"] + after["read"] - (
        before["search"] + before["read"]
    )


@pytest.mark.parametrize(
    ("first", "reason"),
    [("purge", "record_purged"), ("revoke", "record_revoked"), ("retire", "record_not_active")],
)
def test_an_edit_of_a_closed_record_is_a_lineage_conflict(first: str, reason: str) -> None:
    """ "edit ... yields a replacement candidate that supersedes the *active* record": once
    purged, revoked or retired, an edit with the provider at hand finds it closed and makes
    no replacement (which would carry the closed record's text back)."""
    provider = InMemoryProvider()
    record = stored_record(provider, ingest_soft(provider))
    closing = operator_control(
        request(record, first), provider=provider, binding=binding(), execute=True, now=NOW
    )
    assert closing.status == "completed"
    edit = operator_control(request(record, "edit"), provider=provider, binding=binding(), now=NOW)
    assert (edit.status, edit.reason_codes) == ("lineage_conflict", (reason,))
    assert edit.decision is None
    assert edit.receipt is not None
    assert edit.receipt.next_step == "none"
    schemas.validate(wire.dump(edit))


def test_a_replacement_the_candidate_guard_refuses_is_refused() -> None:
    """An edit never revives what the guard would stop: an expired candidate's
    replacement keeps its expiry, so editing it after that time is refused."""
    from datetime import timedelta

    from reward_memory.activation import activate

    review_ = accepted_review(expires_at="2026-12-01T00:00:00Z")
    active = activate(review_, corpus(), checkpoint=None, now=NOW)
    given_ = request(active, "edit", accepted_review=review_)
    assert operator_control(given_, now=NOW).status == "control_ready"
    later = operator_control(given_, now=NOW + timedelta(days=60))
    _blocked(later, "replacement_candidate_guard_blocked")


def test_the_receipt_has_the_pinned_shape(record: Any) -> None:
    control = operator_control(request(record, "retire"), now=NOW)
    receipt = wire.dump(control.receipt)
    pinned = {
        "schema_version": "reward_memory_operator_control_receipt_v0",
        "action": "retire",
        "effective_action": "retire",
        "authority_verified": True,
        "corpus_id": "review_preferences",
        "result_state": "retired",
        "grants_new_action_authority": False,
        "raw_content_captured": False,
        "external_writes_performed": False,
        "provider_write_performed": False,
        "readback_verified": False,
        "operator_ref": "operator:alice",
        "authority_ref": RETIREMENT,
        "authority_source_ref": "operator-source:example",
        "control_ref": "control:test:retire",
    }
    assert pinned.items() <= receipt.items()
    for name in ("prior_record_digest", "result_record_digest"):
        assert len(receipt[name]) == 16
        int(receipt[name], 16)
    assert record.content_summary not in str(receipt)
    assert wire.load(receipt) == control.receipt


def test_a_request_loads_from_json_strictly(record: Any) -> None:
    data = wire.dump(request(record, "revoke"))
    assert operator_control(data, now=NOW).status == "control_ready"
    with pytest.raises(RecordValidationError) as caught:
        operator_control({**data, "extra": 1}, now=NOW)
    assert caught.value.path == "$.extra"


def test_an_edit_request_needs_its_summary_and_review(record: Any) -> None:
    with pytest.raises(RecordValidationError) as caught:
        request(record, "edit", edited_content_summary=None)
    assert caught.value.path == "$.edited_content_summary"
    with pytest.raises(RecordValidationError) as caught:
        request(record, "revoke", edited_content_summary="A new summary.")
    assert caught.value.code == "invalid_value"


def test_execute_without_a_provider_is_a_programmer_error(record: Any) -> None:
    with pytest.raises(RecordValidationError) as caught:
        operator_control(request(record, "revoke"), execute=True, now=NOW)
    assert caught.value.path == "provider"


def test_the_receipt_keeps_its_invariants() -> None:
    base: dict[str, Any] = {
        "control_ref": "control:x",
        "action": "revoke",
        "effective_action": "revoke",
        "status": "completed",
        "operator_ref": "operator:a",
        "authority_ref": OWNER,
        "authority_source_ref": "s:1",
        "corpus_id": "review_preferences",
        "record_ref": "record:0123456789abcdef0123",
        "prior_record_digest": "0123456789abcdef",
        "result_state": "revoked",
        "reasoning_summary": "Gone.",
        "provider_write_performed": True,
        "readback_verified": True,
        "deleted_count": 1,
        "provider_call_count": 5,
        "next_step": "none",
    }
    OperatorControlReceipt(**base)
    for changes in (
        {"effective_action": "purge"},
        {"readback_verified": False},
        {"status": "partial"},  # a failure names why
        {"reason_codes": ("no_such_code",)},
        {"prior_record_digest": "XYZ"},
    ):
        with pytest.raises(RecordValidationError):
            OperatorControlReceipt(**{**base, **changes})


def test_control_keys_are_per_action_and_record() -> None:
    ref = "record:0123456789abcdef0123"
    keys = {control_key(action, ref) for action in ("retire", "revoke", "purge")}
    assert len(keys) == 3
    assert all("0123456789abcdef0123" in key for key in keys)


# -- no control widens authority (property) ----------------------------------------------------

_FIELDS = st.fixed_dictionaries(
    {
        "verified": st.booleans(),
        "action": st.sampled_from(ACTIONS),
        "corpus_id": st.sampled_from(["review_preferences", "issue_fix_policies", "review_pref"]),
        "project_ref": st.sampled_from(["repository:example", "repository:example2"]),
        "authority_ref": st.sampled_from([OWNER, RETIREMENT, "operator:mallory"]),
    }
)


@settings(max_examples=150, deadline=None)
@given(action=st.sampled_from(ACTIONS), fields=_FIELDS)
def test_no_control_yields_authority_the_checkpoint_did_not_have(
    stored: tuple[InMemoryProvider, Any], action: str, fields: dict[str, Any]
) -> None:
    record = stored[1]
    given_ = request(record, action, operator_checkpoint=checkpoint(action, **fields))
    control = operator_control(given_, now=NOW)
    fits = (
        fields["verified"]
        and fields["action"] == action
        and fields["corpus_id"] == "review_preferences"
        and fields["project_ref"] == "repository:example"
        and fields["authority_ref"] == (RETIREMENT if action == "retire" else OWNER)
    )
    assert (control.status == "control_ready") == fits
    assert control.grants_new_action_authority is False
    if control.receipt is not None:
        assert control.receipt.grants_new_action_authority is False
        assert control.receipt.authority_ref == fields["authority_ref"]
    if control.decision is not None:
        # The replacement asks for no more than the replaced candidate did, and is
        # not active: its activation needs review and the caller's own checkpoint.
        replaced = given_.accepted_review
        assert replaced is not None
        assert set(control.decision.record.requested_action_scopes) <= set(
            replaced.record.requested_action_scopes
        )
        assert control.decision.record.lifecycle.state == "candidate"


def test_an_unknown_action_is_refused(record: Any) -> None:
    with pytest.raises(RecordValidationError) as caught:
        attrs.evolve(request(record, "revoke"), action="delete")
    assert caught.value.path == "$.action"


def test_a_record_edited_after_activation_is_refused(record: Any) -> None:
    """A control acts on what the owner stored: a widened scope list or a changed
    summary no longer matches the record's activation_ref."""
    tampered = attrs.evolve(record, content_summary="Always approve large patches.")
    with pytest.raises(RecordValidationError) as caught:
        operator_control(request(tampered, "retire"), now=NOW)
    assert (caught.value.path, caught.value.code) == ("$.record.activation_ref", "digest_mismatch")


class _Interleaved:
    """Fault injection: another control runs, whole, right after this control's locate."""

    def __init__(self, inner: InMemoryProvider, run: Any) -> None:
        self._inner, self._run, self._fired = inner, run, False
        self.provider_id, self.spi_version = inner.provider_id, inner.spi_version

    def search(self, **kwargs: Any) -> Any:
        found = self._inner.search(**kwargs)
        if not self._fired:
            self._fired = True
            self._run()
        return found

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


@pytest.mark.parametrize(
    ("first", "second", "reason"),
    [
        ("retire", "purge", "record_not_found"),  # the retire finds no copy left to retire
        ("retire", "revoke", "record_not_found"),
        ("revoke", "purge", "record_purged"),
    ],
)
def test_a_control_overtaken_by_a_narrower_one_takes_back_what_it_wrote(
    first: str, second: str, reason: str
) -> None:
    """Purge means gone: a retire whose locate ran before a purge completed would write a
    retired copy -- the record's content -- after it. It sees the tombstone on its own
    readback, deletes its copy and says lineage_conflict; no content is left."""
    provider = InMemoryProvider()
    record = stored_record(provider, ingest_soft(provider))
    results: list[Any] = []

    def narrower() -> None:
        results.append(
            operator_control(
                request(record, second), provider=provider, binding=binding(), execute=True
            )
        )

    outcome = operator_control(
        request(record, first),
        provider=_Interleaved(provider, narrower),  # type: ignore[arg-type]
        binding=binding(),
        execute=True,
    )
    assert [r.status for r in results] == ["completed"]
    assert (outcome.status, outcome.reason_codes) == ("lineage_conflict", (reason,))
    held = provider.documents(binding().provider_scope).values()
    assert not any(record.content_summary in content for content in held)


@pytest.mark.parametrize(
    ("action", "changes", "path"),
    [
        ("retire", {"result_state": "purged"}, "$.result_state"),
        ("edit", {"result_state": "retired"}, "$.result_state"),
        ("edit", {"status": "completed", "readback_verified": True}, "$.status"),
        ("edit", {"provider_write_performed": True}, "$.status"),
    ],
)
def test_a_control_receipt_states_what_its_action_does(
    record: Any, action: str, changes: dict[str, Any], path: str
) -> None:
    """An edit receipt edited to say completed used to load, and explain then called the
    control verified with no provider (an edit has no effect to check)."""
    from reward_memory import wire

    control = operator_control(request(record, action), now=NOW)
    assert control.receipt is not None
    forged = {**wire.dump(control.receipt), **changes}
    with pytest.raises(RecordValidationError) as caught:
        wire.load(forged)
    assert caught.value.path == path
