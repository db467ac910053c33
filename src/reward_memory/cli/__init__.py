"""The ``reward-memory`` command line.

Each verb lives in its own module (``reward_memory.cli._<verb>``) exposing
``configure(parser)`` and ``run(args) -> Outcome``. Only the chosen verb's
module is imported, so a verb pays for what it uses and nothing else: the
table below is plain strings.

Every bad input (missing or unreadable file, invalid JSON, wrong schema, unknown
field, unsafe or over-long text, bad flags) prints a ``reward_memory_error_v0``
packet on stdout and exits 2; no traceback reaches the user. Every verb that
reads a file reads it through one bounded reader (:mod:`reward_memory.jsonio`):
at most 4 MiB, nesting at most 64 deep, no duplicate keys, exact integers only,
and a named FIFO or device that stays silent for 3 s is refused, so no input
can hang a verb or reach the exit code 1 kept for our own bugs.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import TYPE_CHECKING, Any, Final, NoReturn

if TYPE_CHECKING:
    from collections.abc import Sequence

    from reward_memory.cli._common import Outcome

__all__ = ["VERBS", "main"]

PROG: Final = "reward-memory"

# verb -> (module, one-line help). Keep in the seeds' order.
VERBS: Final[dict[str, tuple[str, str]]] = {
    "architecture": ("reward_memory.cli._architecture", "the Stage-0 architecture contract"),
    "corpus-registry": ("reward_memory.cli._registry", "the Stage-1 reference corpus registry"),
    "health-check": ("reward_memory.cli._health", "classify corpus health (fixture or --input)"),
    "candidate-review": (
        "reward_memory.cli._candidate_review",
        "propose and review a candidate (fixture or --input)",
    ),
    "recall": ("reward_memory.cli._recall", "guarded recall from one corpus and surface"),
    "configure": (
        "reward_memory.cli._configure",
        "preview (or --execute) one goal's experimental activation",
    ),
    "ingest-event": (
        "reward_memory.cli._ingest_event",
        "ingest one compact event (dry run unless --execute; configured route to execute)",
    ),
    "experiment-status": (
        "reward_memory.cli._experiment_status",
        "resolve goal + agent + config v1 (no paths, no scope refs)",
    ),
    "dogfood-evaluate": (
        "reward_memory.cli._dogfood",
        "Stage-5 dogfood receipts and bounded Issue Fix pilot readiness (--input)",
    ),
    "operator-control": (
        "reward_memory.cli._operator",
        "edit / retire / revoke / purge one active record (dry run unless --execute)",
    ),
    "explain": ("reward_memory.cli._explain", "the lineage of a receipt, link by link"),
    "evaluate": (
        "reward_memory.cli._evaluate",
        "the Stage-4 contract suite and release gate (exit 2 when it holds)",
    ),
    "route-check": ("reward_memory.cli._route_check", "pilot/meta delegation guard for one change"),
    "providers": ("reward_memory.cli._providers", "installed providers, and one provider's health"),
    "schema": ("reward_memory.cli._schema", "list, show or validate packet schemas"),
}


class UsageError(Exception):
    """A flag or argument the parser refused; reported as an error packet."""


class _Parser(argparse.ArgumentParser):
    _checking = False

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)

    def add_argument(self, *args: Any, **kwargs: Any) -> argparse.Action:
        # argparse builds a help formatter per option only to check its metavar; a
        # formatter without a width asks `shutil` (~2 ms to import) for the terminal's.
        self._checking = True
        try:
            return super().add_argument(*args, **kwargs)
        finally:
            self._checking = False

    def _get_formatter(self) -> argparse.HelpFormatter:
        if self._checking:
            return argparse.HelpFormatter(prog=self.prog, width=80)
        return super()._get_formatter()


def _top_parser() -> _Parser:
    parser = _Parser(
        prog=PROG,
        description="Govern what an AI agent may remember from human feedback.",
        allow_abbrev=False,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="verbs:\n" + "\n".join(f"  {name:<18}{text}" for name, (_, text) in VERBS.items()),
    )
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    parser.add_argument("verb", nargs="?", choices=list(VERBS), metavar="VERB")
    return parser


def _verb_parser(verb: str) -> _Parser:
    parser = _Parser(prog=f"{PROG} {verb}", description=VERBS[verb][1], allow_abbrev=False)
    parser.add_argument(
        "--format",
        choices=("json", "text", "markdown"),
        default="text",
        help="json prints the packet; text (default) a short readable summary; markdown the"
        " original's heading and key lines",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; return the process exit code (0 ok, 2 bad input, 1 internal error)."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        return _dispatch(args)
    except BrokenPipeError:  # e.g. `reward-memory ... | head`
        _detach_stdout()
        return 0
    except SystemExit as exc:  # argparse's own --help
        return exc.code if isinstance(exc.code, int) else 0
    except UsageError as exc:
        return _fail("usage_error", str(exc), _usage_path(str(exc)))
    except Exception as exc:  # noqa: BLE001 - the CLI never shows a traceback
        from reward_memory.errors import RecordValidationError, RewardMemoryError

        if isinstance(exc, RecordValidationError):
            return _fail(exc.code, exc.message, _as_spelled(exc.path, args))
        if isinstance(exc, RewardMemoryError):
            return _fail(exc.code, exc.message, None)
        # A bug of ours, not bad input: still a packet, but exit 1 and no details.
        return _fail("internal_error", f"unexpected {type(exc).__name__}", None, exit_code=1)


_GLOBAL_OPTIONS: Final = ("--format", "--registry")
# The verbs that read an activation registry (``--activation``, alias ``--registry``):
# for any other, a global ``--registry`` is the original's global option, unused.
_REGISTRY_VERBS: Final = frozenset({"configure", "experiment-status", "ingest-event"})


def _usage_path(message: str) -> str | None:
    """The option argparse's message is about (``argument --format: invalid choice``, ``the
    following arguments are required: --input``, ``unrecognized arguments: --bogus``)."""
    import re  # only on a usage error

    found = re.match(
        r"(?:argument (--?[\w-]+)(?:/[^:]*)?:|the following arguments are required: (--?[\w-]+)"
        r"|unrecognized arguments: (--?[\w-]+))",
        message,
    )
    if found is None:
        return None
    return next(part for part in found.groups() if part)


def _as_spelled(path: str | None, args: list[str]) -> str | None:
    """An error about ``--activation`` names the flag as the user typed it."""
    if path != "--activation":
        return path
    spelled = {arg.partition("=")[0] for arg in args}
    return "--registry" if "--registry" in spelled and "--activation" not in spelled else path


def _global_format(args: list[str]) -> list[str]:
    """``--format X`` and ``--registry PATH`` given before the verb (the original took them
    there) move after it, first, so the same option given after the verb still wins."""
    moved: list[str] = []
    while args and args[0].partition("=")[0] in _GLOBAL_OPTIONS:
        if "=" not in args[0]:
            if len(args) < 2:
                raise UsageError(f"argument {args[0]}: expected one argument")
            moved, args = [*moved, args[0], args[1]], args[2:]
        else:
            moved, args = [*moved, args[0]], args[1:]
    if not moved:
        return args
    if not args or args[0].startswith("-"):  # no verb follows: the top parser says so
        return [*args, *moved]
    if args[0] not in _REGISTRY_VERBS:
        moved = _without_registry(moved)
    return [args[0], *moved, *args[1:]]


def _without_registry(moved: list[str]) -> list[str]:
    kept: list[str] = []
    index = 0
    while index < len(moved):
        option = moved[index]
        step = 1 if "=" in option else 2
        if option.partition("=")[0] != "--registry":
            kept.extend(moved[index : index + step])
        index += step
    return kept


def _dispatch(args: list[str]) -> int:
    args = _global_format(args)
    top = _top_parser()
    if not args or args[0].startswith("-"):
        parsed = top.parse_args(args)
        if parsed.version:
            from reward_memory._version import __version__

            sys.stdout.write(f"{PROG} {__version__}\n")
            return 0
        if "-h" in args or "--help" in args:
            top.print_help()
            return 0
        # No verb is bad input like any other: the error packet on stdout (a caller
        # reading JSON gets JSON), the help where a person looks.
        top.print_help(sys.stderr)
        return _fail("usage_error", "a verb is required", None)
    verb = args[0]
    if verb not in VERBS:
        raise UsageError(f"unknown verb {verb!r}; choose from: {', '.join(VERBS)}")
    module = importlib.import_module(VERBS[verb][0])
    parser = _verb_parser(verb)
    module.configure(parser)
    parsed = parser.parse_args(args[1:])
    try:
        outcome: Outcome = module.run(parsed)
    except Exception as exc:
        from reward_memory.errors import ProviderError, ProviderUnavailable

        # A provider that cannot be found, loaded or configured from --provider: that
        # flag is the field at fault.
        if (
            isinstance(exc, ProviderError)
            and not isinstance(exc, ProviderUnavailable)
            and getattr(parsed, "provider", None) is not None
        ):
            return _fail(exc.code, exc.message, "--provider")
        raise
    from reward_memory.cli._common import emit

    try:
        emit(outcome, parsed.format)
    except BrokenPipeError:
        raise
    except OSError:  # a full disk, a closed or read-only stdout: the answer is lost
        _output_lost()
        return outcome.exit_code if outcome.exit_code != 0 else 1
    return outcome.exit_code


def _fail(code: str, message: str, path: str | None, *, exit_code: int = 2) -> int:
    from reward_memory.cli._common import emit_error

    try:
        emit_error(code, message, path)
    except BrokenPipeError:  # the reader went away (``| head``): the exit code still says it
        _detach_stdout()
    except OSError:  # the error packet cannot be written either: still no traceback
        _output_lost()
    return exit_code


def _detach_stdout() -> None:
    """Point descriptor 1 at /dev/null after a broken pipe, so the interpreter's own flush
    at exit does not report the pipe again (the Python docs' recipe for SIGPIPE)."""
    import os  # only after a broken pipe

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # no stdout left to point anywhere
        pass


def _output_lost() -> None:
    """One line on stderr (if even that can be written) instead of a traceback."""
    try:
        sys.stderr.write(f"{PROG}: the output could not be written to stdout\n")
        sys.stderr.flush()
    except Exception:  # noqa: BLE001, S110 - nowhere left to say it
        pass
