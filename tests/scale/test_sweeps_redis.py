"""Sweeps on the Redis queue and real workers' slots, beside other users' runs (real Redis, no mocks).

- Two sweeps do not take every slot of a pool: a long run (a shard) starts only while the pool's live
  slots but one hold long runs (`server.queue.long_runs`, the `TAKE` script); nothing of it outlives them.
- A sweep's follower goes on after the web server's connections to Redis dropped (a failover, a
  restart): before, the sweep ended "internal error" at once while its shards went on running.
- A web server that stops cancels the shards of its sweeps not done: nobody could read or cancel
  them afterwards, and they held workers' slots for minutes.
"""

from __future__ import annotations

import redis

from tests.api.test_sweeps import PARAMS, SOURCE, SweepBackend, wait_done
from tests.scale.conftest import web, worker
from tests.scale.helpers import wait_for

HELD = {"source": SOURCE + "# block\n", "params": PARAMS, "size": {"m": 4096}}
VICTIM = {"source": "x = 1\n"}


def runs(client: redis.Redis, prefix: str) -> dict[str, str]:
    """Every run's state in this test's keys."""
    keys = [k for k in client.scan_iter(f"{prefix}run:*") if k.count(":") == 1 + prefix.count(":")]
    return {k: client.hget(k, "state") or "" for k in keys}


def test_two_sweeps_leave_a_workers_slot_for_another_users_run(redis_service, prefix, tmp_path):
    backend = SweepBackend()
    store = redis.Redis.from_url(redis_service.url, decode_responses=True)
    with worker(redis_service, prefix, backend, slots=2), web(redis_service, prefix, tmp_path) as client:
        sweeps = [
            client.post("/api/sweeps", json=HELD, headers={"X-Playground-Client": f"tuner{i}"})
            for i in range(2)
        ]
        assert [s.json()["shards"] for s in sweeps] == [1, 1]
        wait_for(lambda: backend.jobs, what="the first shard")
        run = client.post("/api/runs", json=VICTIM, headers={"X-Playground-Client": "other"})
        assert run.status_code == 201, run.text
        state = wait_for(lambda: (s := client.get(run.json()["url"]).json())["state"] == "done" and s)
        assert state["result"]["status"] == "ran"
        assert sum(1 for j in backend.jobs if j.sweep is not None) == 1  # the second sweep waits its turn
        assert store.scard(f"{prefix}long:interpret") == 1
        backend.release.set()
        for sweep in sweeps:
            assert wait_done(client, sweep.json()["id"])["result"]["status"] == "passed"
        assert not store.exists(f"{prefix}long:interpret")
        assert set(runs(store, prefix).values()) == {"done"}


def test_a_sweep_goes_on_after_its_connections_to_redis_dropped(redis_service, prefix, tmp_path):
    backend = SweepBackend()
    store = redis.Redis.from_url(redis_service.url, decode_responses=True)
    with worker(redis_service, prefix, backend, slots=2), web(redis_service, prefix, tmp_path) as client:
        sweep = client.post("/api/sweeps", json=HELD).json()
        wait_for(lambda: backend.jobs, what="the shard")
        assert store.client_kill_filter(_type="normal", skipme=True) > 0
        assert client.get(sweep["url"]).json()["state"] != "done"
        backend.release.set()
        result = wait_done(client, sweep["id"], timeout=20)["result"]
        assert result["status"] == "passed", result["summary"]
        assert len(result["sweep"]["configs"]) == 27


def test_a_stopping_web_server_cancels_its_sweeps_shards(redis_service, prefix, tmp_path):
    backend = SweepBackend()
    store = redis.Redis.from_url(redis_service.url, decode_responses=True)
    with worker(redis_service, prefix, backend, slots=3):
        with web(redis_service, prefix, tmp_path) as client:
            assert client.post("/api/sweeps", json=HELD).json()["shards"] == 2
            wait_for(lambda: len(backend.jobs) == 2, what="both shards")
        assert wait_for(lambda: set(runs(store, prefix).values()) == {"done"}, what="the shards cancelled")
        assert not store.exists(f"{prefix}long:interpret")
        with web(redis_service, prefix, tmp_path) as client:
            run = client.post("/api/runs", json=VICTIM)
            state = wait_for(lambda: (s := client.get(run.json()["url"]).json())["state"] == "done" and s)
            assert state["result"]["status"] == "ran"
