"""A test double for the sandbox: scripted Executions in milliseconds, no child processes."""

from __future__ import annotations

import threading
import time

import numpy as np

from sandbox.backends import BackendHealth
from sandbox.protocol import (
    Case,
    Event,
    Execution,
    Job,
    new_event,
    to_json_dict,
)
from sandbox.verdict import arrays
from tests.executions import execution

OUTPUT = np.zeros(8, np.float32)


def expected_case() -> dict:
    """What a reference's job reports for the one case of a fake run (the checker compares with it)."""
    case = Case(name="c0", dtype="float32", seed=0, dims={"m": 8})
    return {
        "index": 0,
        "of": 1,
        "case": to_json_dict(case),
        "inputs_digest": "fake",
        "input_shapes": [[8]],
        "outputs": to_json_dict(arrays.encode([("out", OUTPUT)])),
    }


def kernel_outputs() -> dict:
    """What a kernel's job reports for that case: outputs equal to the expected ones."""
    return {
        "index": 0,
        "case": "c0",
        "seconds": 0.01,
        "inputs_digest": "fake",
        "outputs": to_json_dict(arrays.encode([("out", OUTPUT)])),
        "kernels": 1,
    }


def _finished(events: list[Event]) -> Execution:
    return execution(*events, wall_seconds=0.01)


class FakeBackend:
    """Behaviour chosen by the source text: `block` waits for cancel (or release), `crash` raises.

    A run's reference's job (`Job.role == "reference"`) answers at once with the expected outputs
    and is kept in `reference_jobs`; `jobs` holds the kernels' jobs only.
    """

    name = "fake"

    def __init__(self) -> None:
        self.release = threading.Event()
        self.jobs: list[Job] = []
        self.reference_jobs: list[Job] = []
        self.state = BackendHealth(ok=True, detail="fake")

    def run(self, job: Job, on_event, cancel: threading.Event) -> Execution:
        if job.role == "reference":
            self.reference_jobs.append(job)
            return _finished(
                [
                    new_event("started", pid=1),
                    new_event("expected", **expected_case()),
                    new_event("done", peak_rss_bytes=0),
                ]
            )
        self.jobs.append(job)
        if "crash" in job.source:
            raise RuntimeError("backend exploded")
        events = [
            new_event("started", pid=1),
            new_event("imported"),
            new_event("compiled", first_call_seconds=0.01),
        ]
        for e in events:
            on_event(e)
        cancelled = False
        if "block" in job.source:
            while not (cancel.is_set() or self.release.is_set()):
                time.sleep(0.005)
            cancelled = cancel.is_set()
        if "unreadable" in job.source:
            # What a broken or hostile report could become without the watcher's schema check.
            events.append(Event("timing", {"timing": {"kernel": "fast"}}))
        if not cancelled:
            events += [
                new_event("case_outputs", **kernel_outputs()),
                new_event("done", peak_rss_bytes=0),
            ]
            for e in events[3:]:
                on_event(e)
        return execution(
            *events,
            exit_code=None if cancelled else 0,
            signal=9 if cancelled else None,
            cancelled=cancelled,
            wall_seconds=0.01,
            stdout="hello\n",
        )

    def health(self) -> BackendHealth:
        return self.state

    def close(self) -> None:
        self.release.set()


class FloodBackend(FakeBackend):
    """A job whose report floods schema-valid `progress` events: a few of 4 MiB (the issue's attack,
    under the 48 MiB report cap) and thousands of small ones, then passes."""

    BIG_EVENTS, BIG_CHARS, SMALL_EVENTS = 11, 4 << 20, 5000

    def run(self, job: Job, on_event, cancel: threading.Event) -> Execution:
        if job.role == "reference":
            return super().run(job, on_event, cancel)
        big = "x" * self.BIG_CHARS
        for i in range(self.BIG_EVENTS):
            on_event(new_event("progress", phase="run", case=big, seconds=float(i), grid_steps=i))
        for i in range(self.SMALL_EVENTS):
            on_event(new_event("progress", phase="run", case=f"c{i}", seconds=float(i), grid_steps=i))
        return super().run(job, on_event, cancel)
