from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from server.app import create_app
from server.settings import Settings
from tests.api.fakes import FakeBackend


@pytest.fixture
def backend() -> FakeBackend:
    return FakeBackend()


def make_client(backend: FakeBackend, tmp_path, **settings) -> TestClient:
    values = {"data_dir": tmp_path, "slots": 1, "queue_size": 4, "per_client_queue": 8, **settings}
    return TestClient(create_app(Settings(**values), backend=backend))


@pytest.fixture
def client(backend, tmp_path) -> Iterator[TestClient]:
    with make_client(backend, tmp_path) as c:
        yield c
    backend.release.set()
