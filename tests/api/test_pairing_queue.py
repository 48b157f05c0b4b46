"""The in-process queue pairs a run's two jobs only when one of its slots is free.

A scripted backend (`tests/unit/test_pairing.py`'s) records when each job ran. On a queue of two
slots a lone run's reference's job runs beside its kernel's job; on a queue of one it cannot, and
a run never waits for a slot it holds: every run of a burst ends.
"""

from __future__ import annotations

from tests.api.conftest import make_client
from tests.api.test_runs import wait_done
from tests.unit.test_pairing import SOURCE, Timed, overlap


def run_once(client) -> dict:
    run_id = client.post("/api/runs", json={"source": SOURCE}).json()["id"]
    return wait_done(client, run_id, timeout=10)["result"]


def test_a_lone_run_on_two_slots_runs_its_reference_beside_its_kernel(tmp_path):
    backend = Timed(0.2, 0.2)
    with make_client(backend, tmp_path, slots=2) as client:
        assert run_once(client)["status"] == "passed"
    assert overlap(backend)


def test_on_one_slot_the_two_jobs_take_turns(tmp_path):
    backend = Timed(0.1, 0.1)
    with make_client(backend, tmp_path, slots=1) as client:
        assert run_once(client)["status"] == "passed"
    assert not overlap(backend)


def test_a_burst_on_two_slots_all_ends(tmp_path):
    backend = Timed(0.05, 0.05)
    with make_client(backend, tmp_path, slots=2, queue_size=16) as client:
        ids = [client.post("/api/runs", json={"source": f"{SOURCE}# {i}\n"}).json()["id"] for i in range(8)]
        statuses = [wait_done(client, run_id, timeout=20)["result"]["status"] for run_id in ids]
    assert statuses == ["passed"] * 8
