"""Executions as a backend reports them, built by hand for the tests that feed the classifier, the
checker or the queue without running a job."""

from __future__ import annotations

import dataclasses
from typing import Any

from sandbox.protocol import Event, Execution, new_event

STARTED = new_event("started", pid=1)
DONE = new_event("done", peak_rss_bytes=0)


def execution(*events: Event, **facts: Any) -> Execution:
    """A job that sent exactly `events` and exited 0 with no output; `facts` override any field."""
    base = Execution(
        events=tuple(events),
        exit_code=0,
        signal=None,
        timed_out=False,
        cancelled=False,
        wall_seconds=1.0,
        stdout="",
        stderr="",
        stdout_truncated=False,
        stderr_truncated=False,
    )
    return dataclasses.replace(base, **facts)


def finished(*events: Event, **facts: Any) -> Execution:
    """A job that started, sent `events` and said it was done."""
    return execution(STARTED, *events, DONE, **facts)
