"""Shared test configuration."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

# A noisy 2-core machine: no deadlines, and a profile CI can select.
settings.register_profile("default", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile(
    "ci", deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
