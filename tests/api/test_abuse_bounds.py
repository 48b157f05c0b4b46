"""Bounds under abuse, in-process queue (#28): cache hits are runs for the rate limits, never push
another client's kept run out and never hand out a run id; a job flooding progress events leaves a
bounded log; kept runs are bounded by bytes."""

from __future__ import annotations

import json
import time
import uuid

from fastapi.testclient import TestClient

from server.app import create_app
from server.settings import Settings
from tests.api.fakes import FakeBackend, FloodBackend
from tests.api.test_runs import SOURCE, sse_events, wait_done

PROXY = "10.0.0.5"


def behind_proxy(backend, tmp_path, **settings) -> TestClient:
    values = {
        "data_dir": tmp_path,
        "slots": 1,
        "queue_size": 64,
        "per_client_queue": 64,
        "per_address_queue": 64,
        "trusted_proxies": PROXY,
        **settings,
    }
    return TestClient(create_app(Settings(**values), backend=backend), client=(PROXY, 50000))


def post(client: TestClient, address: str, browser: str, source: str = SOURCE, **body):
    headers = {"X-Forwarded-For": address, "X-Playground-Client": browser}
    return client.post("/api/runs", json={"source": source, **body}, headers=headers)


def test_cache_hits_count_against_the_browser_rate_limit(tmp_path):
    with behind_proxy(FakeBackend(), tmp_path, rate_per_minute=6, rate_burst=4) as client:
        wait_done(client, post(client, "6.6.6.6", "me").json()["id"])
        statuses = [post(client, "6.6.6.6", "me").status_code for _ in range(20)]
        assert statuses == [201] * 3 + [429] * 17  # the burst of 4, the first run included
        refused = post(client, "6.6.6.6", "me")
        assert refused.headers["content-type"] == "application/problem+json"
        assert int(refused.headers["retry-after"]) >= 1


def test_cache_hits_count_against_the_address_rate_limit_across_minted_ids(tmp_path):
    limits = {"address_rate_per_minute": 6, "address_rate_burst": 3, "rate_per_minute": 0}
    with behind_proxy(FakeBackend(), tmp_path, **limits) as client:
        wait_done(client, post(client, "6.6.6.6", "first").json()["id"])
        statuses = [post(client, "6.6.6.6", uuid.uuid4().hex).status_code for _ in range(10)]
        assert statuses == [201, 201] + [429] * 8
        assert post(client, "192.0.2.9", "someone-else").status_code == 201


def test_a_cache_hit_takes_no_place_in_the_in_flight_caps(tmp_path):
    backend = FakeBackend()
    with behind_proxy(backend, tmp_path, per_client_queue=1, rate_per_minute=0) as client:
        wait_done(client, post(client, "6.6.6.6", "me").json()["id"])
        assert post(client, "6.6.6.6", "me", "block").status_code == 201  # in flight: the cap is full
        assert post(client, "6.6.6.6", "me", "other").status_code == 429
        assert post(client, "6.6.6.6", "me").json()["state"] == "done"  # a hit costs no slot
        backend.release.set()


def test_a_flood_of_cache_hits_never_pushes_out_another_address_run(tmp_path):
    unlimited = {"rate_per_minute": 0, "address_rate_per_minute": 0, "runs_kept": 5}
    with behind_proxy(FakeBackend(), tmp_path, **unlimited) as client:
        victim = post(client, "192.0.2.1", "victim", "victim source").json()["id"]
        wait_done(client, victim)
        wait_done(client, post(client, "6.6.6.6", "flood").json()["id"])
        hits = [post(client, "6.6.6.6", uuid.uuid4().hex).json()["id"] for _ in range(50)]
        assert client.get(f"/api/runs/{victim}").status_code == 200
        assert client.get(f"/api/runs/{hits[-1]}").status_code == 200
        assert client.get(f"/api/runs/{hits[0]}").status_code == 404  # the flood forgets its own
        share = {"source": "victim source", "chip": "v5p", "run": victim}
        assert client.post("/api/shares", json=share).status_code == 201


def test_cached_from_is_an_opaque_reference_that_opens_nothing(tmp_path):
    with behind_proxy(FakeBackend(), tmp_path) as client:
        first = post(client, "192.0.2.1", "victim").json()["id"]
        wait_done(client, first)
        hit = post(client, "6.6.6.6", "attacker").json()["id"]
        reference = wait_done(client, hit)["result"]["cached_from"]
        assert reference and first not in reference
        assert client.get(f"/api/runs/{reference}").status_code == 404
        assert client.delete(f"/api/runs/{reference}").status_code == 404
        assert client.get(f"/api/runs/{reference}/events").status_code == 404
        assert client.get(f"/api/runs/{first}").json()["state"] == "done"


def test_a_progress_flood_leaves_the_kept_log_bounded(tmp_path):
    backend = FloodBackend()
    with behind_proxy(backend, tmp_path) as client:
        run_id = post(client, "192.0.2.1", "me", "# flood\n" + SOURCE).json()["id"]
        result = wait_done(client, run_id, timeout=30.0)["result"]
        assert result["status"] == "passed"
        run = client.app.state.queue.get(run_id)
        kept = sum(len(json.dumps(e)) for e in run.events)
        kinds = [kind for kind, _ in sse_events(client, run_id)]
        # Unbounded, the log held 11 × 4 MiB and 5,000 more events; now its milestones only.
        assert "progress" not in kinds and kinds[-1] == "done"
        assert kept < 16 << 10 and run.bytes < 32 << 10, (kept, run.bytes)


def test_a_running_flood_forwards_clipped_events_up_to_the_per_run_cap(tmp_path):
    backend = FloodBackend()
    with behind_proxy(backend, tmp_path) as client:
        run_id = post(client, "192.0.2.1", "me", "flood block").json()["id"]
        run = client.app.state.queue.get(run_id)
        wait_for(lambda: any(e["kind"] == "compiled" for e in run.events))  # the flood is over
        progress = [e["data"] for e in run.events if e["kind"] == "progress"]
        live = sum(len(json.dumps(e["data"])) for e in run.events)
        assert progress and max(len(p["case"]) for p in progress) <= 200
        assert len(progress) < FloodBackend.SMALL_EVENTS  # the rest were over the cap
        assert live <= (256 << 10) + (16 << 10), live  # the progress share of the per-run cap
        backend.release.set()
        wait_done(client, run_id)


def test_kept_runs_are_bounded_by_bytes_as_well_as_count(tmp_path):
    unlimited = {"rate_per_minute": 0, "address_rate_per_minute": 0, "runs_kept_bytes": 20_000}
    with behind_proxy(FakeBackend(), tmp_path, **unlimited) as client:
        ids = [post(client, "192.0.2.1", "me", f"src {i}").json()["id"] for i in range(30)]
        wait_done(client, ids[-1])
        done = [r for r in client.app.state.queue.runs.values() if r.state == "done"]
        assert 1 < len(done) < 30 and sum(r.bytes for r in done) <= 20_000
        assert client.get(f"/api/runs/{ids[0]}").status_code == 404
        assert client.get(f"/api/runs/{ids[-1]}").status_code == 200


def wait_for(condition, timeout: float = 30.0) -> None:
    end = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.01)


def test_a_follower_holding_a_dropped_progress_id_resumes_after_it(tmp_path):
    with behind_proxy(FloodBackend(), tmp_path) as client:
        run_id = post(client, "192.0.2.1", "me", "# flood\n" + SOURCE).json()["id"]
        wait_done(client, run_id, timeout=30.0)
        run = client.app.state.queue.get(run_id)
        kept_ids = [e["id"] for e in run.events]
        dropped = next(i for i in range(run.next_id) if i not in kept_ids and i > kept_ids[1])
        headers = {"Last-Event-ID": str(dropped)}
        with client.stream("GET", f"/api/runs/{run_id}/events", headers=headers) as response:
            ids = [int(line[4:]) for line in response.iter_lines() if line.startswith("id: ")]
        assert ids == [i for i in kept_ids if i > dropped] and ids[-1] == kept_ids[-1]  # ends with `done`
