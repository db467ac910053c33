"""The read side of the authority map: read checkpoints for listed readers only.

Contract sentences protected here:

- "Authority never comes from the event" and memory never widens it: a read
  checkpoint comes from the caller's authority map, for a listed reader (agent
  id) of that corpus's project and surface, with the corpus's own read authority
  and the map's source ref -- never more.
- Without an answer the corpus is guard-blocked (zero provider calls), so with
  the map alone ``Experiment.recall`` works only for the readers it lists.
"""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

import reward_memory as rm
from _hooks_support import A, C, applying, goal, walk_config
from _ingest_support import (
    MAP_REF,
    NOW,
    OBSERVED,
    PROJECT,
    SURFACE,
    WORKSPACE,
    grant,
    hard_corpus,
    hard_event,
)
from reward_memory import schemas, wire
from reward_memory.authority import AuthorityMap
from reward_memory.errors import RecordValidationError
from reward_memory.hooks import RecallContext
from reward_memory.records.authority import AuthorityMapFile, ReadGrant
from reward_memory.records.corpus import CorpusScope
from reward_memory.testing import InMemoryProvider

READER = "agent:patcher"


def corpus(**changes: Any) -> Any:
    return attrs.evolve(hard_corpus(), **changes)


def read_grant(**changes: Any) -> ReadGrant:
    base = ReadGrant(
        reader_ref=READER,
        project_refs=(PROJECT,),
        surface_ids=(SURFACE,),
        corpus_ids=("issue_fix_policies",),
    )
    return attrs.evolve(base, **changes)


def reading_map(*grants: ReadGrant) -> AuthorityMap:
    return AuthorityMap(
        AuthorityMapFile(
            source_ref=MAP_REF, grants=(grant(),), read_grants=grants or (read_grant(),)
        )
    )


def ctx(**changes: Any) -> RecallContext:
    fields: dict[str, Any] = {"workspace_ref": WORKSPACE, "project_ref": PROJECT, "now": NOW}
    fields.update(changes)
    return RecallContext.current(**fields)


def ask(source: AuthorityMap, **changes: Any) -> Any:
    call: dict[str, Any] = {
        "corpus": hard_corpus(),
        "surface_id": SURFACE,
        "context": ctx(),
        "agent_id": READER,
        "now": NOW,
    }
    call.update(changes)
    return source.read_checkpoint_for(**call)


def test_a_listed_reader_gets_the_corpus_scope_and_read_authority_only() -> None:
    checkpoint = ask(reading_map())
    assert checkpoint is not None
    assert checkpoint.verified is True
    assert (checkpoint.corpus_id, checkpoint.surface_id) == ("issue_fix_policies", SURFACE)
    assert (checkpoint.workspace_ref, checkpoint.project_ref) == (WORKSPACE, PROJECT)
    assert checkpoint.read_authority == "authority_scoped"
    assert checkpoint.source_ref == MAP_REF
    assert (checkpoint.user_ref, checkpoint.peer_ref, checkpoint.session_ref) == (None,) * 3


@pytest.mark.parametrize(
    "changes",
    [
        pytest.param({"agent_id": "agent:stranger"}, id="unknown-reader"),
        pytest.param(
            {
                "corpus": corpus(
                    scope=CorpusScope(
                        workspace_ref=WORKSPACE,
                        project_ref="repository:other",
                        surface_ids=(SURFACE,),
                    )
                )
            },
            id="other-project",
        ),
        pytest.param({"surface_id": "issue_fix.review_order"}, id="other-surface"),
        pytest.param({"corpus": corpus(corpus_id="issue_fix_policies_b")}, id="other-corpus"),
        pytest.param({"context": ctx(project_ref="repository:other")}, id="context-other-project"),
        pytest.param({"context": ctx(workspace_ref="workspace:other")}, id="context-other-ws"),
        pytest.param(
            {
                "corpus": corpus(
                    scope=CorpusScope(
                        workspace_ref=WORKSPACE,
                        project_ref=PROJECT,
                        surface_ids=(SURFACE,),
                        peer_ref="peer:someone",
                    )
                )
            },
            id="identity-scoped-corpus",
        ),
    ],
)
def test_the_map_refuses_outside_its_read_grants(changes: dict[str, Any]) -> None:
    assert ask(reading_map(), **changes) is None


def test_a_surface_the_corpus_does_not_declare_is_refused_even_if_granted() -> None:
    source = reading_map(read_grant(surface_ids=(SURFACE, "issue_fix.review_order")))
    assert ask(source, surface_id="issue_fix.review_order") is None


def test_an_expired_read_grant_answers_nothing() -> None:
    stamp = (NOW - timedelta(seconds=1)).isoformat()
    assert ask(reading_map(read_grant(expires_at=stamp))) is None
    later = (NOW + timedelta(days=1)).isoformat()
    assert ask(reading_map(read_grant(expires_at=later))) is not None


def test_a_map_without_read_grants_answers_no_reader() -> None:
    source = AuthorityMap(AuthorityMapFile(source_ref=MAP_REF, grants=(grant(),)))
    assert ask(source) is None


def test_read_grants_are_strict_in_the_file(tmp_path: Path) -> None:
    data = wire.dump(reading_map().record)
    assert schemas.validate(data) == "reward_memory_authority_map_v0"
    data["read_grants"][0]["scope_ref"] = "repository:example/x"
    path = tmp_path / "authority.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(RecordValidationError) as caught:
        AuthorityMap.from_file(path)
    assert caught.value.path.startswith("$.read_grants[0]")


def test_a_reader_appears_in_one_read_grant_only() -> None:
    with pytest.raises(RecordValidationError) as caught:
        AuthorityMapFile(
            source_ref=MAP_REF, grants=(grant(),), read_grants=(read_grant(), read_grant())
        )
    assert caught.value.code == "duplicate_item"
    assert caught.value.path == "$.read_grants[1]"


@pytest.mark.parametrize("field", ["project_refs", "surface_ids", "corpus_ids"])
def test_a_read_grant_names_at_least_one_of_each(field: str) -> None:
    with pytest.raises(RecordValidationError) as caught:
        read_grant(**{field: ()})
    assert caught.value.path == f"$.{field}"


_TOKENS = st.sampled_from(["agent:patcher", "agent:other", "agent:third"])
_PROJECTS = st.sampled_from([PROJECT, "repository:other"])
_SURFACES = st.sampled_from([SURFACE, "issue_fix.review_order"])
_CORPORA = st.sampled_from(["issue_fix_policies", "issue_fix_policies_b"])


@given(
    granted=st.lists(
        st.tuples(
            _TOKENS,
            st.sets(_PROJECTS, min_size=1),
            st.sets(_SURFACES, min_size=1),
            st.sets(_CORPORA, min_size=1),
        ),
        min_size=1,
        max_size=3,
        unique_by=lambda row: row[0],
    ),
    agent=_TOKENS,
    project=_PROJECTS,
    surface=_SURFACES,
    corpus_id=_CORPORA,
)
def test_the_map_never_answers_outside_its_grants(
    granted: list[tuple[str, set[str], set[str], set[str]]],
    agent: str,
    project: str,
    surface: str,
    corpus_id: str,
) -> None:
    source = reading_map(
        *(
            ReadGrant(
                reader_ref=reader,
                project_refs=tuple(projects),
                surface_ids=tuple(surfaces),
                corpus_ids=tuple(corpora),
            )
            for reader, projects, surfaces, corpora in granted
        )
    )
    declared = corpus(
        corpus_id=corpus_id,
        scope=CorpusScope(
            workspace_ref=WORKSPACE,
            project_ref=project,
            surface_ids=tuple(sorted({SURFACE, "issue_fix.review_order"})),
        ),
    )
    answer = ask(
        source,
        corpus=declared,
        surface_id=surface,
        agent_id=agent,
        context=ctx(project_ref=project),
    )
    allowed = any(
        reader == agent and project in projects and surface in surfaces and corpus_id in corpora
        for reader, projects, surfaces, corpora in granted
    )
    assert (answer is not None) is allowed
    if answer is not None:
        assert (answer.corpus_id, answer.project_ref, answer.surface_id) == (
            corpus_id,
            project,
            surface,
        )
        assert answer.read_authority == declared.read_authority
        assert answer.source_ref == MAP_REF


def _walk_map(reader: str, corpus_ids: tuple[str, ...]) -> AuthorityMap:
    return reading_map(read_grant(reader_ref=reader, corpus_ids=corpus_ids))


@pytest.mark.parametrize(
    ("reader", "corpora", "status"),
    [
        pytest.param(READER, (A, C), "applied", id="listed-reader"),
        pytest.param("agent:stranger", (A, C), "not_available", id="unlisted-reader"),
        pytest.param(READER, (A,), "not_available", id="ingest-corpus-not-granted"),
    ],
)
def test_experiment_recall_works_with_the_map_alone(
    reader: str, corpora: tuple[str, ...], status: str
) -> None:
    memory = rm.open_experiment_from(
        goal(),
        walk_config(),
        agent_id=READER,
        authority=_walk_map(reader, corpora),
        provider=InMemoryProvider(),
    )
    assert memory.ingest(hard_event(), observed_at=OBSERVED, execute=True, now=NOW).status == (
        "activated"
    )
    outcome = memory.recall(
        "issue_fix.patch_planning",
        queries=["scope selection"],
        base_output={"plan": 1},
        apply_memory=applying,
        application_id="app-1",
        now=NOW,
    )
    assert outcome.status == status
