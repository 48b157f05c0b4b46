"""The Redis run queue end to end in one process: web apps (TestClient) and workers (threads, fake
sandbox) against a real Redis. Every behaviour of the in-process queue holds, across web servers."""

from __future__ import annotations

import dataclasses
import time

from sandbox.backends import BackendHealth
from server.queue.cache import cache_ref
from tests.api.fakes import FakeBackend
from tests.scale.conftest import HEARTBEAT_SECONDS, web, webs, worker
from tests.scale.helpers import SOURCE, sse, wait_done, wait_for


def test_a_run_passes_through_a_worker_and_any_server_reads_it(redis_service, prefix, tmp_path):
    with worker(redis_service, prefix) as backend, webs(redis_service, prefix, tmp_path) as (a, b):
        created = a.post("/api/runs", json={"source": SOURCE, "entry": "tiled_matmul", "chip": "v6e"})
        assert created.status_code == 201, created.text
        run_id = created.json()["id"]
        state = wait_done(b, run_id)
        assert state["result"]["status"] == "passed" and state["result"]["chip"] == "v6e"
        assert [j.source for j in backend.jobs] == [SOURCE]
        events = sse(b, run_id)
        kinds = [k for _, k, _ in events]
        assert kinds[0] == "running" and kinds[-1] == "done"
        assert kinds.index("started") < kinds.index("compiled") < kinds.index("case")
        assert all(event_id for event_id, _, _ in events)
        assert events[-1][2]["status"] == "passed"


def test_events_resume_after_last_event_id_on_another_server(redis_service, prefix, tmp_path):
    with worker(redis_service, prefix), webs(redis_service, prefix, tmp_path) as (a, b):
        run_id = a.post("/api/runs", json={"source": SOURCE}).json()["id"]
        wait_done(a, run_id)
        every = sse(a, run_id)
        resumed = sse(b, run_id, last_id=every[2][0])
        assert resumed == every[3:]


def test_an_event_id_past_the_end_of_a_finished_run_replays_it_to_done(redis_service, prefix, tmp_path):
    with worker(redis_service, prefix), webs(redis_service, prefix, tmp_path) as (a, b):
        run_id = a.post("/api/runs", json={"source": SOURCE}).json()["id"]
        wait_done(a, run_id)
        every = sse(a, run_id)
        started = time.monotonic()
        replayed = sse(b, run_id, last_id="99999999999999-0")
        assert [k for _, k, _ in replayed] == [k for _, k, _ in every] and replayed[-1][1] == "done"
        assert time.monotonic() - started < 5  # at once, not after a keepalive wait


def test_cancel_works_from_any_server_queued_or_running(redis_service, prefix, tmp_path):
    with worker(redis_service, prefix) as backend, webs(redis_service, prefix, tmp_path) as (a, b):
        running = a.post("/api/runs", json={"source": "block running"}).json()["id"]
        wait_for(lambda: a.get(f"/api/runs/{running}").json()["state"] == "running", what="running")
        queued = a.post("/api/runs", json={"source": "block queued"}).json()
        assert queued["position"] == 1
        assert b.delete(f"/api/runs/{queued['id']}").status_code == 200
        assert wait_done(a, queued["id"])["result"]["status"] == "cancelled"
        assert b.delete(f"/api/runs/{running}").status_code == 200
        assert wait_done(b, running)["result"]["status"] == "cancelled"
        assert [j.source for j in backend.jobs] == ["block running"]


def test_round_robin_holds_across_servers(redis_service, prefix, tmp_path):
    with worker(redis_service, prefix) as backend, webs(redis_service, prefix, tmp_path) as (a, b):
        greedy, polite = {"X-Playground-Client": "greedy"}, {"X-Playground-Client": "polite"}
        first = a.post("/api/runs", json={"source": "block first"}, headers=greedy).json()["id"]
        wait_for(lambda: backend.jobs, what="the first job")
        mine = [
            (a if i % 2 else b).post("/api/runs", json={"source": f"block g{i}"}, headers=greedy).json()
            for i in range(3)
        ]
        theirs = b.post("/api/runs", json={"source": "block p"}, headers=polite).json()
        assert [r["position"] for r in mine] == [1, 2, 3]
        assert a.get(f"/api/runs/{theirs['id']}").json()["position"] == 2
        backend.release.set()
        for run in [first, *(r["id"] for r in mine), theirs["id"]]:
            wait_done(a, run)
        assert [j.source for j in backend.jobs] == [
            "block first",
            "block g0",
            "block p",
            "block g1",
            "block g2",
        ]


def test_caps_and_rate_limits_hold_across_servers(redis_service, prefix, tmp_path):
    values = {"per_client_queue": 2, "rate_per_minute": 6, "rate_burst": 3}
    with worker(redis_service, prefix), webs(redis_service, prefix, tmp_path, **values) as (a, b):
        me = {"X-Playground-Client": "me"}
        assert a.post("/api/runs", json={"source": "block 1"}, headers=me).status_code == 201
        assert b.post("/api/runs", json={"source": "block 2"}, headers=me).status_code == 201
        busy = a.post("/api/runs", json={"source": "block 3"}, headers=me)
        assert busy.status_code == 429 and "you already have 2 runs" in busy.json()["detail"]
        other = {"X-Playground-Client": "other"}
        codes = [
            (a, b)[i % 2].post("/api/runs", json={"source": f"x{i}"}, headers=other).status_code
            for i in range(2)
        ]
        assert codes == [201, 201]
        wait_for(
            lambda: b.post("/api/runs", json={"source": "x9"}, headers=other).status_code == 429, 5, "429"
        )
        limited = a.post("/api/runs", json={"source": "x10"}, headers=other)
        assert limited.status_code == 429 and int(limited.headers["retry-after"]) >= 1


def test_queue_full_is_503_with_retry_after(redis_service, prefix, tmp_path):
    with worker(redis_service, prefix) as backend, web(redis_service, prefix, tmp_path, queue_size=1) as a:
        a.post("/api/runs", json={"source": "block a"}, headers={"X-Playground-Client": "a"})
        wait_for(lambda: backend.jobs, what="the first job")
        assert (
            a.post("/api/runs", json={"source": "block b"}, headers={"X-Playground-Client": "b"}).status_code
            == 201
        )
        full = a.post("/api/runs", json={"source": "block c"}, headers={"X-Playground-Client": "c"})
        assert full.status_code == 503 and int(full.headers["retry-after"]) >= 1
        assert full.headers["content-type"] == "application/problem+json"


def test_a_pool_without_a_live_worker_refuses_runs_with_503(redis_service, prefix, tmp_path):
    with web(redis_service, prefix, tmp_path) as a:
        refused = a.post("/api/runs", json={"source": SOURCE})
        assert (
            refused.status_code == 503 and "no runner is serving pool 'interpret'" in refused.json()["detail"]
        )
        assert a.get("/api/health").status_code == 503


def test_an_identical_run_is_served_from_the_shared_cache(redis_service, prefix, tmp_path):
    with worker(redis_service, prefix) as backend, webs(redis_service, prefix, tmp_path) as (a, b):
        first = a.post("/api/runs", json={"source": SOURCE, "chip": "v5e"}).json()["id"]
        wait_done(a, first)
        again = b.post("/api/runs", json={"source": SOURCE, "chip": "v5e"}).json()
        assert again["state"] == "done"
        result = a.get(f"/api/runs/{again['id']}").json()["result"]
        assert result["cached_from"] == cache_ref(first) and result["cached_at"] > 0
        fresh = b.post("/api/runs", json={"source": SOURCE, "chip": "v5e", "fresh": True}).json()["id"]
        assert wait_done(a, fresh)["result"]["cached_from"] is None
        assert len(backend.jobs) == 2


def test_health_and_metrics_show_pools_workers_and_runs(redis_service, prefix, tmp_path):
    with worker(redis_service, prefix, slots=2), web(redis_service, prefix, tmp_path) as a:
        wait_done(a, a.post("/api/runs", json={"source": SOURCE}).json()["id"])
        # Busy slots come from the worker's heartbeats: the one after the run says it is idle again.
        deadline = time.monotonic() + 5 * HEARTBEAT_SECONDS + 5
        while (health := a.get("/api/health").json())["pools"][0]["busy"] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert health["status"] == "ok" and health["queue"] == "redis"
        assert health["pools"] == [
            {
                "name": "interpret",
                "workers": 1,
                "slots": 2,
                "busy": 0,
                "queued": 0,
                "oldest_wait_seconds": 0.0,
            }
        ]
        text = a.get("/metrics").text
        assert 'playground_runs_total{pool="interpret",status="passed"} 1.0' in text
        assert 'playground_workers_live{pool="interpret"} 1.0' in text
        assert 'playground_run_latency_seconds_count{pool="interpret"} 1.0' in text
        # Each phase the worker measured, counted in Redis (the queue wait is the `wait` histogram's).
        for phase in ("queued", "started", "imported", "compiled", "first_verdict", "done"):
            assert f'playground_run_phase_seconds_count{{phase="{phase}",pool="interpret"}} 1.0' in text, (
                phase
            )
        assert 'playground_first_verdict_seconds_count{pool="interpret"} 1.0' in text


def test_health_tells_of_a_workers_slots_out_of_service(redis_service, prefix, tmp_path):
    # Issue 41: a pool whose slots a stuck job holds said "ok"; the worker's heartbeat now says how many.
    backend = FakeBackend()
    with worker(redis_service, prefix, backend, slots=2), web(redis_service, prefix, tmp_path) as a:
        for out, status in ((1, "degraded"), (2, "unhealthy")):
            backend.state = BackendHealth(ok=True, detail="held out", quarantined_slots=out)
            deadline = time.monotonic() + 5 * HEARTBEAT_SECONDS + 5
            while (health := a.get("/api/health").json())["status"] != status and time.monotonic() < deadline:
                time.sleep(0.05)
            said = (
                f"{out} of 2 slots of pool 'interpret' are out of service (a job that could not be stopped)"
            )
            assert (health["status"], health["problems"]) == (status, [said])
            assert health["sandbox"]["quarantined_slots"] == out


def test_runs_of_a_pool_left_without_workers_end_instead_of_waiting_forever(redis_service, prefix, tmp_path):
    from sandbox.queue import WorkerQueue

    ghost = WorkerQueue(redis_service.url, "interpret", "ghost", prefix=prefix)
    with web(redis_service, prefix, tmp_path, worker_grace_seconds=1.0) as a:
        # Live for half a second from here, then silent. (Sent before the server started, it had
        # sometimes expired by the time a loaded machine had the server up: the run was refused.)
        ghost.heartbeat(slots=1, busy=0, ttl_seconds=0.5, host="gone")
        answer = a.post("/api/runs", json={"source": SOURCE})
        assert answer.status_code == 201, answer.text
        run_id = answer.json()["id"]
        result = wait_done(a, run_id, timeout=10)["result"]
        assert result["status"] == "error"
        assert "no runner for pool 'interpret' is live" in result["summary"]
    ghost.close()


def test_queue_metrics_start_empty_in_process(tmp_path):
    from fastapi.testclient import TestClient

    from server.app import create_app
    from server.settings import Settings
    from tests.api.fakes import FakeBackend

    with TestClient(create_app(Settings(data_dir=tmp_path, slots=1), backend=FakeBackend())) as client:
        text = client.get("/metrics").text
        assert 'playground_queue_depth{pool="local"} 0.0' in text
        run_id = client.post("/api/runs", json={"source": SOURCE}).json()["id"]
        phases = wait_done(client, run_id)["result"]["phases"]
        assert phases["queued"] >= 0 and phases["first_verdict_after"] >= phases["compiled"] > 0
        text = client.get("/metrics").text
        assert 'playground_runs_total{pool="local",status="passed"} 1.0' in text
        for phase in ("queued", "started", "imported", "compiled", "first_verdict", "done"):
            assert f'playground_run_phase_seconds_count{{phase="{phase}",pool="local"}} 1.0' in text, phase
    assert time.time() > 0


def test_a_runtime_a_worker_cannot_start_is_unavailable_on_every_server(redis_service, prefix, tmp_path):
    backend = FakeBackend()
    reason = "its sandbox could not start on this server (the operator's log says why)"
    backend.state = dataclasses.replace(backend.state, unavailable=(("0.11.2", reason),))
    with worker(redis_service, prefix, backend), webs(redis_service, prefix, tmp_path) as (a, b):
        for server in (a, b):
            health = wait_for(
                lambda s=server: s.get("/api/health").json()["pools"] and s.get("/api/health").json()
            )
            assert health["status"] == "degraded", health
            assert f"jax 0.11.2 cannot run jobs: {reason}" in health["problems"]
            listed = {r["name"]: r for r in server.get("/api/runtimes").json()}
            assert listed["0.11.2"]["available"] is False and listed["0.11.2"]["unavailable_reason"] == reason
