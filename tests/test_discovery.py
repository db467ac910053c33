"""Provider discovery through the ``reward_memory.providers`` entry-point group.

Every test here goes through real ``importlib.metadata`` discovery: the built-in
providers come from the editable install's entry points, the others from
distributions the tests install (a ``.dist-info`` on ``sys.path``, or a wheel in
a fresh virtual environment).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

import reward_memory
import reward_memory.providers
from _clean_venv import install_declared, new_venv, pip
from _distributions import DATA, GOOD_PROVIDER, Distributions, distributions
from reward_memory.errors import (
    ProviderConfigError,
    ProviderError,
    ProviderLoadError,
    ProviderNotFoundError,
)
from reward_memory.providers import discovery
from reward_memory.providers.discovery import (
    ProviderConflictError,
    available_providers,
    get_provider,
    load_provider_class,
)
from reward_memory.providers.spi import SPI_VERSION, Provider, ProviderScope
from reward_memory.records.providers import ProviderInfo
from reward_memory.testing import InMemoryProvider

if TYPE_CHECKING:
    from collections.abc import Iterator

ROOT = Path(__file__).resolve().parents[1]
SCOPE = ProviderScope(namespace="ns", scope_ref="discovery")


@pytest.fixture
def dists(tmp_path: Path) -> Iterator[Distributions]:
    yield from distributions(tmp_path)


def _info(provider_id: str) -> list[ProviderInfo]:
    return [info for info in available_providers() if info.provider_id == provider_id]


# -- the built-in providers, found through the installed entry points -------------------


def test_memory_is_discovered_through_its_entry_point() -> None:
    (info,) = _info("memory")
    assert info.distribution == "reward-memory"
    assert info.version == reward_memory.__version__
    assert info.spi_version == SPI_VERSION
    assert info.load_error is None
    assert load_provider_class("memory") is InMemoryProvider


def test_sqlite_entry_point_is_declared() -> None:
    # Listed whether or not its module imports yet; never raises while listing.
    assert "sqlite" in discovery.provider_ids()
    (info,) = _info("sqlite")
    assert info.distribution == "reward-memory"


def test_listing_is_sorted_and_public_safe() -> None:
    infos = available_providers()
    assert [i.provider_id for i in infos] == sorted(i.provider_id for i in infos)
    assert all(isinstance(i, ProviderInfo) for i in infos)


def test_get_provider_from_a_url() -> None:
    provider = get_provider("memory://")
    assert isinstance(provider, InMemoryProvider)
    assert isinstance(provider, Provider)
    written = provider.write(scope=SCOPE, key="doc-1", content="exact\r\n")
    assert provider.read(scope=SCOPE, ref=written.ref).content == "exact\r\n"


def test_get_provider_url_query_carries_options() -> None:
    provider = get_provider("memory://?unavailable=true&slow_seconds=0.25")
    assert isinstance(provider, InMemoryProvider)
    assert provider.faults.unavailable is True
    assert provider.faults.slow_seconds == 0.25


def test_get_provider_from_a_bare_id_with_options() -> None:
    provider = get_provider("memory", times_out=True)
    assert isinstance(provider, InMemoryProvider)
    assert provider.faults.times_out is True


def test_each_call_builds_a_fresh_provider() -> None:
    first, second = get_provider("memory://"), get_provider("memory://")
    assert first is not second
    first.write(scope=SCOPE, key="doc-1", content="only in the first")
    assert second.inventory(scope=SCOPE).record_count == 0


def test_public_surface_is_lazy_and_shared() -> None:
    assert reward_memory.get_provider is get_provider
    assert reward_memory.available_providers is available_providers
    assert reward_memory.providers.get_provider is get_provider
    assert reward_memory.providers.load_provider_class is load_provider_class
    with pytest.raises(AttributeError):
        reward_memory.providers.nope  # noqa: B018


# -- bad specs and options --------------------------------------------------------------


def test_unknown_id_is_misspelled_or_not_installed() -> None:
    with pytest.raises(ProviderNotFoundError) as caught:
        get_provider("memroy://")
    message = str(caught.value)
    assert "'memroy' is either misspelled or not installed" in message
    assert "memory" in message
    assert "sqlite" in message
    assert isinstance(caught.value, LookupError)
    assert caught.value.code == "provider_not_found"


def test_unknown_bare_id() -> None:
    with pytest.raises(ProviderNotFoundError, match="misspelled or not installed"):
        load_provider_class("nosuchprovider")


@pytest.mark.parametrize(
    "spec",
    [
        "",
        "://",
        "Memory://",
        "1memory://",
        "memory ://",
        " memory",
        "sqlite:relative.db",
        "/home/alice/memory.db",
        "C:\\Users\\alice\\memory.db",
        "my_provider://",
    ],
)
def test_malformed_spec_is_a_config_error(spec: str) -> None:
    with pytest.raises(ProviderConfigError) as caught:
        get_provider(spec)
    assert "alice" not in str(caught.value)
    assert isinstance(caught.value, ValueError)


def test_spec_must_be_a_string() -> None:
    with pytest.raises(ProviderConfigError):
        get_provider(42)  # type: ignore[arg-type]


def test_unknown_option_is_named() -> None:
    with pytest.raises(ProviderConfigError) as caught:
        get_provider("memory", colour="red")
    assert "'colour'" in str(caught.value)
    assert "slow_seconds" in str(caught.value)  # the accepted options are listed


def test_unknown_url_option_is_named() -> None:
    with pytest.raises(ProviderConfigError, match="'colour'"):
        get_provider("memory://?colour=red")


def test_bad_option_value_is_a_config_error() -> None:
    with pytest.raises(ProviderConfigError, match="slow_seconds"):
        get_provider("memory", slow_seconds=-1)
    with pytest.raises(ProviderConfigError, match="unavailable"):
        get_provider("memory://?unavailable=maybe")


def test_url_and_keyword_options_do_not_mix() -> None:
    with pytest.raises(ProviderConfigError, match="query string"):
        get_provider("memory://", unavailable=True)


def test_url_location_is_never_echoed() -> None:
    with pytest.raises(ProviderConfigError) as caught:
        get_provider("memory:///home/alice/secret")
    assert "alice" not in str(caught.value)


def test_invalid_sqlite_url_creates_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    target = tmp_path / "nested" / "memory.db"
    with pytest.raises(ProviderError):
        get_provider(f"sqlite://{target.as_posix()}?no_such_option=1")
    with pytest.raises(ProviderError):
        get_provider("sqlite", no_such_option=1)
    assert list(tmp_path.iterdir()) == []


# -- scanned once, imported late ---------------------------------------------------------


def test_scan_is_cached() -> None:
    discovery.rescan()
    discovery.provider_ids()
    available_providers()
    load_provider_class("memory")
    info = discovery._scan.cache_info()
    assert info.misses == 1
    assert info.hits >= 2


def test_listing_ids_imports_no_provider() -> None:
    probe = (
        "import sys; from reward_memory.providers import discovery; "
        "ids = discovery.provider_ids(); "
        "assert 'memory' in ids, ids; "
        "assert 'reward_memory.testing.memory' not in sys.modules; "
        "assert 'reward_memory.providers.sqlite' not in sys.modules; "
        "import reward_memory; reward_memory.get_provider; "
        "assert 'reward_memory.testing.memory' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", probe], check=True)


def test_import_reward_memory_does_not_scan() -> None:
    probe = (
        "import sys, reward_memory; "
        "assert 'importlib.metadata' not in sys.modules; "
        "assert 'reward_memory.providers.discovery' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", probe], check=True)


# -- broken, incomplete and conflicting providers -----------------------------------------


def test_broken_provider_is_listed_with_its_error_and_logged(
    dists: Distributions, caplog: pytest.LogCaptureFixture
) -> None:
    module = dists.unique("rm_broken")
    dists.install(
        "rm-broken-dist",
        {"broken": f"{module}:Provider"},
        {module: "raise ImportError('the backend library is missing')\n"},
    )
    with caplog.at_level(logging.WARNING, logger="reward_memory.providers"):
        (info,) = _info("broken")
    assert info.distribution == "rm-broken-dist"
    assert info.version == "1.0"
    assert info.spi_version is None
    assert info.load_error is not None
    assert "ImportError: the backend library is missing" in info.load_error
    warnings = [
        r
        for r in caplog.records
        if r.name == "reward_memory.providers" and "rm-broken-dist" in r.getMessage()
    ]
    assert len(warnings) == 1
    assert "broken" in warnings[0].getMessage()
    assert warnings[0].exc_info is None  # one line at WARNING; the traceback is DEBUG
    # The working providers are still listed.
    assert _info("memory")[0].load_error is None


def test_broken_provider_asked_by_name_is_a_load_error(dists: Distributions) -> None:
    module = dists.unique("rm_broken")
    dists.install(
        "rm-broken-dist",
        {"broken": f"{module}:Provider"},
        {module: "raise ImportError('the backend library is missing')\n"},
    )
    with pytest.raises(ProviderLoadError) as caught:
        get_provider("broken://")
    assert caught.value.distribution == "rm-broken-dist"
    assert "'rm-broken-dist'" in str(caught.value)
    assert "failed to import" in str(caught.value)
    assert isinstance(caught.value.__cause__, ImportError)


def test_load_error_never_carries_a_local_path(dists: Distributions) -> None:
    module = dists.unique("rm_leaky")
    dists.install(
        "rm-leaky-dist",
        {"leaky": f"{module}:Provider"},
        {module: "raise OSError('cannot open /home/alice/.config/secret.toml')\n"},
    )
    (info,) = _info("leaky")
    assert info.load_error is not None
    assert "alice" not in info.load_error
    assert "OSError" in info.load_error
    with pytest.raises(ProviderLoadError) as caught:
        load_provider_class("leaky")
    assert "alice" not in str(caught.value)


@pytest.mark.parametrize(
    ("source", "problem"),
    [
        ("Provider = 42\n", "does not name a class"),
        (GOOD_PROVIDER.format(provider_id="other"), "provider_id must equal"),
        (
            GOOD_PROVIDER.format(provider_id="incomplete") + "    search = None\n",
            "lacks search",
        ),
        (
            GOOD_PROVIDER.format(provider_id="incomplete") + "    spi_version = 99\n",
            "SPI version 99",
        ),
        (
            GOOD_PROVIDER.format(provider_id="incomplete") + "    spi_version = True\n",
            "no integer spi_version",
        ),
        (
            "class Provider:\n    provider_id = 'incomplete'\n    spi_version = 1\n"
            "    def write(self): ...\n",
            "lacks read, search, delete, inventory, close, from_url",
        ),
    ],
    ids=["not_a_class", "wrong_id", "missing_method", "future_spi", "bool_spi", "bare_class"],
)
def test_provider_that_misses_the_spi_is_a_load_error(
    dists: Distributions, source: str, problem: str
) -> None:
    module = dists.unique("rm_incomplete")
    dists.install("rm-incomplete-dist", {"incomplete": f"{module}:Provider"}, {module: source})
    with pytest.raises(ProviderLoadError, match="does not satisfy the provider SPI") as caught:
        load_provider_class("incomplete")
    assert problem in str(caught.value)
    assert caught.value.distribution == "rm-incomplete-dist"
    (info,) = _info("incomplete")
    assert info.load_error is not None
    assert problem in info.load_error


def test_malformed_entry_point_value(dists: Distributions) -> None:
    dists.install("rm-malformed-dist", {"malformed": "just a module name?"})
    with pytest.raises(ProviderLoadError, match="malformed entry point"):
        load_provider_class("malformed")


def test_entry_point_with_an_invalid_id_is_skipped_in_listing(
    dists: Distributions, caplog: pytest.LogCaptureFixture
) -> None:
    module = dists.unique("rm_badname")
    dists.install(
        "rm-badname-dist",
        {"Bad_Name": f"{module}:Provider"},
        {module: GOOD_PROVIDER.format(provider_id="Bad_Name")},
    )
    with caplog.at_level(logging.WARNING, logger="reward_memory.providers"):
        ids = [info.provider_id for info in available_providers()]
    assert "Bad_Name" not in ids
    assert "memory" in ids
    assert any("not a valid provider id" in r.getMessage() for r in caplog.records)


def test_third_party_provider_installed_at_run_time(dists: Distributions) -> None:
    module = dists.unique("rm_extra")
    dists.install(
        "rm-extra-dist",
        {"extra": f"{module}:Provider"},
        {module: GOOD_PROVIDER.format(provider_id="extra")},
        version="2.5.0",
    )
    (info,) = _info("extra")
    assert (info.distribution, info.version, info.spi_version) == ("rm-extra-dist", "2.5.0", 1)
    provider = get_provider("extra://")
    assert type(provider).__module__ == module
    assert provider.provider_id == "extra"


def test_two_distributions_claiming_one_id_is_an_error(
    dists: Distributions, caplog: pytest.LogCaptureFixture
) -> None:
    first, second = dists.unique("rm_twin_a"), dists.unique("rm_twin_b")
    dists.install(
        "rm-twin-a",
        {"twin": f"{first}:Provider"},
        {first: GOOD_PROVIDER.format(provider_id="twin")},
    )
    dists.install(
        "rm-twin-b",
        {"twin": f"{second}:Provider"},
        {second: GOOD_PROVIDER.format(provider_id="twin")},
    )
    with pytest.raises(ProviderConflictError) as caught:
        get_provider("twin://")
    assert isinstance(caught.value, ProviderLoadError)
    assert caught.value.code == "provider_id_conflict"
    assert set(caught.value.distributions) == {"rm-twin-a", "rm-twin-b"}
    assert "rm-twin-a" in str(caught.value)
    assert "rm-twin-b" in str(caught.value)
    # Neither module was imported to decide: nothing was silently picked.
    assert first not in sys.modules
    assert second not in sys.modules
    with caplog.at_level(logging.WARNING, logger="reward_memory.providers"):
        twins = _info("twin")
    assert {info.distribution for info in twins} == {"rm-twin-a", "rm-twin-b"}
    assert all(info.load_error and "2 distributions" in info.load_error for info in twins)
    assert all(info.spi_version is None for info in twins)
    assert any("twin" in r.getMessage() for r in caplog.records)


def test_a_third_party_cannot_shadow_a_built_in(dists: Distributions) -> None:
    module = dists.unique("rm_shadow")
    dists.install(
        "rm-shadow-dist",
        {"memory": f"{module}:Provider"},
        {module: GOOD_PROVIDER.format(provider_id="memory")},
    )
    with pytest.raises(ProviderConflictError, match="reward-memory"):
        get_provider("memory://")


def test_identical_registrations_are_one_entry() -> None:
    # Fault injection: the same distribution seen twice (e.g. on two sys.path entries).
    entry = discovery._Entry(name="x", value="m:C", distribution="d", version="1")
    other = discovery._Entry(name="x", value="m:C", distribution="e", version="1")
    assert discovery._index([entry, entry])["x"] == (entry,)
    assert discovery._index([entry, other])["x"] == (entry, other)


# -- a third-party distribution in a fresh virtual environment --------------------------


_VENV_PROBE = """
import json, sys
import reward_memory
from reward_memory.providers.discovery import available_providers, get_provider
from reward_memory.providers.spi import ProviderScope

provider = get_provider("thirdparty://?label=probe")
scope = ProviderScope(namespace="ns", scope_ref="venv")
written = provider.write(scope=scope, key="doc-1", content="h\\u00e9llo \\U0001f600\\r\\n")
read = provider.read(scope=scope, ref=written.ref)
hits = provider.search(scope=scope, query="h\\u00e9llo", limit=5).hits
print(json.dumps({
    "ids": {
        i.provider_id: [i.distribution, i.version, i.load_error] for i in available_providers()
    },
    "module": type(provider).__module__,
    "label": provider.label,
    "status": written.status,
    "exact": read.content == "h\\u00e9llo \\U0001f600\\r\\n",
    "hits": [h.ref for h in hits] == [written.ref],
    "count": provider.inventory(scope=scope).record_count,
    "core": reward_memory.__file__,
    "prefix": sys.prefix,
}))
"""


@pytest.mark.slow
def test_thirdparty_provider_in_a_fresh_venv_is_found_through_its_entry_point(
    tmp_path: Path,
) -> None:
    """A provider defined only in a test package, installed as a wheel into a new venv."""
    source = tmp_path / "thirdparty_provider"
    shutil.copytree(DATA / "thirdparty_provider", source)
    wheels = tmp_path / "wheels"
    built = pip(
        "wheel", "--no-build-isolation", "--no-deps", "--no-index", "-w", str(wheels),
        str(ROOT), str(source),
    )  # fmt: skip
    assert built.returncode == 0, built.stderr[-2000:]
    assert len(list(wheels.glob("*.whl"))) == 2

    venv = tmp_path / "venv"
    python = new_venv(venv)
    installed = pip(
        "install", "--no-deps", "--no-index", *map(str, wheels.glob("*.whl")), python=python
    )
    assert installed.returncode == 0, installed.stderr[-2000:]
    # The runtime dependencies exactly as the distribution declares them.
    install_declared(python, ROOT / "pyproject.toml")

    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    result = subprocess.run(
        [str(python), "-c", _VENV_PROBE],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
        env=env,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout)
    assert report["ids"]["thirdparty"] == ["rm-thirdparty-provider", "0.0.1", None]
    assert report["ids"]["memory"][0] == "reward-memory"
    assert report["module"] == "rm_thirdparty_provider"
    assert report["label"] == "probe"
    assert report["status"] == "created"
    assert report["exact"] is True
    assert report["hits"] is True
    assert report["count"] == 1
    # The core came from the wheel in the new venv, not from this source tree.
    assert Path(report["core"]).is_relative_to(Path(report["prefix"]))

    cli = venv / ("Scripts/reward-memory.exe" if os.name == "nt" else "bin/reward-memory")
    listed = subprocess.run(
        [str(cli), "providers", "--format", "json"],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
        env=env,
        timeout=120,
    )
    assert listed.returncode == 0, listed.stdout + listed.stderr[-2000:]
    packet = json.loads(listed.stdout)
    assert "thirdparty" in {p["provider_id"] for p in packet["providers"]}


def test_a_provider_that_exits_at_import_is_a_load_error(dists: Distributions) -> None:
    """A SystemExit while importing a provider is a failed import: listed with its error,
    a typed error when asked for, never the end of the process."""
    module = dists.unique("rm_exits")
    dists.install(
        "rm-exits-dist", {"exits": f"{module}:Provider"}, {module: "raise SystemExit(3)\n"}
    )
    (info,) = _info("exits")
    assert info.load_error is not None
    assert "SystemExit" in info.load_error
    with pytest.raises(ProviderLoadError, match="failed to import"):
        get_provider("exits://")


@pytest.mark.parametrize(
    ("body", "spec"),
    [
        (
            "    @classmethod\n    def from_url(cls, url):\n        raise TypeError('no')\n",
            "odd://",
        ),
        ("    def __init__(self, **options):\n        raise KeyError('backend')\n", "odd"),
        ("    def __init__(self, **options):\n        raise KeyError('backend')\n", "odd://"),
        ("    @classmethod\n    def from_url(cls, url):\n        return None\n", "odd://"),
    ],
    ids=["from_url_raises", "init_raises", "init_raises_via_url", "from_url_returns_none"],
)
def test_a_provider_that_fails_to_start_is_a_typed_load_error(
    dists: Distributions, body: str, spec: str
) -> None:
    module = dists.unique("rm_odd")
    source = GOOD_PROVIDER.format(provider_id="odd").split("    @classmethod")[0] + body
    if "from_url" not in body:
        source += "\n    @classmethod\n    def from_url(cls, url):\n        return cls()\n"
    dists.install("rm-odd-dist", {"odd": f"{module}:Provider"}, {module: source})
    with pytest.raises(ProviderLoadError, match="'odd'"):
        get_provider(spec)


def test_a_provider_whose_spi_attribute_raises_is_a_load_error(dists: Distributions) -> None:
    module = dists.unique("rm_boom")
    source = (
        "class _Boom:\n    def __get__(self, obj, owner):\n        raise RuntimeError('x')\n\n"
        + GOOD_PROVIDER.format(provider_id="boom")
        + "    spi_version = _Boom()\n"
    )
    dists.install("rm-boom-dist", {"boom": f"{module}:Provider"}, {module: source})
    with pytest.raises(ProviderLoadError, match="does not satisfy the provider SPI"):
        load_provider_class("boom")
    assert "memory" in [info.provider_id for info in available_providers()]


def test_a_third_party_error_repeating_a_secret_is_withheld(dists: Distributions) -> None:
    """A provider's own typed error may repeat the URL it was given: the same kind of
    error comes out, its message withheld; a safe message passes unchanged."""
    module = dists.unique("rm_leaky")
    body = (
        "    @classmethod\n    def from_url(cls, url):\n"
        "        from reward_memory.errors import ProviderConfigError\n"
        "        raise ProviderConfigError(f'bad url {url}')\n"
    )
    source = GOOD_PROVIDER.format(provider_id="leaky").split("    @classmethod")[0] + body
    dists.install("rm-leaky-dist", {"leaky": f"{module}:Provider"}, {module: source})
    with pytest.raises(ProviderConfigError) as caught:
        get_provider("leaky://admin:hunter2pass@db.example/x")
    assert "hunter2pass" not in str(caught.value)
    assert "'leaky'" in str(caught.value)
    with pytest.raises(ProviderConfigError, match=r"bad url leaky://db\.example/x"):
        get_provider("leaky://db.example/x")


def test_an_unknown_id_that_looks_like_a_key_is_not_repeated() -> None:
    with pytest.raises(ProviderNotFoundError) as caught:
        get_provider("sk-abcdefabcdefabcdefabcdef12")
    assert "abcdef" not in str(caught.value)


@pytest.mark.parametrize("spec", ["sqlite://relative.db", "SQLITE:///tmp/x.db", "sqlite:relative"])
def test_the_libraries_own_url_hints_survive_the_public_scan(spec: str) -> None:
    """The hint names the fix without a path-shaped example, so the CLI need not withhold it."""
    from reward_memory.text import find_unsafe

    with pytest.raises(ProviderConfigError) as caught:
        get_provider(spec)
    assert "absolute file path" in str(caught.value)
    assert find_unsafe(str(caught.value)) is None
