"""How long a queued run will wait: learned from how long runs took in a slot, and at what concurrency.

The first estimator divided the recent mean slot time by the slots, as if a run took as long with
every slot busy as it had alone. Measured with `bench/class_burst.py` (2 slots, tiled_matmul, 30
students at once; this machine at load 18-31): two solo runs took 49.8 s and 31.0 s, the burst's runs
60.5 s (median; most hit the 60 s limit). A burst is slower per run than the solo runs it is estimated
from, for two reasons the old estimator ignored: the slots share the machine's cores (and the server's
own work grows with the room), and the load on a shared host moves within a minute. So:

1. Each finished run is kept with the mean number of runs in flight while it ran (its concurrency),
   and the slot time expected at a concurrency is read from the runs that ran at about that one. Before
   any run has run with every slot busy, it is the solo time times the slowdown seen the last times
   the slots filled (learned over the process's life); before the slots ever filled, times a prior
   from the host's load (`slowdown_prior`: the jobs' cgroup shares the CPU as one group, so on a
   loaded host two slots do the work of one).
2. A run in flight that has already taken longer than expected says the runs take longer now: the
   expected slot time is at least its elapsed time, and it is taken as `OVERDUE_DONE` done (not as
   done, which the old estimator assumed), so the estimates of the runs behind grow while a burst
   runs long.
"""

from __future__ import annotations

import collections
import os
import time
from collections.abc import Callable
from dataclasses import dataclass

WINDOW = 20
DEFAULT_SECONDS = 5.0
# A run in flight past its expected slot time is assumed this far done (it is not done, nor all but).
OVERDUE_DONE = 0.8
# A run's slot time past its job's wall limit: the host's own work around the job (checks, clean-up).
LIMIT_SLACK = 1.05
# How much a new observation of the slowdown at full occupancy moves the learned one.
LEARN = 0.5


@dataclass(frozen=True)
class Sample:
    seconds: float
    concurrency: float


def host_load() -> float:
    """This host's 1-minute load average (the runnable processes, ours included)."""
    return os.getloadavg()[0]


class WaitModel:
    def __init__(
        self,
        slots: int,
        clock: Callable[[], float] = time.time,
        load: Callable[[], float] = host_load,
        cores: int | None = None,
    ) -> None:
        self.slots, self.clock, self.load = slots, clock, load
        self.cores = cores or os.cpu_count() or 1
        self.learned = False
        self.samples: collections.deque[Sample] = collections.deque(maxlen=WINDOW)
        self.busy, self.area, self.last = 0, 0.0, clock()  # runs in flight, ∫ busy dt, when
        self.starts: dict[str, tuple[float, float]] = {}  # run id -> (started at, area then)
        self.slowdown = 1.0

    def started(self, run_id: str) -> None:
        self._advance()
        self.starts[run_id] = (self.last, self.area)
        self.busy += 1

    def finished(self, run_id: str) -> None:
        """The run left its slot: a sample of its slot time at the concurrency it ran at."""
        self._advance()
        began = self.starts.pop(run_id, None)
        self.busy = max(0, self.busy - 1)
        if began is None:
            return
        seconds = max(1e-3, self.last - began[0])
        self.samples.append(Sample(seconds, max(1.0, (self.area - began[1]) / seconds)))
        self._learn_slowdown()

    def mean_seconds(self) -> float:
        """The recent mean slot time, whatever the concurrency (the Retry-After of a full queue)."""
        return sum(s.seconds for s in self.samples) / len(self.samples) if self.samples else DEFAULT_SECONDS

    def expected_seconds(self, concurrency: float) -> float:
        """A run's slot time when `concurrency` runs are in flight."""
        near = [s.seconds for s in self.samples if abs(s.concurrency - concurrency) < 0.5]
        if near:
            return sum(near) / len(near)
        solo = [s.seconds for s in self.samples if s.concurrency < 1.5]
        if solo and concurrency >= self.slots - 0.5:
            slowdown = self.slowdown if self.learned else self.slowdown_prior()
            return slowdown * sum(solo) / len(solo)
        return self.mean_seconds()

    def slowdown_prior(self) -> float:
        """Before the slots have filled once: how much slower a run is with every slot busy, from how
        much of the CPU other processes want. The jobs' cgroup shares the CPU with everything else on
        the host as one group, so on a loaded host more slots run more jobs at once, each slower, and
        do no more work in all (slowdown = slots); on an idle one each slot has a core (1)."""
        others = max(0.0, self.load() - self.busy)
        return 1.0 + (self.slots - 1) * min(1.0, others / self.cores)

    def wait(self, place: int, elapsed: list[float], limit: float | None = None) -> float:
        """Seconds until the run at `place` starts, with runs in flight that have run `elapsed`
        seconds, each ended by the queue at `limit` seconds at most (its job's wall limit); 0 if a
        slot is free for it."""
        if len(elapsed) + place <= self.slots:
            return 0.0
        # Runs take at least as long now as the longest one in flight has run; an overdue run is taken
        # as OVERDUE_DONE done: it will end, but not at once. Nothing runs past its limit.
        expected = max(self.expected_seconds(self.slots), *elapsed, 0.0)
        if limit is not None:
            expected = min(expected, limit * LIMIT_SLACK)
            elapsed = [min(e, expected) for e in elapsed]
        remaining = sum(max(expected - e, e * (1 / OVERDUE_DONE - 1)) for e in elapsed)
        return (remaining + (place - 1) * expected) / self.slots

    def _advance(self) -> None:
        now = self.clock()
        self.area += self.busy * max(0.0, now - self.last)
        self.last = now

    def _learn_slowdown(self) -> None:
        """When both solo runs and runs with every slot busy are in the window, their ratio."""
        solo = [s.seconds for s in self.samples if s.concurrency < 1.5]
        full = [s.seconds for s in self.samples if s.concurrency >= self.slots - 0.5]
        if solo and full and self.slots > 1:
            seen = (sum(full) / len(full)) / (sum(solo) / len(solo))
            start = self.slowdown if self.learned else self.slowdown_prior()
            self.slowdown, self.learned = start + LEARN * (max(1.0, seen) - start), True
