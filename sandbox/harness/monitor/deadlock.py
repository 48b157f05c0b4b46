"""Deadlock detection: stop when every simulated core waits for something nothing can deliver.

JAX's interpreter (jax 0.12.0.1, `shared_memory.Semaphore.wait`) waits for a semaphore by polling:
while the count is below the value it runs DMAs queued for that semaphore on that core, or sleeps
0.1 s and looks again. A wait nobody will satisfy polls until the job's wall clock kills it. The
hooks note every core that enters and leaves a wait, and every core whose work is done; the watchdog
here looks every `POLL_SECONDS`. The run is stuck when
- at least one core waits, every other simulated core of the launch waits too or has finished, and
- no wait can end by itself: each semaphore's count is below the value waited for, and no DMA that
  would signal it is queued for that core,
and it has been so, with no interpreter callback anywhere, for `STABLE_SECONDS` (a core leaving a
wait, or one we failed to see start, shows up as activity). A core we are not sure has finished
counts as running, so a doubt means no verdict, and the wall clock stays the backstop.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable
from typing import Any

from sandbox.harness.monitor.source import Location

POLL_SECONDS = 0.1
STABLE_SECONDS = 0.25

Core = tuple[int, int]  # (device, core)


@dataclasses.dataclass(frozen=True)
class Wait:
    """A core inside a semaphore or DMA wait."""

    device: int
    core: int
    sem_id: int
    value: int
    dma: bool  # a DMA wait counts bytes; a semaphore wait counts signals
    location: Location | None
    semaphore: Any = dataclasses.field(compare=False, repr=False)  # the interpreter's Semaphore
    global_core: int = 0


@dataclasses.dataclass(frozen=True)
class WaitState:
    wait: Wait
    count: int  # what the semaphore holds for this core now
    pending: int  # DMAs queued to signal it on this core (a waiting core runs these itself)

    @property
    def hopeless(self) -> bool:
        return self.count < self.wait.value and self.pending == 0


@dataclasses.dataclass(frozen=True)
class Deadlock:
    """The verdict: every core's wait, and the cores that had already finished."""

    waits: tuple[WaitState, ...]
    finished: tuple[Core, ...]
    cores: int


class DeadlockError(Exception):
    """Raised into the stuck kernel so that it unwinds like any other interpreter failure."""

    def __init__(self, deadlock: Deadlock) -> None:
        super().__init__("every simulated core is waiting for a semaphore that nothing will signal")
        self.deadlock = deadlock


def stuck(cores: list[Core], finished: set[Core], states: list[WaitState]) -> bool:
    """The rule, over one snapshot (pure)."""
    if not states or not cores:
        return False
    waiting = {(s.wait.device, s.wait.core) for s in states}
    if any(c not in waiting and c not in finished for c in cores):
        return False
    return all(s.hopeless for s in states)


Snapshot = tuple[list[Core], set[Core], list[WaitState], int]  # cores, finished, waits, activity


class Watchdog:
    """A daemon thread: `snapshot()` → the state now; `declare(deadlock)` once it is stuck for good."""

    def __init__(self, snapshot: Callable[[], Snapshot], declare: Callable[[Deadlock], None]) -> None:
        self._snapshot = snapshot
        self._declare = declare
        self._thread = threading.Thread(target=self._run, name="playground-deadlock-watchdog", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        seen: tuple[Any, ...] | None = None
        since = 0.0
        while True:
            time.sleep(POLL_SECONDS)
            try:
                cores, finished, states, activity = self._snapshot()
            except Exception:  # the interpreter's state changed under us: look again later
                seen = None
                continue
            if not stuck(cores, finished, states):
                seen = None
                continue
            key = (
                activity,
                tuple(sorted((s.wait.device, s.wait.core, s.wait.sem_id, s.count) for s in states)),
            )
            now = time.monotonic()
            if key != seen:
                seen, since = key, now
                continue
            if now - since >= STABLE_SECONDS:
                self._declare(Deadlock(tuple(states), tuple(sorted(finished)), len(cores)))
                seen = None
