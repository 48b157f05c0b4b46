"""A deployment in processes on this machine, as on several hosts: web servers (`python -m server`)
and workers (`python -m sandbox.worker`) sharing one Redis, each killable on its own."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.services import free_port

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Process:
    name: str
    proc: subprocess.Popen[bytes]
    log: Path
    url: str = ""

    def kill(self) -> None:
        """kill -9: no goodbye, no cleanup."""
        with contextlib.suppress(ProcessLookupError):
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.kill()


@dataclass
class Deployment:
    redis_url: str
    prefix: str
    directory: Path
    processes: list[Process] = field(default_factory=list)

    def web(self, name: str, *, queue: str = "redis", **settings: str) -> Process:
        """`python -m server` on a free port; `queue="in_process"`: its own slots and sandbox (the
        embedded default, as `scripts/serve` starts it) instead of the Redis queue's workers."""
        port = free_port()
        redis = {"PLAYGROUND_REDIS_URL": self.redis_url, "PLAYGROUND_REDIS_PREFIX": self.prefix}
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("PLAYGROUND_REDIS")},
            "PLAYGROUND_PORT": str(port),
            **(redis if queue == "redis" else {}),
            "PLAYGROUND_DATA_DIR": str(self.directory / name),
            "PLAYGROUND_LOG_FORMAT": "json",
            **{f"PLAYGROUND_{k.upper()}": v for k, v in settings.items()},
        }
        return self._start(name, [sys.executable, "-m", "server"], env, f"http://127.0.0.1:{port}")

    def worker(self, name: str, *, backend: str = "local", slots: int = 1, lease: float = 1.5) -> Process:
        argv = [sys.executable, "-m", "sandbox.worker", "--redis", self.redis_url, "--prefix", self.prefix]
        argv += ["--pool", "interpret", "--slots", str(slots), "--backend", backend, "--name", name]
        argv += ["--lease-seconds", str(lease), "--heartbeat-seconds", "0.3", "--log-format", "json"]
        # The deployment's own (a restarted worker reads what the one before kept), never the checkout's
        # `var/references`: files an earlier session left there once hid a bug from CI's clean clone.
        argv += ["--reference-dir", str(self.directory / "references")]
        return self._start(name, argv, dict(os.environ), "")

    def _start(self, name: str, argv: list[str], env: dict[str, str], url: str) -> Process:
        log = self.directory / f"{name}.log"
        with open(log, "ab") as out:
            proc = subprocess.Popen(argv, env=env, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
        process = Process(name, proc, log, url)
        self.processes.append(process)
        return process

    def wait_web(self, web: Process, seconds: float = 60) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if web.proc.poll() is not None:
                raise RuntimeError(f"{web.name} exited: {web.log.read_text()[-2000:]}")
            with contextlib.suppress(OSError):
                urllib.request.urlopen(f"{web.url}/api/version", timeout=1)
                return
            time.sleep(0.1)
        raise RuntimeError(f"{web.name} did not start")

    def wait_workers(self, web: Process, count: int, seconds: float = 60) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            pools = get(web, "/api/health")[1].get("pools", [])
            if sum(p["workers"] for p in pools) >= count:
                return
            time.sleep(0.1)
        raise RuntimeError(f"{count} workers did not show up")

    def wait_healthy(self, web: Process, seconds: float = 180) -> None:
        """Until `/api/health` says ok (a hardened sandbox's pool imports JAX before it serves)."""
        deadline = time.monotonic() + seconds
        while (health := get(web, "/api/health")[1])["status"] != "ok":
            if time.monotonic() > deadline:
                raise RuntimeError(f"{web.name} not healthy after {seconds} s: {health}")
            time.sleep(0.2)

    def close(self) -> None:
        for process in self.processes:
            process.stop()


def request(web: Process, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(
        web.url + path,
        data=data,
        method=method,
        headers={"content-type": "application/json", **(headers or {})},
    )
    try:
        with urllib.request.urlopen(req, timeout=30) as response:
            return response.status, json.load(response), response.headers
    except urllib.error.HTTPError as exc:
        return exc.code, json.load(exc), exc.headers


def get(web: Process, path: str) -> tuple[int, dict]:
    status, body, _ = request(web, "GET", path)
    return status, body


def follow(web: Process, run_id: str, last_id: str | None = None, stop_after: int | None = None):
    """(id, kind) of the run's SSE events; stops after `stop_after` events with an id, if given."""
    headers = {"Last-Event-ID": last_id} if last_id else {}
    req = urllib.request.Request(f"{web.url}/api/runs/{run_id}/events", headers=headers)
    events: list[tuple[str | None, str, dict]] = []
    event_id, kind = None, ""
    with urllib.request.urlopen(req, timeout=120) as stream:
        for raw in stream:
            line = raw.decode().rstrip("\n")
            if line.startswith("id: "):
                event_id = line[4:]
            elif line.startswith("event: "):
                kind = line[7:]
            elif line.startswith("data: "):
                events.append((event_id, kind, json.loads(line[6:])))
                if kind == "done" or (stop_after and sum(1 for e in events if e[0]) >= stop_after):
                    return events
                event_id = None
    return events


def fresh_database(postgres_url: str) -> str:
    """The URL of a new, empty database on the session's PostgreSQL (a deployment's own)."""
    import psycopg

    name = f"d{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")  # type: ignore[arg-type]
    return postgres_url.rsplit("/", 1)[0] + f"/{name}"


@contextlib.contextmanager
def deployed(
    kind: str, directory: Path, *, redis_url: str = "", postgres_url: str = "", slots: int = 2
) -> Iterator[Process]:
    """A web server as an operator runs it, yielded once it serves (and, with Redis, once its worker is
    up): `"hardened"` is `python -m server` on its embedded defaults (SQLite, its own slots, the
    sandbox it picks: hardened as root); `"redis_pg"` is a web server on Redis and PostgreSQL with one
    runner worker on the hardened sandbox."""
    d = Deployment(redis_url, f"d{uuid.uuid4().hex[:8]}:", directory)
    try:
        if kind == "hardened":
            web = d.web("web", queue="in_process", slots=str(slots))
            d.wait_web(web)
        else:
            web = d.web("web", database_url=fresh_database(postgres_url))
            d.worker("worker", backend="hardened", slots=slots, lease=10.0)
            d.wait_web(web)
            d.wait_workers(web, 1, seconds=120)
        d.wait_healthy(web)
        yield web
    finally:
        d.close()
