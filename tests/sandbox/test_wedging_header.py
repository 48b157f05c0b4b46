"""Issue 41, item 1: one output header must not wedge every slot.

The attack: a kernel's process writes an output header no array can have (shape `(0, 10**30)`), then
sleeps. The checker raised, nothing stopped the job, its slot went back to the free list while the job
still ran there, and every other user's run failed "slot 0 is not free" until the pool's backstop
ended it, while `/api/health` said ok. Now the header is the user's `error`, the job is stopped at
once, and its slot is free for the next run; a run in flight beside it passes. Should the host
still lose a job, the pool refuses its slot, the host holds that slot out (health says so) and the
run takes another.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from sandbox.backends.hardened import HardenedBackend
from sandbox.jobs.build import make_job
from sandbox.protocol import RunStatus
from tests.backends import suite_backend, suite_backend_name
from tests.sandbox.conftest import run_job_on
from tests.sandbox.hostile_corpus import PASSING_KERNEL

pytestmark = pytest.mark.slow

UID_BASE = 25100  # a block of its own (leased), apart from the session backend's

HEADER = """
import gc, time
from sandbox.protocol.arrays import ArrayBytes

_writer = next(o for o in gc.get_objects() if type(o).__name__ == "EventWriter")

def make_inputs(seed):
    return (np.arange(8, dtype=np.float32),)

def reference(x):
    return x * 2

def kernel(x):
    _writer.emit("case_outputs", index=0, case="scratch", seconds=0.0, inputs_digest="x", kernels=1,
                 outputs=(ArrayBytes(name="out", dtype="float32", shape=SHAPE, data=""),))
    time.sleep(60)
    return x * 2
"""
SHAPES = {"absurd": "(0, 10**30)", "past int64": "(0, 2**70)", "negative": "(-1, 0)"}
# Sleeps at import, so it is surely in flight while the hostile job attacks.
VICTIM = "import time\ntime.sleep(1.0)\n" + PASSING_KERNEL


def _job(source: str):
    return make_job(source, timing_budget_seconds=0.0, trace=False)


@pytest.mark.parametrize("shape", SHAPES.values(), ids=SHAPES.keys())
def test_an_impossible_header_ends_its_own_job_only(shape: str) -> None:
    backend = suite_backend()
    hostile = "import numpy as np\n" + HEADER.replace("SHAPE", shape)
    with ThreadPoolExecutor(max_workers=2) as pool:
        victim = pool.submit(run_job_on, backend, _job(VICTIM))
        time.sleep(0.2)
        started = time.monotonic()
        attacked = pool.submit(run_job_on, backend, _job(hostile)).result()
        took = time.monotonic() - started
        assert victim.result().status == RunStatus.PASSED, victim.result().summary
    assert attacked.status == RunStatus.ERROR, attacked.summary
    assert "could not be checked" in attacked.summary and "impossible shape" in attacked.summary
    assert "internal error" not in attacked.summary
    assert took < 30, f"the job was not stopped at once ({took:.0f} s)"
    health = backend.health()
    assert health.ok and health.quarantined_slots == 0, health.detail
    # Both slots at once: neither may still hold the stopped job.
    with ThreadPoolExecutor(max_workers=2) as pool:
        after = list(pool.map(lambda _: run_job_on(backend, _job(PASSING_KERNEL)), range(2)))
    assert [r.status for r in after] == [RunStatus.PASSED] * 2, [r.summary for r in after]


@pytest.mark.skipif(suite_backend_name() != "hardened", reason="the hardened backend cannot run here")
def test_a_slot_the_pool_still_runs_a_job_in_is_held_out_and_health_says_so() -> None:
    backend = HardenedBackend(slots=2, uid_base=UID_BASE)
    stop = threading.Event()
    try:
        pool = backend.wait_ready(180)
        assert pool is not None
        # A job in slot 0 that the slot table does not know of: what a job the host lost leaves.
        stray = threading.Thread(
            target=backend._run_in, args=(pool, 0, _job("import time\ntime.sleep(50)\n"), print, stop)
        )
        stray.start()
        time.sleep(1.0)
        result = run_job_on(backend, _job(PASSING_KERNEL))
        assert result.status == RunStatus.PASSED, result.summary  # on slot 1, after slot 0 was refused
        health = backend.health()
        assert health.quarantined_slots == 1 and "1 of 2 slots out of service" in health.detail
        assert run_job_on(backend, _job(PASSING_KERNEL)).status == RunStatus.PASSED
    finally:
        stop.set()
        backend.close()
