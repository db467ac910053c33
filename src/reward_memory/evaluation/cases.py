"""The eight Stage-4 contract cases, in their fixed order, over the real core.

Each case drives the real seams -- ingest (which runs the Issue Fix adapter,
propose, the standing-policy guard, review and activate), propose/review,
activate, guarded recall, apply and the route check -- against the counted
provider, and records named assertions plus a public-safe evidence object
(booleans, counts, statuses and reason codes only). Seeding the store is the
corpus owner's write and runs inside :meth:`Context.seeding`; everything else
is the evaluated operation, whose writes the release gate counts.

The cases live by concept: :mod:`.store_cases`, :mod:`.guard_cases`,
:mod:`.application_cases`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from reward_memory.evaluation.application_cases import (
    candidate_ranking_influence,
    gate_non_override,
    large_edge_case_patch_protection,
)
from reward_memory.evaluation.guard_cases import (
    multi_person_authority_conditions,
    project_module_scope_isolation,
    stale_source_rejection,
)
from reward_memory.evaluation.store_cases import (
    compact_restart_survival,
    supersede_revoke_rejection,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from reward_memory.evaluation.context import Check, Context

__all__ = ["CASES"]

CASES: Final[tuple[tuple[str, Callable[[Context], Check]], ...]] = (
    ("compact_restart_survival", compact_restart_survival),
    ("project_module_scope_isolation", project_module_scope_isolation),
    ("supersede_revoke_rejection", supersede_revoke_rejection),
    ("stale_source_rejection", stale_source_rejection),
    ("multi_person_authority_conditions", multi_person_authority_conditions),
    ("gate_non_override", gate_non_override),
    ("candidate_ranking_influence", candidate_ranking_influence),
    ("large_edge_case_patch_protection", large_edge_case_patch_protection),
)
