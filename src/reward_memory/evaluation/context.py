"""What a case runs with: the fixture, the counted provider, the clock, the seams, its checks.

The cases reach recall and apply through :class:`Context` only, so every call
runs on the counted provider at the run's clock, and a seam that raises instead
of failing open is counted as a user gate in one place.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

from reward_memory.application import apply
from reward_memory.evaluation.fixture import ARTIFACT_REF, FixtureModel
from reward_memory.guarded_recall import recall

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from datetime import datetime

    from reward_memory.evaluation.counting import CountingProvider
    from reward_memory.evaluation.fixture import Fixture
    from reward_memory.guarded_recall import RecallSession
    from reward_memory.records.application import ApplicationResult
    from reward_memory.records.corpus import CorpusDeclaration
    from reward_memory.records.recall import (
        ProviderBinding,
        ReadAuthorityCheckpoint,
        RecallRequest,
    )

__all__ = ["Check", "Context"]


class Check:
    """The assertions and public evidence of one case."""

    __slots__ = ("assertions", "evidence", "false_applications")

    def __init__(self) -> None:
        self.assertions: list[tuple[str, bool]] = []
        self.evidence: dict[str, Any] = {}
        self.false_applications = 0

    def that(self, name: str, condition: object) -> None:
        """Record one named assertion (``name`` is a token, shown when it fails)."""
        self.assertions.append((name, condition is True))

    def false_application(self, observed: object) -> None:
        """Count one application (or authority, or provider call) that must not happen."""
        if observed:
            self.false_applications += 1


class Context:
    """Shared by the cases of one run."""

    def __init__(
        self,
        *,
        fixture: Fixture,
        provider: CountingProvider,
        now: datetime,
        restart: Callable[[], bool],
    ) -> None:
        self.fixture = fixture
        self.provider = provider
        self.now = now
        self.restart = restart
        self.models: list[FixtureModel] = []
        self.user_gates = 0
        self.external_writes = 0

    def model(self, *, verify: bool = True, cite: str | None = None) -> FixtureModel:
        """A new fixture model whose reports (calls, tokens, interruptions) are summed."""
        model = FixtureModel(verify=verify, cite=cite)
        self.models.append(model)
        return model

    @contextlib.contextmanager
    def seeding(self) -> Iterator[None]:
        """Count the provider calls inside the block as the fixture's (the corpus owner's),
        and the files it writes too (a new store's file is the fixture's, not the case's)."""
        from reward_memory.evaluation.external import not_counted  # noqa: PLC0415

        self.provider.enter("fixture")
        try:
            with not_counted():
                yield
        finally:
            self.provider.enter("case")

    def recall(
        self,
        request: RecallRequest,
        *,
        corpus: CorpusDeclaration,
        checkpoint: ReadAuthorityCheckpoint,
        binding: ProviderBinding,
    ) -> RecallSession:
        """The real guarded recall, on the counted provider at the run's clock."""
        session: RecallSession = self._fail_open(
            recall,
            request,
            corpus=corpus,
            checkpoint=checkpoint,
            binding=binding,
            provider=self.provider,
            now=self.now,
        )
        return session

    def apply(
        self,
        base_output: Any,
        session: RecallSession,
        *,
        application_id: str,
        apply_memory: FixtureModel,
    ) -> ApplicationResult:
        """The real application seam, against the fixture's current artifact."""
        result: ApplicationResult = self._fail_open(
            apply,
            base_output,
            session,
            application_id=application_id,
            artifact_ref=ARTIFACT_REF,
            apply_memory=apply_memory,
        )
        return result

    def _fail_open(self, seam: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Call a fail-open seam (recall, apply): anything it raises would stop the
        caller and hand the problem to the user, so it counts as a user gate; a
        result whose packet reports an external write counts as one."""
        try:
            result = seam(*args, **kwargs)
        except Exception:
            self.user_gates += 1
            raise
        # What the seam's own packet says it wrote outside the store.
        packet = getattr(result, "receipt", None) or getattr(result, "packet", None)
        if getattr(packet, "external_writes_performed", False) is not False:
            self.external_writes += 1
        return result
