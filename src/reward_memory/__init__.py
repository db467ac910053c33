"""reward-memory: govern what an AI agent may remember from human feedback.

The public surface is loaded lazily: ``import reward_memory`` costs almost
nothing, and a name is imported the first time it is used.

The seams, left to right: :func:`propose` a candidate against the caller's
authority checkpoint, :func:`review` it, :func:`activate` an accepted one into
an :class:`ActiveRecord` the corpus owner persists; later :func:`recall` from
exactly one corpus and surface and let the caller's model :func:`apply` it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from reward_memory._activation_registry import configure_goal
    from reward_memory.activation import activate
    from reward_memory.application import apply
    from reward_memory.architecture import architecture_contract
    from reward_memory.author import Experiment, open_experiment, open_experiment_from
    from reward_memory.authority import AuthorityMap, AuthoritySource
    from reward_memory.candidates import propose, review
    from reward_memory.errors import (
        ProviderConfigError,
        ProviderConflictError,
        ProviderError,
        ProviderLoadError,
        ProviderNotFoundError,
        ProviderUnavailable,
        RecordValidationError,
        RewardMemoryError,
        SchemaError,
        UnsafeTextError,
    )
    from reward_memory.evaluation import evaluate
    from reward_memory.experiment import (
        ExperimentRuntime,
        experiment_status,
        load_experiment_config,
        resolve_experiment,
    )
    from reward_memory.guarded_recall import (
        RecallSession,
        arecall,
        build_recall_request,
        execute_recall,
        recall,
    )
    from reward_memory.health import classify_health
    from reward_memory.hooks import RecallContext
    from reward_memory.ingestion import aingest, ingest
    from reward_memory.lineage import explain
    from reward_memory.operator import operator_control
    from reward_memory.providers.discovery import available_providers, get_provider
    from reward_memory.providers.spi import SPI_VERSION, Provider, ProviderScope
    from reward_memory.records.active import ActiveRecord
    from reward_memory.records.candidate import AuthorityCheckpoint, Proposal, ReviewDecision
    from reward_memory.records.corpus import CorpusDeclaration
    from reward_memory.records.envelope import DurableEnvelope
    from reward_memory.records.evaluation import Evaluation
    from reward_memory.records.experiment import ExperimentConfig
    from reward_memory.records.health import HealthObservation
    from reward_memory.records.ingest import IngestReceipt
    from reward_memory.records.recall import (
        FreshnessContext,
        ProviderBinding,
        ReadAuthorityCheckpoint,
        RecallQuery,
        RecallRequest,
    )
    from reward_memory.records.route import RouteCheck, RouteObservation
    from reward_memory.records.standing_policy import StandingPolicy
    from reward_memory.registry import build_registry, reference_registry
    from reward_memory.routing import route_check

__all__ = [
    "SPI_VERSION",
    "ActiveRecord",
    "AuthorityCheckpoint",
    "AuthorityMap",
    "AuthoritySource",
    "CorpusDeclaration",
    "DurableEnvelope",
    "Evaluation",
    "Experiment",
    "ExperimentConfig",
    "ExperimentRuntime",
    "FreshnessContext",
    "HealthObservation",
    "IngestReceipt",
    "Proposal",
    "Provider",
    "ProviderBinding",
    "ProviderConfigError",
    "ProviderConflictError",
    "ProviderError",
    "ProviderLoadError",
    "ProviderNotFoundError",
    "ProviderScope",
    "ProviderUnavailable",
    "ReadAuthorityCheckpoint",
    "RecallContext",
    "RecallQuery",
    "RecallRequest",
    "RecallSession",
    "RecordValidationError",
    "ReviewDecision",
    "RewardMemoryError",
    "RouteCheck",
    "RouteObservation",
    "SchemaError",
    "StandingPolicy",
    "UnsafeTextError",
    "__version__",
    "activate",
    "aingest",
    "apply",
    "architecture_contract",
    "arecall",
    "available_providers",
    "build_recall_request",
    "build_registry",
    "classify_health",
    "configure_goal",
    "evaluate",
    "execute_recall",
    "experiment_status",
    "explain",
    "get_provider",
    "ingest",
    "load_experiment_config",
    "open_experiment",
    "open_experiment_from",
    "operator_control",
    "propose",
    "recall",
    "reference_registry",
    "resolve_experiment",
    "review",
    "route_check",
]

# public name -> module that defines it
_LAZY: dict[str, str] = {
    "ActiveRecord": "reward_memory.records.active",
    "AuthorityCheckpoint": "reward_memory.records.candidate",
    "AuthorityMap": "reward_memory.authority",
    "AuthoritySource": "reward_memory.authority",
    "IngestReceipt": "reward_memory.records.ingest",
    "StandingPolicy": "reward_memory.records.standing_policy",
    "aingest": "reward_memory.ingestion",
    "ingest": "reward_memory.ingestion",
    "CorpusDeclaration": "reward_memory.records.corpus",
    "DurableEnvelope": "reward_memory.records.envelope",
    "ExperimentConfig": "reward_memory.records.experiment",
    "ExperimentRuntime": "reward_memory.experiment",
    "Experiment": "reward_memory.author",
    "FreshnessContext": "reward_memory.records.recall",
    "HealthObservation": "reward_memory.records.health",
    "Proposal": "reward_memory.records.candidate",
    "Provider": "reward_memory.providers.spi",
    "ProviderBinding": "reward_memory.records.recall",
    "ProviderConfigError": "reward_memory.errors",
    "ProviderConflictError": "reward_memory.errors",
    "ProviderError": "reward_memory.errors",
    "ProviderLoadError": "reward_memory.errors",
    "ProviderNotFoundError": "reward_memory.errors",
    "ProviderScope": "reward_memory.providers.spi",
    "ProviderUnavailable": "reward_memory.errors",
    "ReadAuthorityCheckpoint": "reward_memory.records.recall",
    "RecallContext": "reward_memory.hooks",
    "RecallQuery": "reward_memory.records.recall",
    "RecallRequest": "reward_memory.records.recall",
    "RecallSession": "reward_memory.guarded_recall",
    "RecordValidationError": "reward_memory.errors",
    "ReviewDecision": "reward_memory.records.candidate",
    "RewardMemoryError": "reward_memory.errors",
    "SPI_VERSION": "reward_memory.providers.spi",
    "SchemaError": "reward_memory.errors",
    "UnsafeTextError": "reward_memory.errors",
    "activate": "reward_memory.activation",
    "apply": "reward_memory.application",
    "architecture_contract": "reward_memory.architecture",
    "arecall": "reward_memory.guarded_recall",
    "available_providers": "reward_memory.providers.discovery",
    "build_recall_request": "reward_memory.guarded_recall",
    "build_registry": "reward_memory.registry",
    "classify_health": "reward_memory.health",
    "configure_goal": "reward_memory._activation_registry",
    "experiment_status": "reward_memory.experiment",
    "load_experiment_config": "reward_memory.experiment",
    "resolve_experiment": "reward_memory.experiment",
    "execute_recall": "reward_memory.guarded_recall",
    "get_provider": "reward_memory.providers.discovery",
    "open_experiment": "reward_memory.author",
    "open_experiment_from": "reward_memory.author",
    "propose": "reward_memory.candidates",
    "recall": "reward_memory.guarded_recall",
    "reference_registry": "reward_memory.registry",
    "review": "reward_memory.candidates",
    "Evaluation": "reward_memory.records.evaluation",
    "evaluate": "reward_memory.evaluation",
    "RouteCheck": "reward_memory.records.route",
    "RouteObservation": "reward_memory.records.route",
    "route_check": "reward_memory.routing",
    # Stage 5: a receipt's lineage and the operator controls are seams a module calls.
    # The dogfood receipt/batch builders stay in reward_memory.dogfood: the pilot
    # gate is the project's own evaluation, and their names mean little unqualified.
    "explain": "reward_memory.lineage",
    "operator_control": "reward_memory.operator",
}


def __getattr__(name: str) -> Any:
    if name == "__version__":
        from reward_memory._version import __version__  # noqa: PLC0415

        return __version__
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'reward_memory' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
