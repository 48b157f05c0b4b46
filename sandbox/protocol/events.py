"""The events a job child writes on its event descriptor (one JSON object per line), the writer that
writes them, and `Execution`: the raw facts a backend gathers about one child process.

The child's stdout belongs to the user, so the harness reports only here; `started` comes before
any user code is imported.
"""

from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Literal

from sandbox.protocol.codec import to_json_dict

EventKind = Literal[
    "started",  # harness alive, before user code is imported
    "imported",  # user module imported
    "compiled",  # first case compiled and ran once
    "case",  # one case checked
    "timing",  # timing measured
    "memory",  # memory accounting done
    "outputs",  # scratch-mode outputs summarised
    "lowering",  # TPU lowering check and static chip checks done
    "versions",  # versions and device kind
    "trace",  # kernel trace of the first call (big: folded into the result, not forwarded as progress)
    "error",  # user code (or the harness) raised
    "done",  # harness finished normally
]


@dataclass(frozen=True)
class Event:
    kind: EventKind
    data: dict[str, Any] = field(default_factory=dict)
    t: float = 0.0


@dataclass(frozen=True)
class Execution:
    """Raw facts about one child process, gathered by a backend; `classify` turns them into a RunResult."""

    events: tuple[Event, ...]
    exit_code: int | None
    signal: int | None
    timed_out: bool
    cancelled: bool
    wall_seconds: float
    stdout: str
    stderr: str
    stdout_truncated: bool
    stderr_truncated: bool
    output_limit_hit: bool = False
    memory_limit_hit: bool = False
    cpu_limit_hit: bool = False
    peak_rss_bytes: int = 0
    infra_error: str | None = None
    # Kernel-counted limit hits the hardened backend can see (the local backend leaves them False).
    pids_limit_hit: bool = False
    disk_limit_hit: bool = False


def never_ran(reason: str | None, *, wall_seconds: float = 0.0, cancelled: bool = False) -> Execution:
    """The Execution of a job that never ran (or whose runner was lost): nothing but the reason."""
    return Execution(
        events=(),
        exit_code=None,
        signal=None,
        timed_out=False,
        cancelled=cancelled,
        wall_seconds=wall_seconds,
        stdout="",
        stderr="",
        stdout_truncated=False,
        stderr_truncated=False,
        infra_error=reason,
    )


class EventWriter:
    """Writes protocol events to the event fd; thread-safe, unbuffered, one line per event."""

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
