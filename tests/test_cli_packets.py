"""`reward-memory schema validate` accepts every packet the CLI emits (and the shipped examples)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reward_memory.cli import main
from reward_memory.health import HEALTH_CASES

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

INVOCATIONS: list[tuple[str, ...]] = [
    ("architecture",),
    ("corpus-registry",),
    *[("health-check", "--case", case) for case in HEALTH_CASES],
    ("health-check", "--input", str(EXAMPLES / "health-request.json")),
    ("schema", "list"),
    ("schema", "validate", str(EXAMPLES / "recall-input.json")),
    ("providers",),
    ("providers", "--check", "memory://"),
    *[
        ("candidate-review", "--decision", decision)
        for decision in ("accept", "edit", "reject", "retire", "no_write")
    ],
    ("candidate-review", "--input", str(EXAMPLES / "candidate-review-request.json")),
    ("recall", "--input", str(EXAMPLES / "recall-input.json"), "--provider", "memory://"),
    # error packets are packets too
    ("schema", "validate", str(EXAMPLES / "no-such-file.json")),
    ("health-check", "--case", "no-such-case"),
    ("recall", "--input", str(EXAMPLES / "health-request.json"), "--provider", "memory://"),
]


@pytest.mark.parametrize("argv", INVOCATIONS, ids=lambda argv: " ".join(argv)[-60:])
def test_schema_validate_accepts_what_the_cli_emits(
    argv: tuple[str, ...], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main([*argv, "--format", "json"])
    emitted = capsys.readouterr().out
    packet = json.loads(emitted)
    target = tmp_path / "packet.json"
    target.write_text(emitted, encoding="utf-8")
    assert main(["schema", "validate", str(target), "--format", "json"]) == 0
    verdict = json.loads(capsys.readouterr().out)
    assert verdict["status"] == "valid"
    assert verdict["validated_schema"] == packet["schema_version"]


@pytest.mark.parametrize("name", sorted(p.name for p in EXAMPLES.glob("*.json")))
def test_shipped_example_inputs_are_valid(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema", "validate", str(EXAMPLES / name)]) == 0
    capsys.readouterr()
