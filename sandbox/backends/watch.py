"""Watching one job from the outside: its stdin, stdout, stderr and event pipes, and its deadline.

Shared by every backend. One non-blocking `select` loop writes the job to stdin, reads output with
caps and protocol events as they come, and enforces the wall clock, cancellation and the output
flood limit by calling the backend's `kill`. After the job exits it drains for at most
`DRAIN_SECONDS`, so a grandchild that keeps a pipe open can never make the backend wait past the
deadline (never wait for pipe EOF).
"""

from __future__ import annotations

import contextlib
import logging
import os
import selectors
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sandbox.backends.base import EventSink, StopJob
from sandbox.protocol import Event, Execution, Limits
from sandbox.protocol.codec import Budget
from sandbox.protocol.reading import (
    MAX_EVENTS,
    MAX_REPORT_BYTES,
    REPORT_VALUES,
    SMALL_EVENT_BYTES,
    ReportError,
    line_limit,
    read_event,
)

log = logging.getLogger(__name__)

DRAIN_SECONDS = 0.5
POLL_SECONDS = 0.05
KILL_SECONDS = 5.0


class Report:
    """The job's event pipe, read strictly: every line must be an event of a known kind that fits its
    schema, and the whole report stays under its caps (`sandbox.protocol.reading`); the first
    violation stops the reading. Past `deadline` (the job's wall clock, monotonic) no line is read:
    the host's reading cannot keep a job past its limit."""

    def __init__(self, on_event: EventSink, deadline: float | None = None) -> None:
        self.on_event = on_event
        self.deadline = deadline
        self.events: list[Event] = []
        self.error: str | None = None
        self.overdue = False  # lines were left unread at the deadline: the job ran out of time
        self._buffer = bytearray()
        self._total = 0
        self._values = Budget(REPORT_VALUES)

    def feed(self, chunk: bytes) -> None:
        if self.error is not None or self.overdue:
            return
        self._total += len(chunk)
        if self._total > MAX_REPORT_BYTES:
            self.error = f"the job wrote more than {MAX_REPORT_BYTES:,} bytes of events"
            return
        self._buffer += chunk
        while self.error is None and (end := self._buffer.find(b"\n")) >= 0:
            if self.deadline is not None and time.monotonic() > self.deadline:
                self.overdue = True
                del self._buffer[:]
                return
            line = bytes(self._buffer[:end])
            del self._buffer[: end + 1]
            self._line(line)
        if self.error is None and len(self._buffer) > SMALL_EVENT_BYTES:  # a long line, still coming
            named, limit = line_limit(self._buffer)
            if len(self._buffer) > limit:
                what = f"a {named} event" if named else "an event"
                self.error = f"the job wrote {what} of more than {limit:,} bytes"

    def _line(self, line: bytes) -> None:
        if len(self.events) >= MAX_EVENTS:
            self.error = f"the job wrote more than {MAX_EVENTS:,} events"
            return
        try:
            event = read_event(line, self._values)
        except ReportError as exc:
            self.error = f"event {len(self.events) + 1}: {exc}"
            return
        self.events.append(event)
        try:
            self.on_event(event)
        except StopJob as exc:
            self.error = str(exc)
        except Exception as exc:  # the host's fault or a job's lie: either way the job is stopped now
            log.exception("an event of a job could not be handled")
            self.error = f"event {len(self.events)} could not be handled ({type(exc).__name__})"


class Capped:
    """Keeps the first `keep` bytes of a stream and counts the rest."""

    def __init__(self, keep: int) -> None:
        self.keep = keep
        self.data = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.keep - len(self.data)
        if room > 0:
            self.data += chunk[:room]

    @property
    def truncated(self) -> bool:
        return self.total > self.keep

    def text(self) -> str:
        return self.data.decode("utf-8", errors="replace")


@dataclass
class Outcome:
    events: list[Event]
    stdout: Capped
    stderr: Capped
    timed_out: bool
    cancelled: bool
    flood: bool
    wall_seconds: float
    unkillable: bool = False  # kill() did not end the job within KILL_SECONDS: the backend must act
    report_error: str | None = None  # the job's events could not be read: it was stopped

    def execution(self, **process_facts: Any) -> Execution:
        """The Execution of a watched job: what the streams showed, plus the backend's process facts."""
        return Execution(
            events=tuple(self.events),
            timed_out=self.timed_out,
            cancelled=self.cancelled,
            wall_seconds=self.wall_seconds,
            stdout=self.stdout.text(),
            stderr=self.stderr.text(),
            stdout_truncated=self.stdout.truncated,
            stderr_truncated=self.stderr.truncated,
            output_limit_hit=self.flood,
            report_error=self.report_error,
            **process_facts,
        )


@dataclass(frozen=True)
class Pipes:
    """The parent's ends: job bytes go into `stdin`; the other three are read."""

    stdin: int
    stdout: int
    stderr: int
    events: int


class Watch:
    def __init__(
        self, limits: Limits, pipes: Pipes, stdin_data: bytes, on_event: EventSink, cancel: threading.Event
    ) -> None:
        self.limits, self.pipes, self.on_event, self.cancel = limits, pipes, on_event, cancel
        self.pending_stdin = memoryview(stdin_data)
        self.stdout, self.stderr = Capped(limits.output_bytes), Capped(limits.output_bytes)
        self.report = Report(on_event)

    def run(
        self, exited: Callable[[], bool], kill: Callable[[], None], wait_dead: Callable[[float], bool]
    ) -> Outcome:
        """Watch until `exited()` (plus the drain); `kill()` stops the job, `wait_dead(s)` waits for it."""
        started = time.monotonic()
        deadline = started + self.limits.wall_seconds
        self.report.deadline = deadline
        timed_out = cancelled = flood = unkillable = unreadable = False
        exited_at: float | None = None
        with selectors.DefaultSelector() as sel:
            for fd in (self.pipes.stdout, self.pipes.stderr, self.pipes.events, self.pipes.stdin):
                os.set_blocking(fd, False)
            for fd in (self.pipes.stdout, self.pipes.stderr, self.pipes.events):
                sel.register(fd, selectors.EVENT_READ)
            sel.register(self.pipes.stdin, selectors.EVENT_WRITE)
            while sel.get_map():
                for key, _ in sel.select(POLL_SECONDS):
                    self._io(sel, key.fd)
                now = time.monotonic()
                if exited_at is None and exited():
                    exited_at = now
                if exited_at is not None and now - exited_at > DRAIN_SECONDS:
                    break
                if exited_at is None:
                    if now > deadline:
                        timed_out = True
                    elif self.cancel.is_set():
                        cancelled = True
                    elif self.stdout.total + self.stderr.total > self.limits.output_kill_bytes:
                        flood = True
                    elif self.report.error is not None:
                        unreadable = True
                    if timed_out or cancelled or flood or unreadable:
                        kill()
                        unkillable = not wait_dead(KILL_SECONDS)
                        exited_at = now
                        if unkillable:
                            break
            if self.pipes.stdin in sel.get_map():
                sel.unregister(self.pipes.stdin)
                os.close(self.pipes.stdin)
        timed_out = timed_out or self.report.overdue  # its last lines came too late to be read
        wall = time.monotonic() - started
        return Outcome(
            self.report.events,
            self.stdout,
            self.stderr,
            timed_out,
            cancelled,
            flood,
            wall,
            unkillable,
            self.report.error,
        )

    def _io(self, sel: selectors.BaseSelector, fd: int) -> None:
        if fd == self.pipes.stdin:
            self._write_stdin(sel)
            return
        try:
            chunk = os.read(fd, 65536)
        except BlockingIOError:
            return
        if not chunk:
            sel.unregister(fd)
            return
        if fd == self.pipes.events:
            self.report.feed(chunk)
        elif fd == self.pipes.stdout:
            self.stdout.add(chunk)
        else:
            self.stderr.add(chunk)

    def _write_stdin(self, sel: selectors.BaseSelector) -> None:
        try:
            written = os.write(self.pipes.stdin, self.pending_stdin)
            self.pending_stdin = self.pending_stdin[written:]
        except BlockingIOError:
            return
        except BrokenPipeError:
            self.pending_stdin = self.pending_stdin[:0]
        if not self.pending_stdin:
            sel.unregister(self.pipes.stdin)
            os.close(self.pipes.stdin)


def close_quietly(*fds: int) -> None:
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)
