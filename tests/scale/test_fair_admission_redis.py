"""The queue's last places are kept for people with few runs on the Redis queue too (its `SUBMIT`
script, told `server.queue.admission`'s numbers): a few heavy addresses, or two class owners at their
classes' budget, cannot fill the queue, and nothing they queued is dropped; and a sweep leaves one of
its pool's slots free, counting the workers' slots, not the web server's. A web app and a worker
(fake sandbox) on the session's real Redis; small settings."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from fastapi.testclient import TestClient

from tests.api.test_class_live import STEPS, ClassFake
from tests.api.test_classes import REFERENCE, join
from tests.api.test_sweeps import PARAMS, SweepBackend
from tests.api.test_sweeps import SOURCE as TUNABLE
from tests.scale.conftest import web, worker
from tests.scale.helpers import wait_for

PROXY = "10.0.0.5"
# 16 places, the last 4 kept; 6 runs an address; each owner's classes half the queue (8).
SETTINGS = {
    "queue_size": 16,
    "per_address_queue": 6,
    "class_queue": 64,
    "rate_per_minute": 0,
    "address_rate_per_minute": 0,
    "class_rate_per_minute": 0,
    "trusted_proxies": PROXY,
}


@contextlib.contextmanager
def served(redis_service, prefix, tmp_path) -> Iterator[tuple[TestClient, ClassFake]]:
    with (
        worker(redis_service, prefix, ClassFake()) as backend,
        web(redis_service, prefix, tmp_path, peer=PROXY, **SETTINGS) as client,
    ):
        yield client, backend


def post(client: TestClient, address: str, source: str, **body: object):
    headers = {"X-Forwarded-For": address, "X-Playground-Client": "b"}
    return client.post("/api/runs", json={"source": source, **body}, headers=headers)


def start_class(client: TestClient, owner: str) -> dict:
    headers = {"X-Forwarded-For": owner}
    lesson = client.post("/api/lessons", json={"title": "Room", "steps": STEPS}, headers=headers).json()
    created = client.post("/api/classes", json={"lesson": lesson["id"]}, headers=headers)
    assert created.status_code == 201, created.text
    return created.json()


def still_there(client: TestClient, runs: list) -> bool:
    return all(client.get(f"/api/runs/{r.json()['id']}").json()["state"] != "done" for r in runs)


def test_three_addresses_going_for_their_cap_leave_a_place_for_a_fourth(redis_service, prefix, tmp_path):
    with served(redis_service, prefix, tmp_path) as (client, backend):
        answers = [post(client, "6.6.0.6", "block 0.0")]
        wait_for(lambda: backend.jobs, what="the first job")  # one running, the rest wait
        answers += [
            post(client, f"6.6.{a}.6", f"block {a}.{k}") for a in range(3) for k in range(6) if a or k
        ]
        taken = [r for r in answers if r.status_code == 201]
        # Two at the cap (1 running + 11 waiting); the third gets 2 of the 4 kept places, then 503.
        assert len(taken) == 14, [r.status_code for r in answers]
        refused = answers[-1]
        assert refused.status_code == 503 and int(refused.headers["retry-after"]) >= 1
        assert "last 4 places are kept for people with fewer than 2 runs" in refused.json()["detail"]
        newcomer = post(client, "192.0.2.1", "block mine")
        assert newcomer.status_code == 201, newcomer.text
        assert newcomer.json()["position"] <= 4  # its address's turn comes in the first round
        assert still_there(client, taken)  # nothing queued was dropped


def test_addresses_of_one_network_take_at_most_its_share_of_the_kept_places(redis_service, prefix, tmp_path):
    with served(redis_service, prefix, tmp_path) as (client, backend):
        answers = [post(client, "6.6.0.6", "block 0")]
        wait_for(lambda: backend.jobs, what="the first job")  # one running, the rest wait
        answers += [post(client, f"6.6.{a}.6", f"block {a}.{k}") for a in (0, 1) for k in range(6) if a or k]
        assert [r.status_code for r in answers] == [201] * 12  # 11 waiting: one open place left
        sixty_fours = [post(client, f"2001:db8:1:{i:x}::1", f"block v6 {i}") for i in range(6)]
        # The last open place, then kept places until the network holds 4 runs, then no more.
        assert [r.status_code for r in sixty_fours] == [201] * 4 + [503] * 2
        assert "in a network (an IPv4 /24, an IPv6 /48) with fewer than 4" in sixty_fours[-1].json()["detail"]
        assert post(client, "2001:db8:2::1", "block elsewhere").status_code == 201


def test_two_class_owners_at_their_budget_leave_places_for_others(redis_service, prefix, tmp_path):
    with served(redis_service, prefix, tmp_path) as (client, backend):
        rooms = [start_class(client, f"10.1.0.{o}") for o in (1, 2)]
        answers: list[list] = []
        for owner, room in enumerate(rooms):
            students = [join(client, room["code"], f"s{k}") for k in range(9)]
            answers.append([])
            for k, token in enumerate(students):
                body = {"class_token": token, "step": 1}
                answers[-1].append(post(client, f"10.1.0.{owner + 1}", f"block {k}" + REFERENCE, **body))
                if owner == 0 and k == 0:
                    wait_for(lambda: backend.jobs, what="the first job")
        first, second = ([r.status_code for r in rs] for rs in answers)
        assert first == [201] * 8 + [429]  # the first owner's classes at their budget (8)
        assert second == [201] * 5 + [503] * 4  # 7 + 5 waiting: the last 4 places are kept
        assert "kept for people with fewer than 2 runs" in answers[1][-1].json()["detail"]
        assert post(client, "192.0.2.7", "block mine").status_code == 201
        assert still_there(client, [r for rs in answers for r in rs if r.status_code == 201])


def test_a_sweep_is_cut_by_its_pools_worker_slots_leaving_one(redis_service, prefix, tmp_path):
    with (
        worker(redis_service, prefix, SweepBackend(), slots=3),
        web(redis_service, prefix, tmp_path, slots=16) as client,  # the web server's own: not the pool's
    ):
        body = {"source": TUNABLE, "chip": "v5e", "params": PARAMS, "size": {"m": 4096, "k": 4096, "n": 4096}}
        created = client.post("/api/sweeps", json=body)
        assert created.status_code == 201, created.text
        assert created.json()["shards"] == 2
