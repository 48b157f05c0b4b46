"""Fair under abuse: an address that mints a browser id per request cannot take the queue, nor can a
few addresses at their cap together (the queue's last places are kept), and a class behind a trusted
proxy is told apart by the forwarded address."""

from __future__ import annotations

import uuid

from fastapi.testclient import TestClient

from server.app import create_app
from server.settings import Settings

PROXY = "10.0.0.5"


def client_behind_proxy(backend, tmp_path, **settings) -> TestClient:
    values = {
        "data_dir": tmp_path,
        "slots": 1,
        "queue_size": 64,
        "trusted_proxies": PROXY,
        "rate_per_minute": 0,
        **settings,
    }
    return TestClient(create_app(Settings(**values), backend=backend), client=(PROXY, 50000))


def post(client: TestClient, address: str, browser: str, source: str = "block"):
    headers = {"X-Forwarded-For": address, "X-Playground-Client": browser}
    return client.post("/api/runs", json={"source": source}, headers=headers)


def test_rotating_browser_ids_cannot_push_others_into_503(backend, tmp_path):
    with client_behind_proxy(backend, tmp_path, per_address_queue=24, address_rate_per_minute=0) as client:
        statuses = [post(client, "6.6.6.6", uuid.uuid4().hex).status_code for _ in range(100)]
        assert statuses.count(201) == 24 and set(statuses[24:]) == {429}
        refused = post(client, "6.6.6.6", uuid.uuid4().hex)
        assert "your network address already has 24 runs" in refused.json()["detail"]
        # Thirty students, each at their own address (and network: a /24's addresses share 4 of the
        # kept places, `test_admission`), all get in, and ahead of the greedy backlog.
        students = [post(client, f"192.0.{i}.2", "student").json() for i in range(1, 31)]
        assert all(s["state"] == "queued" for s in students)
        assert students[0]["position"] <= 3
        backend.release.set()


def test_an_address_rate_limit_holds_across_minted_ids(backend, tmp_path):
    with client_behind_proxy(backend, tmp_path, address_rate_per_minute=6, address_rate_burst=3) as client:
        # Distinct sources: an identical one would be served from the cache, which costs nothing.
        statuses = [post(client, "6.6.6.6", uuid.uuid4().hex, f"x{i}").status_code for i in range(5)]
        assert statuses == [201, 201, 201, 429, 429]
        assert post(client, "192.0.2.9", "someone-else", "x").status_code == 201
        backend.release.set()


def test_the_forwarded_header_is_ignored_unless_the_peer_is_a_trusted_proxy(backend, tmp_path):
    values = {
        "data_dir": tmp_path,
        "slots": 1,
        "queue_size": 64,
        "per_address_queue": 2,
        "rate_per_minute": 0,
    }
    direct = TestClient(create_app(Settings(**values), backend=backend), client=("203.0.113.9", 1))
    with direct as client:
        codes = [post(client, f"192.0.2.{i}", f"b{i}").status_code for i in range(3)]
        assert codes == [201, 201, 429]  # one address, whatever it claims to forward
        backend.release.set()


def test_a_few_addresses_at_their_cap_cannot_push_a_newcomer_into_503(backend, tmp_path):
    """Three addresses each at the cap (6 of 16 places) filled the queue; its last 4 are kept for
    people with few runs, so a newcomer still gets in, ahead of the backlog."""
    settings = {"queue_size": 16, "per_address_queue": 6, "address_rate_per_minute": 0}
    with client_behind_proxy(backend, tmp_path, **settings) as client:
        codes = [post(client, f"6.6.{a}.6", "greedy").status_code for a in range(3) for _ in range(6)]
        assert codes.count(201) == 14, codes  # two at the cap, the third stopped at the kept places
        refused = post(client, "6.6.2.6", "greedy")
        assert refused.status_code == 503 and int(refused.headers["retry-after"]) >= 1
        assert "last 4 places are kept for people with fewer than 2 runs" in refused.json()["detail"]
        newcomer = post(client, "192.0.2.1", "student")
        assert newcomer.status_code == 201 and newcomer.json()["position"] <= 4
        backend.release.set()
