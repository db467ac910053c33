"""Install throwaway distributions for discovery tests: real ``.dist-info`` on sys.path.

``importlib.metadata`` finds a distribution by its ``*.dist-info`` directory on
``sys.path``, so writing one (``METADATA`` + ``entry_points.txt``) next to a
module *is* installing it, as far as discovery can tell. No mocks involved.
"""

from __future__ import annotations

import sys
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

from reward_memory.providers import discovery

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

DATA = Path(__file__).resolve().parent / "data"


class Distributions:
    """Writes distributions under one directory that is put on ``sys.path``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.modules: list[str] = []

    def unique(self, stem: str) -> str:
        """A module name no other test uses (modules stay cached in sys.modules)."""
        name = f"{stem}_{uuid.uuid4().hex[:8]}"
        self.modules.append(name)
        return name

    def install(
        self,
        name: str,
        entry_points: Mapping[str, str],
        modules: Mapping[str, str] | None = None,
        *,
        version: str = "1.0",
    ) -> None:
        """Install distribution ``name`` with ``reward_memory.providers`` entry points."""
        info = self.root / f"{name.replace('-', '_')}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8"
        )
        lines = [f"[{discovery.GROUP}]", *(f"{k} = {v}" for k, v in entry_points.items())]
        (info / "entry_points.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
        for module, source in (modules or {}).items():
            (self.root / f"{module}.py").write_text(source, encoding="utf-8")
        discovery.rescan()


def distributions(tmp_path: Path) -> Iterator[Distributions]:
    """Body of a fixture: yields a :class:`Distributions`, then uninstalls everything."""
    root = tmp_path / "site"
    root.mkdir()
    sys.path.insert(0, str(root))
    discovery.rescan()
    helper = Distributions(root)
    try:
        yield helper
    finally:
        sys.path.remove(str(root))
        for module in helper.modules:
            sys.modules.pop(module, None)
        discovery.rescan()


# A complete provider, parametrised by id; used as module source.
GOOD_PROVIDER = """
from reward_memory.testing.memory import InMemoryProvider


class Provider(InMemoryProvider):
    provider_id = {provider_id!r}

    @classmethod
    def from_url(cls, url):
        return cls()
"""
