"""A server on a unix socket (`PLAYGROUND_UDS`: a TPU VM without TCP, or behind a reverse proxy) has no
network peer. Alone, every request is one client; with `PLAYGROUND_TRUSTED_PROXIES=unix`, the proxy
on the socket is believed and each forwarded address is a client of its own, as behind a TCP proxy.
A real uvicorn server on a real socket (what `python -m server` runs), the fake sandbox behind it."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import uvicorn

from server.app import create_app
from server.settings import Settings
from tests.api.fakes import FakeBackend


@contextlib.contextmanager
def served_on_socket(tmp_path: Path, **settings: object) -> Iterator[httpx.Client]:
    backend, sock = FakeBackend(), tmp_path / "playground.sock"
    values = {"data_dir": tmp_path / "var", "slots": 1, "queue_size": 16, "per_address_queue": 1}
    app = create_app(Settings(**{**values, "uds": sock, "rate_per_minute": 0, **settings}), backend=backend)
    server = uvicorn.Server(uvicorn.Config(app, uds=str(sock), log_level="warning"))
    thread = threading.Thread(target=lambda: asyncio.run(server.serve()), daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        with httpx.Client(
            transport=httpx.HTTPTransport(uds=str(sock)), base_url="http://localhost"
        ) as client:
            yield client
    finally:
        backend.release.set()
        server.should_exit = True
        thread.join(30)


def post(client: httpx.Client, forwarded_for: str, source: str) -> int:
    return client.post(
        "/api/runs", json={"source": source}, headers={"X-Forwarded-For": forwarded_for}
    ).status_code


def test_behind_a_proxy_on_the_socket_each_forwarded_address_is_its_own_client(tmp_path):
    with served_on_socket(tmp_path, trusted_proxies="unix") as client:
        # One run an address: the second from 203.0.113.7 waits for its first; another address gets in.
        assert [post(client, "203.0.113.7", "block a"), post(client, "203.0.113.7", "block b")] == [201, 429]
        assert post(client, "198.51.100.9", "block c") == 201


def test_without_a_trusted_proxy_the_socket_is_one_client_whatever_the_headers_say(tmp_path):
    with served_on_socket(tmp_path) as client:
        assert [post(client, "203.0.113.7", "block a"), post(client, "198.51.100.9", "block b")] == [201, 429]
