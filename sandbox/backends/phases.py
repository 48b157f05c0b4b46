"""A run's phases, timed on the host as its job's events arrive (`RunResult.phases`).

The host's clock, not the job's: a job's process reports its own times relative to its own start,
which says nothing of the fork, the pipes, the checker or a reference's job before it. The marks,
in the order a run reaches them: the queue took it (`begin`), the reference's job is over
(`reference_done`, at once when the entry's expected outputs were kept), then the kernel's job's
`started`, `imported` and `compiled` events, the first verdict (the checker's `case`, or `outputs`
for a run with nothing to check against), and the end of the job.
"""

from __future__ import annotations

import threading
import time
from dataclasses import replace

from sandbox.protocol import Phases, RunResult

# The job's events that mark a phase's end, and the phase each one ends.
MARKS = {"started": "started", "imported": "imported", "compiled": "compiled"}
VERDICTS = frozenset({"case", "outputs"})


class PhaseClock:
    """Notes when each mark was reached (the first time only); `phases()` turns them into durations."""

    def __init__(self, now: float | None = None) -> None:
        self.begin = time.monotonic() if now is None else now
        self._reference_done: float | None = None
        self._at: dict[str, float] = {}
        self._lock = threading.Lock()

    def reference_done(self) -> None:
        self._reference_done = time.monotonic()

    def saw(self, kind: str) -> None:
        """A job event (or the checker's verdict) arrived now."""
        phase = "first_verdict" if kind in VERDICTS else MARKS.get(kind)
        if phase is None:
            return
        with self._lock:
            self._at.setdefault(phase, time.monotonic())

    def phases(self, end: float | None = None, queued: float | None = None) -> Phases:
        end = time.monotonic() if end is None else end
        last = self._reference_done if self._reference_done is not None else self.begin
        durations: dict[str, float | None] = {}
        for phase in ("started", "imported", "compiled", "first_verdict"):
            at = self._at.get(phase)
            durations[phase] = None if at is None or at < last else round(at - last, 6)
            last = at if at is not None and at >= last else last
        verdict = self._at.get("first_verdict")
        return Phases(
            queued=None if queued is None else round(queued, 6),
            reference=round((self._reference_done or self.begin) - self.begin, 6),
            done=round(max(0.0, end - last), 6),
            first_verdict_after=None if verdict is None else round(verdict - self.begin + (queued or 0.0), 6),
            **durations,
        )


def with_phases(result: RunResult, phases: Phases) -> RunResult:
    return replace(result, phases=phases)


def with_queued(result: RunResult, queued_seconds: float) -> RunResult:
    """`result` with the time its run waited in the queue (known only to the queue) added."""
    phases = result.phases
    if phases is None:
        return result
    after = phases.first_verdict_after
    return replace(
        result,
        phases=replace(
            phases,
            queued=round(queued_seconds, 6),
            first_verdict_after=None if after is None else round(after + queued_seconds, 6),
        ),
    )
