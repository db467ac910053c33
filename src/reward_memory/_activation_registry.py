"""The activation registry file: read it, plan a ``configure`` change, write it atomically.

The file (default ``.reward-memory/activation.json`` in the current directory)
holds, per goal, ``enabled``, ``experimental``, a relative config pointer and
the agent allowlist (see
:mod:`reward_memory.records.activation_registry`). A change is planned purely
(:func:`plan_change`), previewed by default, and written only on ``execute``:
to a temporary file in the same directory, flushed and fsynced, then moved over
the old file with :func:`os.replace` -- a crash at any point leaves either the
old file or the new one, never a torn one.

The config pointer is relative to the *project root* (:func:`config_root`): the
directory that holds ``.reward-memory/`` when the activation file lives there
(so ``.reward-memory/activation.json`` and a pointer ``config/experiment.json``
name ``./config/experiment.json``, as the caller typed it), otherwise the
activation file's own directory (``examples/experiment/activation.json`` and
``config.json`` name ``examples/experiment/config.json``).
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Final

import attrs

from reward_memory.errors import InputError, RecordValidationError
from reward_memory.records.activation_registry import (
    ACTIVATION_REGISTRY_SCHEMA,
    ActivationChange,
    ActivationGoal,
    ActivationRegistry,
    GoalSummary,
    check_agent_id,
    check_config_pointer,
)

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from reward_memory.records.activation_registry import ConfigStatus

__all__ = [
    "DEFAULT_ACTIVATION_PATH",
    "config_file",
    "config_root",
    "configure_goal",
    "load_activation_registry",
    "plan_change",
    "write_activation_registry",
]

DEFAULT_ACTIVATION_PATH: Final = ".reward-memory/activation.json"
STATE_DIRECTORY: Final = ".reward-memory"


def config_root(activation_path: str | os.PathLike[str]) -> Path:
    """The directory a goal's config pointer is relative to (see the module docs)."""
    parent = Path(activation_path).parent
    return parent.parent if parent.name == STATE_DIRECTORY else parent


def load_activation_registry(path: str | os.PathLike[str]) -> ActivationRegistry:
    """Read and validate an activation registry file (bounded JSON, strict schema)."""
    from reward_memory import jsonio  # noqa: PLC0415
    from reward_memory._boundary import strict_record  # noqa: PLC0415

    # One strict pass into this one record (the schema names an error only): not
    # the tagged union of every packet (wire.load), nor cattrs, nor jsonschema.
    return strict_record(ActivationRegistry, jsonio.read(path), ACTIVATION_REGISTRY_SCHEMA)


def _read_or_empty(path: Path) -> ActivationRegistry:
    try:
        present = path.exists()  # a dangling link: no registry yet (written through it)
    except (OSError, ValueError):  # a name too long, a directory that may not be searched
        raise InputError("the activation file cannot be read", code="file_unreadable") from None
    if not present:
        return ActivationRegistry()
    return load_activation_registry(path)


def plan_change(
    registry: ActivationRegistry,
    *,
    goal_id: str,
    config_path: str | None = None,
    agents: Sequence[str] = (),
    clear: bool = False,
) -> tuple[ActivationGoal | None, ActivationGoal | None, ActivationRegistry]:
    """The goal's entry before and after the change, and the registry after it (pure).

    ``clear`` removes the goal (and cannot be combined with a config or agents).
    Otherwise the supplied config pointer and agents replace the entry's own;
    what is not supplied is kept; the result must have both, and is enabled
    and experimental. Paths: ``$.config_path``, ``$.enabled_agents``, ``$.clear``.
    """
    from reward_memory.grammars import check_token  # noqa: PLC0415

    check_token(goal_id, "$.goal_id")
    before = registry.goal(goal_id)
    others = tuple(goal for goal in registry.goals if goal.goal_id != goal_id)
    if clear:
        if config_path is not None or agents:
            raise RecordValidationError(
                "clear cannot be combined with a config or agents", path="$.clear", code="conflict"
            )
        return before, None, attrs.evolve(registry, goals=others)
    if config_path is not None:
        check_config_pointer(config_path, "$.config_path")
    for index, agent in enumerate(agents):
        check_agent_id(agent, f"$.enabled_agents[{index}]")
    pointer = config_path if config_path is not None else (before and before.config_path)
    if not pointer:
        raise RecordValidationError(
            "enabling a goal requires a config pointer", path="$.config_path", code="missing_field"
        )
    chosen = tuple(dict.fromkeys(agents)) if agents else (before.enabled_agents if before else ())
    if not chosen:
        raise RecordValidationError(
            "enabling a goal requires at least one allowlisted agent",
            path="$.enabled_agents",
            code="agents_required",
        )
    after = ActivationGoal(
        goal_id=goal_id,
        enabled=True,
        experimental=True,
        config_path=pointer,
        enabled_agents=chosen,
    )
    goals = tuple(sorted((*others, after), key=lambda goal: goal.goal_id))
    return before, after, attrs.evolve(registry, goals=goals)


def write_activation_registry(path: str | os.PathLike[str], registry: ActivationRegistry) -> None:
    """Write the registry atomically: temp file in the same directory, fsync, ``os.replace``
    (through a symlink: the file it names is replaced, the link stays)."""
    from reward_memory.records._plain import to_plain  # noqa: PLC0415

    target = _replaced(Path(path))
    text = json.dumps(to_plain(registry), indent=2, ensure_ascii=False) + "\n"
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        import tempfile  # noqa: PLC0415 - only a write needs it (status verbs never do)

        fd, temp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    except OSError:
        raise InputError(
            "the activation file's directory cannot be written", code="file_unwritable"
        ) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        with contextlib.suppress(OSError):
            Path(temp).chmod(target.stat().st_mode & 0o777 if target.exists() else 0o644)
        os.replace(temp, target)  # noqa: PTH105 - the atomic step, named as such
    except BaseException as exc:
        with contextlib.suppress(OSError):
            Path(temp).unlink()
        if isinstance(exc, OSError):
            raise InputError(
                "the activation file cannot be written", code="file_unwritable"
            ) from None
        raise
    _fsync_directory(target.parent)


def _fsync_directory(directory: Path) -> None:
    # The rename itself is durable only once the directory entry is (POSIX).
    with contextlib.suppress(OSError, AttributeError):
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _replaced(target: Path) -> Path:
    """The file a write replaces: through a symlink, the file the link names (the link
    stays); the lock is taken on that file's directory, so two paths to one file (the
    link and its target) serialise on one lock."""
    try:
        if target.is_symlink():
            try:
                return target.resolve(strict=True)
            except FileNotFoundError:  # a dangling link: the file it names is written
                return target.resolve(strict=False)
    except (OSError, RuntimeError, ValueError):  # a symlink loop, a name too long
        # (Python 3.13 resolves a loop without raising unless strict: hence strict first.)
        raise InputError("the activation file cannot be written", code="file_unwritable") from None
    return target


@contextlib.contextmanager
def _locked(directory: Path) -> Iterator[None]:
    """An exclusive advisory lock on the activation file's directory (POSIX ``flock``).

    The directory itself is locked, so no lock file is left behind; where
    ``fcntl`` does not exist the write is still atomic, only not serialised.
    """
    try:
        import fcntl  # noqa: PLC0415 - POSIX only
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        raise InputError(
            "the activation file's directory cannot be written", code="file_unwritable"
        ) from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def config_file(base: Path, pointer: str) -> Path | None:
    """The file a config pointer names under the project root ``base``; ``None`` when it
    leads outside the root (a symlink on the way: the pointer's relative, no-``..`` rule
    is about where it leads, not only how it is spelled)."""
    target = base / pointer
    try:
        inside = target.resolve().is_relative_to(base.resolve())
    except (OSError, RuntimeError):  # a symlink loop, an unreadable link
        return None
    return target if inside else None


def _config_status(base: Path, pointer: str | None) -> tuple[ConfigStatus, str | None]:
    if pointer is None:
        return "not_checked", None
    from reward_memory.experiment import load_experiment_config  # noqa: PLC0415

    target = config_file(base, pointer)
    if target is None:
        return "invalid", "config_path_traversal"
    try:
        present = target.is_file()
    except (OSError, ValueError):
        return "invalid", "file_unreadable"
    if not present:
        return "missing", "config_missing"
    try:
        load_experiment_config(target)
    except RecordValidationError as exc:
        return "invalid", exc.code
    return "valid", None


def configure_goal(
    activation_path: str | os.PathLike[str] = DEFAULT_ACTIVATION_PATH,
    *,
    goal_id: str,
    config_path: str | None = None,
    agents: Sequence[str] = (),
    clear: bool = False,
    execute: bool = False,
) -> ActivationChange:
    """Preview (default) or, with ``execute``, atomically write one goal's activation change.

    The packet shows the entry before and after (the pointer only as a digest)
    and whether the pointed-to config currently loads as v1 (``config_status``;
    the runtime treats an invalid one as unavailable, so it is reported, not
    refused). An existing activation file that is not valid is an error: it is
    never silently replaced.
    """
    if isinstance(agents, str):
        raise TypeError("agents must be a sequence of agent ids, not one string")
    target = Path(activation_path)
    with _locked(_replaced(target).parent) if execute else contextlib.nullcontext():
        # Read, plan and write under one lock: two configure runs at once must
        # not lose each other's goal (read-modify-write).
        registry = _read_or_empty(target)
        before, after, updated = plan_change(
            registry, goal_id=goal_id, config_path=config_path, agents=agents, clear=clear
        )
        changed = updated != registry
        written = bool(execute and changed)
        if written:
            write_activation_registry(target, updated)
    config_status, config_reason = _config_status(
        config_root(target), after.config_path if after is not None else None
    )
    return ActivationChange(
        goal_id=goal_id,
        status="written" if written else ("unchanged" if execute else "preview"),
        execute=execute,
        changed=changed,
        before=GoalSummary.of(before),
        after=GoalSummary.of(after),
        config_status=config_status,
        config_reason_code=config_reason,
        activation_written=written,
    )
