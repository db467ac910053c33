"""Editable installs import the package from ../src instead of copying it.

Hatchling applies ``force-include`` to editable wheels too, which would put a
stale copy in site-packages; an editable build gets one ``.pth`` file naming
``../src`` instead (what ``dev-mode-dirs`` does for packages inside the root).
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class EditableFromSource(BuildHookInterface):  # type: ignore[type-arg]
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if version != "editable":
            return
        source = (Path(self.root) / ".." / "src").resolve()
        pth = Path(tempfile.mkdtemp()) / "_reward_memory_openviking.pth"
        pth.write_text(f"{source}\n", encoding="utf-8")
        build_data["force_include_editable"] = {str(pth): pth.name}
