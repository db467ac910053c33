"""The standing policy record (reference §9.1; seeds, "Minimal ingest loop").

"A reward_memory_standing_policy_v0 predeclares the corpus owner, reviewer, authority
source, exact project/surfaces, one memory class, source kinds, verified actor roles,
and action scopes ... It cannot create credentials, repository write authority,
publish/production scope, or cross-project authority."
"""

from __future__ import annotations

from typing import Any

import pytest

from reward_memory import schemas, wire
from reward_memory.errors import RecordValidationError
from reward_memory.records.standing_policy import PolicyScope, StandingPolicy


def policy_data(**changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "schema_version": "reward_memory_standing_policy_v0",
        "policy_id": "policy:review-summary",
        "owner_ref": "owner:review-team",
        "reviewer_ref": "reviewer:review-team",
        "authority_source_ref": "authority:review-team-map",
        "enabled": True,
        "auto_activate": True,
        "scope": {
            "workspace_ref": "workspace:main",
            "project_ref": "project:alpha",
            "surface_ids": ["reviewer_artifact.summary"],
        },
        "allowed_target_classes": ["soft_preference"],
        "allowed_source_kinds": ["maintainer_feedback"],
        "allowed_actor_roles": ["maintainer", "verified_repository_core_contributor"],
        "allowed_action_scopes": [],
        "raw_content_captured": False,
    }
    data.update(changes)
    return data


def test_a_policy_round_trips_and_its_lists_are_sorted() -> None:
    data = policy_data(allowed_actor_roles=["verified_repository_core_contributor", "maintainer"])
    policy = wire.load(data, StandingPolicy)
    assert policy.allowed_actor_roles == ("maintainer", "verified_repository_core_contributor")
    dumped = wire.dump(policy)
    assert "user_ref" not in dumped["scope"]  # identities only when set, as in the original
    assert schemas.validate(dumped) == "reward_memory_standing_policy_v0"
    assert wire.load(dumped, StandingPolicy) == policy


@pytest.mark.parametrize(
    ("changes", "path", "code"),
    [
        ({"surprise": 1}, "$.surprise", None),
        ({"raw_content_captured": True}, "$.raw_content_captured", None),
        ({"enabled": "yes"}, "$.enabled", None),
        ({"allowed_target_classes": ["working_context"]}, "$.allowed_target_classes", None),
        ({"allowed_target_classes": []}, "$.allowed_target_classes", None),
        ({"allowed_source_kinds": []}, "$.allowed_source_kinds", None),
        (
            {
                "scope": {
                    "workspace_ref": "workspace:main",
                    "project_ref": "project:alpha",
                    "surface_ids": [],
                }
            },
            "$.scope.surface_ids",
            None,
        ),
        (
            {
                "scope": {
                    "workspace_ref": "w:1",
                    "project_ref": "p:1",
                    "surface_ids": ["a.b"],
                    "x": 1,
                }
            },
            "$.scope.x",
            None,
        ),
    ],
)
def test_bad_policies_are_refused_with_the_field_path(
    changes: dict[str, Any], path: str, code: str | None
) -> None:
    with pytest.raises(RecordValidationError) as caught:
        wire.load(policy_data(**changes), StandingPolicy)
    assert caught.value.path is not None
    assert caught.value.path.startswith(path)


@pytest.mark.parametrize(
    "scope",
    [
        "repository:write",
        "issue_fix:merge",
        "release.publish",
        "deploy-production",
        "github/credentials",
        "ci_secret",
        "Prod:deploy",
        "npm:token",
        # Inflections, camelCase parts and joined words name the same authority.
        "issue_fix:publishing",
        "issue_fix:writes",
        "repo:writeAccess",
        "repoWrite",
        "issue_fix:deployment",
        "issue_fix:releases",
        "git:pushes",
        "ci:creds",
        "service:api_key",
        "host:ssh_key",
        "db:passwd",
        "repository:commit",
        "repository:delete",
        "org:administrator",
        # One-word compounds: the root inside the word names the authority too.
        "repository:readwrite",
        "repo:overwrite",
        "repo:writeback",
        "git:forcepush",
        "auth:accesstoken",
        "auth:sessiontoken",
        "vault:secretkey",
        "aws:access_key",
        "pypi:upload",
    ],
)
def test_no_policy_hands_out_credential_write_publish_or_production_scope(scope: str) -> None:
    data = policy_data(allowed_action_scopes=["issue_fix:scope_selection", scope])
    with pytest.raises(RecordValidationError) as caught:
        StandingPolicy(
            **{
                **{key: value for key, value in data.items() if key != "scope"},
                "scope": PolicyScope(**data["scope"]),
            }
        )
    assert caught.value.code == "authority_expansion_forbidden"
    assert caught.value.path == "$.allowed_action_scopes[1]" or caught.value.path.startswith(
        "$.allowed_action_scopes"
    )


@pytest.mark.parametrize(
    "scope",
    [
        "issue_fix:scope_selection",
        "issue_fix:test_selection",
        "product:roadmap",
        "issue_fix:passing_tests",
        "reviewer:summary_tone",
        "issue_fix:keyboard_layout",
        "issue_fix:reproduction",
        "billing:credit_notes",
        "privacy:pseudonymize",
    ],
)
def test_words_that_only_resemble_a_forbidden_one_are_allowed(scope: str) -> None:
    data = policy_data(allowed_action_scopes=[scope])
    assert wire.load(data, StandingPolicy).allowed_action_scopes == (scope,)


def test_narrow_action_scopes_are_allowed() -> None:
    data = policy_data(allowed_action_scopes=["issue_fix:scope_selection", "issue_fix:validation"])
    policy = wire.load(data, StandingPolicy)
    assert policy.allowed_action_scopes == ("issue_fix:scope_selection", "issue_fix:validation")
