"""How far a running kernel got, sent as `progress` events so that a killed job still tells it.

A job that hits the wall clock is killed with SIGKILL: nothing it holds survives. So while user code
runs, a daemon thread writes a `progress` event every `EVERY_SECONDS`: the
phase and case, seconds in the phase, and the interpreter's counts since the phase began (grid steps,
block copies, DMAs, ref and semaphore operations). The parent keeps the last one, and `classify`
turns it into the timeout's explanation.
"""

from __future__ import annotations

import collections
import contextlib
import threading
import time
from collections.abc import Iterator

from sandbox.harness.monitor.core import Monitor
from sandbox.protocol import EventWriter

EVERY_SECONDS = 1.0
COUNTS = ("grid_steps", "block_copies", "dmas", "ref_ops", "semaphore_ops")


class Progress:
    def __init__(self, monitor: Monitor, events: EventWriter) -> None:
        self.monitor = monitor
        self.events = events
        self._lock = threading.Lock()
        self._phase: tuple[str, str, float, collections.Counter[str]] | None = None
        self._thread = threading.Thread(target=self._run, name="playground-progress", daemon=True)
        self._thread.start()

    @contextlib.contextmanager
    def running(self, phase: str, case: str) -> Iterator[None]:
        with self._lock:
            self._phase = (phase, case, time.monotonic(), collections.Counter(self.monitor.counts))
        try:
            yield
        finally:
            with self._lock:
                self._phase = None

    def _run(self) -> None:
        while True:
            time.sleep(EVERY_SECONDS)
            with self._lock:
                phase = self._phase
            if phase is None:
                continue
            name, case, start, before = phase
            counts = {k: self.monitor.counts[k] - before[k] for k in COUNTS}
            self.events.emit(
                "progress", phase=name, case=case, seconds=round(time.monotonic() - start, 3), **counts
            )
