"""Sweeps beside other users' runs in the in-process queue: long runs never take every slot.

A shard holds its slot for minutes (60 s + 10 s a config). One sweep takes as many shards as slots
but one (`server.sweeps.shard_count`); two sweeps took both of two slots, and a stranger's run waited
for them (`server.queue.long_runs`). The fake's shards are held until released.
"""

from __future__ import annotations

import time

from tests.api.conftest import make_client
from tests.api.test_sweeps import PARAMS, SOURCE, SweepBackend, wait_done

HELD = {"source": SOURCE + "# block\n", "params": PARAMS, "size": {"m": 4096}}


def wait_run(client, url: str, timeout: float = 10.0) -> dict:
    end = time.monotonic() + timeout
    while (state := client.get(url).json())["state"] != "done":
        assert time.monotonic() < end, state
        time.sleep(0.01)
    return state


def test_two_sweeps_leave_a_slot_for_another_users_run(tmp_path):
    backend = SweepBackend()
    with make_client(backend, tmp_path, slots=2, queue_size=16, per_client_queue=8) as client:
        try:
            sweeps = [
                client.post("/api/sweeps", json=HELD, headers={"X-Playground-Client": f"tuner{i}"})
                for i in range(2)
            ]
            assert [s.status_code for s in sweeps] == [201, 201], sweeps[-1].text
            run = client.post(
                "/api/runs", json={"source": "x = 1\n"}, headers={"X-Playground-Client": "other"}
            )
            assert run.status_code == 201, run.text
            assert wait_run(client, run.json()["url"])["result"]["status"] == "ran"
            assert len(backend.jobs) == 2  # one shard and the run: the second sweep waits its turn
            health = client.get("/api/health").json()
            assert not health.get("problems"), health
        finally:
            backend.release.set()
        for sweep in sweeps:  # the waiting one ran once the first freed its slot
            assert wait_done(client, sweep.json()["id"])["result"]["status"] == "passed"


def test_a_sweep_still_runs_on_a_single_slot(tmp_path):
    backend = SweepBackend()
    with make_client(backend, tmp_path, slots=1, queue_size=16, per_client_queue=8) as client:
        body = {**HELD, "source": SOURCE}
        sweep = client.post("/api/sweeps", json=body)
        assert sweep.status_code == 201, sweep.text
        assert wait_done(client, sweep.json()["id"])["result"]["status"] == "passed"
