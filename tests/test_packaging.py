"""The package surface: lazy import, a small sorted __all__, version, typed marker."""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
import sys
from pathlib import Path

import pytest

import reward_memory

HEAVY = ("attr", "attrs", "cattrs", "jsonschema", "referencing", "sqlite3")


def _modules_after(code: str) -> set[str]:
    probe = f"import sys, json; {code}; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return set(json.loads(out.stdout))


def test_import_is_lazy() -> None:
    loaded = _modules_after("import reward_memory")
    assert not {m for m in loaded if m.split(".")[0] in HEAVY}
    assert "importlib.metadata" not in loaded
    assert not {
        m for m in loaded if m.startswith("reward_memory.") and m != "reward_memory._version"
    }


def test_architecture_verb_needs_no_converter_or_jsonschema() -> None:
    loaded = _modules_after(
        "import io, contextlib; from reward_memory.cli import main; "
        "f = io.StringIO(); ctx = contextlib.redirect_stdout(f); ctx.__enter__(); "
        "main(['architecture']); ctx.__exit__(None, None, None)"
    )
    assert not {m for m in loaded if m.split(".")[0] in ("cattrs", "jsonschema", "referencing")}


def test_all_resolves() -> None:
    names = reward_memory.__all__
    assert len(set(names)) == len(names)  # ordering is ruff's RUF022 (isort-style)
    for name in names:
        assert getattr(reward_memory, name) is not None
    assert sorted(dir(reward_memory)) == sorted(names)


def test_public_functions_are_not_shadowed_by_submodules() -> None:
    # A submodule named like a public function would replace it on the package
    # once imported; the seams' modules are therefore named apart from their verbs.
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "import reward_memory.guarded_recall, reward_memory.application, "
            "reward_memory.candidates, reward_memory.activation\n"
            "import reward_memory as rm, types\n"
            "print(all(callable(getattr(rm, n))"
            " and not isinstance(getattr(rm, n), types.ModuleType)"
            " for n in ('recall', 'apply', 'propose', 'review', 'activate')))",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == "True"


def test_unknown_attribute() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        reward_memory.nope  # noqa: B018


def test_version_matches_metadata() -> None:
    assert reward_memory.__version__ == importlib.metadata.version("reward-memory")


def test_typed_marker_ships() -> None:
    assert (Path(reward_memory.__file__).parent / "py.typed").is_file()


def test_errors_form_one_tree() -> None:
    from reward_memory import errors

    for name in errors.__all__:
        obj = getattr(errors, name)
        if isinstance(obj, type):
            assert issubclass(obj, errors.RewardMemoryError)
    assert issubclass(errors.RecordValidationError, ValueError)
    assert issubclass(errors.ProviderNotFoundError, LookupError)
