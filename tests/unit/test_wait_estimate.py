"""The queue's wait estimate (the `queued` event's `eta_seconds`): the time until a run starts, from
the recent mean run time, the runs ahead of it and what the running ones have left, over the slots."""

from __future__ import annotations

import asyncio
import concurrent.futures
import time

from sandbox.limits import default_limits
from sandbox.protocol import InterpretOptions, Job
from server.clients import Client
from server.queue.engine import InProcessEngine
from tests.api.fakes import FakeBackend


def job_for(source: str) -> Job:
    return Job(
        id=source, source=source, chip="v5p", mode="auto", options=InterpretOptions(), limits=default_limits()
    )


def estimates(slots: int, running_for: list[float], queued: int, mean: float = 10.0) -> list[float]:
    async def scenario() -> list[float]:
        engine = InProcessEngine(FakeBackend(), slots=slots, queue_size=64, per_client=64, runs_kept=64)
        engine._recent_seconds.extend([mean] * 5)
        for k, seconds in enumerate(running_for):  # runs already on a slot, started `seconds` ago
            run = engine.enqueue(job_for(f"r{k}"), Client(f"10.0.0.{k}"))
            engine.queue.take()
            run.state, run.started = "running", time.time() - seconds
            engine.running.add(run.id)
        runs = [engine.enqueue(job_for(f"q{k}"), Client(f"10.1.0.{k}")) for k in range(queued)]
        return [[e for e in r.events if e["kind"] == "queued"][-1]["data"]["eta_seconds"] for r in runs]

    # In a thread of its own: asyncio.run refuses a thread whose loop another test left running.
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, scenario()).result()


def test_a_free_slot_means_no_wait():
    assert estimates(slots=2, running_for=[], queued=2) == [0.0, 0.0]


def test_the_wait_grows_with_the_place_and_counts_what_runs_have_left():
    # One slot, its run 4 s into a 10 s mean: the first waits 6 s, each further one 10 s more.
    assert estimates(slots=1, running_for=[4.0], queued=3) == [6.0, 16.0, 26.0]


def test_slots_share_the_work_ahead():
    assert estimates(slots=2, running_for=[5.0, 5.0], queued=3) == [5.0, 10.0, 15.0]
