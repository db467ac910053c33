"""Legacy ``reward_memory_active_record_v0`` records are typed (issue item 5).

Contract sentences protected here:

- "Legacy v0 records are typed. Their privacy, source and lineage become strict
  records."
- "A v0 record claiming raw content, whose lineage says the guard did not pass,
  or that carries a credential or a local path, is never recalled."
- DESIGN.md §5: "Unknown fields are rejected on every input packet."
- A legacy record is advisory only and has no visibility: its summary is never
  exposed in a public packet (record-level privacy, issue item 3).
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from _recall_support import (
    CORPUS_ID,
    NOW,
    PROJECT,
    SURFACE,
    WORKSPACE,
    binding,
    checkpoint,
    corpus,
    request,
    store,
)
from reward_memory import schemas, wire
from reward_memory.errors import RecordValidationError
from reward_memory.guarded_recall import RecallSession, recall
from reward_memory.records._plain import from_plain
from reward_memory.records.active import (
    LegacyActiveRecord,
    LegacyLifecycle,
    LegacyLineage,
    LegacyPrivacy,
    LegacySource,
)
from reward_memory.testing import InMemoryProvider


def original(**changes: Any) -> dict[str, Any]:
    """A v0 record exactly as the original's ``build_active_record`` wrote it (reference §6)."""
    data: dict[str, Any] = {
        "schema_version": "reward_memory_active_record_v0",
        "activation_ref": "activation:0123456789abcdef0123",
        "activated_at": "2026-02-20T00:00:00Z",
        "corpus_id": CORPUS_ID,
        "candidate_ref": "candidate:0123456789abcdef0123",
        "target_class": "soft_preference",
        "content_summary": "Legacy reviewer summary tone preference.",
        "scope": {
            "workspace_ref": WORKSPACE,
            "project_ref": PROJECT,
            "surface_ids": [SURFACE],
            "revision_ref": None,
        },
        "source": {
            "source_kind": "maintainer_correction",
            "source_ref": "github:example/repository#42:comment:1",
            "actor_ref": "github:user:maintainer",
            "actor_role": "verified_repository_core_contributor",
        },
        "review": {
            "reviewer_ref": "reviewer:bob",
            "review_ref": "review:1",
            "reasoning_summary": "Scoped and reviewed.",
        },
        "activation_lineage": {
            "effective_decision": "accept",
            "guard_passed": True,
            "review_ref": "review:1",
        },
        "lifecycle": {"state": "active", "expires_at": "2026-06-01T00:00:00Z"},
        "privacy": {"raw_content_captured": False},
        "provider_write_performed": False,
        "external_writes_performed": False,
    }
    data.update(changes)
    return data


MINIMAL: dict[str, Any] = {
    "schema_version": "reward_memory_active_record_v0",
    "corpus_id": CORPUS_ID,
    "candidate_ref": "candidate:minimal",
    "target_class": "soft_preference",
    "content_summary": "Hand-crafted minimal reviewer summary tone envelope.",
    "scope": {"workspace_ref": WORKSPACE, "project_ref": PROJECT, "surface_ids": [SURFACE]},
    "lifecycle": {"state": "active"},
}


def _run(provider: InMemoryProvider) -> RecallSession:
    return recall(
        request(),
        corpus=corpus(),
        checkpoint=checkpoint(),
        binding=binding(),
        provider=provider,
        now=NOW,
    )


def _recalled(data: dict[str, Any]) -> bool:
    provider = InMemoryProvider()
    store(provider, json.dumps(data))
    return _run(provider).status == "completed"


# -- every valid original record is still read -----------------------------------------------------


@pytest.mark.parametrize("data", [original(), MINIMAL], ids=["original", "minimal"])
def test_valid_originals_load_as_typed_records(data: dict[str, Any]) -> None:
    schemas.validate(data)
    record = wire.load(data)
    assert isinstance(record, LegacyActiveRecord)
    assert isinstance(record.lifecycle, LegacyLifecycle)
    assert record.source is None or isinstance(record.source, LegacySource)
    assert record.activation_lineage is None or isinstance(record.activation_lineage, LegacyLineage)
    assert record.privacy is None or isinstance(record.privacy, LegacyPrivacy)
    assert from_plain(LegacyActiveRecord, data) == record
    assert _recalled(data)


def test_a_legacy_item_is_advisory_and_its_summary_never_public() -> None:
    provider = InMemoryProvider()
    store(provider, json.dumps(original(target_class="soft_preference")))
    session = _run(provider)  # the corpus is public_safe
    (item,) = session.items
    assert item.legacy is True
    assert item.authority_level == "advisory"
    (result,) = session.packet.results
    assert result.content_exposed is False
    assert result.content_summary is None
    assert "Legacy reviewer summary" not in json.dumps(wire.dump(session.packet))


def test_legacy_supersession_is_honoured_in_session() -> None:
    provider = InMemoryProvider()
    store(provider, json.dumps(original()))
    newer = original(
        candidate_ref="candidate:newer",
        activation_ref="activation:newer",
        lifecycle={"state": "active", "supersedes_refs": ["candidate:0123456789abcdef0123"]},
    )
    store(provider, json.dumps(newer))
    session = _run(provider)
    assert [item.candidate_ref for item in session.items] == ["candidate:newer"]
    assert session.superseded_dropped == 1


# -- what is never recalled ------------------------------------------------------------------------


NEVER: list[tuple[str, dict[str, Any], str]] = [
    ("raw_content_captured", original(privacy={"raw_content_captured": True}), "$.privacy"),
    (
        "guard_not_passed",
        original(activation_lineage={"effective_decision": "accept", "guard_passed": False}),
        "$.activation_lineage",
    ),
    (
        "not_accepted",
        original(activation_lineage={"effective_decision": "reject", "guard_passed": True}),
        "$.activation_lineage",
    ),
    (
        "credential_in_source",
        original(
            source={
                "source_kind": "maintainer_correction",
                "source_ref": "token=ghp_abcdefghijklmnopqrstuvwxyz0123456789",
                "actor_ref": "github:user:maintainer",
            }
        ),
        "$.source",
    ),
    (
        "local_path_in_summary",
        original(content_summary="See /home/alice/.ssh/id_rsa for the reviewer summary tone."),
        "$.content_summary",
    ),
    (
        "credential_in_summary",
        original(content_summary="reviewer summary tone password=hunter2hunter2hunter2"),
        "$.content_summary",
    ),
    (
        "local_path_in_review",
        original(
            review={
                "reviewer_ref": "reviewer:bob",
                "review_ref": "review:1",
                "reasoning_summary": "Read C:\\Users\\alice\\notes.txt first.",
            }
        ),
        "$.review",
    ),
    ("unknown_top_field", original(comment_body="raw chat"), "$.comment_body"),
    (
        "unknown_source_field",
        original(source={**original()["source"], "transcript": "raw chat"}),
        "$.source",
    ),
    (
        "unknown_lineage_field",
        original(activation_lineage={**original()["activation_lineage"], "note": "x"}),
        "$.activation_lineage",
    ),
    (
        "unknown_privacy_field",
        original(privacy={"raw_content_captured": False, "x": 1}),
        "$.privacy",
    ),
    ("unknown_scope_field", original(scope={**original()["scope"], "tenant": "x"}), "$.scope"),
    (
        "unknown_lifecycle_field",
        original(lifecycle={"state": "active", "owner": "x"}),
        "$.lifecycle",
    ),
    (
        "half_superseded",
        original(lifecycle={"state": "active", "superseded_by": "candidate:next"}),
        "$.lifecycle.superseded_by",
    ),
    ("lifecycle_state_unknown", original(lifecycle={"state": "live"}), "$.lifecycle.state"),
    ("privacy_flag_not_bool", original(privacy={"raw_content_captured": 0}), "$.privacy"),
    ("write_flag_not_bool", original(provider_write_performed=0), "$.provider_write_performed"),
    ("source_not_object", original(source="maintainer"), "$.source"),
]


@pytest.mark.parametrize(("name", "data", "path"), NEVER, ids=[n[0] for n in NEVER])
def test_invalid_legacy_records_are_refused_and_never_recalled(
    name: str, data: dict[str, Any], path: str
) -> None:
    """A typed error (located) when loaded; skipped (never recalled) when read back."""
    del name
    with pytest.raises(RecordValidationError) as info:
        from_plain(LegacyActiveRecord, data)
    assert info.value.path.startswith(path)
    assert not _recalled(data)


def test_the_schema_refuses_what_the_record_refuses() -> None:
    for name, data, _ in NEVER:
        if name.startswith(("credential", "local_path", "half", "write_flag")):
            continue  # text scans and cross-field rules are the record's, not the schema's
        with pytest.raises(RecordValidationError):
            schemas.validate(data)


# -- an invariant over arbitrary edits -------------------------------------------------------------

_BLOCKS = ["source", "activation_lineage", "privacy", "lifecycle", "scope", "review"]
_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-2, 2),
    st.text(max_size=12),
    st.just("/etc/passwd"),
    st.just("api_key=abcdefghijklmnop1234"),
    st.lists(st.text(max_size=4), max_size=2),
)


_KEYS = st.one_of(
    st.sampled_from(
        [
            "source_kind",
            "source_ref",
            "actor_ref",
            "actor_role",
            "effective_decision",
            "guard_passed",
            "review_ref",
            "raw_content_captured",
            "state",
            "expires_at",
            "supersedes_refs",
            "superseded_by",
            "workspace_ref",
            "surface_ids",
            "reasoning_summary",
        ]
    ),
    st.text(min_size=1, max_size=20),
)


@given(block=st.sampled_from(_BLOCKS), key=_KEYS, value=_VALUES)
def test_any_edit_of_a_block_is_typed_or_refused_and_nothing_unsafe_is_recalled(
    block: str, key: str, value: Any
) -> None:
    """Invariant: an edited v0 record either builds as a strict record or raises a typed error;
    a recalled legacy item never claims raw content or a failed guard."""
    data = copy.deepcopy(original())
    data[block] = {**data[block], key: value}
    try:
        record = from_plain(LegacyActiveRecord, data)
    except RecordValidationError:
        assert not _recalled(data)
        return
    assert record.privacy is None or record.privacy.raw_content_captured is False
    assert record.activation_lineage is None or record.activation_lineage.guard_passed is True


def test_a_legacy_hard_policy_is_never_recalled() -> None:
    """A v0 record names no checkpoint and no actor anyone could vouch for: one written
    into a hard-policy corpus by anyone with write access used to reach the model,
    labelled hard_policy, past the standing policy and the authority source."""
    provider = InMemoryProvider()
    store(provider, json.dumps(original(target_class="hard_policy")))
    session = recall(
        request(),
        corpus=corpus(class_id="hard_policy"),
        checkpoint=checkpoint(),
        binding=binding(),
        provider=provider,
        now=NOW,
    )
    assert session.items == ()
