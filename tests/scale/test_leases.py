"""Nothing lost, nothing doubled: a run whose holder goes silent is taken over after the lease and
run once more; a second loss ends it with an infrastructure message; a superseded holder can write
neither events nor a result; and the Lua dispatch order is exactly `server.queue.fairness`'s."""

from __future__ import annotations

import random
import time

from sandbox.queue import WorkerQueue
from server.queue.fairness import FairQueue
from tests.scale.conftest import LEASE_SECONDS, web, worker
from tests.scale.helpers import SOURCE, sse, wait_done, wait_for


def silent_holder(redis_service, prefix: str, name: str) -> WorkerQueue:
    """A worker that takes a run and then dies (never renews, never finishes)."""
    queue = WorkerQueue(redis_service.url, "interpret", name, prefix=prefix, lease_seconds=LEASE_SECONDS)
    queue.ensure_group()
    queue.heartbeat(slots=1, busy=1, ttl_seconds=60, host="doomed")
    return queue


def test_a_run_whose_worker_died_runs_once_more_elsewhere(redis_service, prefix, tmp_path):
    dead = silent_holder(redis_service, prefix, "dead")
    with web(redis_service, prefix, tmp_path) as a:
        run_id = a.post("/api/runs", json={"source": SOURCE}).json()["id"]
        claim = dead.take(0)
        assert claim is not None and (claim.kind, claim.run_id, claim.attempt) == ("run", run_id, 1)
        with worker(redis_service, prefix) as backend:
            result = wait_done(a, run_id, timeout=LEASE_SECONDS + 8)["result"]
        assert result["status"] == "passed" and len(backend.jobs) == 1
        running = [data for _, kind, data in sse(a, run_id) if kind == "running"]
        assert [r["attempt"] for r in running] == [1, 2]
        # The dead holder, were it to wake, can no longer speak for the run.
        assert not dead.emit(claim, "case", "{}")
        assert not dead.finish(claim, "{}", "passed", failure=False, reusable=True)
        assert [k for _, k, _ in sse(a, run_id)].count("done") == 1
    dead.close()


def test_a_second_loss_ends_the_run_with_an_infrastructure_message(redis_service, prefix, tmp_path):
    first, second = (silent_holder(redis_service, prefix, n) for n in ("first", "second"))
    with web(redis_service, prefix, tmp_path) as a:
        run_id = a.post("/api/runs", json={"source": SOURCE}).json()["id"]
        assert first.take(0).attempt == 1
        time.sleep(LEASE_SECONDS + 0.1)
        assert second.take(0).attempt == 2
        with worker(redis_service, prefix) as backend:
            result = wait_done(a, run_id, timeout=LEASE_SECONDS + 8)["result"]
        assert result["status"] == "error" and backend.jobs == []
        assert result["summary"].startswith("internal error: the runner executing this run was lost twice")
    for queue in (first, second):
        queue.close()


def test_a_live_holder_keeps_its_run_past_the_lease(redis_service, prefix, tmp_path):
    with worker(redis_service, prefix) as backend, web(redis_service, prefix, tmp_path) as a:
        run_id = a.post("/api/runs", json={"source": "# block\n" + SOURCE}).json()["id"]
        wait_for(lambda: backend.jobs, what="the job")
        with worker(redis_service, prefix) as other:
            time.sleep(2 * LEASE_SECONDS)
            backend.release.set()
            assert wait_done(a, run_id)["result"]["status"] == "passed"
            assert other.jobs == []


def test_the_lua_dispatch_order_is_the_fair_queues(redis_service, prefix, tmp_path):
    """Random submissions, cancels and takes: Redis hands runs out exactly as FairQueue would."""
    rng = random.Random(15)
    model: FairQueue[str] = FairQueue()
    clients = [(f"10.0.0.{a}", f"b{b}") for a in range(3) for b in range(3)]
    values = {"queue_size": 1000, "per_client_queue": 1000, "per_address_queue": 1000, "rate_per_minute": 0}
    values["address_rate_per_minute"] = 0
    taker = silent_holder(redis_service, prefix, "taker")
    with web(redis_service, prefix, tmp_path, peer="10.9.9.9", trusted_proxies="10.9.9.9", **values) as a:
        owner: dict[str, tuple[str, str]] = {}
        for step in range(150):
            roll = rng.random()
            if roll < 0.55:
                address, browser = rng.choice(clients)
                headers = {"X-Forwarded-For": address, "X-Playground-Client": browser}
                run = a.post("/api/runs", json={"source": f"s{step}", "fresh": True}, headers=headers).json()
                model.push(address, browser, run["id"])
                owner[run["id"]] = (address, browser)
            elif roll < 0.7 and len(model):
                victim = rng.choice(model.order())
                a.delete(f"/api/runs/{victim}")
                model.remove(*owner[victim], victim)
            else:
                expected = model.take()
                claim = taker.take(0)
                assert (claim.run_id if claim else None) == expected, f"step {step}"
                if claim is not None:  # done at once, so no lease runs out meanwhile
                    assert taker.finish(claim, "{}", "passed", failure=False, reusable=False)
            if rng.random() < 0.1 and len(model):
                probe = rng.choice(model.order())
                assert a.get(f"/api/runs/{probe}").json()["position"] == model.order().index(probe) + 1
    taker.close()
