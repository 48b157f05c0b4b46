"""A core's DMA engine in a simulated program (`simulate`): copies ready one latency after their issue,
moved one at a time in the order they became ready.

A DMA's latency (the descriptor's trip and the first bytes' round trip; a write's shorter than a read's
on the v5e, `chips_v5e.V5E_DMA_WRITE_LATENCY_CYCLES`) passes while the engine moves other copies, so
copies in flight overlap their latencies; then the engine moves its bytes. Where every copy has the
same latency this lands each one exactly when "moved in issue order, landed a latency after its last
byte" does; where they differ, a write issued just after a read is ready first and goes first. The
lent v5e ran its copy loops that way: a write waited right after its start, with reads of 64-256 KiB
blocks in flight, took its own latency and bytes a block (477 cycles at 64 KiB), and larger blocks
the two copies' bytes (1,223 cycles at 256 KiB), where moving the read first had cost a read and a
write and the write's latency a block (+21 ... +29 %, `bench/tpu/v5e/` part 14).

Copies are placed on the engine lazily, when a wait needs one: a copy issued later is ready no
earlier than the core's clock plus the shortest latency, and a core waiting issues nothing, so every
copy ready before the one waited for is known by then.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Iterable
from dataclasses import dataclass, field

NOT_LANDED = float("inf")  # a semaphore entry's landing time until its copy is placed on the engine
# Ready times equal to the picosecond are a tie, taken in issue order: clock sums differ in their last bits,
# and a tie that rounding broke one way in one loop iteration and the other way in the next would make
# identical iterations differ (and a steady run, `steady`, extrapolate the wrong one).
TIE = 1e-12  # seconds


def _order(ready: float, number: int) -> tuple[int, int]:
    return round(ready / TIE), number


@dataclass(slots=True)
class Copy:
    """One copy not yet placed: when it is ready, how long the engine moves it, and the semaphore
    entries ([landing time, bytes]) it signals, each with the seconds after its last byte."""

    ready: float
    seconds: float
    signals: tuple[tuple[list[float], float], ...]


@dataclass
class Engine:
    free: float = 0.0  # when the engine has moved every copy placed so far
    # the copies not yet placed, a heap by (ready, issue number): the first issued first among equals
    queue: list[tuple[tuple[int, int], Copy]] = field(default_factory=list)
    issued: itertools.count[int] = field(default_factory=itertools.count)
    unplaced: dict[int, Copy] = field(default_factory=dict)  # by id() of each semaphore entry it signals

    def issue(self, ready: float, seconds: float, signals: Iterable[tuple[list[float], float]]) -> None:
        entries = tuple(signals)
        copy = Copy(ready, seconds, entries)
        for entry, _ in entries:
            entry[0] = NOT_LANDED
            self.unplaced[id(entry)] = copy
        heapq.heappush(self.queue, (_order(ready, next(self.issued)), copy))

    def settle(self, entry: list[float]) -> None:
        """Place copies until `entry` has landed."""
        while entry[0] == NOT_LANDED and self.queue:
            self._place_next()

    def settle_all(self) -> None:
        while self.queue:
            self._place_next()

    def _place_next(self) -> None:
        """The copy ready first (the first issued among equals) moves once the engine is free."""
        _, copy = heapq.heappop(self.queue)
        self.free = max(copy.ready, self.free) + copy.seconds
        for signalled, after in copy.signals:
            signalled[0] = self.free + after
            del self.unplaced[id(signalled)]

    def relative(self, now: float) -> list[float]:
        """The engine as a step starting at `now` sees it (`steady`): how far ahead it is, and each copy
        not yet placed (ready times in the past still order the queue, so they are kept as they are)."""
        if not self.queue:
            return [max(self.free - now, 0.0)]
        found = [self.free - now]
        for _, copy in sorted(self.queue, key=lambda queued: queued[0]):
            found += [copy.ready - now, copy.seconds]
        return found

    def shift(self, seconds: float) -> None:
        """Every time `seconds` later (a steady run skipped, `steady`)."""
        self.free += seconds
        for n, ((_, number), copy) in enumerate(self.queue):
            copy.ready += seconds
            self.queue[n] = (_order(copy.ready, number), copy)
        heapq.heapify(self.queue)
