"""The one path into a job, for every backend: read the job, report `started`, run the session.

`python -I -u -m sandbox.harness EVENTS_FD < job.json` runs it in a fresh interpreter (and sets the
rlimits here); the warm pool's forked child calls `serve()` after its jail has set the limits.
Everything the harness learns goes out as protocol events on EVENTS_FD, never on stdout, which
belongs to the user. `started` is written before JAX or user code is imported, so a child that dies
later is known to have died in user code (or JAX), not in a broken harness.
"""

from __future__ import annotations

import json
import os
import sys
import traceback

from sandbox.harness import process
from sandbox.protocol import ErrorInfo, EventWriter, Job, from_json_dict


def main(argv: list[str]) -> int:
    events_fd = int(argv[1])
    os.set_inheritable(events_fd, False)
    code = serve(events_fd)
    # Leave without the interpreter's exit handlers: after a failed kernel JAX's own atexit clean-up
    # re-raises the failure onto the user's stderr, traceback and all; everything was reported.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def serve(events_fd: int, *, set_limits: bool = True) -> int:
    events = EventWriter(events_fd)
    events.emit("started", pid=os.getpid())
    job = from_json_dict(Job, json.loads(sys.stdin.buffer.read()))
    process.detach_stdin()
    if set_limits:
        process.apply_limits(job.limits, on_chip=process.on_chip(os.environ))
    # Imported only now, so `started` above precedes every JAX import (in a fresh interpreter).
    from sandbox.harness.reference import ReferenceSession
    from sandbox.harness.rerun import RerunSession
    from sandbox.harness.session import Session
    from sandbox.harness.sweep import SweepSession

    # A sweep's reference's job is a reference's job: it never runs the kernel.
    session = (
        ReferenceSession
        if job.role == "reference"
        else RerunSession
        if job.role == "rerun"
        else SweepSession
        if job.sweep is not None
        else Session
    )
    try:
        session(job, events).run()
    except Exception as exc:  # a fault of the harness itself, not of user code: say so, details to the log
        events.emit("log", text="".join(traceback.format_exception(exc)))
        events.emit("error", error=harness_fault(exc), fault="harness")
        return 70
    events.emit("done", peak_rss_bytes=process.peak_rss_bytes())
    return 0


def harness_fault(exc: BaseException) -> ErrorInfo:
    """What a user sees of our own bug: that it is ours, and nothing of our internals."""
    text = (
        f"the playground's harness failed ({type(exc).__name__}); this is a fault of the playground, "
        "not of your kernel, and its details are in the server log"
    )
    return ErrorInfo(
        type="InternalError", message=text, traceback=f"InternalError: {text}\n", phase="harness"
    )
