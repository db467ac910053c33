"""Whole-process wall time of each CLI verb and of ``import reward_memory`` (medians).

    .venv/bin/python benchmarks/bench_cli.py [--runs N]

As on a user's machine, bytecode caches are enabled: ``PYTHONDONTWRITEBYTECODE``
(set in this environment) is removed from the children's environment, and the
warm-up runs write the ``.pyc`` files the timed runs then read. Every verb is
timed, the file-reading ones on the example inputs.

Targets on the reference 2-core machine: every verb <= 0.15 s, the import <= 0.06 s.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from _util import bytecode_env, console_script, report, wall_median

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
VERB_TARGET_S = 0.15
IMPORT_TARGET_S = 0.06


def _inputs(tmp: Path) -> dict[str, list[str]]:
    """Verb invocations to time; input files are produced by the CLI itself."""
    cli = console_script("reward-memory")
    import subprocess

    arch = tmp / "architecture.json"
    arch.write_bytes(
        subprocess.run(
            [cli, "architecture", "--format", "json"], capture_output=True, check=True
        ).stdout
    )
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
        "error packet (missing file)": ["schema", "validate", str(tmp / "missing.json")],
    }
    return {name: [cli, *argv] for name, argv in invocations.items()}


def _activation_copy(tmp: Path) -> Path:
    """A throw-away copy of the example experiment (configure --execute rewrites it)."""
    import shutil

    target = tmp / "experiment"
    shutil.copytree(EXAMPLES / "experiment", target, dirs_exist_ok=True)
    return target / "activation.json"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    rows = []
    targets = {}
    with tempfile.TemporaryDirectory() as tmp:
        python = sys.executable
        baseline = wall_median([python, "-c", "pass"], runs=args.runs)
        rows.append({"what": "python -c pass (baseline)", "value": baseline, "unit": "s"})
        value = wall_median([python, "-c", "import reward_memory"], runs=args.runs)
        rows.append({"what": "import reward_memory", "value": value, "unit": "s"})
        targets["import reward_memory"] = IMPORT_TARGET_S
        for name, cmd in _inputs(Path(tmp)).items():
            # A verb not yet shipped answers with an error packet; say so rather than time it.
            import subprocess

            probe = subprocess.run(cmd, capture_output=True, check=False, env=bytecode_env())
            if probe.returncode != 0 and "missing" not in name:
                packet = json.loads(probe.stdout or b"{}")
                print(f"skip {name}: {packet.get('error_code', probe.returncode)}", file=sys.stderr)
                continue
            rows.append({"what": name, "value": wall_median(cmd, runs=args.runs), "unit": "s"})
            targets[name] = VERB_TARGET_S
    return report("cli", rows, targets=targets)


if __name__ == "__main__":
    sys.exit(main())
