"""Explain a receipt: its lineage from refs alone, each link checked against the provider.

::

    receipt ──kind (by schema_version)──▶ planned links
      ──per active-record link: locate in the corpus scope (search + exact read)──▶
      reward_memory_explain_v0 (verified / missing / revoked / purged / retired / inactive /
      not_checked per link)

Receipt kinds: the ingest receipt, the recall packet, the application receipt
(and the application packet around it), the operator-control receipt (and the
control packet around it), the dogfood receipt and the automatic recall hook's
packet. Another kind plugs in with :func:`register_explainer`
(a function from the loaded record to its corpus id and planned links).

Finding scopes: receipts are public-safe, so they name a ``corpus_id`` but never
a scope ref. The caller says where each corpus lives: an experiment config v1
(``config=``: its project binding and per-corpus scopes, checked against the
corpus declarations it carries, as recall checks them) and/or explicit
``bindings=``. A corpus with no binding, or no provider, is ``not_checked``.

Never raw content, never a scope ref or a path: a link carries a hashed ref or
an opaque token from the receipt, or a review ref read back from the record.
Provider failures fail open: the links it could not check are ``not_checked``
(``provider_unavailable``) and the explanation's status says so.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final

from reward_memory._frozen import frozen
from reward_memory.errors import RecordValidationError
from reward_memory.records.active import ActiveRecord, record_ref_of
from reward_memory.records.explain import ExplainLink, Explanation, LinkStage, LinkStatus

if TYPE_CHECKING:
    from reward_memory.providers.spi import Provider
    from reward_memory.records.experiment import ExperimentConfig
    from reward_memory.records.recall import ProviderBinding

__all__ = ["Check", "Planned", "explain", "register_explainer"]

_MAX_RESULTS: Final = 20  # 3 links each, under the packet's 64


@frozen(kw_only=True)
class Check:
    """An active-record link to check: which record, in which corpus."""

    corpus_id: str
    record_ref: str
    candidate_ref: str | None = None
    # What the receipt says the record holds: a readback that disagrees is no proof of it.
    activation_ref: str | None = None
    review_ref: str | None = None


@frozen(kw_only=True)
class Planned:
    """One link as the receipt states it: fixed (``status``) or to be checked (``check``).

    A ``follows`` link (candidate, review) takes the status of the record check
    it names; a review link also takes its ref from the record read back.
    """

    stage: LinkStage
    ref: str | None = None
    status: LinkStatus = "not_checked"
    reason_code: str | None = None
    check: Check | None = None
    follows: Check | None = None
    # A control's link: verified when the record it follows reads back in this state.
    effect: LinkStatus | None = None
    # A recall's link: verified when every record it returned is verified.
    follows_all: tuple[Check, ...] = ()


Explainer = Callable[[Any], tuple[str | None, list[Planned]]]
_EXPLAINERS: dict[str, Explainer] = {}


def register_explainer(schema_version: str, explainer: Explainer) -> None:
    """Teach :func:`explain` one more receipt kind (by its ``schema_version``)."""
    _EXPLAINERS[schema_version] = explainer


def _unstated(stage: LinkStage) -> Planned:
    return Planned(stage=stage, reason_code="receipt_keeps_no_ref")


def _record_links(check: Check) -> list[Planned]:
    return [
        Planned(stage="candidate", ref=check.candidate_ref, follows=check),
        Planned(stage="review", follows=check),
        Planned(stage="active_record", ref=check.record_ref, check=check),
    ]


def _ingest(receipt: Any) -> tuple[str | None, list[Planned]]:
    links = [_unstated("event")]
    if receipt.record_ref is None:
        links += [
            Planned(stage="candidate", ref=receipt.candidate_ref, reason_code="not_reached"),
            Planned(stage="review", reason_code="not_reached"),
            Planned(stage="active_record", reason_code="not_reached"),
        ]
    else:
        candidate = receipt.candidate_ref
        check = Check(
            corpus_id=receipt.corpus_id,
            record_ref=receipt.record_ref,
            candidate_ref=candidate,
            activation_ref=receipt.activation_ref,
            # The standing policy's accept: review:<policy digest>:<candidate digest>.
            review_ref=None
            if candidate is None
            else f"review:{receipt.policy_digest}:{candidate.removeprefix('candidate:')}",
        )
        links += _record_links(check)
    return receipt.corpus_id, links


def _recall(packet: Any) -> tuple[str | None, list[Planned]]:
    links = [_unstated("event")]
    checks = tuple(
        Check(
            corpus_id=packet.corpus_id,
            record_ref=record_ref_of(packet.corpus_id, result.candidate_ref),
            candidate_ref=result.candidate_ref,
        )
        for result in packet.results[:_MAX_RESULTS]
    )
    for check in checks:
        links += _record_links(check)
    stated = _stated("recall", packet.status, packet.result_readback_verified)
    if stated.status == "verified":  # as the packet says: then each record is asked
        stated = Planned(stage="recall", follows_all=checks)
    links.append(stated)
    return packet.corpus_id, links


def _stated(stage: LinkStage, status: str, read_back: bool, ref: str | None = None) -> Planned:
    """A recall or a control as its packet states it: verified only when it completed and
    read back; otherwise (guard-blocked, a dry run, a provider failure) not checked."""
    if status == "completed" and read_back:
        return Planned(stage=stage, ref=ref, status="verified")
    return Planned(stage=stage, ref=ref, reason_code="receipt_not_completed")


def _application(receipt: Any) -> tuple[str | None, list[Planned]]:
    receipt = getattr(receipt, "receipt", receipt)  # the application packet holds it
    links = [_unstated("event")]
    links += [
        Planned(stage="active_record", ref=digest, reason_code="receipt_keeps_digest_only")
        for digest in receipt.memory_ref_digests[:_MAX_RESULTS]
    ]
    # The receipt keeps digests only: its recall cannot be checked against the provider
    # (what its flags claim is not a readback).
    links.append(
        Planned(
            stage="recall",
            reason_code="receipt_keeps_digest_only"
            if receipt.result_readback_verified
            else "receipt_not_completed",
        )
    )
    links.append(Planned(stage="application", ref=receipt.application_id, status="verified"))
    return receipt.corpus_id, links


def _dogfood(receipt: Any) -> tuple[str | None, list[Planned]]:
    """A dogfood receipt: the application it settles (hashed memory refs only)."""
    links = [_unstated("event")]
    links += [
        Planned(stage="active_record", ref=digest, reason_code="receipt_keeps_digest_only")
        for digest in receipt.memory_ref_digests[:_MAX_RESULTS]
    ]
    links.append(Planned(stage="recall", reason_code="receipt_keeps_digest_only"))
    links.append(Planned(stage="application", ref=receipt.application_id, status="verified"))
    return receipt.corpus_id, links


def _recall_hook(packet: Any) -> tuple[str | None, list[Planned]]:
    """A recall hook's walk: the attempt that hit (else the last), then its application."""
    attempts = packet.recall_attempts
    hit = next(
        (a for a in attempts if a.corpus_id == packet.hit_corpus_id),
        attempts[-1] if attempts else None,
    )
    if hit is None:
        links = [_unstated("event"), Planned(stage="recall", reason_code="not_reached")]
        corpus_id = None
    else:
        corpus_id, links = _recall(hit)
    if packet.application is not None:
        links.append(
            Planned(stage="application", ref=packet.application.application_id, status="verified")
        )
    return corpus_id, links


def _operator(receipt: Any) -> tuple[str | None, list[Planned]]:
    inner = getattr(receipt, "receipt", receipt)  # the control packet holds it
    if inner is None:
        raise RecordValidationError(
            "a refused control has no receipt to explain", path="$.receipt", code="missing_field"
        )
    check = Check(corpus_id=inner.corpus_id, record_ref=inner.record_ref)
    control = _stated("operator_control", inner.status, inner.readback_verified, inner.control_ref)
    effect = _EFFECTS.get(inner.result_state)
    if control.status == "verified" and effect is not None:
        # As the receipt says: then the provider must show the record in that state.
        control = Planned(
            stage="operator_control", ref=inner.control_ref, follows=check, effect=effect
        )
    links = [
        _unstated("event"),
        Planned(stage="active_record", ref=inner.record_ref, check=check),
        control,
    ]
    return inner.corpus_id, links


# What each control leaves the record as, read back (an edit writes nothing).
_EFFECTS: Final[dict[str, LinkStatus]] = {
    "revoked": "revoked",
    "purged": "purged",
    "retired": "retired",
}


for _name, _explainer in (
    ("reward_memory_ingest_receipt_v0", _ingest),
    ("reward_memory_recall_v0", _recall),
    ("reward_memory_application_receipt_v0", _application),
    ("reward_memory_application_v0", _application),
    ("reward_memory_operator_control_receipt_v0", _operator),
    ("reward_memory_operator_control_v0", _operator),
    ("reward_memory_dogfood_receipt_v1", _dogfood),
    ("reward_memory_automatic_recall_hook_v0", _recall_hook),
):
    register_explainer(_name, _explainer)


# -- the provider checks -----------------------------------------------------------------


def _bindings(
    config: ExperimentConfig | None, bindings: Iterable[ProviderBinding]
) -> dict[str, tuple[ProviderBinding, bool]]:
    """corpus_id -> (binding, fits): explicit bindings win over the config's."""
    from reward_memory.guards.recall import binding_reasons  # noqa: PLC0415

    found: dict[str, tuple[ProviderBinding, bool]] = {}
    if config is not None:
        corpora = {item.corpus.corpus_id: item.corpus for item in config.corpora}
        project = config.project_provider_binding
        for scope in project.corpus_scopes:
            binding = project.binding_for(scope)
            corpus = corpora.get(scope.corpus_id)
            fits = corpus is not None and not binding_reasons(binding, corpus)
            found[scope.corpus_id] = (binding, fits)
    for binding in bindings:
        found[binding.corpus_id] = (binding, True)
    return found


def _status_of(located: list[Any]) -> tuple[LinkStatus, str | None, ActiveRecord | None]:
    """The record's state as the provider shows it: (status, reason, the live record).

    A live copy wins over a tombstone or a revocation record: a control that stopped
    half-way (``partial``) left the record recallable, and that is what it is. So does
    any other copy (retired): its content is still there (``closing_control_incomplete``).
    """
    from reward_memory._recall.readback import parse  # noqa: PLC0415

    kinds = {item.kind for item in located}
    states: list[tuple[str, Any]] = []
    for item in located:
        if item.kind == "record":
            parsed = parse(item.content)
            if parsed is not None:
                states.append((getattr(parsed.record, "lifecycle_state", "active"), parsed))
    live = [parsed for state, parsed in states if parsed.live]
    if live:
        record = live[0].record
        found = record if isinstance(record, ActiveRecord) else None
        closing = "closing_control_incomplete" if kinds & {"purged", "revoked"} else None
        return "verified", closing, found
    if states and kinds & {"purged", "revoked"}:
        # A complete revoke or purge deletes every copy of the record: a copy that still
        # reads back beside its tombstone (a retired copy a half-done purge left) holds the
        # content, so the record is what that copy is, never gone.
        copy: LinkStatus = (
            "retired" if any(state == "retired" for state, _ in states) else "inactive"
        )
        return copy, "closing_control_incomplete", None
    if "purged" in kinds:
        return "purged", None, None
    if "revoked" in kinds:
        return "revoked", None, None
    if any(state == "retired" for state, _ in states):
        return "retired", None, None
    if states:
        return "inactive", None, None
    return "missing", None, None


def _disagrees(check: Check, found: ActiveRecord) -> bool:
    """Whether the record read back is not the one the receipt names (a tampered receipt)."""
    return (check.activation_ref is not None and found.activation_ref != check.activation_ref) or (
        check.review_ref is not None and found.review.review_ref != check.review_ref
    )


def _superseded(
    provider: Provider, binding: ProviderBinding, candidate_ref: str
) -> tuple[bool, int]:
    """Whether a live record in the scope supersedes ``candidate_ref`` (an edit's
    replacement names it); and the provider calls. Raises ``LocateFailed``."""
    from reward_memory._operator_provider import LocateFailed  # noqa: PLC0415
    from reward_memory._recall.readback import parse  # noqa: PLC0415
    from reward_memory.providers.spi import MAX_SEARCH_LIMIT  # noqa: PLC0415

    scope, timeout = binding.provider_scope, float(binding.timeout_seconds)
    calls = 1
    try:
        hits = provider.search(
            scope=scope,
            query=candidate_ref.removeprefix("candidate:"),
            limit=MAX_SEARCH_LIMIT,
            timeout=timeout,
        ).hits
    except Exception:  # noqa: BLE001 - fail open
        raise LocateFailed("provider_search_failed", calls) from None
    for hit in list(hits)[:MAX_SEARCH_LIMIT]:
        calls += 1
        try:
            read = provider.read(scope=scope, ref=hit.ref, timeout=timeout)
        except Exception:  # noqa: BLE001
            raise LocateFailed("provider_read_failed", calls) from None
        content = read.content if read.found is True and read.ref == hit.ref else None
        parsed = parse(content) if type(content) is str else None
        if parsed is not None and parsed.live and candidate_ref in parsed.supersedes:
            return True, calls
    return False, calls


def _all_verified(
    link: Planned, results: Mapping[Check, tuple[LinkStatus, str | None, ActiveRecord | None]]
) -> ExplainLink:
    """A recall link: verified when every record it returned reads back verified."""
    states = [results[check] for check in link.follows_all]
    if all(status == "verified" for status, _, _ in states):
        return ExplainLink(stage=link.stage, ref=link.ref, status="verified")
    reason = next(
        (reason for status, reason, _ in states if status == "not_checked" and reason),
        "records_not_all_verified",
    )
    return ExplainLink(stage=link.stage, ref=link.ref, status="not_checked", reason_code=reason)


def _loaded(data: Mapping[str, Any]) -> Any:
    """A receipt's JSON object as its record: its own schema, then the strict record walk."""
    from reward_memory import wire  # noqa: PLC0415
    from reward_memory._boundary import strict_packet  # noqa: PLC0415

    version = data.get("schema_version")
    if not isinstance(version, str) or version not in _EXPLAINERS:
        raise RecordValidationError(
            "explain knows no receipt of this kind",
            path="$.schema_version",
            code="receipt_kind_unsupported",
        )
    from reward_memory.jsonio import check_data  # noqa: PLC0415

    # A caller's mapping meets parsed JSON's bounds (NaN, depth, ...) first; then one
    # strict pass, the schema run only to name an error (reward_memory._boundary).
    plain = dict(data)
    check_data(plain)
    return strict_packet(plain, wire.packet_type(version))


def explain(
    receipt: Any,
    *,
    provider: Provider | None = None,
    config: ExperimentConfig | None = None,
    bindings: Iterable[ProviderBinding] = (),
) -> Explanation:
    """The lineage of one receipt, each active-record link checked where it can be.

    Args:
        receipt: a receipt record, or its JSON object (validated by its schema).
        provider: the SPI provider to check links against (none: ``not_checked``).
        config: an experiment config v1: where its corpora live.
        bindings: explicit provider bindings (by ``corpus_id``; they win).

    Raises:
        RecordValidationError: not a receipt, or a kind explain does not know.
    """
    record = _loaded(receipt) if isinstance(receipt, Mapping) else receipt
    version = getattr(record, "schema_version", None)
    explainer = _EXPLAINERS.get(version) if isinstance(version, str) else None
    if explainer is None or not isinstance(version, str):
        raise RecordValidationError(
            "explain knows no receipt of this kind",
            path="$.schema_version",
            code="receipt_kind_unsupported",
        )
    corpus_id, planned = explainer(record)
    where = _bindings(config, bindings)
    results: dict[Check, _Result] = {}
    calls = 0
    failed = checked = False
    for link in planned:
        check = link.check
        if check is None or check in results:
            continue
        entry = where.get(check.corpus_id)
        if provider is None:
            results[check] = ("not_checked", "no_provider", None)
        elif entry is None:
            results[check] = ("not_checked", "no_binding_for_corpus", None)
        elif not entry[1] or entry[0].provider_id != getattr(provider, "provider_id", None):
            results[check] = ("not_checked", "binding_does_not_fit_corpus", None)
        else:
            results[check], used, unavailable = _check_one(check, provider, entry[0])
            calls += used
            failed = failed or unavailable
            checked = checked or not unavailable
    return Explanation(
        status="provider_unavailable" if failed else "explained",
        receipt_schema=version,
        corpus_id=corpus_id,
        links=tuple(_link(link, results) for link in planned),
        provider_checked=checked,
        provider_call_count=calls,
    )


_Result = tuple[LinkStatus, str | None, ActiveRecord | None]


def _check_one(
    check: Check, provider: Provider, binding: ProviderBinding
) -> tuple[_Result, int, bool]:
    """One record link against the provider: (result, provider calls, the provider failed)."""
    from reward_memory._operator_provider import LocateFailed, locate  # noqa: PLC0415

    unavailable: _Result = ("not_checked", "provider_unavailable", None)
    try:
        located, used = locate(
            provider,
            binding.provider_scope,
            record_ref=check.record_ref,
            candidate_ref=check.candidate_ref,
            timeout=float(binding.timeout_seconds),
        )
    except LocateFailed as exc:
        return unavailable, exc.calls, True
    status, reason, found = _status_of(located)
    if status == "missing" and not located:
        # Nothing of it: in a store that holds no corpus there at all (a mistyped path, a
        # new file) that is no check -- "missing" would say the record is gone.
        used += 1
        try:
            present = provider.inventory(
                scope=binding.provider_scope, timeout=float(binding.timeout_seconds)
            ).corpus_present
        except Exception:  # noqa: BLE001 - fail open
            return unavailable, used, True
        if present is False:
            return ("not_checked", "corpus_absent", None), used, False
    if found is None:
        return (status, reason, None), used, False
    if _disagrees(check, found):
        return ("missing", "receipt_disagrees_with_record", None), used, False
    try:
        replaced, more = _superseded(provider, binding, found.candidate_ref)
    except LocateFailed as exc:
        return unavailable, used + exc.calls, True
    if replaced:
        return ("inactive", "superseded", None), used + more, False
    return (status, reason, found), used + more, False


def _link(link: Planned, results: Mapping[Check, _Result]) -> ExplainLink:
    """One planned link, given the record checks' results."""
    if link.follows_all:
        return _all_verified(link, results)
    key = link.check or link.follows
    if key is None:
        return ExplainLink(
            stage=link.stage, ref=link.ref, status=link.status, reason_code=link.reason_code
        )
    status, reason, found = results[key]
    if link.effect is not None:  # a control: in effect when the record reads back so
        if status == link.effect:
            status, reason = "verified", None
        elif status != "not_checked":
            status, reason = "missing", "control_not_in_effect"
        return ExplainLink(stage=link.stage, ref=link.ref, status=status, reason_code=reason)
    ref = link.ref
    if link.stage == "review":
        ref = found.review.review_ref if found is not None else None
    if link.stage == "candidate" and found is not None and found.candidate_ref != ref:
        status = "missing"  # the record read back is another candidate's
    return ExplainLink(stage=link.stage, ref=ref, status=status, reason_code=reason)
