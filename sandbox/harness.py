"""The in-child harness: `python -I -u -m sandbox.harness REPORT_FD < job.json`, or `serve()`.

It owns the inputs, the reference, the comparison and the timing; user code only supplies the
kernel. Everything it learns goes out as protocol events (JSON lines) on REPORT_FD, never on stdout,
which belongs to the user. `started` is written before JAX or user code is imported, so a child that
dies later is known to have died in user code (or JAX), not in a broken harness.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import threading
import time
from typing import Any

from sandbox.protocol import Event, EventKind, Job, Limits, from_json_dict, to_json_dict


class Reporter:
    """Writes protocol events to the report fd; thread-safe, unbuffered, one line per event."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._lock = threading.Lock()
        self._t0 = time.monotonic()

    def emit(self, kind: EventKind, **data: Any) -> None:
        event = Event(kind=kind, data=to_json_dict(data), t=round(time.monotonic() - self._t0, 6))
        line = (json.dumps(to_json_dict(event), allow_nan=False) + "\n").encode()
        with self._lock:
            view = memoryview(line)
            while view:
                view = view[os.write(self._fd, view) :]


def main(argv: list[str]) -> int:
    report_fd = int(argv[1])
    os.set_inheritable(report_fd, False)
    return serve(report_fd)


def serve(report_fd: int, *, set_limits: bool = True) -> int:
    """Run the job on stdin, reporting on `report_fd`: the one path into a job for every backend.

    `python -m sandbox.harness` calls it in a fresh interpreter (and sets the rlimits here); the warm
    pool's forked child calls it after its jail has set the limits (`set_limits=False`).
    """
    reporter = Reporter(report_fd)
    reporter.emit("started", pid=os.getpid())
    job = from_json_dict(Job, json.loads(sys.stdin.buffer.read()))
    _detach_stdin()
    if set_limits:
        apply_limits(job.limits)
    # Imported only now, so `started` above precedes every JAX import (in a fresh interpreter).
    from sandbox.session import Session

    try:
        Session(job, reporter).run()
    except Exception as exc:  # a fault of the harness itself, not of user code: say so
        from sandbox.usercode import error_info

        reporter.emit("error", error=error_info(exc, "harness"), fault="harness")
        return 70
    reporter.emit("done", peak_rss_bytes=peak_rss_bytes())
    return 0


def apply_limits(limits: Limits) -> None:
    """Kernel-enforced per-process limits, set before any user code (or JAX) is loaded."""
    resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))
    # Soft < hard: SIGXCPU first, which the parent reports as the CPU limit.
    resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds + 5))
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits.scratch_bytes, limits.scratch_bytes))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def peak_rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _detach_stdin() -> None:
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
