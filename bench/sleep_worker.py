"""A runner worker whose jobs only sleep: the distribution layer alone, with no sandbox cost.

Usage (started by bench/scale.py): python bench/sleep_worker.py --redis URL --prefix P --seconds S [--slots N]
Every job emits the events a real one does (started, compiled, one case, done) and takes S seconds.
"""

from __future__ import annotations

import argparse
import signal
import threading
import time

from sandbox.backends import BackendHealth
from sandbox.protocol import Execution, Job, new_event
from sandbox.queue import WorkerQueue
from sandbox.worker import Worker, WorkerOptions


class SleepBackend:
    name = "sleep"

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def run(self, job: Job, on_event, cancel: threading.Event) -> Execution:
        t0 = time.monotonic()
        on_event(new_event("started", pid=1))
        cancel.wait(self.seconds)
        on_event(new_event("done", peak_rss_bytes=0))
        return Execution(
            events=(new_event("started", pid=1), new_event("done", peak_rss_bytes=0)),
            exit_code=0,
            signal=None,
            timed_out=False,
            cancelled=cancel.is_set(),
            wall_seconds=time.monotonic() - t0,
            stdout="",
            stderr="",
            stdout_truncated=False,
            stderr_truncated=False,
        )

    def health(self) -> BackendHealth:
        return BackendHealth(ok=True, detail="sleeps")

    def close(self) -> None:
        pass


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--redis", required=True)
    parser.add_argument("--prefix", required=True)
    parser.add_argument("--seconds", type=float, required=True)
    parser.add_argument("--slots", type=int, default=1)
    parser.add_argument("--name", default="")
    args = parser.parse_args()
    queue = WorkerQueue(args.redis, "interpret", args.name or f"sleep-{time.time_ns()}", prefix=args.prefix)
    backend = SleepBackend(args.seconds)
    options = WorkerOptions(slots=args.slots, heartbeat_seconds=1.0, poll_seconds=0.25, idle_seconds=1.0)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    Worker(queue, [backend] * args.slots, options).serve(stop)


if __name__ == "__main__":
    main()
