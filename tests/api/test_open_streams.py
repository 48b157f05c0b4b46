"""Event streams one address may hold open at once (`streams_per_address`): a real server, a teacher's
class stream held open from two addresses. Beyond the cap the next stream is 429 with Retry-After,
another address is not affected, and closing a stream frees its place."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import httpx
import pytest

from server.app import create_app
from server.settings import Settings
from tests.api.test_class_live import ClassFake, bearer, start_class
from tests.live import serving

CAP = 2


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[str]:
    settings = Settings(
        data_dir=tmp_path_factory.mktemp("streams"), slots=1, rate_per_minute=0, store_saves_per_minute=0,
        streams_per_address=CAP, trusted_proxies="127.0.0.1",
    )  # fmt: skip
    with serving(create_app(settings, backend=ClassFake())) as url:
        yield url


@contextlib.contextmanager
def stream(http: httpx.Client, path: str, token: str) -> Iterator[httpx.Response]:
    """A stream opened and held (its status and headers read, the body left waiting)."""
    with http.stream("GET", path, headers=bearer(token)) as response:
        yield response


def test_an_address_holds_at_most_its_streams_and_a_closed_one_frees_its_place(server):
    teacher = httpx.Client(base_url=server, timeout=10, headers={"X-Forwarded-For": "10.77.0.1"})
    other = httpx.Client(base_url=server, timeout=10, headers={"X-Forwarded-For": "10.77.0.2"})
    room = start_class(teacher)
    path, token = f"/api/classes/{room['id']}/events", room["teacher_token"]
    with contextlib.ExitStack() as held:
        opened = [held.enter_context(stream(teacher, path, token)) for _ in range(CAP)]
        assert [r.status_code for r in opened] == [200] * CAP
        with stream(teacher, path, token) as refused:
            assert refused.status_code == 429
            assert refused.headers["Retry-After"] == "5"
            assert "event streams" in refused.read().decode()
        with stream(other, path, token) as elsewhere:
            assert elsewhere.status_code == 200
    for _ in range(3):  # the server frees a place once it sees the client gone
        with stream(teacher, path, token) as again:
            if again.status_code == 200:
                break
    assert again.status_code == 200
