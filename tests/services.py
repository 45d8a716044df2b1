"""Real servers for integration tests and benchmarks: redis-server and scrapyd.

Each is started on a free 127.0.0.1 port in a temporary directory, with no
persistence, and stopped (SIGTERM, then SIGKILL) when the ``with`` block ends.
:func:`serving` runs a test's own HTTP handler in a thread the same way.

    with RedisServer(tmp_path) as redis:
        crawl(settings={"REDIS_URL": redis.url})
"""

from __future__ import annotations

import fcntl
import hashlib
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Self

import pytest
import requests

ROOT = Path(__file__).resolve().parent.parent
STARTUP_TIMEOUT = 30.0


def free_port() -> int:
    """A TCP port nobody listens on right now (the OS picks it)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def serving(handler: type[BaseHTTPRequestHandler], address: str = "127.0.0.1") -> Iterator[str]:
    """``handler`` served on a free port of ``address`` in a thread; yields its base URL
    (``http://address:port``) and shuts the server down when the ``with`` block ends."""
    server = ThreadingHTTPServer((address, 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://{address}:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def building_in_the_project() -> Iterator[None]:
    """Hold the lock of builds in the project folder while the block runs.

    ``pip install .`` and ``scrapyd-deploy --build-egg`` build in ``build/`` and
    ``*.egg-info`` there, and ``setup.py clean -a`` empties ``build/`` first: two at once
    (tests on two pytest-xdist workers) would break each other's build.
    """
    key = hashlib.sha1(str(ROOT).encode()).hexdigest()[:12]
    lock = Path(tempfile.gettempdir()) / f"topics-crawler-build-{key}.lock"
    with lock.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def wait_until(check: Callable[[], bool], timeout: float, what: str) -> None:
    """Poll ``check`` every 0.1 s; raise TimeoutError naming ``what`` after ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.1)
    raise TimeoutError(f"{what} not ready after {timeout:.0f} s")


def stop_process(process: subprocess.Popen[bytes], timeout: float = 10.0) -> None:
    """SIGTERM, then SIGKILL when the process does not exit within ``timeout``."""
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout)


class _Service:
    """A server process bound to a free port; a context manager."""

    name = "service"

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self.log_path = workdir / f"{self.name}.log"

    def command(self) -> list[str]:
        raise NotImplementedError

    def ready(self) -> bool:
        raise NotImplementedError

    def start(self) -> Self:
        self.workdir.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                self.command(), cwd=self.workdir, stdout=log, stderr=subprocess.STDOUT
            )
        try:
            wait_until(self._alive_and_ready, STARTUP_TIMEOUT, self.name)
        except BaseException:
            self.stop()
            raise
        return self

    def _alive_and_ready(self) -> bool:
        assert self.process is not None
        if self.process.poll() is not None:
            log = self.log_path.read_text("utf-8", "replace")[-2000:]
            raise RuntimeError(f"{self.name} exited with {self.process.returncode}:\n{log}")
        return self.ready()

    def stop(self) -> None:
        if self.process is not None:
            stop_process(self.process)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


class RedisServer(_Service):
    """Debian's ``redis-server`` with no RDB/AOF persistence."""

    name = "redis-server"

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def command(self) -> list[str]:
        binary = shutil.which("redis-server")
        if binary is None:
            pytest.skip("redis-server is not installed (scripts/system-deps.sh installs it)")
        return [
            binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
            "--appendonly", "no", "--dir", str(self.workdir), "--protected-mode", "yes",
        ]  # fmt: skip

    def ready(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as sock:
                sock.sendall(b"PING\r\n")
                return sock.recv(16).startswith(b"+PONG")
        except OSError:
            return False


class ScrapydServer(_Service):
    """Scrapyd 1.6 with a temporary ``scrapyd.conf``: auth on, items and logs in ``workdir``;
    run by ``python`` (this interpreter unless given: a Scrapyd host's virtualenv), which
    also runs its jobs."""

    name = "scrapyd"

    def __init__(
        self, workdir: Path, username: str, password: str, python: str = sys.executable
    ) -> None:
        super().__init__(workdir)
        self.username = username
        self.password = password
        self.python = python

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def command(self) -> list[str]:
        (self.workdir / "scrapyd.conf").write_text(self.config(), "utf-8")
        return [self.python, "-m", "scrapyd", "--pidfile=", "--logfile=scrapyd-twistd.log"]

    def config(self) -> str:
        return "\n".join(
            [
                "[scrapyd]",
                "bind_address = 127.0.0.1",
                f"http_port = {self.port}",
                f"username = {self.username}",
                f"password = {self.password}",
                "eggs_dir = eggs",
                "logs_dir = logs",
                "items_dir = items",
                "dbs_dir = dbs",
                "poll_interval = 0.5",
                "max_proc = 1",
                "",
            ]
        )

    def ready(self) -> bool:
        try:
            response = requests.get(
                f"{self.url}/daemonstatus.json", auth=(self.username, self.password), timeout=2
            )
        except requests.RequestException:
            return False
        return response.status_code == 200
