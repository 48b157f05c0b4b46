"""The run queue outlives whatever a job (or our own code) does: runs always end, slots come back,
and /api/health says when runs cannot complete."""

from __future__ import annotations

import asyncio
import time

from sandbox.backends import BackendHealth
from tests.api.test_runs import SOURCE, wait_done


def health(client) -> tuple[int, dict]:
    response = client.get("/api/health")
    return response.status_code, response.json()


def test_an_unreadable_report_ends_its_run_and_the_next_run_passes(client):
    bad = client.post("/api/runs", json={"source": SOURCE + "# unreadable\n"}).json()["id"]
    result = wait_done(client, bad)["result"]
    assert result["status"] == "error"
    assert result["summary"] == "internal error: the job's report could not be read"
    good = client.post("/api/runs", json={"source": SOURCE}).json()["id"]
    assert wait_done(client, good)["result"]["status"] == "passed"
    assert health(client) == (200, health(client)[1]) and health(client)[1]["status"] == "ok"


def test_a_slot_worker_that_dies_is_replaced(client):
    runner = client.app.state.queue
    original, failures = runner._take, []

    def take_once_broken():
        if not failures:
            failures.append(1)
            raise RuntimeError("a fault of the runner itself")
        return original()

    runner._take = take_once_broken
    client.portal.call(runner._notify)  # wake the worker: it fails in _take and dies
    deadline = time.monotonic() + 5
    while runner.worker_restarts == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    runner._take = original
    status, body = health(client)
    assert status == 200 and body["worker_restarts"] == 1 and body["slots_alive"] == 1
    run_id = client.post("/api/runs", json={"source": SOURCE}).json()["id"]
    assert wait_done(client, run_id)["result"]["status"] == "passed"


def test_health_is_unhealthy_when_a_slot_is_gone(client):
    runner = client.app.state.queue

    async def stop_slot_zero() -> None:
        runner._workers[0].cancel()
        await asyncio.sleep(0)

    client.portal.call(stop_slot_zero)
    status, body = health(client)
    assert status == 503 and body["status"] == "unhealthy"
    assert body["problems"] == ["1 of 1 run slots are not working"]


def test_health_is_unhealthy_when_the_sandbox_cannot_run_jobs(client, backend):
    backend.state = BackendHealth(ok=False, detail="the sandbox pool is not running (starting)", restarts=3)
    status, body = health(client)
    assert status == 503
    assert body["problems"] == ["the sandbox cannot run jobs: the sandbox pool is not running (starting)"]
    assert body["sandbox"]["restarts"] == 3


def test_health_is_degraded_while_a_slot_is_quarantined(client, backend):
    detail = "1 of 2 slots out of service (a job that could not be stopped)"
    backend.state = BackendHealth(ok=True, detail=detail, quarantined_slots=1)
    status, body = health(client)
    assert (status, body["status"], body["problems"]) == (200, "degraded", [detail])


def test_health_is_unhealthy_when_the_queue_does_not_move(client):
    runner = client.app.state.queue
    runner._take = lambda: None  # the dispatcher hands out nothing: runs wait with the slot free
    run_id = client.post("/api/runs", json={"source": SOURCE}).json()["id"]
    runner.runs[run_id].created -= 60
    status, body = health(client)
    assert status == 503 and body["problems"][0].startswith("a queued run has waited 60 s")
