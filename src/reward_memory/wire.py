"""The wire format: one private cattrs converter, ``schema_version`` as the tag.

``load(data)`` is the boundary: it validates a JSON object against its bundled
schema (strict types, unknown fields rejected, field path named), then
builds the attrs record registered for its ``schema_version`` in one strict
pass (:func:`reward_memory.records._plain.from_plain`; the converter is not
involved, so loading never pays for generating its code).
``loads(text)`` and ``load_file(path)`` are the same boundary for JSON text,
bytes or a file, read and parsed within the bounds of :mod:`reward_memory.jsonio`
(size, depth, duplicate keys, ...); every failure is a typed
``RecordValidationError``, never a ``RecursionError`` or a ``JSONDecodeError``.
``dump(record)`` unstructures any record to plain JSON-ready data.

The converter is private and built on first use; nothing here touches cattrs'
global converter. Already-typed records never go through it on the per-call
path: guards take records, and digests are computed from ``dump`` output only
where a public packet is emitted anyway.
"""

from __future__ import annotations

import functools
import importlib
from typing import TYPE_CHECKING, Any, Final, TypeVar, cast, overload

from reward_memory.errors import RecordValidationError, join_path

if TYPE_CHECKING:
    import os
    from collections.abc import Iterator

    from cattrs import Converter

__all__ = [
    "PACKET_TYPES",
    "dump",
    "dump_packet",
    "load",
    "load_file",
    "loads",
    "packet_type",
    "structure",
]

T = TypeVar("T")

# schema_version -> "module:Class" of the record that packet structures into.
# Strings keep this table import-free; entries resolve on first use.
PACKET_TYPES: Final[dict[str, str]] = {
    "reward_memory_architecture_v0": "reward_memory.records.architecture:ArchitectureContract",
    "reward_memory_corpus_registry_v0": "reward_memory.records.corpus:CorpusRegistry",
    "reward_memory_corpus_health_v0": "reward_memory.records.health:CorpusHealth",
    "reward_memory_corpus_health_request_v0": "reward_memory.records.health:HealthRequest",
    "reward_memory_durable_envelope_v0": "reward_memory.records.envelope:DurableEnvelope",
    "reward_memory_error_v0": "reward_memory.records.error:ErrorPacket",
    "reward_memory_active_record_v1": "reward_memory.records.active:ActiveRecord",
    "reward_memory_active_record_v0": "reward_memory.records.active:LegacyActiveRecord",
    "reward_memory_candidate_proposal_v0": "reward_memory.records.candidate:Proposal",
    "reward_memory_authority_checkpoint_v0": "reward_memory.records.candidate:AuthorityCheckpoint",
    "reward_memory_candidate_v0": "reward_memory.records.candidate:CandidatePacket",
    "reward_memory_candidate_review_v0": "reward_memory.records.review:CandidateReview",
    "reward_memory_candidate_review_request_v0": (
        "reward_memory.records.review:CandidateReviewRequest"
    ),
    "reward_memory_standing_policy_v0": "reward_memory.records.standing_policy:StandingPolicy",
    "reward_memory_authority_map_v0": "reward_memory.records.authority:AuthorityMapFile",
    "reward_memory_ingest_receipt_v0": "reward_memory.records.ingest:IngestReceipt",
    "issue_fix_reward_memory_event_v0": "reward_memory.adapters.issue_fix:IssueFixEvent",
    "issue_fix_reward_memory_candidate_adapter_v0": (
        "reward_memory.adapters.issue_fix:IssueFixCandidateAdapter"
    ),
    "scoped_feedback_reward_memory_event_v0": (
        "reward_memory.adapters.scoped_feedback:ScopedFeedbackEvent"
    ),
    "scoped_feedback_reward_memory_candidate_adapter_v0": (
        "reward_memory.adapters.scoped_feedback:ScopedFeedbackCandidateAdapter"
    ),
    "reward_memory_schema_catalog_v0": "reward_memory.records.catalog:SchemaCatalog",
    "reward_memory_schema_validation_v0": "reward_memory.records.catalog:SchemaValidation",
    "reward_memory_providers_v0": "reward_memory.records.providers:ProvidersReport",
    "reward_memory_recall_input_v0": "reward_memory.records.recall:RecallInput",
    "reward_memory_recall_request_v0": "reward_memory.records.recall:RecallRequestPacket",
    "reward_memory_recall_v0": "reward_memory.records.recall:RecallPacket",
    "reward_memory_application_v0": "reward_memory.records.application:ApplicationResult",
    "reward_memory_application_receipt_v0": "reward_memory.records.application:ApplicationReceipt",
    "reward_memory_experiment_config_v1": "reward_memory.records.experiment:ExperimentConfig",
    "reward_memory_operator_checkpoint_v0": "reward_memory.records.operator:OperatorCheckpoint",
    "reward_memory_operator_control_request_v0": (
        "reward_memory.records.operator:OperatorControlRequest"
    ),
    "reward_memory_operator_control_v0": "reward_memory.records.operator:OperatorControl",
    "reward_memory_operator_control_receipt_v0": (
        "reward_memory.records.operator:OperatorControlReceipt"
    ),
    "reward_memory_revocation_record_v0": "reward_memory.records.operator:RevocationRecord",
    "issue_fix_reward_memory_execution_evidence_v0": (
        "reward_memory.records.execution_evidence:ExecutionEvidence"
    ),
    "reward_memory_purge_tombstone_v0": "reward_memory.records.operator:PurgeTombstone",
    "reward_memory_explain_v0": "reward_memory.records.explain:Explanation",
    "reward_memory_activation_registry_v0": (
        "reward_memory.records.activation_registry:ActivationRegistry"
    ),
    "reward_memory_activation_change_v0": (
        "reward_memory.records.activation_registry:ActivationChange"
    ),
    "reward_memory_experiment_status_v1": (
        "reward_memory.records.activation_registry:ExperimentStatus"
    ),
    "reward_memory_automatic_recall_hook_v0": "reward_memory.records.hooks:RecallHookPacket",
    "reward_memory_automatic_ingest_hook_v0": "reward_memory.records.hooks:IngestHookPacket",
    "reward_memory_dogfood_input_v1": "reward_memory.records.dogfood:DogfoodInput",
    "reward_memory_dogfood_receipt_v1": "reward_memory.records.dogfood:DogfoodReceipt",
    "reward_memory_dogfood_batch_v1": "reward_memory.records.dogfood:DogfoodBatch",
    "memory_utility_observation_v0": "reward_memory.records.utility:UtilityObservation",
    "reward_memory_pilot_meta_route_observation_v0": (
        "reward_memory.records.route:RouteObservation"
    ),
    "reward_memory_pilot_meta_route_v0": "reward_memory.records.route:RouteCheck",
    "reward_memory_evaluation_v0": "reward_memory.records.evaluation:Evaluation",
}


def packet_type(schema_version: str) -> type[Any]:
    """The record class registered for ``schema_version``."""
    try:
        target = PACKET_TYPES[schema_version]
    except KeyError:
        raise RecordValidationError(
            "schema_version names no packet this library knows",
            path="$.schema_version",
            code="schema_version_unsupported",
        ) from None
    module, _, name = target.partition(":")
    return cast("type[Any]", getattr(importlib.import_module(module), name))


@functools.cache
def _converter() -> Converter:
    import attrs  # noqa: PLC0415
    from cattrs.gen import make_dict_unstructure_fn  # noqa: PLC0415
    from cattrs.preconf.json import make_converter  # noqa: PLC0415 - off the import path

    converter = make_converter(forbid_extra_keys=True, detailed_validation=True)
    # Records keep tuples (immutable); the wire gets lists.
    converter.register_unstructure_hook(
        tuple, lambda value: [converter.unstructure(v) for v in value]
    )

    # A record may declare `__rm_omit_none__ = True`: its optional keys are left
    # out of the wire form when absent, as the original packets do.
    def omits_none(cls: Any) -> bool:
        return attrs.has(cls) and bool(getattr(cls, "__rm_omit_none__", False))

    def omit_none_hook(cls: Any) -> Any:
        base = make_dict_unstructure_fn(cls, converter)

        def unstructure(instance: Any) -> dict[str, Any]:
            return {key: value for key, value in base(instance).items() if value is not None}

        return unstructure

    converter.register_unstructure_hook_factory(omits_none, omit_none_hook)

    # An integer field takes an integer: JSON Schema counts 4.0 as one, but the file
    # loaders (one strict pass) refuse it, so the mapping path does too (cattrs would
    # truncate it, 1e308 included) -- one answer whichever way the data comes.
    def strict_int(value: Any, kind: Any) -> int:
        if kind is bool:  # a subclass of int: dispatched here too
            if type(value) is not bool:
                raise RecordValidationError("must be a boolean", code="wrong_type")
            return value
        if type(value) is not int:
            raise RecordValidationError("must be an integer", code="wrong_type")
        return value

    converter.register_structure_hook(int, strict_int)
    return converter


@functools.cache
def _packet_union() -> Any:
    """Every registered packet record as one union, tagged by ``schema_version``.

    Built on first use (it imports every record module); the converter then
    dispatches on the tag itself: ``structure(data, _packet_union())``.
    """
    import typing  # noqa: PLC0415

    import attrs  # noqa: PLC0415
    from cattrs.strategies import configure_tagged_union  # noqa: PLC0415

    classes = tuple(packet_type(name) for name in sorted(PACKET_TYPES))
    union = typing.Union[classes]  # type: ignore[valid-type]  # noqa: UP007 - computed at run time

    def tag(cls: type[Any]) -> str:
        return cast("str", attrs.fields_dict(cls)["schema_version"].default)

    configure_tagged_union(union, _converter(), tag_generator=tag, tag_name="schema_version")
    return union


def dump_packet(record: Any) -> dict[str, Any]:
    """Unstructure any registered packet through the tagged union (the tag included)."""
    return cast("dict[str, Any]", _converter().unstructure(record, _packet_union()))


def dump(record: Any) -> Any:
    """Unstructure a record (or a container of records) into JSON-ready data."""
    return _converter().unstructure(record)


@overload
def structure(data: Any, cls: type[T]) -> T: ...
@overload
def structure(data: Any, cls: Any) -> Any: ...
def structure(data: Any, cls: Any) -> Any:
    """Structure already schema-valid data into ``cls``, translating every error.

    Prefer :func:`load` for untrusted input: the schema is the strict type gate
    (cattrs alone would coerce ``1`` to ``"1"``).
    """
    from cattrs.errors import BaseValidationError  # noqa: PLC0415

    try:
        return _converter().structure(data, cls)
    except BaseValidationError as exc:
        raise _first_error(exc, "$") from None
    except RecordValidationError:
        raise


def load(data: Any, expected: type[T] | None = None) -> T:
    """Validate ``data`` against its schema and structure it into its record.

    ``expected`` (a record class) additionally requires that the packet's
    ``schema_version`` is the one registered for that class. Data built in
    Python is held to the bounds parsed JSON meets (nesting depth, a cycle,
    non-string keys, non-JSON values, numbers out of range: see
    :func:`reward_memory.schemas.validate`), so no ``dict`` can make
    validation recurse without end.
    """
    from reward_memory import schemas  # noqa: PLC0415

    name = schemas.validate(data)
    if expected is not None and packet_type(name) is not expected:
        raise RecordValidationError(
            f"expected a {expected.__name__} packet",
            path="$.schema_version",
            code="schema_version_unsupported",
        )
    # One strict pass after the schema (records._plain): the record the
    # converter would build (tests/test_plain.py), without the converter.
    from reward_memory.records._plain import from_plain  # noqa: PLC0415

    return cast("T", from_plain(packet_type(name), dict(data)))


def loads(data: str | bytes | bytearray, expected: type[T] | None = None) -> T:
    """:func:`load` for one JSON document given as text or bytes (UTF-8).

    Raises:
        RecordValidationError: an :class:`~reward_memory.errors.InputError` for
            text that is not bounded JSON (see :mod:`reward_memory.jsonio`),
            otherwise whatever :func:`load` refuses; the field path is named.
    """
    from reward_memory import jsonio  # noqa: PLC0415

    return load(jsonio.parse(data), expected)


def load_file(path: str | os.PathLike[str], expected: type[T] | None = None) -> T:
    """:func:`load` for a JSON file (``"-"``: standard input), read within the bounds."""
    from reward_memory import jsonio  # noqa: PLC0415

    return load(jsonio.read(path), expected)


def _notes_path(exc: BaseException, path: str) -> str:
    from cattrs.errors import AttributeValidationNote, IterableValidationNote  # noqa: PLC0415

    for note in getattr(exc, "__notes__", ()):
        if isinstance(note, AttributeValidationNote):
            return join_path(path, note.name)
        if isinstance(note, IterableValidationNote):
            return join_path(path, cast("int", note.index))
    return path


def _leaves(exc: BaseException, path: str) -> Iterator[tuple[BaseException, str]]:
    path = _notes_path(exc, path)
    children = getattr(exc, "exceptions", None)
    if children:
        for child in children:
            yield from _leaves(child, path)
    else:
        yield exc, path


def _first_error(exc: BaseException, root: str) -> RecordValidationError:
    from cattrs.errors import ForbiddenExtraKeysError  # noqa: PLC0415

    leaf, path = next(_leaves(exc, root))
    if isinstance(leaf, RecordValidationError):
        # The validator names its field relative to its own record; the notes
        # walked above name the way down to that record.
        suffix = leaf.path[1:] if leaf.path.startswith("$") else leaf.path
        clone = leaf.under("$")
        clone.path = path + suffix
        return clone
    if isinstance(leaf, ForbiddenExtraKeysError):
        extras = sorted(leaf.extra_fields)
        return RecordValidationError(
            f"unknown field: {', '.join(extras)}",
            path=join_path(path, extras[0]),
            code="unknown_field",
        )
    if isinstance(leaf, KeyError):
        # cattrs notes the missing attribute on the KeyError itself.
        return RecordValidationError("required field is missing", path=path, code="missing_field")
    return RecordValidationError("has the wrong type or value", path=path, code="wrong_type")
