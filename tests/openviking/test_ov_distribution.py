"""Issue 10 item 1: "Both wheels build; installed into a clean venv,
``get_provider("openviking", ...)`` finds it through the entry point alone."

The probe in the new venv then talks to the real server through that provider.
"""

from __future__ import annotations

import json
import os
import subprocess
import zipfile
from pathlib import Path

import pytest
from _server import LocalOpenViking, Tenant

from _clean_venv import install_declared, new_venv, pip

ROOT = Path(__file__).resolve().parents[2]

_PROBE = """
import json, os, sys
import reward_memory, reward_memory_openviking
from reward_memory.providers.discovery import available_providers, get_provider
from reward_memory.providers.spi import ProviderScope

provider = get_provider(os.environ["RM_PROBE_URL"])
scope = ProviderScope(namespace="ns", scope_ref="venv-probe")
written = provider.write(scope=scope, key="doc-1", content="h\\u00e9llo zqvenv \\U0001f600\\r\\n")
read = provider.read(scope=scope, ref=written.ref)
hits = provider.search(scope=scope, query="zqvenv", limit=5).hits
provider.close()
print(json.dumps({
    "ids": {i.provider_id: [i.distribution, i.load_error] for i in available_providers()},
    "module": type(provider).__module__,
    "status": written.status,
    "exact": read.content == "h\\u00e9llo zqvenv \\U0001f600\\r\\n",
    "hits": [h.ref for h in hits] == [written.ref],
    "files": [reward_memory.__file__, reward_memory_openviking.__file__],
    "prefix": sys.prefix,
}))
"""


@pytest.mark.slow
def test_both_wheels_install_into_a_clean_venv(
    tmp_path: Path, openviking: LocalOpenViking, fresh_tenant: Tenant
) -> None:
    wheels = tmp_path / "wheels"
    built = pip(
        "wheel", "--no-build-isolation", "--no-deps", "--no-index", "-w", str(wheels),
        str(ROOT), str(ROOT / "openviking"),
    )  # fmt: skip
    assert built.returncode == 0, built.stderr[-2000:]
    names = sorted(p.name for p in wheels.glob("*.whl"))
    assert len(names) == 2, names
    sibling = next(wheels.glob("reward_memory_openviking-*.whl"))
    with zipfile.ZipFile(sibling) as archive:
        listed = archive.namelist()
        entry_points = next(n for n in listed if n.endswith("entry_points.txt"))
        assert "openviking = reward_memory_openviking.provider:OpenVikingProvider" in (
            archive.read(entry_points).decode()
        )
        metadata = archive.read(next(n for n in listed if n.endswith("METADATA"))).decode()
    assert "reward_memory_openviking/py.typed" in listed
    assert "reward_memory_openviking/provider.py" in listed
    assert not any(n.startswith("reward_memory/") for n in listed), "the core is not copied"
    assert "Requires-Dist: reward-memory" in metadata
    assert "Requires-Dist: httpx" in metadata

    python = new_venv(tmp_path / "venv")
    installed = pip(
        "install", "--no-deps", "--no-index", *map(str, wheels.glob("*.whl")), python=python
    )
    assert installed.returncode == 0, installed.stderr[-2000:]
    # Both distributions' runtime dependencies as declared (reward-memory itself is the wheel).
    install_declared(python, ROOT / "pyproject.toml", ROOT / "openviking" / "pyproject.toml")

    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["RM_PROBE_KEY"] = fresh_tenant.key
    env["RM_PROBE_URL"] = f"openviking://127.0.0.1:{openviking.port}?api_key_env=RM_PROBE_KEY"
    result = subprocess.run(
        [str(python), "-c", _PROBE],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
        env=env,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout)
    assert report["ids"]["openviking"] == ["reward-memory-openviking", None]
    assert report["module"] == "reward_memory_openviking.provider"
    assert (report["status"], report["exact"], report["hits"]) == ("created", True, True)
    for file in report["files"]:
        assert Path(file).is_relative_to(Path(report["prefix"])), file
