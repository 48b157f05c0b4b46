"""The queue's wait estimate (the `queued` event's `eta_seconds`): the time until a run starts, from
the slot time runs take with every slot busy, the runs ahead of it and what the running ones have
left, over the slots; a solo run's time scaled by the slowdown seen when the slots filled; a run in
flight past its expected time makes the others' waits grow."""

from __future__ import annotations

import asyncio
import concurrent.futures
import time

from sandbox.limits import default_limits
from sandbox.protocol import InterpretOptions, Job
from server.clients import Client
from server.queue.engine import InProcessEngine
from server.queue.waits import Sample, WaitModel
from tests.api.fakes import FakeBackend


def job_for(source: str) -> Job:
    return Job(
        id=source, source=source, chip="v5p", mode="auto", options=InterpretOptions(), limits=default_limits()
    )


def estimates(slots: int, running_for: list[float], queued: int, mean: float = 10.0) -> list[float]:
    async def scenario() -> list[float]:
        engine = InProcessEngine(FakeBackend(), slots=slots, queue_size=64, per_client=64, runs_kept=64)
        engine.waits.samples.extend([Sample(mean, float(slots))] * 5)  # runs with every slot busy
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


def test_an_overdue_run_makes_the_waits_behind_it_grow():
    # One slot, a 10 s mean, its run 25 s in: taken as 80 % done (6.25 s left); runs take 25 s now.
    assert estimates(slots=1, running_for=[25.0], queued=2) == [6.3, 31.3]  # a little past 25 s, rounded


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_samples_carry_their_concurrency_and_the_slowdown_is_learned():
    clock = Clock()
    model = WaitModel(slots=2, clock=clock, load=lambda: 0.0, cores=2)  # an idle host
    model.started("solo")
    clock.now += 10
    model.finished("solo")
    assert model.samples[-1] == Sample(10.0, 1.0)
    assert model.expected_seconds(2) == 10.0  # nothing seen with both slots busy; idle: no slowdown
    model.started("a")
    model.started("b")
    clock.now += 15
    model.finished("a")
    model.finished("b")
    assert model.samples[-1] == Sample(15.0, 2.0)
    assert model.slowdown == 1.375  # each run at full occupancy moves it half-way to the 1.5 seen
    assert model.expected_seconds(2) == 15.0  # measured at full occupancy: used as it is
    model.samples.clear()
    model.samples.append(Sample(20.0, 1.0))  # a later kernel, timed alone: scaled by what was learned
    assert model.expected_seconds(2) == 27.5
    assert model.wait(place=3, elapsed=[]) == 27.5  # two places ahead of it, two slots


def test_before_the_slots_fill_a_loaded_host_means_no_gain_from_more_slots():
    def solo_then(load: float) -> float:
        model = WaitModel(slots=2, load=lambda: load, cores=2)
        model.samples.append(Sample(20.0, 1.0))
        return model.wait(place=3, elapsed=[])

    assert solo_then(0.0) == 20.0  # each slot a core: two runs ahead over two slots, 20 s each
    assert solo_then(1.0) == 30.0  # others want half the CPU
    assert solo_then(17.0) == 40.0  # the jobs' cgroup gets one share however many run: as one slot


def test_no_run_is_expected_past_its_limit():
    model = WaitModel(slots=1, load=lambda: 0.0, cores=1)
    model.samples.append(Sample(100.0, 1.0))
    assert model.wait(place=2, elapsed=[10.0], limit=60.0) == 53.0 + 63.0  # 63 s a run, 10 s of it gone
