"""Explain a receipt: its lineage from refs alone, each link checked against the provider.

::

    receipt ──kind (by schema_version)──▶ planned links
      ──per active-record link: locate in the corpus scope (search + exact read)──▶
      reward_memory_explain_v0 (verified / missing / revoked / purged / retired / inactive /
      not_checked per link)

Receipt kinds: the ingest receipt, the recall packet, the application receipt
(and the application packet around it), the operator-control receipt (and the
control packet around it). Another kind plugs in with :func:`register_explainer`
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
        check = Check(
            corpus_id=receipt.corpus_id,
            record_ref=receipt.record_ref,
            candidate_ref=receipt.candidate_ref,
        )
        links += _record_links(check)
    return receipt.corpus_id, links


def _recall(packet: Any) -> tuple[str | None, list[Planned]]:
    links = [_unstated("event")]
    for result in packet.results[:_MAX_RESULTS]:
        links += _record_links(
            Check(
                corpus_id=packet.corpus_id,
                record_ref=record_ref_of(packet.corpus_id, result.candidate_ref),
                candidate_ref=result.candidate_ref,
            )
        )
    links.append(_stated("recall", packet.status, packet.result_readback_verified))
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
    if receipt.result_readback_verified:
        links.append(Planned(stage="recall", status="verified"))
    else:
        links.append(_unstated("recall"))
    links.append(Planned(stage="application", ref=receipt.application_id, status="verified"))
    return receipt.corpus_id, links


def _operator(receipt: Any) -> tuple[str | None, list[Planned]]:
    inner = getattr(receipt, "receipt", receipt)  # the control packet holds it
    if inner is None:
        raise RecordValidationError(
            "a refused control has no receipt to explain", path="$.receipt", code="missing_field"
        )
    check = Check(corpus_id=inner.corpus_id, record_ref=inner.record_ref)
    links = [
        _unstated("event"),
        Planned(stage="active_record", ref=inner.record_ref, check=check),
        _stated("operator_control", inner.status, inner.readback_verified, inner.control_ref),
    ]
    return inner.corpus_id, links


for _name, _explainer in (
    ("reward_memory_ingest_receipt_v0", _ingest),
    ("reward_memory_recall_v0", _recall),
    ("reward_memory_application_receipt_v0", _application),
    ("reward_memory_application_v0", _application),
    ("reward_memory_operator_control_receipt_v0", _operator),
    ("reward_memory_operator_control_v0", _operator),
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


def _status_of(located: list[Any]) -> tuple[LinkStatus, ActiveRecord | None]:
    from reward_memory._recall.readback import parse  # noqa: PLC0415

    kinds = {item.kind for item in located}
    if "purged" in kinds:
        return "purged", None
    if "revoked" in kinds:
        return "revoked", None
    states: list[tuple[str, Any]] = []
    for item in located:
        if item.kind == "record":
            parsed = parse(item.content)
            if parsed is not None:
                states.append((getattr(parsed.record, "lifecycle_state", "active"), parsed))
    live = [parsed for state, parsed in states if parsed.live]
    if live:
        record = live[0].record
        return "verified", record if isinstance(record, ActiveRecord) else None
    if any(state == "retired" for state, _ in states):
        return "retired", None
    if states:
        return "inactive", None
    return "missing", None


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
    from reward_memory._operator_provider import LocateFailed, locate  # noqa: PLC0415

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
    results: dict[Check, tuple[LinkStatus, str | None, ActiveRecord | None]] = {}
    calls = 0
    failed = False
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
            binding = entry[0]
            try:
                located, used = locate(
                    provider,
                    binding.provider_scope,
                    record_ref=check.record_ref,
                    candidate_ref=check.candidate_ref,
                    timeout=float(binding.timeout_seconds),
                )
            except LocateFailed as exc:
                calls += exc.calls
                failed = True
                results[check] = ("not_checked", "provider_unavailable", None)
                continue
            calls += used
            checked, found = _status_of(located)
            results[check] = (checked, None, found)
    links = []
    for link in planned:
        key = link.check or link.follows
        if key is None:
            links.append(
                ExplainLink(
                    stage=link.stage, ref=link.ref, status=link.status, reason_code=link.reason_code
                )
            )
            continue
        status, reason, found = results[key]
        ref = link.ref
        if link.stage == "review":
            ref = found.review.review_ref if found is not None else None
        if link.stage == "candidate" and found is not None and found.candidate_ref != ref:
            status = "missing"  # the record read back is another candidate's
        links.append(ExplainLink(stage=link.stage, ref=ref, status=status, reason_code=reason))
    return Explanation(
        status="provider_unavailable" if failed else "explained",
        receipt_schema=version,
        corpus_id=corpus_id,
        links=tuple(links),
        provider_checked=provider is not None
        and any(reason is None for _, reason, _ in results.values()),
        provider_call_count=calls,
    )
