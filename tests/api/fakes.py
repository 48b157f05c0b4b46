"""A test double for the sandbox: scripted Executions in milliseconds, no child processes."""

from __future__ import annotations

import threading
import time

from sandbox.backends import BackendHealth
from sandbox.protocol import (
    CaseResult,
    Event,
    Execution,
    Job,
    OutputCheck,
    Tolerance,
    new_event,
    to_json_dict,
)


def passing_case(name: str = "c0") -> dict:
    check = OutputCheck(
        name="out",
        shape=(8,),
        dtype="float32",
        expected_shape=(8,),
        expected_dtype="float32",
        passed=True,
        max_abs_error=0.0,
        max_rel_error=0.0,
        mismatch_count=0,
        total=8,
        first_mismatches=(),
        nan_parity=True,
        inf_parity=True,
    )
    result = CaseResult(
        name=name,
        dtype="float32",
        dims={"m": 8},
        input_shapes=((8,),),
        tolerance=Tolerance(1e-4, 1e-4),
        passed=True,
        outputs=(check,),
        seconds=0.01,
    )
    return {"index": 0, "of": 1, "result": to_json_dict(result)}


class FakeBackend:
    """Behaviour chosen by the source text: `block` waits for cancel (or release), `crash` raises."""

    name = "fake"

    def __init__(self) -> None:
        self.release = threading.Event()
        self.jobs: list[Job] = []
        self.state = BackendHealth(ok=True, detail="fake")

    def run(self, job: Job, on_event, cancel: threading.Event) -> Execution:
        self.jobs.append(job)
        if "crash" in job.source:
            raise RuntimeError("backend exploded")
        events = [new_event("started", pid=1), new_event("compiled", first_call_seconds=0.01)]
        for e in events:
            on_event(e)
        cancelled = False
        if "block" in job.source:
            while not (cancel.is_set() or self.release.is_set()):
                time.sleep(0.005)
            cancelled = cancel.is_set()
        if "unreadable" in job.source:
            # What a broken or hostile report could become without the watcher's schema check.
            events.append(Event("case", {"index": "zero", "result": {"passed": True}}))
        if not cancelled:
            events += [
                new_event("case", **passing_case()),
                new_event("done", peak_rss_bytes=0),
            ]
            for e in events[2:]:
                on_event(e)
        return Execution(
            events=tuple(events),
            exit_code=None if cancelled else 0,
            signal=9 if cancelled else None,
            timed_out=False,
            cancelled=cancelled,
            wall_seconds=0.01,
            stdout="hello\n",
            stderr="",
            stdout_truncated=False,
            stderr_truncated=False,
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
        big = "x" * self.BIG_CHARS
        for i in range(self.BIG_EVENTS):
            on_event(new_event("progress", phase="run", case=big, seconds=float(i), grid_steps=i))
        for i in range(self.SMALL_EVENTS):
            on_event(new_event("progress", phase="run", case=f"c{i}", seconds=float(i), grid_steps=i))
        return super().run(job, on_event, cancel)
