"""Whole-process wall time of each CLI verb and of ``import reward_memory`` (medians).

    .venv/bin/python benchmarks/bench_cli.py [--runs N] [--only TEXT ...] [--cpu]

As on a user's machine, bytecode caches are enabled: ``PYTHONDONTWRITEBYTECODE``
(set in this environment) is removed from the children's environment, and the
warm-up runs write the ``.pyc`` files the timed runs then read. Every verb is
timed, the file-reading ones on the example inputs (``schema validate`` on each
example packet), the executing ones on throw-away SQLite files, and every error
packet path on a bad file of its own; each row is checked to answer as it should
(a packet, or an error packet for the error rows) before it is timed.

``--only`` times the rows whose name contains one of the texts. ``--cpu`` adds,
for each row, the median CPU time (user + system) of the process: on a shared
machine the wall time also holds the time the process waited for a core, and
the CPU time is what a before/after comparison of the same minute should read.

Targets on the reference 2-core machine: every verb <= 0.15 s, the import <= 0.06 s.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from _util import bytecode_env, console_script, report, wall_median

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
OPERATOR = EXAMPLES / "operator"
VERB_TARGET_S = 0.15
IMPORT_TARGET_S = 0.06


def _inputs(tmp: Path) -> dict[str, list[str]]:
    """Verb invocations to time; input files are produced by the CLI itself."""
    cli = console_script("reward-memory")
    arch = tmp / "architecture.json"
    arch.write_bytes(
        subprocess.run(
            [cli, "architecture", "--format", "json"], capture_output=True, check=True
        ).stdout
    )
    (
        observation,
        no_evaluation,
        broken,
        bad_recall,
        wrong_kind,
        bad_operator,
        bad_dogfood,
        bad_route,
    ) = _files(tmp)
    invocations = {
        "architecture": ["architecture", "--format", "json"],
        "corpus-registry": ["corpus-registry", "--format", "json"],
        "health-check --case wrong-project": [
            "health-check",
            "--case",
            "wrong-project",
            "--format",
            "json",
        ],
        "schema list": ["schema", "list", "--format", "json"],
        "schema validate": ["schema", "validate", str(arch), "--format", "json"],
        "schema show": ["schema", "show", "reward_memory_recall_v0", "--format", "json"],
        "providers": ["providers", "--format", "json"],
        "providers --check (sqlite)": [
            "providers",
            "--check",
            f"sqlite://{tmp / 'check.db'}",
            "--format",
            "json",
        ],
        "candidate-review --case": [
            "candidate-review",
            "--case",
            "issue-fix-verified-contributor",
            "--format",
            "json",
        ],
        "health-check --input": ["health-check", "--input", str(EXAMPLES / "health-request.json")],
        "candidate-review --input": [
            "candidate-review",
            "--input",
            str(EXAMPLES / "candidate-review-request.json"),
        ],
        "recall --input (sqlite)": [
            "recall",
            "--input",
            str(EXAMPLES / "recall-input.json"),
            "--provider",
            f"sqlite://{tmp / 'bench.db'}",
        ],
        "ingest-event (fixture, dry run)": [
            "ingest-event",
            "--input",
            str(EXAMPLES / "experiment" / "ingest-fixture.json"),
            "--authority",
            str(EXAMPLES / "experiment" / "authority.json"),
        ],
        "ingest-event (configured, dry run)": [
            "ingest-event",
            "--input",
            str(EXAMPLES / "experiment" / "event.json"),
            "--goal-id",
            "issue-fix",
            "--agent-id",
            "agent:patcher",
            "--activation",
            str(EXAMPLES / "experiment" / "activation.json"),
            "--authority",
            str(EXAMPLES / "experiment" / "authority.json"),
        ],
        "configure (preview)": [
            "configure",
            "--goal-id",
            "issue-fix",
            "--config",
            "config.json",
            "--agent",
            "agent:patcher",
            "--activation",
            str(EXAMPLES / "experiment" / "activation.json"),
            "--format",
            "json",
        ],
        "configure --execute": [
            "configure",
            "--goal-id",
            "issue-fix",
            "--config",
            "config.json",
            "--agent",
            "agent:patcher",
            "--activation",
            str(_activation_copy(tmp)),
            "--execute",
            "--format",
            "json",
        ],
        "experiment-status": [
            "experiment-status",
            "--goal-id",
            "issue-fix",
            "--agent-id",
            "agent:patcher",
            "--activation",
            str(EXAMPLES / "experiment" / "activation.json"),
            "--format",
            "json",
        ],
        "evaluate": ["evaluate", "--format", "json"],
        "evaluate --provider sqlite": [
            "evaluate",
            "--provider",
            f"sqlite://{tmp / 'evaluate.db'}",
            "--format",
            "json",
        ],
        "route-check --case": ["route-check", "--case", "pr-3237", "--format", "json"],
        "route-check --input": ["route-check", "--input", str(observation), "--format", "json"],
        "route-check (flags)": [
            "route-check",
            "--named-reproduction",
            "--named-validation",
            "--effect-evidence",
            "--format",
            "json",
        ],
        "dogfood-evaluate (evaluation given)": [
            "dogfood-evaluate",
            "--input",
            str(EXAMPLES / "dogfood" / "dogfood-input.json"),
            "--format",
            "json",
        ],
        "dogfood-evaluate (suite run afresh)": [
            "dogfood-evaluate",
            "--input",
            str(no_evaluation),
            "--format",
            "json",
        ],
        **{
            f"operator-control {action} (dry run)": [
                "operator-control",
                "--input",
                str(OPERATOR / f"{action}-request.json"),
                "--action",
                action,
                "--format",
                "json",
            ]
            for action in ("edit", "retire", "revoke", "purge")
        },
        "operator-control retire --execute (sqlite)": [
            "operator-control",
            "--input",
            str(OPERATOR / "retire-request.json"),
            "--action",
            "retire",
            "--execute",
            "--provider",
            f"sqlite://{tmp / 'operator.db'}",
            "--binding",
            str(OPERATOR / "binding.json"),
            "--format",
            "json",
        ],
        "explain": ["explain", str(OPERATOR / "ingest-receipt.json"), "--format", "json"],
        "explain --provider sqlite": [
            "explain",
            str(OPERATOR / "ingest-receipt.json"),
            "--provider",
            f"sqlite://{tmp / 'explain.db'}",
            "--binding",
            str(OPERATOR / "binding.json"),
            "--format",
            "json",
        ],
        **{
            f"schema validate {example.relative_to(EXAMPLES)}": [
                "schema",
                "validate",
                str(example),
                "--format",
                "json",
            ]
            for example in _packet_examples()
        },
        # Every error packet path: each verb that reads a file, refusing it.
        "error: usage (unknown verb)": ["no-such-verb"],
        "error: missing file": ["schema", "validate", str(tmp / "missing.json")],
        "error: invalid JSON": ["recall", "--input", str(broken), "--provider", "memory://"],
        "error: schema (recall --input)": [
            "recall",
            "--input",
            str(bad_recall),
            "--provider",
            "memory://",
        ],
        "error: health-check --input": ["health-check", "--input", str(wrong_kind)],
        "error: candidate-review --input": ["candidate-review", "--input", str(wrong_kind)],
        "error: ingest-event --input": [
            "ingest-event",
            "--input",
            str(wrong_kind),
            "--authority",
            str(EXAMPLES / "experiment" / "authority.json"),
        ],
        "error: operator-control --input": [
            "operator-control",
            "--input",
            str(bad_operator),
            "--action",
            "retire",
        ],
        "error: dogfood-evaluate --input": ["dogfood-evaluate", "--input", str(bad_dogfood)],
        "error: explain (unknown receipt)": ["explain", str(wrong_kind)],
        "error: route-check --input": ["route-check", "--input", str(bad_route)],
        "error: schema validate (invalid packet)": ["schema", "validate", str(bad_recall)],
    }
    return {name: [cli, *argv] for name, argv in invocations.items()}


def _packet_examples() -> list[Path]:
    """The example files that are packets (they name their schema)."""
    found = []
    for path in sorted(EXAMPLES.rglob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(data, dict) and "schema_version" in data:
            found.append(path)
    return found


def _files(tmp: Path) -> tuple[Path, ...]:
    """Inputs the examples do not ship: a route observation, a dogfood input without
    an evaluation, and one bad file per error path."""

    def write(name: str, data: object) -> Path:
        path = tmp / name
        path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
        return path

    def example(name: str) -> dict[str, object]:
        loaded: dict[str, object] = json.loads((EXAMPLES / name).read_text(encoding="utf-8"))
        return loaded

    observation = {
        "schema_version": "reward_memory_pilot_meta_route_observation_v0",
        "case_ref": "manual_observation",
        "behavior_status": "bug_confirmed",
        "surface_count": 1,
        "edge_case_complexity": "low",
        "semantic_contract_change": False,
        "generic_boundary_for_specific_policy": False,
        "user_visible_behavior_change": False,
        "hot_path_or_storage_change": False,
        "retrieval_or_memory_quality_claim": False,
        "named_reproduction": True,
        "named_validation": True,
        "effect_evidence": True,
        "ux_evidence": False,
        "benchmark_evidence": False,
        "performance_evidence": False,
    }
    dogfood = example("dogfood/dogfood-input.json")
    dogfood.pop("evaluation", None)
    recall = example("recall-input.json")
    recall["request"]["limit"] = "3"  # type: ignore[index]
    operator = example("operator/retire-request.json")
    operator["record"]["record_ref"] = "record:0"  # type: ignore[index]
    bad_dogfood = dict(dogfood, observations=[])
    return (
        write("observation.json", observation),
        write("dogfood-no-evaluation.json", dogfood),
        write("broken.json", '{"schema_version": '),
        write("bad-recall.json", recall),
        write("wrong-kind.json", {"schema_version": "reward_memory_corpus_registry_v0"}),
        write("bad-operator.json", operator),
        write("bad-dogfood.json", bad_dogfood),
        write("bad-route.json", dict(observation, surface_count=0)),
    )


def _activation_copy(tmp: Path) -> Path:
    """A throw-away copy of the example experiment (configure --execute rewrites it)."""
    import shutil

    target = tmp / "experiment"
    shutil.copytree(EXAMPLES / "experiment", target, dirs_exist_ok=True)
    return target / "activation.json"


def cpu_median(cmd: list[str], *, runs: int) -> float:
    """Median CPU seconds (user + system) of a whole process, bytecode caches on."""
    env = bytecode_env()
    samples = []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(cmd, capture_output=True, check=False, env=env)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        samples.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(samples)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--only", nargs="+", default=None, metavar="TEXT")
    parser.add_argument("--cpu", action="store_true", help="also report each row's CPU time")
    args = parser.parse_args()
    rows = []
    targets = {}
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        python = sys.executable
        baseline = wall_median([python, "-c", "pass"], runs=args.runs)
        rows.append({"what": "python -c pass (baseline)", "value": baseline, "unit": "s"})
        value = wall_median([python, "-c", "import reward_memory"], runs=args.runs)
        rows.append({"what": "import reward_memory", "value": value, "unit": "s"})
        targets["import reward_memory"] = IMPORT_TARGET_S
        for name, cmd in _inputs(Path(tmp)).items():
            if args.only is not None and not any(text in name for text in args.only):
                continue
            # Each row is checked before it is timed: an error row must answer with an
            # error packet (exit 2), every other row must not; a broken row is a failure,
            # never a fast error packet timed as if it were the verb.
            probe = subprocess.run(cmd, capture_output=True, check=False, env=bytecode_env())
            try:  # the text format is no JSON; an error packet always is
                packet = json.loads(probe.stdout)
            except ValueError:
                packet = {}
            is_error = packet.get("schema_version") == "reward_memory_error_v0"
            if is_error != name.startswith("error:") or probe.returncode not in (0, 2):
                print(f"FAILED {name}: exit {probe.returncode}, {packet.get('error_code')}")
                failed = True
                continue
            rows.append({"what": name, "value": wall_median(cmd, runs=args.runs), "unit": "s"})
            targets[name] = VERB_TARGET_S
            if args.cpu:
                cpu = cpu_median(cmd, runs=args.runs)
                rows.append({"what": f"{name} (cpu)", "value": cpu, "unit": "s"})
    return report("cli", rows, targets=targets) | int(failed)


if __name__ == "__main__":
    sys.exit(main())
