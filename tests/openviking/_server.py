"""Start a real OpenViking 0.5.2 server, offline, for tests and the benchmark.

:class:`LocalOpenViking` starts this directory's ``embed_stub.py`` (its own
process, a free port it reports itself) and ``openviking-server`` on another free
127.0.0.1 port, with a generated ``ov.conf`` (workspace in a temporary
directory, ``HOME`` isolated, no VLM), waits for ``/ready``, provisions accounts
and users through the admin API, and stops both processes by PID.

The server binary: ``$REWARD_MEMORY_OPENVIKING_SERVER``, else the venv that
``python3 dev.py test`` installs (``$REWARD_MEMORY_OPENVIKING_HOME``, else
``$XDG_CACHE_HOME`` or ``~/.cache``, then ``reward-memory/openviking-0.5.2``).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import httpx

HERE = Path(__file__).resolve().parent
PIN = "openviking==0.5.2"
ENV_SERVER = "REWARD_MEMORY_OPENVIKING_SERVER"
ENV_HOME = "REWARD_MEMORY_OPENVIKING_HOME"
DIMENSION = 4096
READY_SECONDS = 120.0


def server_binary() -> Path | None:
    """The ``openviking-server`` to run, or ``None`` when none is installed."""
    explicit = os.environ.get(ENV_SERVER)
    if explicit:
        path = Path(explicit)
        return path if path.is_file() else None
    home = os.environ.get(ENV_HOME)
    if home:
        base = Path(home)
    else:
        cache = os.environ.get("XDG_CACHE_HOME")
        root = Path(cache) if cache and Path(cache).is_absolute() else Path.home() / ".cache"
        base = root / "reward-memory" / "openviking-0.5.2"
    stamp = base / ".installed"
    binary = base / "venv" / "bin" / "openviking-server"
    if stamp.is_file() and stamp.read_text() == PIN and binary.is_file():
        return binary
    return None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Tenant:
    """One provisioned account: its id, its admin user and that user's key."""

    def __init__(self, account: str, user: str, key: str) -> None:
        self.account = account
        self.user = user
        self.key = key

    def __repr__(self) -> str:
        return f"<Tenant {self.account}/{self.user}>"


class LocalOpenViking:
    """A running local server (use :meth:`start` and :meth:`stop`, or ``with``)."""

    def __init__(self, workdir: Path, *, auth_mode: str = "api_key") -> None:
        self.workdir = workdir
        self.auth_mode = auth_mode
        self.root_key = "rm-test-root-" + uuid.uuid4().hex
        self.port = 0
        self.embed_port = 0
        self.server: subprocess.Popen[bytes] | None = None
        self.embedder: subprocess.Popen[bytes] | None = None
        self.ready_seconds = 0.0
        self._admin: httpx.Client | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def log(self) -> Path:
        return self.workdir / "server.log"

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no server log)"

    def __enter__(self) -> LocalOpenViking:
        self.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()

    def start(self, binary: Path | None = None) -> None:
        binary = binary or server_binary()
        if binary is None:
            raise RuntimeError(
                f"{PIN} is not installed: run `python3 dev.py test` (it installs it into its "
                f"own venv once) or set {ENV_SERVER} to an openviking-server binary"
            )
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.embedder = subprocess.Popen(
            [sys.executable, str(HERE / "embed_stub.py"), str(DIMENSION)],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert self.embedder.stdout is not None
        with self.embedder.stdout:
            self.embed_port = int(self.embedder.stdout.readline())
        self.port = free_port()
        self.restart_server(binary)

    def restart_server(self, binary: Path | None = None) -> None:
        """(Re)start the server process on the same port and workspace."""
        binary = binary or server_binary()
        assert binary is not None
        home = self.workdir / "home"
        home.mkdir(exist_ok=True)
        server: dict[str, Any] = {"host": "127.0.0.1", "port": self.port}
        if self.auth_mode != "dev":
            server.update(auth_mode=self.auth_mode, root_api_key=self.root_key)
        config = {
            "server": server,
            "storage": {
                "workspace": str(self.workdir / "data"),
                "vectordb": {"name": "context", "backend": "local"},
                "agfs": {"backend": "local"},
            },
            "embedding": {
                "dense": {
                    "provider": "openai",
                    "api_base": f"http://127.0.0.1:{self.embed_port}/v1",
                    "model": "rm-hash",
                    "dimension": DIMENSION,
                    "input": "text",
                    "encoding_format": "float",
                }
            },
        }
        conf = self.workdir / "ov.conf"
        conf.write_text(json.dumps(config, indent=2), encoding="utf-8")
        environ = {
            key: value
            for key, value in os.environ.items()
            if not key.upper().endswith("_PROXY") and not key.startswith("OPENVIKING")
        }
        environ.update(HOME=str(home), LITELLM_LOCAL_MODEL_COST_MAP="True")
        started = time.monotonic()
        with self.log.open("ab") as log:
            self.server = subprocess.Popen(
                [str(binary), "--config", str(conf)],
                cwd=self.workdir,
                env=environ,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        self._wait_ready(started)

    def _wait_ready(self, started: float) -> None:
        assert self.server is not None
        with httpx.Client(timeout=2.0, trust_env=False) as client:
            while time.monotonic() - started < READY_SECONDS:
                if self.server.poll() is not None:
                    raise RuntimeError(
                        f"openviking-server exited with {self.server.returncode}:\n"
                        + self.log_tail()
                    )
                try:
                    if client.get(f"{self.base_url}/ready").status_code == 200:
                        self.ready_seconds = time.monotonic() - started
                        return
                except httpx.HTTPError:
                    pass
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(
            f"openviking-server not ready in {READY_SECONDS:g} s:\n{self.log_tail()}"
        )

    def stop_server(self) -> None:
        """Stop the server process only (by PID): SIGTERM, then SIGKILL after 20 s."""
        if self.server is not None and self.server.poll() is None:
            self.server.send_signal(signal.SIGTERM)
            try:
                self.server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.server.kill()
                self.server.wait(timeout=10)
        self.server = None

    def stop(self) -> None:
        if self._admin is not None:
            self._admin.close()
            self._admin = None
        self.stop_server()
        if self.embedder is not None and self.embedder.poll() is None:
            self.embedder.terminate()
            try:
                self.embedder.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.embedder.kill()
                self.embedder.wait(timeout=10)
        self.embedder = None

    # -- the admin API ------------------------------------------------------------------

    def admin(self) -> httpx.Client:
        """A client with the root key (admin API in api_key mode)."""
        if self._admin is None:
            self._admin = httpx.Client(
                base_url=self.base_url,
                headers={"X-API-Key": self.root_key},
                timeout=30.0,
                trust_env=False,
            )
        return self._admin

    def new_account(self, account: str | None = None, user: str = "alice") -> Tenant:
        """A fresh account with an admin user; returns that user's key."""
        account = account or "rm-" + uuid.uuid4().hex[:12]
        response = self.admin().post(
            "/api/v1/admin/accounts", json={"account_id": account, "admin_user_id": user}
        )
        response.raise_for_status()
        return Tenant(account, user, response.json()["result"]["user_key"])

    def new_user(self, account: str, user: str, role: str = "user") -> Tenant:
        """Another user in an existing account."""
        response = self.admin().post(
            f"/api/v1/admin/accounts/{account}/users", json={"user_id": user, "role": role}
        )
        response.raise_for_status()
        return Tenant(account, user, response.json()["result"]["user_key"])


class BlackHole:
    """A TCP server that accepts connections and never answers (a hung backend)."""

    def __init__(self) -> None:
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(64)
        self._sock.settimeout(0.2)
        self.port = int(self._sock.getsockname()[1])
        self._held: list[socket.socket] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:
                continue
            self._held.append(conn)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        for conn in self._held:
            conn.close()
        self._sock.close()
