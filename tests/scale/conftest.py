"""The queue and store tests: each keeps to its own key prefix or schema in the session's one real Redis
and one real PostgreSQL (`tests/conftest.py`: never mocks), and the helpers here start web apps and
workers against them."""

from __future__ import annotations

import contextlib
import threading
import uuid
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from sandbox.queue import WorkerQueue
from sandbox.worker import Worker, WorkerOptions
from server.app import create_app
from server.settings import Settings
from tests.api.fakes import FakeBackend
from tests.services import RedisServer

# Short leases and heartbeats: a dead worker is noticed within a second or two.
LEASE_SECONDS = 1.5
HEARTBEAT_SECONDS = 0.3


@pytest.fixture
def prefix() -> str:
    """A key prefix of this test's own: tests share the Redis, never its keys."""
    return f"t{uuid.uuid4().hex[:10]}:"


def web_settings(redis_service: RedisServer, prefix: str, tmp_path, **values) -> Settings:
    base = {
        "data_dir": tmp_path,
        "redis_url": redis_service.url,
        "redis_prefix": prefix,
        "queue_size": 16,
        "per_client_queue": 8,
        "worker_grace_seconds": 2.0,
        "runs_ttl": 600,
    }
    return Settings(**{**base, **values})


@contextlib.contextmanager
def web(
    redis_service: RedisServer, prefix: str, tmp_path, peer: str = "testclient", **values
) -> Iterator[TestClient]:
    app = create_app(web_settings(redis_service, prefix, tmp_path, **values))
    with TestClient(app, client=(peer, 50000)) as client:
        yield client


@contextlib.contextmanager
def webs(
    redis_service: RedisServer, prefix: str, tmp_path, **values
) -> Iterator[tuple[TestClient, TestClient]]:
    """Two web servers sharing the queue."""
    with (
        web(redis_service, prefix, tmp_path, **values) as a,
        web(redis_service, prefix, tmp_path, **values) as b,
    ):
        yield a, b


@contextlib.contextmanager
def worker(
    redis_service: RedisServer,
    prefix: str,
    backend: FakeBackend | None = None,
    *,
    slots: int = 1,
    pool: str = "interpret",
    name: str | None = None,
) -> Iterator[FakeBackend]:
    """A worker in a thread of this process, running jobs on a fake backend."""
    backend = backend or FakeBackend()
    queue = WorkerQueue(
        redis_service.url,
        pool,
        name or f"w-{uuid.uuid4().hex[:6]}",
        prefix=prefix,
        lease_seconds=LEASE_SECONDS,
    )
    options = WorkerOptions(
        slots=slots, heartbeat_seconds=HEARTBEAT_SECONDS, poll_seconds=0.05, idle_seconds=0.2
    )
    stop = threading.Event()
    thread = threading.Thread(
        target=Worker(queue, [backend] * slots, options).serve, args=(stop,), daemon=True
    )
    thread.start()
    try:
        yield backend
    finally:
        backend.release.set()
        stop.set()
        thread.join(timeout=10)
        queue.close()
