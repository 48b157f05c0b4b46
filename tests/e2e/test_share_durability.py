"""Shares survive a crash of the server: kill -9 while clients are saving, restart, read them all.

A real `python -m server` process with a real SQLite file: every share the server acknowledged
(201 with an id) before the kill must be readable after a restart, with the same content, and the
database must pass SQLite's own integrity check.
"""

from __future__ import annotations

import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]
WRITERS = 4


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(data_dir: Path, port: int) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "PLAYGROUND_DATA_DIR": str(data_dir),
        "PLAYGROUND_PORT": str(port),
        "PLAYGROUND_SANDBOX": "local",
        "PLAYGROUND_SLOTS": "1",
        # What is under test is durability, not the save quotas: a burst of 300+ saves from one address.
        "PLAYGROUND_STORE_SAVES_PER_MINUTE": "0",
        "PLAYGROUND_STORE_ADDRESS_BYTES_PER_HOUR": "0",
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "server"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(
                f"the server exited: {proc.stderr.read().decode()[-2000:] if proc.stderr else ''}"
            )
        try:
            if httpx.get(f"http://127.0.0.1:{port}/api/health", timeout=1).status_code == 200:
                return proc
        except httpx.HTTPError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("the server did not start within 60 s")


def save_until_stopped(base: str, writer: int, acknowledged: dict[str, str], stop: threading.Event) -> None:
    with httpx.Client(base_url=base, timeout=5) as client:
        n = 0
        while not stop.is_set():
            text = f"# writer {writer}, share {n}\n" + "x = 1\n" * (n % 50)
            try:
                response = client.post("/api/shares", json={"source": text, "chip": "v5e"})
            except httpx.HTTPError:
                return  # the server is gone
            if response.status_code == 201:
                acknowledged[response.json()["id"]] = text
            n += 1


@pytest.mark.slow
def test_every_acknowledged_share_survives_kill_9(tmp_path):
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = start_server(tmp_path, port)
    acknowledged: dict[str, str] = {}
    stop = threading.Event()
    writers = [
        threading.Thread(target=save_until_stopped, args=(base, w, acknowledged, stop))
        for w in range(WRITERS)
    ]
    try:
        for thread in writers:
            thread.start()
        deadline = time.monotonic() + 30
        while len(acknowledged) < 300 and time.monotonic() < deadline:
            time.sleep(0.05)
        server.send_signal(signal.SIGKILL)  # mid-write: the writers are still posting
        server.wait(timeout=10)
    finally:
        stop.set()
        for thread in writers:
            thread.join(timeout=10)
        if server.poll() is None:
            server.kill()
    assert len(acknowledged) >= 300, "the server acknowledged too few shares to make the test meaningful"

    restarted = start_server(tmp_path, port)
    try:
        with httpx.Client(base_url=base, timeout=5) as client:
            lost = [
                i
                for i, text in acknowledged.items()
                if client.get(f"/api/shares/{i}").json().get("source") != text
            ]
    finally:
        restarted.send_signal(signal.SIGTERM)
        restarted.wait(timeout=30)
    assert lost == []
    with sqlite3.connect(tmp_path / "shares.sqlite3") as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
