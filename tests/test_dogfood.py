"""Stage-5 dogfood receipts (seeds, "Stage 5 dogfood receipts and operator controls").

The contract sentences protected here:

- "reward_memory_dogfood_receipt_v0 derives hit, miss, or refute from the
  existing application outcome instead of trusting a caller-provided label"
  (v1 spelling: applied / not_applied / refuted);
- "A hit or refute is invalid unless the selected provider result was read
  back exactly and the current artifact was verified";
- "A caller supplies a compact real-module observation whose artifact
  reference matches the application receipt";
- "The receipt retains only opaque or hashed memory references, a compact
  verified outcome summary, latency, model-token and provider-call counts,
  intervention count, and optional compact bot feedback. It retains no raw
  provider content and grants no new action authority."

The builders at the top are shared by the other dogfood test modules.
"""

from __future__ import annotations

import copy
import hashlib
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reward_memory import schemas, wire
from reward_memory.dogfood import application_receipt_id, build_receipt, load_observation
from reward_memory.errors import RecordValidationError
from reward_memory.records._plain import from_plain, load_plain, to_plain
from reward_memory.records.application import ApplicationReceipt
from reward_memory.records.dogfood import DISPOSITION_OF, DogfoodReceipt
from reward_memory.records.recall import QueryEvidence

ISSUE_FIX_SURFACE = "issue_fix.patch_planning"
LOOPX_SURFACE = "semantic_preference.selection"
RAW_REFS = ("viking://resources/memory/one.json", "viking://resources/memory/two.json")
DIGESTS = tuple(sorted(hashlib.sha256(ref.encode()).hexdigest()[:16] for ref in RAW_REFS))
SECRET = "sk-live-ABCDEFGHIJKLMNOPQRST1234"


def app_receipt(
    outcome: str = "applied", *, surface_id: str = ISSUE_FIX_SURFACE, n: int = 0, **changes: Any
) -> ApplicationReceipt:
    """A real, validated Stage-3 application receipt (``n`` varies its identity)."""
    model = outcome in ("applied", "ignored", "refuted")
    fields: dict[str, Any] = {
        "application_id": f"application:{outcome}:{n}",
        "artifact_ref": f"artifact:pr-{n}",
        "corpus_id": "review_policy",
        "surface_id": surface_id,
        "mode": "function_boundary",
        "query_kind": "business_recall",
        "query_evidence": (
            QueryEvidence(query_digest="0123456789abcdef", query_summary="reviewed patch policy"),
        ),
        "outcome": outcome,
        "memory_ref_digests": DIGESTS if outcome in ("applied", "refuted") else (),
        "reasoning_summary": "the reviewed policy was weighed against the current diff",
        "current_artifact_verified": model,
        "result_readback_verified": outcome != "not_available",
        "provider_call_count": 1,
    }
    fields.update(changes)
    return ApplicationReceipt(**fields)


def observation(
    receipt: ApplicationReceipt | None = None,
    *,
    family: str = "issue_fix",
    domain_id: str | None = None,
    **changes: Any,
) -> dict[str, Any]:
    """The wire mapping of one compact observation over ``receipt``."""
    receipt = receipt or app_receipt()
    data: dict[str, Any] = {
        "raw_content_captured": False,
        "domain_family": family,
        "domain_id": domain_id or f"{family}.patch_planning",
        "application_receipt": to_plain(receipt),
        "module_outcome": {
            "artifact_ref": receipt.artifact_ref,
            "outcome_verified": True,
            "outcome_ref": f"outcome:{receipt.application_id}",
            "outcome_status": "merged",
            "summary": "The focused fix merged after review.",
        },
        "cost": {"latency_ms": 420, "model_tokens": 1800, "provider_call_count": 1},
        "intervention": {"count": 0, "summary": None},
        "bot_feedback": {"captured": False, "summary": None},
    }
    data.update(changes)
    return data


def loopx_receipt(outcome: str = "ignored", n: int = 1) -> ApplicationReceipt:
    return app_receipt(outcome, surface_id=LOOPX_SURFACE, n=n)


def built(outcome: str = "applied", **changes: Any) -> DogfoodReceipt:
    family = changes.pop("family", "issue_fix")
    surface = ISSUE_FIX_SURFACE if family == "issue_fix" else LOOPX_SURFACE
    return build_receipt(
        observation(app_receipt(outcome, surface_id=surface), family=family, **changes)
    )


def refusal(call: Any) -> tuple[str, str]:
    with pytest.raises(RecordValidationError) as info:
        call()
    return info.value.code, info.value.path


# -- the disposition is derived from the application outcome --------------------------------


@pytest.mark.parametrize(
    ("outcome", "disposition"),
    [
        ("applied", "applied"),
        ("refuted", "refuted"),
        ("ignored", "not_applied"),
        ("failed", "not_applied"),
        ("not_available", "not_applied"),
        ("available_not_applied", "not_applied"),
    ],
)
def test_every_application_outcome_maps_to_its_disposition(outcome: str, disposition: str) -> None:
    receipt = built(outcome)
    assert (receipt.application_outcome, receipt.application_disposition) == (outcome, disposition)
    packet = to_plain(receipt)
    schemas.validate(packet)
    assert wire.load(packet) == receipt


def test_the_mapping_covers_every_application_outcome() -> None:
    from reward_memory.records.application import OUTCOMES

    assert set(DISPOSITION_OF) == set(OUTCOMES)


@pytest.mark.parametrize("label", ["outcome", "application_disposition", "disposition", "hit"])
def test_a_caller_label_is_refused_not_trusted(label: str) -> None:
    """No field lets a caller say hit / miss / refute: the label is an unknown field."""
    data = observation(app_receipt("ignored"), **{label: "hit"})
    assert refusal(lambda: build_receipt(data)) == ("unknown_field", f"$.{label}")


def test_a_tampered_disposition_is_refused_when_a_receipt_is_loaded() -> None:
    packet = to_plain(built("ignored"))
    packet["application_disposition"] = "applied"
    assert refusal(lambda: wire.load(packet))[1] == "$.application_disposition"


# -- hit and refute need exact readback and current-artifact verification -------------------


@pytest.mark.parametrize("outcome", ["refuted"])
@pytest.mark.parametrize("flag", ["result_readback_verified", "current_artifact_verified"])
def test_a_refute_without_verification_is_invalid(outcome: str, flag: str) -> None:
    unverified: dict[str, Any] = {flag: False}
    receipt = app_receipt(outcome, **unverified)
    data = observation(receipt)
    assert refusal(lambda: build_receipt(data)) == (
        "invalid_value",
        f"$.application_receipt.{flag}",
    )


def test_a_refute_without_a_memory_ref_is_invalid() -> None:
    data = observation(app_receipt("refuted", memory_ref_digests=()))
    assert refusal(lambda: build_receipt(data)) == (
        "invalid_value",
        "$.application_receipt.memory_ref_digests",
    )


@pytest.mark.parametrize("flag", ["result_readback_verified", "current_artifact_verified"])
def test_an_unverified_hit_cannot_even_be_a_receipt(flag: str) -> None:
    """An applied application receipt itself refuses to exist unverified (Stage 3)."""
    unverified: dict[str, Any] = {flag: False}
    with pytest.raises(RecordValidationError):
        app_receipt("applied", **unverified)


@pytest.mark.parametrize("flag", ["result_readback_verified", "current_artifact_verified"])
@pytest.mark.parametrize("outcome", ["applied", "refuted"])
def test_a_loaded_hit_or_refute_without_verification_is_refused(flag: str, outcome: str) -> None:
    packet = to_plain(built(outcome))
    packet["verification"][flag] = False
    assert refusal(lambda: wire.load(packet)) == ("invalid_value", f"$.verification.{flag}")


def test_a_miss_needs_no_verification() -> None:
    receipt = app_receipt(
        "ignored", current_artifact_verified=False, result_readback_verified=False
    )
    assert build_receipt(observation(receipt)).application_disposition == "not_applied"


# -- the module outcome matches the application receipt ------------------------------------


def test_the_module_artifact_must_be_the_receipts() -> None:
    data = observation()
    data["module_outcome"]["artifact_ref"] = "artifact:another"
    assert refusal(lambda: build_receipt(data)) == (
        "invalid_value",
        "$.module_outcome.artifact_ref",
    )


def test_an_application_receipt_without_an_artifact_is_refused() -> None:
    data = observation(app_receipt("ignored", artifact_ref=None))
    data["module_outcome"]["artifact_ref"] = "artifact:pr-0"
    assert refusal(lambda: build_receipt(data))[1] == "$.application_receipt.artifact_ref"


@pytest.mark.parametrize("value", [False, None, "true", 1])
def test_the_module_outcome_must_be_verified(value: Any) -> None:
    data = observation()
    data["module_outcome"]["outcome_verified"] = value
    assert refusal(lambda: build_receipt(data))[1] == "$.module_outcome.outcome_verified"


def test_the_module_outcome_must_say_it_was_verified() -> None:
    data = observation()
    del data["module_outcome"]["outcome_verified"]
    assert refusal(lambda: build_receipt(data)) == (
        "missing_field",
        "$.module_outcome.outcome_verified",
    )


def test_fewer_provider_calls_than_the_recall_made_is_a_contradiction() -> None:
    data = observation(app_receipt(provider_call_count=3))
    assert refusal(lambda: build_receipt(data)) == (
        "contradictory_observation",
        "$.cost.provider_call_count",
    )


@pytest.mark.parametrize("outcome", ["applied", "refuted"])
def test_a_hit_or_refute_claiming_readback_without_a_provider_call_is_a_contradiction(
    outcome: str,
) -> None:
    """Reference 11.1: a verified provider recall needs calls > 0."""
    data = observation(app_receipt(outcome, provider_call_count=0))
    assert refusal(lambda: build_receipt(data)) == (
        "contradictory_observation",
        "$.application_receipt.provider_call_count",
    )


@pytest.mark.parametrize(
    ("family", "domain_id", "surface", "path"),
    [
        ("issue_fix", "loopx.reviewer", ISSUE_FIX_SURFACE, "$.domain_id"),
        ("loopx", "issue_fix.patch_planning", LOOPX_SURFACE, "$.domain_id"),
        ("loopx", "loopx.", LOOPX_SURFACE, "$.domain_id"),
        (
            "issue_fix",
            "issue_fix.patch_planning",
            LOOPX_SURFACE,
            "$.application_receipt.surface_id",
        ),
        ("loopx", "loopx.reviewer", ISSUE_FIX_SURFACE, "$.application_receipt.surface_id"),
    ],
)
def test_the_domain_fits_its_family_and_surface(
    family: str, domain_id: str, surface: str, path: str
) -> None:
    data = observation(app_receipt(surface_id=surface), family=family, domain_id=domain_id)
    assert refusal(lambda: build_receipt(data)) == ("invalid_value", path)


@pytest.mark.parametrize("family", ["semantic", "", None])
def test_an_unknown_domain_family_is_refused(family: Any) -> None:
    data = observation(family=family)
    assert refusal(lambda: build_receipt(data))[1] == "$.domain_family"


# -- compact and public-safe -----------------------------------------------------------------


def test_the_receipt_keeps_only_hashed_refs_and_compact_facts() -> None:
    receipt = app_receipt("applied")
    data = observation(receipt)
    packet = to_plain(build_receipt(data))
    assert set(packet) == {
        "ok",
        "schema_version",
        "domain_family",
        "domain_id",
        "application_id",
        "application_receipt_id",
        "artifact_ref",
        "corpus_id",
        "surface_id",
        "application_outcome",
        "application_disposition",
        "module_outcome",
        "utility_evaluation",
        "utility_observation",
        "memory_ref_digests",
        "verification",
        "cost",
        "intervention",
        "bot_feedback",
        "receipt_id",
        "grants_new_action_authority",
        "raw_content_captured",
        "external_writes_performed",
    }
    text = json.dumps(packet)
    assert all(ref not in text for ref in RAW_REFS)
    assert receipt.reasoning_summary not in text  # the application receipt is hashed, not copied
    assert packet["memory_ref_digests"] == list(DIGESTS)
    assert packet["application_receipt_id"] == application_receipt_id(receipt)
    assert (
        packet["grants_new_action_authority"],
        packet["raw_content_captured"],
        packet["external_writes_performed"],
    ) == (False, False, False)
    assert packet["cost"] == data["cost"]


@pytest.mark.parametrize(
    ("where", "value"),
    [
        (("module_outcome", "summary"), f"merged; token={SECRET}"),
        (("module_outcome", "summary"), "see /home/alice/notes for the log"),
        (("module_outcome", "summary"), "x" * 361),
        (("intervention", "summary"), "y" * 241),
        (("module_outcome", "outcome_ref"), "outcome:/home/alice/x"),
    ],
)
def test_unsafe_or_overlong_text_is_refused(where: tuple[str, str], value: str) -> None:
    data = observation()
    data[where[0]][where[1]] = value
    if where[0] == "intervention":
        data["intervention"]["count"] = 1
    code, path = refusal(lambda: build_receipt(data))
    assert path == f"$.{where[0]}.{where[1]}"
    assert code in {"unsafe_text", "text_too_long", "invalid_format"}


@pytest.mark.parametrize("key", ["raw_log", "comment_body", "content"])
def test_raw_content_fields_are_unknown_fields(key: str) -> None:
    data = observation()
    data["module_outcome"][key] = "raw transcript"
    assert refusal(lambda: build_receipt(data)) == ("unknown_field", f"$.module_outcome.{key}")


@pytest.mark.parametrize("value", [True, None, 0])
def test_raw_content_captured_must_be_false(value: Any) -> None:
    data = observation(raw_content_captured=value)
    assert refusal(lambda: build_receipt(data))[1] == "$.raw_content_captured"


@pytest.mark.parametrize(
    ("part", "value", "path"),
    [
        ("intervention", {"count": 2, "summary": None}, "$.intervention.summary"),
        ("intervention", {"count": 0, "summary": "asked twice"}, "$.intervention.summary"),
        ("bot_feedback", {"captured": True, "summary": None}, "$.bot_feedback.summary"),
        ("bot_feedback", {"captured": False, "summary": "lgtm"}, "$.bot_feedback.summary"),
        (
            "cost",
            {"latency_ms": -1, "model_tokens": 0, "provider_call_count": 1},
            "$.cost.latency_ms",
        ),
        (
            "cost",
            {"latency_ms": True, "model_tokens": 0, "provider_call_count": 1},
            "$.cost.latency_ms",
        ),
    ],
)
def test_counts_and_their_summaries_agree(part: str, value: Any, path: str) -> None:
    data = observation(**{part: value})
    assert refusal(lambda: build_receipt(data))[1] == path


def test_interventions_and_bot_feedback_are_kept_compactly() -> None:
    data = observation(
        intervention={"count": 2, "summary": "maintainer  asked\nfor a narrower diff"},
        bot_feedback={"captured": True, "summary": "CI bot: all checks passed"},
    )
    receipt = build_receipt(data)
    assert receipt.intervention.summary == "maintainer asked for a narrower diff"
    assert (receipt.bot_feedback.captured, receipt.bot_feedback.summary) == (
        True,
        "CI bot: all checks passed",
    )


def test_bot_feedback_defaults_to_not_captured() -> None:
    data = observation()
    del data["bot_feedback"]
    receipt = build_receipt(data)
    assert (receipt.bot_feedback.captured, receipt.bot_feedback.summary) == (False, None)


def test_an_invalid_application_receipt_is_refused_with_its_path() -> None:
    data = observation()
    data["application_receipt"]["grants_new_action_authority"] = True
    assert (
        refusal(lambda: build_receipt(data))[1]
        == "$.application_receipt.grants_new_action_authority"
    )
    data = observation()
    data["application_receipt"]["memory_ref_digests"] = ["not-hex"]
    assert refusal(lambda: build_receipt(data))[1].startswith(
        "$.application_receipt.memory_ref_digests"
    )


def test_a_record_observation_is_built_like_its_mapping() -> None:
    data = observation()
    record = load_observation(data)
    assert build_receipt(record) == build_receipt(data)


def test_a_non_mapping_observation_is_a_type_error() -> None:
    assert refusal(lambda: build_receipt(["observation"]))[0] == "wrong_type"  # type: ignore[arg-type]


# -- identity --------------------------------------------------------------------------------


def test_the_receipt_id_is_the_settlement_identity() -> None:
    """Domain, costs, interventions and bot feedback are not part of the settlement."""
    receipt = app_receipt()
    first = build_receipt(observation(receipt))
    again = build_receipt(
        observation(
            receipt,
            domain_id="issue_fix.other",
            cost={"latency_ms": 1, "model_tokens": 2, "provider_call_count": 3},
            intervention={"count": 1, "summary": "one nudge"},
        )
    )
    assert first.receipt_id == again.receipt_id
    assert first.receipt_id.startswith("dogfood:")
    assert len(first.receipt_id) == len("dogfood:") + 20
    changed = observation(receipt)
    changed["module_outcome"]["outcome_status"] = "reverted"
    assert build_receipt(changed).receipt_id != first.receipt_id
    other = build_receipt(observation(app_receipt(n=7)))
    assert other.receipt_id != first.receipt_id


def test_the_receipt_id_is_recomputed_on_load() -> None:
    packet = to_plain(built())
    packet["receipt_id"] = "dogfood:" + "0" * 20
    assert refusal(lambda: wire.load(packet)) == ("invalid_value", "$.receipt_id")


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("module_outcome", "outcome_status"), "reverted"),
        (("module_outcome", "outcome_ref"), "outcome:forged"),
        (("application_receipt_id",), "rma_" + "1" * 64),
        (("application_outcome",), "refuted"),
    ],
)
def test_a_tampered_settlement_is_refused_on_load(path: tuple[str, ...], value: Any) -> None:
    packet = to_plain(built())
    target = packet
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    with pytest.raises(RecordValidationError):
        load_plain(packet, DogfoodReceipt)


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("raw_log", "x"),
        ("ok", False),
        ("grants_new_action_authority", True),
        ("memory_ref_digests", list(reversed(DIGESTS))),
    ],
)
def test_a_loaded_receipt_is_strict(key: str, value: Any) -> None:
    packet = to_plain(built())
    packet[key] = value
    with pytest.raises(RecordValidationError):
        wire.load(packet)
    with pytest.raises(RecordValidationError):
        load_plain(copy.deepcopy(packet), DogfoodReceipt)


def test_a_miss_names_no_memory_when_the_model_did_not_decide() -> None:
    packet = to_plain(built("failed"))
    packet["memory_ref_digests"] = [DIGESTS[0]]
    with pytest.raises(RecordValidationError):
        from_plain(DogfoodReceipt, packet)


_OUTCOME = st.sampled_from(sorted(DISPOSITION_OF))


@settings(max_examples=40, deadline=None)
@given(
    outcome=_OUTCOME,
    tokens=st.integers(0, 10**6),
    latency=st.integers(0, 10**6),
    calls=st.integers(1, 50),
)
def test_a_built_receipt_always_round_trips_and_re_validates(
    outcome: str, tokens: int, latency: int, calls: int
) -> None:
    """Whatever the costs, the disposition is the mapping's and the wire form re-validates."""
    data = observation(
        app_receipt(outcome),
        cost={"latency_ms": latency, "model_tokens": tokens, "provider_call_count": calls},
    )
    receipt = build_receipt(data)
    assert receipt.application_disposition == DISPOSITION_OF[outcome]
    packet = to_plain(receipt)
    assert packet == wire.dump(receipt)
    assert load_plain(packet, DogfoodReceipt) == receipt == wire.load(packet)


def test_a_python_built_observation_must_hold_records() -> None:
    """A caller building the records directly meets the same type gate as JSON does."""
    from reward_memory.records.dogfood import DogfoodObservation

    record = load_observation(observation())
    with pytest.raises(RecordValidationError) as info:
        DogfoodObservation(
            domain_family="issue_fix",
            domain_id="issue_fix.patch_planning",
            application_receipt=to_plain(app_receipt()),  # type: ignore[arg-type]
            module_outcome=record.module_outcome,
            cost=record.cost,
            intervention=record.intervention,
        )
    assert (info.value.code, info.value.path) == ("wrong_type", "$.application_receipt")
