"""A run's reference's job beside its kernel's job, in a slot free right now (`sandbox.backends.pairing`).

A scripted backend records when each job ran; the assertions are on what a queue would see: the
two jobs overlap only when a second slot was free, a run never waits while holding a slot (a full
pool finishes), a failing reference stops the kernel's job, and outputs that come before the
reference is ready are still judged.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

from sandbox.backends.execute import execute
from sandbox.backends.pairing import RunSlots
from sandbox.jobs.build import make_job
from sandbox.protocol import Execution, Job, RunStatus, new_event
from tests.api.fakes import expected_case, kernel_outputs
from tests.executions import execution

SOURCE = "def kernel(x): ...\ndef reference(x): ...\n"


class Timed:
    """Reference's jobs take `ref_seconds`, kernel's jobs `kernel_seconds`; each job's span is kept."""

    name = "timed"

    def __init__(
        self, ref_seconds: float = 0.2, kernel_seconds: float = 0.2, ref_fails: bool = False
    ) -> None:
        self.ref_seconds, self.kernel_seconds, self.ref_fails = ref_seconds, kernel_seconds, ref_fails
        self.spans: dict[str, list[tuple[float, float]]] = {"reference": [], "kernel": []}
        self.kernel_cancelled = False
        self.lock = threading.Lock()

    def run(self, job: Job, on_event, cancel: threading.Event) -> Execution:
        start = time.monotonic()
        if job.role == "reference":
            time.sleep(self.ref_seconds)
            body = [new_event("error", error={"type": "E", "message": "bad", "traceback": ""})]
            events = body if self.ref_fails else [new_event("expected", **expected_case())]
        else:
            events = [new_event("started", pid=1), new_event("case_outputs", **kernel_outputs())]
            for event in events:  # the outputs come before the reference is ready
                on_event(event)
            end = start + self.kernel_seconds
            while time.monotonic() < end and not cancel.is_set():
                time.sleep(0.005)
            self.kernel_cancelled = cancel.is_set()
        with self.lock:
            self.spans[job.role].append((start, time.monotonic()))
        return _execution([*events, new_event("done", peak_rss_bytes=0)], cancelled=self.kernel_cancelled)

    def health(self): ...

    def close(self) -> None: ...


def _execution(events: list, cancelled: bool = False) -> Execution:
    return execution(*events, cancelled=cancelled, wall_seconds=0.1)


def run(backend: Timed, slots: RunSlots | None, forwarded: list | None = None):
    sink = (lambda kind, data: forwarded.append(kind)) if forwarded is not None else (lambda kind, data: None)
    return execute(backend, make_job(SOURCE), threading.Event(), sink, slots)


def overlap(backend: Timed) -> bool:
    (ref,), (kernel,) = backend.spans["reference"], backend.spans["kernel"]
    return ref[0] < kernel[1] and kernel[0] < ref[1]


def test_with_a_free_slot_the_two_jobs_run_at_once_and_the_run_passes():
    backend, slots = Timed(), RunSlots(2)
    forwarded: list[str] = []
    finished = run(backend, slots, forwarded)
    assert finished.result.status is RunStatus.PASSED, finished.result.summary
    assert overlap(backend) and slots.free == 2
    assert "case" in forwarded  # the early outputs were judged once the reference was ready


def test_without_a_free_slot_they_run_one_after_the_other():
    for slots in (RunSlots(1), None):
        backend = Timed()
        assert run(backend, slots).result.status is RunStatus.PASSED
        assert not overlap(backend)


def test_a_queued_run_keeps_the_free_slot_for_itself():
    backend = Timed()
    assert run(backend, RunSlots(2, waiting=lambda: True)).result.status is RunStatus.PASSED
    assert not overlap(backend)


def test_a_full_pool_of_pairing_runs_finishes():
    backend, slots = Timed(0.05, 0.05), RunSlots(2)
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda _: run(backend, slots).result.status, range(12)))
    assert results == [RunStatus.PASSED] * 12 and slots.free == 2


def test_a_run_waits_for_a_lent_slot_only_until_it_is_given_back():
    slots = RunSlots(1)
    assert slots.hold(threading.Event()) and not slots.borrow()
    cancelled = threading.Event()
    cancelled.set()
    assert not slots.hold(cancelled)  # a cancelled run stops waiting
    threading.Timer(0.05, slots.give).start()
    assert slots.hold(threading.Event())


def test_a_failing_reference_stops_the_kernels_job_and_is_the_result():
    backend = Timed(ref_seconds=0.05, kernel_seconds=5.0, ref_fails=True)
    started = time.monotonic()
    finished = run(backend, RunSlots(2))
    assert finished.result.status is RunStatus.ERROR
    assert backend.kernel_cancelled and time.monotonic() - started < 2.0
