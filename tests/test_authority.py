"""The authority source and the authority-map file (issue 8 item 3; DESIGN.md §2).

Contract sentences protected here:

- "Authority never comes from the event. The caller passes an authority source: an
  object (a small Protocol) that, given the actor, role, project and requested action
  scopes an event claims, answers with a verified checkpoint or with nothing."
- "The CLI reads one from an authority-map file (verified actors, roles, projects,
  action scopes, the source ref)." -- strict, its own schema.
- The checkpoint's action scopes are the intersection of what the event asks and what
  the map grants: never more.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from _ingest_support import ACTOR, MAP_REF, NOW, PROJECT, ROLE, SCOPE, authority, grant, ingest_hard
from reward_memory import schemas, wire
from reward_memory.authority import AuthorityMap, AuthoritySource, load_authority_map
from reward_memory.errors import RecordValidationError
from reward_memory.records.authority import AuthorityGrant, AuthorityMapFile
from reward_memory.testing import InMemoryProvider


def map_data(**changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "schema_version": "reward_memory_authority_map_v0",
        "source_ref": MAP_REF,
        "grants": [
            {
                "actor_ref": ACTOR,
                "actor_role": ROLE,
                "project_refs": [PROJECT],
                "action_scopes": [SCOPE, "issue_fix:review_order"],
            }
        ],
    }
    data.update(changes)
    return data


def _ask(source: AuthoritySource, **changes: Any) -> Any:
    claims: dict[str, Any] = {
        "actor_ref": ACTOR,
        "actor_role": ROLE,
        "project_ref": PROJECT,
        "action_scopes": (SCOPE,),
        "now": NOW,
    }
    claims.update(changes)
    return source.checkpoint_for(**claims)


def test_a_map_file_loads_and_answers(tmp_path: Path) -> None:
    path = tmp_path / "authority.json"
    path.write_text(json.dumps(map_data()), encoding="utf-8")
    source = AuthorityMap.from_file(path)
    assert isinstance(source, AuthoritySource)
    assert source.source_ref == MAP_REF
    checkpoint = _ask(source)
    assert checkpoint.verified
    assert checkpoint.source_ref == MAP_REF
    assert (checkpoint.actor_ref, checkpoint.actor_role, checkpoint.project_ref) == (
        ACTOR,
        ROLE,
        PROJECT,
    )
    assert checkpoint.action_scopes == (SCOPE,)  # what was asked, not all the grant holds
    dumped = wire.dump(source.record)
    assert schemas.validate(dumped) == "reward_memory_authority_map_v0"
    assert load_authority_map(path) == source.record


@pytest.mark.parametrize(
    ("claims", "why"),
    [
        ({"actor_ref": "github:user:stranger"}, "unknown actor"),
        ({"actor_role": "maintainer"}, "wrong role"),
        ({"project_ref": "repository:other"}, "other project"),
    ],
)
def test_the_map_refuses_what_it_does_not_list(claims: dict[str, Any], why: str) -> None:
    assert _ask(AuthorityMap.from_data(map_data()), **claims) is None, why


def test_wider_scopes_are_narrowed_to_the_grant() -> None:
    source = AuthorityMap.from_data(map_data())
    checkpoint = _ask(source, action_scopes=(SCOPE, "issue_fix:merge_rights", "repo:admin"))
    assert checkpoint.action_scopes == (SCOPE,)


def test_an_ingest_asking_for_wider_scopes_is_blocked() -> None:
    from reward_memory.adapters.issue_fix import verified_contributor_event

    event = verified_contributor_event()
    wider = attrs.evolve(event, requested_action_scopes=(SCOPE, "issue_fix:other_scope"))
    receipt = ingest_hard(wider, provider=InMemoryProvider())
    assert receipt.status == "guard_blocked"
    assert "requested_action_scope_exceeds_verified_authority" in receipt.guard.reason_codes


def test_an_expired_grant_answers_nothing() -> None:
    expired = map_data()
    expired["grants"][0]["expires_at"] = "2026-11-02T09:00:00Z"
    source = AuthorityMap.from_data(expired)
    assert _ask(source, now=NOW - timedelta(seconds=1)) is not None
    assert _ask(source, now=NOW) is None
    with pytest.raises(RecordValidationError):
        _ask(source, now=datetime(2026, 1, 1))


@pytest.mark.parametrize(
    ("changes", "path"),
    [
        ({"surprise": 1}, "$.surprise"),
        ({"schema_version": "reward_memory_authority_map_v1"}, "$.schema_version"),
        ({"source_ref": ""}, "$.source_ref"),
        ({"grants": []}, "$.grants"),
        ({"raw_content_captured": True}, "$.raw_content_captured"),
        ({"grants": [{"actor_ref": ACTOR, "actor_role": ROLE}]}, "$.grants[0]"),
        (
            {"grants": [{"actor_ref": ACTOR, "actor_role": ROLE, "project_refs": [], "x": 1}]},
            "$.grants[0]",
        ),
        (
            {"grants": [{"actor_ref": ACTOR, "actor_role": ROLE, "project_refs": ["p:a", "p:a"]}]},
            "$.grants[0].project_refs",
        ),
    ],
)
def test_a_malformed_map_is_refused_with_its_path(changes: dict[str, Any], path: str) -> None:
    with pytest.raises(RecordValidationError) as info:
        AuthorityMap.from_data(map_data(**changes))
    assert info.value.path.startswith(path)


def test_an_actor_and_role_appear_in_one_grant_only() -> None:
    with pytest.raises(RecordValidationError) as info:
        AuthorityMapFile(source_ref=MAP_REF, grants=(grant(), grant(action_scopes=())))
    assert info.value.path == "$.grants[1]"
    assert info.value.code == "duplicate_item"


def test_a_missing_or_invalid_file_is_a_typed_error(tmp_path: Path) -> None:
    with pytest.raises(RecordValidationError):
        AuthorityMap.from_file(tmp_path / "absent.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(RecordValidationError):
        AuthorityMap.from_file(bad)


def test_the_map_is_built_from_a_record_only() -> None:
    with pytest.raises(RecordValidationError):
        AuthorityMap(map_data())  # type: ignore[arg-type]


_TOKENS = st.sampled_from([SCOPE, "issue_fix:review_order", "a:b", "c:d", "e:f", "g:h"])


@given(
    granted=st.lists(_TOKENS, unique=True, max_size=6),
    asked=st.lists(_TOKENS, unique=True, max_size=6),
    actor=st.sampled_from([ACTOR, "github:user:other"]),
    role=st.sampled_from([ROLE, "maintainer"]),
    project=st.sampled_from([PROJECT, "repository:other"]),
)
def test_authority_never_exceeds_the_grant(
    granted: list[str], asked: list[str], actor: str, role: str, project: str
) -> None:
    source = authority(
        AuthorityGrant(
            actor_ref=ACTOR, actor_role=ROLE, project_refs=(PROJECT,), action_scopes=tuple(granted)
        )
    )
    answer = source.checkpoint_for(
        actor_ref=actor, actor_role=role, project_ref=project, action_scopes=tuple(asked), now=NOW
    )
    listed = (actor, role, project) == (ACTOR, ROLE, PROJECT)
    assert (answer is not None) == listed
    if answer is not None:
        assert set(answer.action_scopes) == set(granted) & set(asked)
        assert answer.source_ref == MAP_REF
        assert (answer.actor_ref, answer.actor_role, answer.project_ref) == (actor, role, project)


@given(
    asks=st.lists(
        st.tuples(
            st.sampled_from([ACTOR, "github:user:other"]),
            st.sampled_from([ROLE, "reviewer"]),
            st.sampled_from([PROJECT, "repository:other"]),
            st.lists(
                st.sampled_from([SCOPE, "issue_fix:review_order", "repository:publish"]),
                unique=True,
                max_size=3,
            ).map(tuple),
        ),
        max_size=12,
    )
)
def test_a_repeated_claim_gets_the_answer_a_fresh_map_gives(
    asks: list[tuple[str, str, str, tuple[str, ...]]],
) -> None:
    """A map answers each distinct claim once and reuses it: never another claim's answer."""
    source = AuthorityMap.from_data(map_data())
    for actor, role, project, scopes in asks + asks:
        claims = {"actor_ref": actor, "actor_role": role, "project_ref": project}
        fresh = _ask(AuthorityMap.from_data(map_data()), action_scopes=scopes, **claims)
        assert _ask(source, action_scopes=scopes, **claims) == fresh
