"""Quotas on shares and lessons (#28 point 5): a rate of saves and a byte budget per address (429 with
Retry-After), a global budget on the database (507), content already stored never charged twice."""

from __future__ import annotations

import uuid

from fastapi.testclient import TestClient

from server.app import create_app
from server.settings import Settings
from tests.api.fakes import FakeBackend

PROXY = "10.0.0.5"
BIG = 60 * 1024  # a source just under the 64 KiB cap


def behind_proxy(tmp_path, **settings) -> TestClient:
    values = {"data_dir": tmp_path, "slots": 1, "trusted_proxies": PROXY, **settings}
    return TestClient(create_app(Settings(**values), backend=FakeBackend()), client=(PROXY, 50000))


def share(client: TestClient, address: str, source: str):
    headers = {"X-Forwarded-For": address}
    return client.post("/api/shares", json={"source": source, "chip": "v5p"}, headers=headers)


def lesson(client: TestClient, address: str, steps: int = 30):
    body = {"title": "big", "steps": [{"source": big_source(), "note": ""} for _ in range(steps)]}
    return client.post("/api/lessons", json=body, headers={"X-Forwarded-For": address})


def big_source() -> str:
    return f"# {uuid.uuid4().hex}\n" + "x = 1\n" * (BIG // 6)


def assert_problem(response, status: int) -> None:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["status"] == status


def test_a_share_burst_gets_429_with_retry_after(tmp_path):
    with behind_proxy(tmp_path, store_saves_per_minute=6, store_saves_burst=5) as client:
        statuses = [share(client, "6.6.6.6", big_source()).status_code for _ in range(150)]
        assert statuses == [201] * 5 + [429] * 145
        refused = share(client, "6.6.6.6", big_source())
        assert_problem(refused, 429)
        assert int(refused.headers["retry-after"]) >= 1
        assert share(client, "192.0.2.7", "print(1)\n").status_code == 201  # others are not held up


def test_the_byte_budget_refuses_new_content_but_not_content_already_stored(tmp_path):
    limits = {"store_saves_per_minute": 0, "store_address_bytes_per_hour": 4 * BIG}
    with behind_proxy(tmp_path, **limits) as client:
        same = big_source()
        first = share(client, "6.6.6.6", same)
        assert first.status_code == 201
        again = [share(client, "6.6.6.6", same) for _ in range(10)]
        assert {r.status_code for r in again} == {200}  # content-addressed: the same id, no charge
        assert {r.json()["id"] for r in again} == {first.json()["id"]}
        statuses = [share(client, "6.6.6.6", big_source()).status_code for _ in range(6)]
        assert statuses[:2] == [201, 201] and statuses[-1] == 429
        refused = share(client, "6.6.6.6", big_source())
        assert_problem(refused, 429)
        assert "budget" in refused.json()["detail"] and int(refused.headers["retry-after"]) >= 1


def test_a_lesson_burst_runs_out_of_its_byte_budget(tmp_path):
    with behind_proxy(tmp_path, store_address_bytes_per_hour=8 << 20) as client:
        statuses = [lesson(client, "6.6.6.6").status_code for _ in range(12)]
        # Each lesson is about 2.1 MiB as stored (30 steps of 60 KiB, JSON-escaped): 3 fit in 8 MiB.
        assert statuses == [201] * 3 + [429] * 9, statuses
        assert lesson(client, "192.0.2.7", steps=1).status_code == 201


def test_lesson_saves_are_rate_limited(tmp_path):
    with behind_proxy(tmp_path, store_saves_per_minute=6, store_saves_burst=3) as client:
        statuses = [lesson(client, "6.6.6.6", steps=1).status_code for _ in range(6)]
        assert statuses == [201] * 3 + [429] * 3


def test_the_global_budget_answers_507_and_keeps_links_working(tmp_path):
    limits = {"store_saves_per_minute": 0, "store_address_bytes_per_hour": 0, "store_bytes": 3 * BIG}
    with behind_proxy(tmp_path, **limits) as client:
        kept = big_source()
        ids = [share(client, f"192.0.2.{i}", s).json()["id"] for i, s in enumerate((kept, big_source()))]
        full = share(client, "192.0.2.9", big_source())
        assert_problem(full, 507)
        assert "no room" in full.json()["detail"]
        assert_problem(lesson(client, "192.0.2.9", steps=1), 507)
        assert all(client.get(f"/api/shares/{i}").status_code == 200 for i in ids)
        assert share(client, "192.0.2.9", kept).status_code == 200  # already stored: no new bytes
