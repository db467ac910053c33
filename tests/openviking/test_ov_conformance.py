"""The provider conformance kit against a real OpenViking 0.5.2 server (DESIGN.md §7:
"All three shipped providers pass it")."""

from __future__ import annotations

from pathlib import Path

import pytest
from _server import BlackHole, LocalOpenViking, Tenant

from reward_memory.providers.spi import Provider
from reward_memory.testing.conformance import ProviderConformance
from reward_memory_openviking import OpenVikingProvider


class TestOpenVikingConformance(ProviderConformance):
    @pytest.fixture(autouse=True)
    def _server(
        self,
        openviking: LocalOpenViking,
        shared_tenant: Tenant,
        black_hole: BlackHole,
        closed_port: int,
    ) -> None:
        self.base_url = openviking.base_url
        self.tenant = shared_tenant
        self.hole_url = black_hole.base_url
        self.closed_url = f"http://127.0.0.1:{closed_port}"

    def make_provider(self, tmp_path: Path) -> Provider:
        return OpenVikingProvider(base_url=self.base_url, api_key=self.tenant.key)

    def make_unavailable_provider(self, tmp_path: Path) -> Provider | None:
        return OpenVikingProvider(base_url=self.closed_url, api_key=self.tenant.key, retries=0)

    def make_timeout_provider(self, tmp_path: Path) -> Provider | None:
        return OpenVikingProvider(base_url=self.hole_url, api_key=self.tenant.key)
