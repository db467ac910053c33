"""What an opened experiment was resolved from, to see an operator change it.

Private to :mod:`reward_memory.author`: the activation file and the config its goal
points at, each by identity and change time (one ``stat``), so an open
:class:`~reward_memory.author.Experiment` resolves again when either changes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

    from reward_memory.experiment import ExperimentRuntime

__all__ = ["Watched"]


class Watched:
    """The files an opened experiment was resolved from, and what they looked like then."""

    __slots__ = ("agent_id", "files", "goal_id", "path", "seen")

    def __init__(self, path: Path, goal_id: str, agent_id: str) -> None:
        self.path = path
        self.goal_id = goal_id
        self.agent_id = agent_id
        self.files: tuple[Path, ...] = (path,)
        self.seen: tuple[object, ...] = ()

    def track(self, runtime: ExperimentRuntime) -> None:
        """Remember the files ``runtime`` was resolved from (the activation file, and the
        config its goal points at) as they are now."""
        from reward_memory._activation_registry import config_file, config_root  # noqa: PLC0415

        files = [self.path]
        goal = runtime.goal
        if goal is not None and goal.config_path is not None:
            target = config_file(config_root(self.path), goal.config_path)
            if target is not None:
                files.append(target)
        self.files = tuple(files)
        self.seen = self.stamp()

    def stamp(self) -> tuple[object, ...]:
        """Each file's identity and change time (one stat each)."""
        return tuple(_signature(path) for path in self.files)


def _signature(path: Path) -> object:
    try:
        info = path.stat()
    except (OSError, ValueError):
        return None
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
