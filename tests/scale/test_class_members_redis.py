"""A class member's address on the Redis queue (its `SUBMIT` script): its own runs and its class runs
count against one cap, a room behind one school address still gets the class's budget, and a removed
student's runs are cancelled at once, every one, with the teacher's budget figure counting runs in
flight. A web app and a worker (fake sandbox) on the session's real Redis; small settings (issue 41,
fourth round; the in-process queue: `tests/api/test_heldout_fourth_round.py`)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from fastapi.testclient import TestClient

from tests.api.test_class_live import STEPS, ClassFake
from tests.scale.conftest import web, worker
from tests.scale.helpers import wait_done, wait_for

PROXY = "10.0.0.5"
TEACHER, ATTACKER, SCHOOL, OTHER = "198.51.100.7", "203.0.113.66", "198.51.100.50", "192.0.2.9"
# 16 places (12 open), 4 runs an address, 2 a browser, each owner's classes 8 (half the queue).
SETTINGS = {
    "queue_size": 16,
    "per_address_queue": 4,
    "per_client_queue": 2,
    "class_queue": 16,
    "class_students": 40,
    "rate_per_minute": 0,
    "address_rate_per_minute": 0,
    "class_rate_per_minute": 0,
    "class_joins_per_minute": 0,
    "trusted_proxies": PROXY,
}


@contextlib.contextmanager
def served(redis_service, prefix, tmp_path, **values) -> Iterator[tuple[TestClient, ClassFake]]:
    with (
        worker(redis_service, prefix, ClassFake()) as backend,
        web(redis_service, prefix, tmp_path, peer=PROXY, **{**SETTINGS, **values}) as client,
    ):
        yield client, backend


def at(address: str, browser: str = "b") -> dict:
    return {"X-Forwarded-For": address, "X-Playground-Client": browser}


def start_class(client: TestClient) -> dict:
    lesson = client.post("/api/lessons", json={"title": "Room", "steps": STEPS}, headers=at(TEACHER)).json()
    created = client.post("/api/classes", json={"lesson": lesson["id"]}, headers=at(TEACHER))
    assert created.status_code == 201, created.text
    return created.json()


def join(client: TestClient, room: dict, address: str, name: str) -> dict:
    joined = client.post(f"/api/classes/{room['code']}/join", json={"name": name}, headers=at(address, name))
    assert joined.status_code == 201, joined.text
    return joined.json()


def class_run(client: TestClient, address: str, student: dict, source: str, step: int = 1):
    body = {"source": source, "chip": "v5e", "class_token": student["student_token"], "step": step}
    return client.post("/api/runs", json=body, headers=at(address))


def teacher(room: dict) -> dict:
    return {**at(TEACHER), "Authorization": f"Bearer {room['teacher_token']}"}


def test_a_member_address_holds_one_cap_for_its_own_and_its_class_runs(redis_service, prefix, tmp_path):
    with served(redis_service, prefix, tmp_path) as (client, backend):
        room = start_class(client)
        own = [
            client.post("/api/runs", json={"source": f"block {i}"}, headers=at(ATTACKER, f"b{i}"))
            for i in range(4)
        ]
        wait_for(lambda: backend.jobs, what="the first job")
        students = [join(client, room, ATTACKER, f"x{k}") for k in range(4)]
        runs = [
            class_run(client, ATTACKER, s, f"block {k}.{i}") for k, s in enumerate(students) for i in range(2)
        ]
        assert [r.status_code for r in own] == [201] * 4
        assert [r.status_code for r in runs] == [201] * 4 + [429] * 4, [r.text for r in runs]
        assert "your network address already has 8 runs" in runs[-1].json()["detail"]
        real = join(client, room, SCHOOL, "real")
        assert class_run(client, SCHOOL, real, "block real").status_code == 201
        assert client.post("/api/runs", json={"source": "block other"}, headers=at(OTHER)).status_code == 201
        progress = client.get(f"/api/classes/{room['id']}/progress", headers=teacher(room)).json()
        assert progress["budget"] == {"in_flight": 5, "limit": 8}


def test_class_runs_first_then_the_members_own_runs_are_refused(redis_service, prefix, tmp_path):
    with served(redis_service, prefix, tmp_path) as (client, _):
        room = start_class(client)
        students = [join(client, room, ATTACKER, f"x{k}") for k in range(4)]
        runs = [
            class_run(client, ATTACKER, s, f"block {k}.{i}") for k, s in enumerate(students) for i in range(2)
        ]
        assert [r.status_code for r in runs] == [201] * 8
        own = client.post("/api/runs", json={"source": "block mine"}, headers=at(ATTACKER))
        assert own.status_code == 429 and "your network address already has 4 runs" in own.json()["detail"]


def test_a_school_address_that_is_a_member_gets_the_class_budget(redis_service, prefix, tmp_path):
    with served(redis_service, prefix, tmp_path, queue_size=64, per_address_queue=24, class_queue=64) as (
        client,
        _,
    ):
        room = start_class(client)
        raised = client.put(
            f"/api/classes/{room['id']}/joins", json={"open": True, "per_address": 40}, headers=teacher(room)
        )
        assert raised.status_code == 200, raised.text
        students = [join(client, room, SCHOOL, f"s{i}") for i in range(30)]
        assert [class_run(client, SCHOOL, s, f"block {i}").status_code for i, s in enumerate(students)] == [
            201
        ] * 30


def test_removing_a_student_cancels_every_run_of_theirs(redis_service, prefix, tmp_path):
    with served(redis_service, prefix, tmp_path, per_client_queue=4) as (client, backend):
        room = start_class(client)
        x = join(client, room, ATTACKER, "x")
        runs = [class_run(client, ATTACKER, x, f"block {i}", step=1 + i // 2) for i in range(4)]
        assert [r.status_code for r in runs] == [201] * 4
        wait_for(lambda: backend.jobs, what="the first job")
        progress = client.get(f"/api/classes/{room['id']}/progress", headers=teacher(room)).json()
        assert progress["budget"] == {"in_flight": 4, "limit": 8}  # runs, not the student's 2 cells
        assert (
            client.delete(
                f"/api/classes/{room['id']}/students/{x['student_id']}", headers=teacher(room)
            ).status_code
            == 204
        )
        results = [wait_done(client, r.json()["id"])["result"]["status"] for r in runs]
        assert results == ["cancelled"] * 4
        progress = client.get(f"/api/classes/{room['id']}/progress", headers=teacher(room)).json()
        assert progress["budget"]["in_flight"] == 0
