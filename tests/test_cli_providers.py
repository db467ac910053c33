"""``reward-memory providers``: the listing, ``--check``, and the packet's schema."""

from __future__ import annotations

import json
import os
import sys
from typing import TYPE_CHECKING, Any

import pytest

from _distributions import DATA, GOOD_PROVIDER, Distributions, distributions
from reward_memory import schemas, wire
from reward_memory.cli import main
from reward_memory.records.providers import ProvidersReport

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path


@pytest.fixture
def dists(tmp_path: Path) -> Iterator[Distributions]:
    yield from distributions(tmp_path)


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    code = main(["providers", "--format", "json", *args])
    out = capsys.readouterr().out
    return code, json.loads(out)


def _valid(packet: dict[str, Any]) -> ProvidersReport:
    assert schemas.validate(packet) == "reward_memory_providers_v0"
    report = wire.load(packet, ProvidersReport)
    assert wire.dump(report) == packet
    return report


def test_listing(capsys: pytest.CaptureFixture[str]) -> None:
    code, packet = _run(capsys)
    assert code == 0
    _valid(packet)
    assert packet["status"] == "listed"
    assert packet["check"] is None
    memory = next(p for p in packet["providers"] if p["provider_id"] == "memory")
    assert memory["distribution"] == "reward-memory"
    assert memory["spi_version"] == 1
    assert memory["load_error"] is None
    assert "sqlite" in {p["provider_id"] for p in packet["providers"]}


def test_text_listing(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["providers"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("reward_memory_providers_v0\n")
    assert "memory" in out
    assert "reward-memory" in out


def test_check_memory(capsys: pytest.CaptureFixture[str]) -> None:
    code, packet = _run(capsys, "--check", "memory://", "--namespace", "team", "--peer", "bob")
    assert code == 0
    _valid(packet)
    assert packet["status"] == "checked"
    assert packet["check"] == {
        "provider_id": "memory",
        "location": "default",
        "location_digest": None,
        "scope": {"namespace": "team", "scope_ref": "default", "actor_peer_id": "bob"},
        "status": "available",
        "detail": None,
        "provider_available": True,
        "corpus_present": False,
        "record_count": 0,
        "index_present": False,
    }


@pytest.mark.parametrize(
    ("url", "status"),
    [
        ("memory://?unavailable=true", "provider_unavailable"),
        ("memory://?times_out=true", "provider_timeout"),
        ("memory://?slow_seconds=5", "provider_timeout"),
    ],
)
def test_provider_failure_is_a_status(
    capsys: pytest.CaptureFixture[str], url: str, status: str
) -> None:
    code, packet = _run(capsys, "--check", url, "--timeout", "0.05")
    assert code == 0
    _valid(packet)
    check = packet["check"]
    assert check["status"] == status
    assert check["detail"]
    assert check["record_count"] is None
    assert check["provider_available"] is None


def test_text_check(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["providers", "--check", "memory://?times_out=1"]) == 0
    out = capsys.readouterr().out
    assert "status: checked" in out
    assert "check memory (default location): provider_timeout" in out


@pytest.mark.parametrize(
    ("args", "code", "path"),
    [
        (["--check", "nosuch://"], "provider_not_found", None),
        (["--check", "memory:///home/alice/db"], "provider_config_invalid", None),
        (["--check", "memory://?colour=red"], "provider_config_invalid", None),
        (["--check", "not a url"], "provider_config_invalid", None),
        (["--check", "memory"], "invalid_value", "--check"),
        (["--check", "memory://", "--namespace", "bad namespace"], "invalid_format", "--namespace"),
        (["--check", "memory://", "--scope-ref", "/home/alice"], "invalid_format", "--scope-ref"),
        (["--check", "memory://", "--peer", "sk-" + "a1" * 16], "unsafe_text", "--peer"),
        (["--check", "memory://", "--timeout", "0"], "invalid_value", "--timeout"),
        (["--check", "memory://", "--timeout", "inf"], "invalid_value", "--timeout"),
        (["--check", "memory://", "--timeout", "nan"], "invalid_value", "--timeout"),
        (["--check", "memory://", "--timeout", "1e20"], "invalid_value", "--timeout"),
        (["--check", "memory://", "--timeout", "soon"], "usage_error", "--timeout"),
    ],
)
def test_bad_input_is_an_error_packet(
    capsys: pytest.CaptureFixture[str], args: list[str], code: str, path: str | None
) -> None:
    exit_code, packet = _run(capsys, *args)
    assert exit_code == 2
    assert packet["schema_version"] == "reward_memory_error_v0"
    assert packet["error_code"] == code
    assert packet["field_path"] == path
    assert "alice" not in json.dumps(packet)


def test_check_never_prints_the_location(
    capsys: pytest.CaptureFixture[str], dists: Distributions, tmp_path: Path
) -> None:
    # The third-party test provider accepts any location, as a file-backed one would.
    dists.install(
        "rm-thirdparty-provider",
        {"thirdparty": "rm_thirdparty_provider:ThirdPartyProvider"},
    )
    sys.path.insert(0, str(DATA / "thirdparty_provider"))
    try:
        location = (tmp_path / "home" / "alice" / "memory.db").as_posix()
        code, packet = _run(capsys, "--check", f"thirdparty://{location}?label=x")
    finally:
        sys.path.remove(str(DATA / "thirdparty_provider"))
    assert code == 0
    _valid(packet)
    check = packet["check"]
    assert check["status"] == "available"
    assert check["location"] == "given"
    assert len(check["location_digest"]) == 16
    text = json.dumps(packet)
    assert "alice" not in text
    assert str(tmp_path) not in text


def test_broken_provider_is_a_status_not_a_crash(
    capsys: pytest.CaptureFixture[str], dists: Distributions
) -> None:
    module = dists.unique("rm_cli_broken")
    dists.install(
        "rm-cli-broken", {"clibroken": f"{module}:Provider"}, {module: "import nosuchmodule\n"}
    )
    code, packet = _run(capsys, "--check", "clibroken://")
    assert code == 0
    _valid(packet)
    assert packet["check"]["status"] == "load_failed"
    assert "rm-cli-broken" in packet["check"]["detail"]
    listed = next(p for p in packet["providers"] if p["provider_id"] == "clibroken")
    assert "ModuleNotFoundError" in listed["load_error"]


def test_provider_raising_anything_else_is_failed(
    capsys: pytest.CaptureFixture[str], dists: Distributions
) -> None:
    module = dists.unique("rm_cli_buggy")
    source = GOOD_PROVIDER.format(provider_id="buggy") + (
        "\n    def inventory(self, **kwargs):\n        raise KeyError('/home/alice')\n"
    )
    dists.install("rm-cli-buggy", {"buggy": f"{module}:Provider"}, {module: source})
    code, packet = _run(capsys, "--check", "buggy://")
    assert code == 0
    _valid(packet)
    assert packet["check"]["status"] == "failed"
    assert packet["check"]["detail"] == "inventory raised KeyError"


@pytest.mark.parametrize(
    "answer",
    [
        "None",
        "'yes'",
        "Inventory(provider_id='odd', available=True, corpus_present=True,"
        " record_count='3', index_present=True)",
    ],
)
def test_provider_answering_a_malformed_inventory_is_failed(
    capsys: pytest.CaptureFixture[str], dists: Distributions, answer: str
) -> None:
    module = dists.unique("rm_cli_odd")
    source = GOOD_PROVIDER.format(provider_id="odd") + (
        "\n    def inventory(self, **kwargs):\n"
        "        from reward_memory.providers.spi import Inventory\n"
        f"        return {answer}\n"
    )
    dists.install("rm-cli-odd", {"odd": f"{module}:Provider"}, {module: source})
    code, packet = _run(capsys, "--check", "odd://")
    assert code == 0
    _valid(packet)
    assert packet["check"]["status"] == "failed"
    assert packet["check"].get("record_count") is None


def test_a_location_that_is_no_utf8_is_refused_before_opening(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """argv bytes that are no UTF-8 arrive as lone surrogates (it used to be exit 1)."""
    target = os.fsdecode(os.fsencode(str(tmp_path)) + b"/\xff.db")
    code = main(["providers", "--check", f"sqlite://{target}", "--format", "json"])
    packet = json.loads(capsys.readouterr().out)
    assert (code, packet["error_code"], packet["field_path"]) == (2, "unsafe_character", "--check")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "argv",
    [
        ["--namespace", "other"],
        ["--scope-ref", "repository:x"],
        ["--peer", "p"],
        ["--timeout", "-5"],
    ],
)
def test_an_option_of_check_without_check_is_refused(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["providers", *argv, "--format", "json"]) == 2
    packet = json.loads(capsys.readouterr().out)
    assert packet["field_path"] == argv[0]
