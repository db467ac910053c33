"""``ingest()``: statuses, exact readback, idempotency, fail-open (reference §9.3-9.4).

Contract sentences protected here (seeds, "Minimal ingest loop"; issue 8 item 5):

- "A reward_memory_ingest_receipt_v0 reports activated and memory_available_for_recall=true
  only when resource ref, candidate ref, and canonical content digest all match."
- "Provider unavailability, pending commit, or readback mismatch fails open and does not
  block the caller's normal work."
- "observed_at is the immutable first-observed event timestamp and must be reused on
  retries." -- a retry with another observed_at is a clear conflict, never a duplicate.
- "The provider target binds both standing-policy and candidate digests so a policy
  revision cannot silently reuse an older activation." (gap 5)
- "--execute is off by default; dry-run returns only planned." -- zero provider calls.
"""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _ingest_support import (
    NOW,
    OBSERVED,
    hard_binding,
    hard_corpus,
    hard_policy,
    ingest_hard,
    ingest_soft,
    soft_binding,
    soft_corpus,
    soft_event_data,
)
from reward_memory import schemas, wire
from reward_memory.digests import _CANONICAL
from reward_memory.errors import ProviderUnavailable, RecordValidationError
from reward_memory.grammars import format_utc
from reward_memory.ingestion import aingest, ingest, policy_digest, target_key
from reward_memory.providers.spi import ReadResult, WriteResult
from reward_memory.records.active import ActiveRecord
from reward_memory.records.ingest import INGEST_STATUSES, STATUS_REASON_CODES, IngestReceipt
from reward_memory.testing import InMemoryProvider


def _valid(receipt: IngestReceipt) -> dict[str, Any]:
    data = wire.dump(receipt)
    assert schemas.validate(data) == "reward_memory_ingest_receipt_v0"
    assert wire.load(data, IngestReceipt) == receipt
    return data


def _documents(provider: InMemoryProvider, binding: Any = None) -> dict[str, str]:
    return provider.documents((binding or hard_binding()).provider_scope)


# -- planned and activated ---------------------------------------------------------------


def test_dry_run_is_planned_with_zero_provider_calls() -> None:
    provider = InMemoryProvider()
    receipt = ingest_hard(provider=provider, execute=False)
    assert receipt.status == "planned"
    assert receipt.reason_codes == ("execute_required_for_resource_write",)
    assert receipt.write is not None
    assert receipt.write.status == "planned"
    assert receipt.next_recall is not None
    assert receipt.next_recall.mode == "function_boundary"
    assert provider.call_count() == 0
    assert receipt.provider_call_count == 0
    assert not receipt.memory_available_for_recall
    _valid(receipt)


def test_dry_run_is_the_default_and_needs_no_provider() -> None:
    receipt = ingest(
        soft_event_data(),
        adapter="scoped_feedback",
        corpus=soft_corpus(),
        standing_policy=soft_policy_data(),
        binding=soft_binding(),
        provider=None,
        authority=None,
        observed_at=OBSERVED,
        now=NOW,
    )
    assert receipt.status == "planned"


def soft_policy_data() -> dict[str, Any]:
    from _ingest_support import soft_policy

    return wire.dump(soft_policy())


def test_execute_activates_with_exact_readback_and_one_recall() -> None:
    provider = InMemoryProvider()
    receipt = ingest_hard(provider=provider)
    assert receipt.status == "activated"
    assert receipt.reason_codes == ()
    assert receipt.exact_readback_verified
    assert receipt.memory_available_for_recall
    assert receipt.external_writes_performed
    assert not receipt.deduplicated
    assert receipt.write is not None
    assert receipt.write.status == "created"
    assert receipt.readback is not None
    assert receipt.readback.query_kind == "ingest_verification"
    assert receipt.readback.mode == "function_boundary"
    assert receipt.readback.corpus_id == hard_corpus().corpus_id
    assert receipt.provider_call_count == provider.call_count()
    assert provider.call_counts()["write"] == 1
    # the stored record is the activation the receipt names, activated at observed_at
    (content,) = _documents(provider).values()
    stored = json.loads(content)
    assert stored["activation_ref"] == receipt.activation_ref
    assert stored["activated_at"] == OBSERVED
    assert stored["candidate_ref"] == receipt.candidate_ref
    assert stored["authority"]["checkpoint_ref"] == "repository:authority-map"
    _valid(receipt)


def test_the_receipt_is_public_safe() -> None:
    """No summary, no reasoning, no raw provider ref, no scope ref in the receipt."""
    provider = InMemoryProvider()
    receipt = ingest_hard(provider=provider)
    text = json.dumps(_valid(receipt))
    record = json.loads(next(iter(_documents(provider).values())))
    assert record["content_summary"] not in text
    assert record["review"]["reasoning_summary"] not in text
    assert hard_binding().scope_ref not in text
    for raw_ref in _documents(provider):
        assert raw_ref not in text


def test_the_soft_route_activates_without_authority() -> None:
    provider = InMemoryProvider()
    receipt = ingest_soft(provider=provider)
    assert receipt.status == "activated"
    record = json.loads(next(iter(_documents(provider, soft_binding()).values())))
    assert record["authority"] == {"level": "advisory", "action_scopes": [], "checkpoint_ref": None}


# -- idempotency, conflicts, revisions ---------------------------------------------------


def test_a_replay_is_deduplicated_with_no_second_record() -> None:
    provider = InMemoryProvider()
    first = ingest_hard(provider=provider)
    again = ingest_hard(provider=provider)
    assert again.status == "activated"
    assert again.deduplicated
    assert not again.external_writes_performed
    assert again.write is not None
    assert again.write.status == "unchanged"
    for name in ("candidate_ref", "activation_ref", "record_ref", "target_ref", "provider_ref"):
        assert getattr(again, name) == getattr(first, name)
    assert len(_documents(provider)) == 1
    _valid(again)


def test_a_retry_with_another_observed_at_is_a_conflict_never_a_duplicate() -> None:
    provider = InMemoryProvider()
    first = ingest_hard(provider=provider)
    retry = ingest_hard(provider=provider, observed_at="2026-11-01T12:30:00Z")
    assert retry.status == "conflict"
    assert retry.reason_codes == ("provider_target_content_conflict",)
    assert retry.candidate_ref == first.candidate_ref
    assert retry.target_ref == first.target_ref
    assert retry.activation_ref != first.activation_ref
    assert not retry.deduplicated
    assert not retry.external_writes_performed
    assert not retry.memory_available_for_recall
    assert len(_documents(provider)) == 1
    (content,) = _documents(provider).values()
    assert json.loads(content)["activation_ref"] == first.activation_ref  # never overwritten
    _valid(retry)


def test_the_same_instant_in_another_spelling_is_the_same_activation() -> None:
    provider = InMemoryProvider()
    first = ingest_hard(provider=provider)
    again = ingest_hard(provider=provider, observed_at="2026-11-01T13:00:00+01:00")
    assert again.status == "activated"
    assert again.deduplicated
    assert again.activation_ref == first.activation_ref


@pytest.mark.parametrize(
    "revision",
    [
        {"reviewer_ref": "reviewer:someone-new"},
        {"allowed_source_kinds": ("maintainer_correction", "maintainer_review")},
        {
            "allowed_actor_roles": (
                "verified_project_owner_or_operator",
                "verified_repository_core_contributor",
            )
        },
    ],
)
def test_a_revised_policy_never_reuses_an_older_activation(revision: dict[str, Any]) -> None:
    """Gap 5: the target binds the digest of the whole policy, not only its id."""
    provider = InMemoryProvider()
    old = ingest_hard(provider=provider)
    revised = hard_policy(**revision)
    assert revised.policy_id == hard_policy().policy_id
    new = ingest_hard(provider=provider, standing_policy=revised)
    assert new.status == "activated"
    assert not new.deduplicated
    assert new.policy_digest != old.policy_digest
    assert new.target_ref != old.target_ref
    assert new.activation_ref != old.activation_ref
    assert new.candidate_ref == old.candidate_ref  # same event, same candidate
    assert len(_documents(provider)) == 2


def test_the_target_binds_policy_and_candidate_digests() -> None:
    receipt = ingest_hard()
    assert receipt.candidate_ref is not None
    key = target_key(hard_policy(), receipt.candidate_ref)
    assert key == (
        f"reward-memory-{policy_digest(hard_policy())}-"
        f"{receipt.candidate_ref.removeprefix('candidate:')}.json"
    )
    assert receipt.policy_digest == policy_digest(hard_policy())


def test_a_reworded_reasoning_is_the_same_candidate_and_target() -> None:
    """§9.4: candidate_ref excludes reasoning."""
    a = ingest_soft()
    b = ingest_soft(
        soft_event_data(
            reasoning={
                "summary": "Reworded.",
                "confidence": "high",
                "confidence_basis": "Another basis.",
            }
        )
    )
    assert a.candidate_ref == b.candidate_ref
    assert a.target_ref == b.target_ref
    c = ingest_soft(soft_event_data(summary="Lead the review summary with the open questions."))
    assert c.candidate_ref != a.candidate_ref
    assert c.target_ref != a.target_ref


# -- fail open ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("faults", "status", "reasons"),
    [
        ({"unavailable": True}, "provider_unavailable", ("provider_write_failed",)),
        # A timeout says so beside the failed step (the provider's own reason).
        (
            {"times_out": True},
            "provider_unavailable",
            ("provider_timeout", "provider_write_failed"),
        ),
        (
            {"slow_seconds": 2.0},
            "provider_unavailable",
            ("provider_timeout", "provider_write_failed"),
        ),
        (
            {"corrupt_readback": True},
            "readback_unverified",
            ("exact_provider_readback_unverified",),
        ),
        ({"search_misses": True}, "committed_pending", ("provider_index_pending",)),
    ],
)
def test_each_fault_switch_fails_open_with_a_status(
    faults: dict[str, Any], status: str, reasons: tuple[str, ...]
) -> None:
    provider = InMemoryProvider(**faults)
    receipt = ingest_hard(provider=provider, binding=hard_binding(timeout_seconds=1))
    assert receipt.status == status
    assert receipt.reason_codes == reasons
    assert not receipt.memory_available_for_recall
    assert not receipt.exact_readback_verified
    assert receipt.fail_open
    assert not receipt.provider_failure_is_user_gate
    _valid(receipt)


class _Wrapped(InMemoryProvider):
    """A real provider with one operation replaced (fault injection only)."""

    def __init__(self, **replace: Any) -> None:
        super().__init__()
        self.replace = replace

    def write(self, **kwargs: Any) -> WriteResult:
        if "write" in self.replace:
            return self.replace["write"](self, **kwargs)  # type: ignore[no-any-return]
        return super().write(**kwargs)

    def read(self, **kwargs: Any) -> ReadResult:
        if "read" in self.replace:
            return self.replace["read"](self, **kwargs)  # type: ignore[no-any-return]
        return super().read(**kwargs)

    def search(self, **kwargs: Any) -> Any:
        if "search" in self.replace:
            return self.replace["search"](self, **kwargs)
        return super().search(**kwargs)

    def read_key(self, **kwargs: Any) -> ReadResult:
        if "read_key" in self.replace:
            return self.replace["read_key"](self, **kwargs)  # type: ignore[no-any-return]
        return super().read_key(**kwargs)


class _Unequal:
    def __eq__(self, other: object) -> bool:
        raise RuntimeError("no comparison")

    __hash__ = None  # type: ignore[assignment]


class _EqualsAll(str):
    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = str.__hash__


def _raise(*_: Any, **__: Any) -> Any:
    raise ProviderUnavailable("down", reason_code="provider_down")


def _explode(*_: Any, **__: Any) -> Any:
    raise ZeroDivisionError


def _cancelled(*_: Any, **__: Any) -> Any:
    raise asyncio.CancelledError  # a BaseException, not an Exception


def _generator_exit(*_: Any, **__: Any) -> Any:
    raise GeneratorExit


@pytest.mark.parametrize(
    ("replace", "status", "reason"),
    [
        ({"write": _explode}, "provider_unavailable", "provider_write_failed"),
        ({"write": lambda *a, **k: None}, "provider_unavailable", "provider_answer_malformed"),
        (
            {"write": lambda *a, **k: WriteResult(ref="", status="created", content_sha256="0")},
            "provider_unavailable",
            "provider_answer_malformed",
        ),
        (
            {"write": lambda *a, **k: WriteResult(ref="r", status="weird", content_sha256="0")},  # type: ignore[arg-type]
            "provider_unavailable",
            "provider_answer_malformed",
        ),
        # A status of another type may compare or hash as it likes: never a crash.
        *(
            (
                {
                    "write": lambda *a, _s=odd, **k: WriteResult(
                        ref="r", status=_s, content_sha256="0"
                    )
                },
                "provider_unavailable",
                "provider_answer_malformed",
            )
            for odd in (_Unequal(), [], _EqualsAll("weird"))
        ),
        # A marker read answering ``found=1``: neither open nor closed, so no write.
        (
            {
                "read_key": lambda self, **k: ReadResult(
                    ref="r", found=1 if InMemoryProvider.read_key(self, **k).found else 0
                )
            },
            "provider_unavailable",
            "provider_write_failed",
        ),
        ({"read": _raise}, "provider_unavailable", "provider_read_failed"),
        ({"read": lambda *a, **k: None}, "provider_unavailable", "provider_read_failed"),
        (
            {"read": lambda self, **k: ReadResult(ref=k["ref"], found=False)},
            "readback_unverified",
            "exact_provider_readback_unverified",
        ),
        (
            {
                "read": lambda self, **k: ReadResult(
                    ref="elsewhere", found=True, content=InMemoryProvider.read(self, **k).content
                )
            },
            "readback_unverified",
            "exact_provider_readback_unverified",
        ),
        ({"search": _raise}, "provider_unavailable", "provider_verification_recall_failed"),
        # Not an Exception: a failure all the same (recall treats it so too).
        ({"write": _cancelled}, "provider_unavailable", "provider_write_failed"),
        ({"read": _generator_exit}, "provider_unavailable", "provider_read_failed"),
        ({"read_key": _cancelled}, "provider_unavailable", "provider_write_failed"),
        ({"search": _cancelled}, "provider_unavailable", "provider_verification_recall_failed"),
    ],
)
def test_every_provider_misbehaviour_fails_open(
    replace: dict[str, Any], status: str, reason: str
) -> None:
    receipt = ingest_hard(provider=_Wrapped(**replace))
    assert receipt.status == status
    assert receipt.reason_codes == (reason,)
    assert not receipt.memory_available_for_recall
    _valid(receipt)


def test_a_str_enum_write_status_is_its_plain_value() -> None:
    """A provider answering with an ``enum.StrEnum`` status (a str subclass) is read by
    its characters, not refused as malformed."""
    import enum

    class Status(enum.StrEnum):
        CREATED = "created"

    def write(self: InMemoryProvider, **kwargs: Any) -> WriteResult:
        done = InMemoryProvider.write(self, **kwargs)
        return WriteResult(ref=done.ref, status=Status.CREATED, content_sha256=done.content_sha256)  # type: ignore[arg-type]

    receipt = ingest_hard(provider=_Wrapped(write=write))
    assert receipt.status == "activated"


def test_a_url_string_is_no_provider() -> None:
    with pytest.raises(RecordValidationError) as caught:
        ingest_hard(provider="sqlite:///tmp/x.db")  # type: ignore[arg-type]
    assert (caught.value.path, caught.value.code) == ("provider", "wrong_type")


def test_a_readback_that_differs_only_by_a_trailing_newline_is_still_exact() -> None:
    """The digest is over canonical text (reference §8.3)."""

    def newline(self: InMemoryProvider, **kwargs: Any) -> ReadResult:
        read = InMemoryProvider.read(self, **kwargs)
        return ReadResult(ref=read.ref, found=True, content=(read.content or "") + "\n")

    receipt = ingest_hard(provider=_Wrapped(read=newline))
    assert receipt.status == "activated"


def test_a_mutated_readback_is_never_activated() -> None:
    def mutate(self: InMemoryProvider, **kwargs: Any) -> ReadResult:
        read = InMemoryProvider.read(self, **kwargs)
        assert read.content is not None
        data = json.loads(read.content)
        data["review"]["reasoning_summary"] = "Changed by the provider."
        return ReadResult(ref=read.ref, found=True, content=json.dumps(data))

    receipt = ingest_hard(provider=_Wrapped(read=mutate))
    assert receipt.status == "readback_unverified"
    assert receipt.external_writes_performed  # written, but not available


def test_every_status_is_reachable_and_has_its_reasons() -> None:
    seen = {
        ingest_hard().status,
        ingest_hard(provider=InMemoryProvider()).status,
        ingest_hard(provider=InMemoryProvider(), authority=None).status,
        ingest_hard(provider=InMemoryProvider(unavailable=True)).status,
        ingest_hard(provider=InMemoryProvider(corrupt_readback=True)).status,
        ingest_hard(provider=InMemoryProvider(search_misses=True)).status,
    }
    provider = InMemoryProvider()
    ingest_hard(provider=provider)
    seen.add(ingest_hard(provider=provider, observed_at="2026-11-01T12:00:01Z").status)
    assert seen == set(INGEST_STATUSES)
    assert set(STATUS_REASON_CODES) | {"guard_blocked"} == set(INGEST_STATUSES)


# -- the invariant: activated only with an exact readback --------------------------------


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    mutation=st.sampled_from(["none", "flip", "append", "drop", "other_record"]),
    found=st.booleans(),
    same_ref=st.booleans(),
    search_misses=st.booleans(),
)
def test_nothing_is_activated_unless_it_reads_back_exactly(
    mutation: str, found: bool, same_ref: bool, search_misses: bool
) -> None:
    def read(self: InMemoryProvider, **kwargs: Any) -> ReadResult:
        real = InMemoryProvider.read(self, **kwargs)
        content = real.content or ""
        if mutation == "flip":
            content = content.replace("Keep", "Kept", 1)
        elif mutation == "append":
            content = content + " "
        elif mutation == "drop":
            content = content[:-1]
        elif mutation == "other_record":
            content = content.replace("issue_fix_policies", "another_corpus")
        return ReadResult(
            ref=real.ref if same_ref else real.ref + "x", found=found, content=content
        )

    provider = _Wrapped(read=read)
    if search_misses:
        provider.set_faults(search_misses=True)
    receipt = ingest_hard(provider=provider)
    exact = mutation == "none" and found and same_ref
    assert (receipt.status == "activated") == (exact and not search_misses)
    assert receipt.memory_available_for_recall == (receipt.status == "activated")


# -- sqlite, async, programmer errors ----------------------------------------------------


def test_sqlite_store_activates_and_replays(tmp_path: Any) -> None:
    from reward_memory.providers.discovery import get_provider

    corpus = hard_corpus(provider_id="sqlite")
    binding = hard_binding(provider_id="sqlite")
    url = f"sqlite:///{tmp_path / 'store.db'}"
    provider = get_provider(url)
    try:
        first = ingest_hard(provider=provider, corpus=corpus, binding=binding)
        assert first.status == "activated"
        assert not first.deduplicated
    finally:
        provider.close()
    reopened = get_provider(url)  # a new connection: the record survived
    try:
        again = ingest_hard(provider=reopened, corpus=corpus, binding=binding)
        assert again.status == "activated"
        assert again.deduplicated
        assert reopened.inventory(scope=binding.provider_scope).record_count == 1
    finally:
        reopened.close()


def test_a_revised_policy_on_sqlite_activates_its_own_target(tmp_path: Any) -> None:
    from reward_memory.providers.discovery import get_provider

    corpus = hard_corpus(provider_id="sqlite")
    binding = hard_binding(provider_id="sqlite")
    provider = get_provider(f"sqlite:///{tmp_path / 'store.db'}")
    try:
        old = ingest_hard(provider=provider, corpus=corpus, binding=binding)
        new = ingest_hard(
            provider=provider,
            corpus=corpus,
            binding=binding,
            standing_policy=hard_policy(reviewer_ref="reviewer:someone-new"),
        )
        assert old.status == new.status == "activated"
        assert old.target_ref != new.target_ref
        assert provider.inventory(scope=binding.provider_scope).record_count == 2
    finally:
        provider.close()


def test_aingest_is_the_async_twin() -> None:
    provider = InMemoryProvider()
    receipt = asyncio.run(
        aingest(
            soft_event_data(),
            adapter="scoped_feedback",
            corpus=soft_corpus(),
            standing_policy=soft_policy_data(),
            binding=soft_binding(),
            provider=provider,
            authority=None,
            observed_at=OBSERVED,
            execute=True,
            now=NOW,
        )
    )
    assert receipt.status == "activated"
    assert not receipt.deduplicated
    replay = ingest_soft(provider=provider)
    assert replay.deduplicated
    assert (replay.target_ref, replay.activation_ref) == (
        receipt.target_ref,
        receipt.activation_ref,
    )


@pytest.mark.parametrize(
    ("changes", "path"),
    [
        ({"adapter": "openviking"}, "adapter"),
        ({"corpus": {"corpus_id": "x"}}, "corpus"),
        ({"binding": None}, "binding"),
        ({"authority": object()}, "authority"),
        ({"observed_at": "yesterday"}, "observed_at"),
        ({"observed_at": 12}, "observed_at"),
        ({"execute": 1}, "execute"),
        ({"execute": True, "provider": None}, "provider"),
        ({"standing_policy": {"schema_version": "reward_memory_standing_policy_v0"}}, None),
    ],
)
def test_programmer_errors_raise_typed_errors(changes: dict[str, Any], path: str | None) -> None:
    with pytest.raises(RecordValidationError) as info:
        ingest_hard(**changes)
    if path is not None:
        assert info.value.path == path


def test_a_naive_clock_is_refused() -> None:
    from datetime import datetime

    with pytest.raises(RecordValidationError):
        ingest_hard(now=datetime(2026, 1, 1))


def test_the_written_record_parses_to_what_decoding_gives() -> None:
    """The ingest loop hands the record it wrote to its verification recall; that
    shortcut must give exactly what decoding and validating the same content gives,
    and it leaves nothing behind: the next recall decodes the stored bytes itself."""
    from reward_memory._recall import readback

    for run, bound in ((ingest_hard, hard_binding()), (ingest_soft, soft_binding())):
        provider = InMemoryProvider()
        readback.parse.cache_clear()
        assert run(provider=provider).status == "activated"
        assert readback.parse.cache_info().currsize == 0  # exact bytes: nothing decoded
        (content,) = provider.documents(bound.provider_scope).values()
        seeded = readback.written(wire.load(json.loads(content), ActiveRecord), content)
        decoded = readback.parse(content)
        assert decoded is not None
        names = [name for name in readback.Parsed.__slots__ if not name.startswith("_")]
        assert [
            getattr(seeded, name) for name in (*names, "expires_at", "born_at", "content_digest")
        ] == [
            getattr(decoded, name) for name in (*names, "expires_at", "born_at", "content_digest")
        ]


def test_the_stored_content_is_the_canonical_json_of_the_record() -> None:
    from reward_memory.digests import canonical_json
    from reward_memory.ingestion import canonical_text
    from reward_memory.records._plain import to_plain

    for run, bound in ((ingest_hard, hard_binding()), (ingest_soft, soft_binding())):
        provider = InMemoryProvider()
        run(provider=provider)
        (content,) = provider.documents(bound.provider_scope).values()
        record = wire.load(json.loads(content), ActiveRecord)
        assert canonical_text(record) == content
        assert content == canonical_json(to_plain(record)).decode("utf-8")


_EXAMPLE_PACKETS = sorted(
    path
    for path in (Path(__file__).resolve().parents[1] / "examples").rglob("*.json")
    if json.loads(path.read_text(encoding="utf-8")).get("schema_version") in wire.PACKET_TYPES
)


@pytest.mark.parametrize("path", _EXAMPLE_PACKETS, ids=lambda path: path.name)
def test_the_one_pass_writer_is_the_canonical_encoder(path: Path) -> None:
    """canonical_text(record) is byte for byte the canonical JSON of to_plain(record),
    for every record class an example packet holds (None-omitting ones included)."""
    from reward_memory.digests import canonical_json
    from reward_memory.ingestion import canonical_text
    from reward_memory.records._plain import to_plain

    data = json.loads(path.read_text(encoding="utf-8"))
    record = wire.load(data)
    assert canonical_text(record) == canonical_json(to_plain(record)).decode("utf-8")
    assert canonical_text(record) == _CANONICAL.encode(to_plain(record))


@settings(max_examples=60, deadline=None)
@given(
    summary=st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=80),
    number=st.integers() | st.floats(allow_nan=False, allow_infinity=False),
)
def test_the_writer_escapes_text_as_the_encoder_does(summary: str, number: float) -> None:
    """Quotes, backslashes, control and non-ASCII characters, numbers, nested data:
    the same text as the canonical encoder (a record class that checks nothing)."""
    from reward_memory.digests import canonical_json
    from reward_memory.ingestion import canonical_text
    from reward_memory.records._plain import to_plain
    from reward_memory.records.application import ModelDecision

    decision = ModelDecision(
        outcome="ignored",
        output={"k": [summary, 1, number, None, True], summary: {"z": 0, "a": [False]}},
        memory_refs=("provider-0123456789abcdef0123", summary),
        reasoning_summary=summary,
        current_artifact_verified=True,
    )
    assert canonical_text(decision) == canonical_json(to_plain(decision)).decode("utf-8")
    # The orjson path and the standard encoder: one text (floats, big ints, surrogates too).
    assert canonical_text(decision) == _CANONICAL.encode(to_plain(decision))


def test_the_config_adapter_id_and_its_alias_are_one_adapter() -> None:
    """Config v1 names the Issue Fix adapter issue_fix_maintainer_feedback (reference §10.2)."""
    by_id = ingest_hard(adapter="issue_fix_maintainer_feedback")
    by_alias = ingest_hard(adapter="issue_fix")
    assert by_id == by_alias
    assert by_id.adapter == "issue_fix_maintainer_feedback"
    assert ingest_soft().adapter == "scoped_feedback"


@settings(max_examples=300, deadline=None)
@given(
    policy_digest=st.text(alphabet="0123456789abcdef", min_size=12, max_size=12),
    candidate_digest=st.text(alphabet="0123456789abcdef", min_size=20, max_size=20)
    | st.sampled_from(["aa" + "0" * 18, "aaaaaaaaaaaaaaaaaaaa", "d" * 20, "e" * 20]),
)
def test_the_standing_accept_is_the_validated_decision(
    policy_digest: str, candidate_digest: str
) -> None:
    """The accept ingest sets (review_ref from two hex digests) passes every validator."""
    from reward_memory.ingestion import ACCEPT_REASONING, accept_decision
    from reward_memory.records.candidate import ReviewDecision

    policy = hard_policy()
    review_ref = f"review:{policy_digest}:{candidate_digest}"
    validated = ReviewDecision(
        decision="accept",
        reviewer_ref=policy.reviewer_ref,
        review_ref=review_ref,
        reasoning_summary=ACCEPT_REASONING,
    )
    assert accept_decision(policy, review_ref) == validated


@settings(max_examples=300, deadline=None)
@given(
    value=st.datetimes(
        min_value=datetime(1900, 1, 1), max_value=datetime(2200, 1, 1), timezones=st.timezones()
    ).map(lambda moment: moment.isoformat())
    # UTC as datetime.isoformat() and the stored spelling write it (the cheap path).
    | st.datetimes(
        min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=st.just(UTC)
    ).flatmap(lambda moment: st.sampled_from([moment.isoformat(), format_utc(moment)]))
    | st.sampled_from(
        [
            "2026-11-01T12:00:00Z",
            "2026-11-01T12:00Z",
            "2026-02-30T00:00:00Z",
            "2026-02-30T00:00:00+00:00",
            "2026-11-01T12:00:00.000000+00:00",
            "2026-11-01T12:00:00.000000Z",
            "2026-11-01T12:00:00.5+00:00",
            "2026-11-01T12:00+00:00",
            "2026-11-01T24:00:00+00:00",
            "2026-11-01T12:00:00-00:00",
            "2026-11-01 12:00:00+00:00",
            "0000-01-01T00:00:00+00:00",
            "+00:00",
        ]
    )
    | st.text(max_size=30)
    | st.text(max_size=30).map(lambda text: text + "+00:00")
)
def test_observed_at_is_normalised_as_every_timestamp_is(value: str) -> None:
    """ingest's activated_at is normalize_timestamp(observed_at); its errors are the same
    (the stored spelling and UTC as isoformat() spells it take a cheaper path)."""
    from reward_memory.grammars import normalize_timestamp, parse_timestamp
    from reward_memory.ingestion import _observed

    def outcome(make: Any) -> Any:
        try:
            return make()
        except RecordValidationError as exc:
            return (exc.code, exc.path)

    ours = outcome(lambda: _observed(value))
    expected = outcome(lambda: normalize_timestamp(value, "observed_at"))
    if isinstance(ours[0], datetime):
        moment, stamp = ours
        assert stamp == expected
        assert moment == parse_timestamp(stamp)
    else:
        assert ours == expected


def test_the_hooked_writer_refuses_what_it_cannot_prove_and_the_text_stays_exact() -> None:
    """A str subclass, a record subclass, a lone surrogate: the standard encoder's text."""
    from reward_memory import _canonical_text
    from reward_memory.digests import sorted_dumps
    from reward_memory.ingestion import canonical_text
    from reward_memory.records._plain import to_plain
    from reward_memory.records.envelope import RecordScope

    class Token(str):
        __slots__ = ()

    class WiderScope(RecordScope):
        pass

    provider = InMemoryProvider()
    ingest_hard(provider=provider)
    (content,) = provider.documents(hard_binding().provider_scope).values()
    record = wire.load(json.loads(content), ActiveRecord)
    for _ in range(20):  # past the digests' stdlib warm-up: orjson is in use
        canonical_text(record)
    assert sorted_dumps() is not None
    assert _canonical_text._hookable(ActiveRecord)
    scope = record.scope
    odd = [
        attrs.evolve(record, corpus_id=Token(record.corpus_id)),
        attrs.evolve(record, scope=WiderScope(**attrs.asdict(scope, recurse=False))),
    ]
    for changed in (record, *odd):
        assert canonical_text(changed) == _CANONICAL.encode(to_plain(changed))
    assert canonical_text(record) == content
