"""Errors never repeat an unsafe key: the library's own promise (``reward_memory.errors``:
"neither ever contains the offending value itself, so an error packet can be printed or
logged without leaking the secret or path it caught"), for library callers as for the CLI."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

import reward_memory as rm
from reward_memory import wire
from reward_memory.errors import RecordValidationError

_TOKEN = "ghp_" + "0123456789abcdefghijklmnopqrstuvwxyzAB"


@pytest.mark.parametrize(
    "key", [_TOKEN, "/home/alice/notes", "password=hunter2xyz", "sqlite:///home/alice/m.db"]
)
def test_an_unknown_unsafe_key_is_not_repeated(key: str) -> None:
    packet = {"schema_version": "reward_memory_candidate_proposal_v0", key: 1}
    with pytest.raises(RecordValidationError) as caught:
        wire.load(packet)
    error = caught.value
    for text in (str(error), repr(error), error.message, error.path, *map(str, error.args)):
        assert key not in text
        assert "hunter2" not in text
        assert "alice" not in text
    assert error.path.startswith("$")


def test_an_unsafe_key_deep_in_a_config_keeps_its_safe_parent_path(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from tests._experiment_support import config_data

    data = config_data()
    data["automation"][_TOKEN] = True
    with pytest.raises(RecordValidationError) as caught:
        rm.load_experiment_config(json.loads(json.dumps(data)))
    assert caught.value.path == "$.automation"
    with caplog.at_level(logging.ERROR):
        logging.getLogger("probe").exception("config refused", exc_info=caught.value)
    assert _TOKEN not in caplog.text


@pytest.mark.parametrize(
    ("path", "kept"),
    [
        ("$.scope.surface_ids[0]", "$.scope.surface_ids[0]"),
        (f"$.a.{_TOKEN}.b", "$.a"),
        (f"$.a[2].{_TOKEN}", "$.a[2]"),
        ("$./home/alice/x", "$"),
    ],
)
def test_a_path_is_kept_up_to_its_first_unsafe_key(path: str, kept: str) -> None:
    assert RecordValidationError("bad", path=path).path == kept


def test_a_safe_unknown_key_is_still_named() -> None:
    with pytest.raises(RecordValidationError) as caught:
        wire.load({"schema_version": "reward_memory_candidate_proposal_v0", "colour": 1})
    assert "colour" in caught.value.message or caught.value.path.endswith("colour")


def test_an_unusable_sqlite_location_does_not_chain_the_os_error_naming_it(
    tmp_path: Path,
) -> None:
    """A logged traceback prints ``__cause__``/``__context__``: the OSError names the path."""
    import traceback

    from reward_memory.errors import ProviderUnavailable
    from reward_memory.providers.spi import ProviderScope
    from reward_memory.providers.sqlite import SQLiteProvider

    blocker = tmp_path / "secret-dir-name"
    blocker.write_text("a file, not a directory", encoding="utf-8")
    provider = SQLiteProvider(path=blocker / "sub" / "m.db")
    with pytest.raises(ProviderUnavailable) as caught:
        provider.write(scope=ProviderScope(namespace="n", scope_ref="s"), key="k", content="c")
    printed = "".join(traceback.format_exception(caught.value))
    assert "secret-dir-name" not in printed
    provider.close()


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("message", "token: abcdefghijklmnop1"),
        ("error", "see /home/alice/.ssh/id_rsa"),
        ("field_path", "/home/alice/x"),
        ("error_code", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"),
    ],
)
def test_a_loaded_error_packet_is_held_to_public_safety(name: str, value: str) -> None:
    """The CLI withholds an unsafe detail before it builds the packet; a forged or foreign
    one loaded as data used to take a credential or a local path in any string."""
    from reward_memory import wire
    from reward_memory.errors import RecordValidationError

    packet = {
        "ok": False,
        "schema_version": "reward_memory_error_v0",
        "status": "invalid_request",
        "error_code": "invalid_value",
        "field_path": "$.x",
        "message": "must be a string",
        "error": "must be a string @ $.x",
        name: value,
    }
    with pytest.raises(RecordValidationError) as caught:
        wire.load(packet)
    assert caught.value.path == f"$.{name}"
