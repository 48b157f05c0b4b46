"""The kernel trace of a job's first call: recorded around it, sent after the first verdict.

Recording must wrap the first call itself (a kernel's grid-point recorder is given when it is
lowered, and later calls reuse that lowering), but assembling the records into a `Trace` and
writing it to the host is work the first case's verdict does not need: the session sends the case's
outputs first and the trace right after (`send_pending`), or at once when the call fails.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from sandbox.harness.target import Target
from sandbox.harness.trace import capture as trace
from sandbox.protocol import Case, Chip, EventWriter, Trace, chip_info


class FirstCallTrace:
    def __init__(self, capture: trace.Capture | None, events: EventWriter, chip: Chip) -> None:
        self.capture, self.events, self.chip = capture, events, chip
        self._pending: Case | None = None

    @contextlib.contextmanager
    def recording(self, first: bool, case: Case) -> Iterator[None]:
        """Record around the first call of the first case (`first`); a no-op otherwise."""
        capture = self.capture if first else None
        if capture is None:
            yield
            return
        try:
            with capture.recording():
                yield
        except BaseException:
            self._send(capture, case)
            raise
        self._pending = case

    def send_pending(self) -> None:
        """Send the recorded trace, if one waits to be sent."""
        if self._pending is not None and self.capture is not None:
            case, self._pending = self._pending, None
            self._send(self.capture, case)

    def _send(self, capture: trace.Capture, case: Case) -> None:
        self.events.emit("trace", trace=result(capture, case, self.chip))


def install(wanted: bool, target: Target) -> trace.Capture | None:
    """The trace recorder, installed before user code is imported (kernels look the hooks up then)."""
    if not wanted:
        return None
    if not target.interpret:
        return trace.Capture("the kernel trace is recorded in TPU interpret mode only; this run was on a TPU")
    try:
        return trace.install()
    except Exception as exc:  # the trace is an extra: it never stops a run
        return trace.Capture(f"the trace could not be set up: {exc!r}")


def result(capture: trace.Capture, case: Case, chip: Chip) -> Trace:
    try:
        return capture.result(case.name, chip_info(chip).hbm_bandwidth)
    except Exception as exc:  # a fault of ours: say so in the result, keep the run
        return Trace(available=False, reason=f"the trace could not be assembled: {exc!r}")
