"""Real Redis and PostgreSQL servers for tests and benchmarks: Debian's `redis-server` and
`postgresql` (installed by `scripts/test` when run as root), each on loopback in a temporary
directory, stopped when the context ends. PostgreSQL refuses to run as root, so as root it runs as
`nobody` in a directory that user owns."""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any


class ServiceUnavailable(RuntimeError):
    """The server's binary is not installed here."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port: int, seconds: float, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited ({proc.returncode}): {log.read_text()[-2000:]}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return
        time.sleep(0.05)
    raise RuntimeError(f"nothing listens on port {port} after {seconds} s: {log.read_text()[-2000:]}")


@dataclass
class RedisServer:
    """One redis-server on 127.0.0.1; `stop` and `start` again keep the port (for outage tests)."""

    directory: Path
    port: int
    proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise ServiceUnavailable("redis-server is not installed (Debian package redis-server)")
        log = self.directory / "redis.log"
        argv = [binary, "--bind", "127.0.0.1", "--port", str(self.port), "--dir", str(self.directory)]
        argv += ["--save", "", "--appendonly", "no", "--logfile", str(log), "--protected-mode", "yes"]
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_port(self.port, 20, self.proc, log)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)
        self.proc = None


@contextlib.contextmanager
def redis_server(directory: Path) -> Iterator[RedisServer]:
    server = RedisServer(directory, free_port())
    server.start()
    try:
        yield server
    finally:
        server.stop()


def postgres_bin() -> Path:
    """Debian's PostgreSQL binaries (`/usr/lib/postgresql/<major>/bin`), the newest installed."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/postgres"), key=lambda p: int(p.split("/")[4]))
    if not found:
        raise ServiceUnavailable("PostgreSQL is not installed (Debian package postgresql)")
    return Path(found[-1]).parent


@contextlib.contextmanager
def postgres_server() -> Iterator[str]:
    """A PostgreSQL cluster in a fresh temporary directory; yields its URL (user and database
    `postgres`). The directory sits directly in the temp dir, so `nobody` can reach it."""
    bindir = postgres_bin()
    directory = Path(tempfile.mkdtemp(prefix="playground-pg-"))
    data, port = directory / "pgdata", free_port()
    as_nobody: dict[str, Any] = {}
    if os.getuid() == 0:
        # PostgreSQL refuses root: run it as nobody, in a directory nobody owns. Started as that user
        # itself, not through runuser, which ignores the SIGINT below: each stop waited out its 20 s
        # and left the server running.
        os.chown(directory, 65534, 65534)
        as_nobody = {"user": 65534, "group": 65534, "extra_groups": []}
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": str(directory)}
    subprocess.run(
        [str(bindir / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust", "-E", "UTF8"],
        check=True,
        env=env,
        **as_nobody,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        cwd=directory,
    )
    log = directory / "postgres.log"
    argv = [str(bindir / "postgres"), "-D", str(data), "-p", str(port), "-h", "127.0.0.1"]
    argv += ["-k", str(directory), "-c", "fsync=off", "-c", "synchronous_commit=off"]
    argv += ["-c", "full_page_writes=off", "-c", "max_connections=200"]
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            argv, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=directory, **as_nobody
        )
    try:
        wait_port(port, 60, proc, log)
        ready = [str(bindir / "pg_isready"), "-q", "-h", "127.0.0.1", "-p", str(port), "-U", "postgres"]
        deadline = time.monotonic() + 60
        while subprocess.run(ready, check=False).returncode != 0:
            if time.monotonic() > deadline or proc.poll() is not None:
                raise RuntimeError(f"PostgreSQL did not become ready: {log.read_text()[-2000:]}")
            time.sleep(0.1)
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
    finally:
        proc.send_signal(signal.SIGINT)  # fast shutdown
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        shutil.rmtree(directory, ignore_errors=True)
