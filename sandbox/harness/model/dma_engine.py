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


READ, WRITE = 0, 1  # a shared engine's lanes: copies into VMEM (and remote, on-chip), copies out to HBM


def _order(ready: float, number: int) -> tuple[int, int]:
    return round(ready / TIE), number


@dataclass(slots=True)
class Copy:
    """One copy not yet placed: when it is ready, how long the engine moves it, and the semaphore
    entries ([landing time, bytes]) it signals, each with the seconds after its last byte."""

    ready: float
    seconds: float
    signals: tuple[tuple[list[float], float], ...]


def _unplaced(
    ready: float, seconds: float, signals: Iterable[tuple[list[float], float]], unplaced: dict[int, Copy]
) -> Copy:
    """A copy not yet placed, its semaphore entries marked not landed and found by id until it is."""
    copy = Copy(ready, seconds, tuple(signals))
    for entry, _ in copy.signals:
        entry[0] = NOT_LANDED
        unplaced[id(entry)] = copy
    return copy


@dataclass
class Engine:
    free: float = 0.0  # when the engine has moved every copy placed so far
    # the copies not yet placed, a heap by (ready, issue number): the first issued first among equals
    queue: list[tuple[tuple[int, int], Copy]] = field(default_factory=list)
    issued: itertools.count[int] = field(default_factory=itertools.count)
    unplaced: dict[int, Copy] = field(default_factory=dict)  # by id() of each semaphore entry it signals

    def issue(
        self, ready: float, seconds: float, signals: Iterable[tuple[list[float], float]], lane: int = READ
    ) -> None:
        """A copy ready at `ready` (one queue: reads and writes alike, whatever the lane)."""
        copy = _unplaced(ready, seconds, signals, self.unplaced)
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


@dataclass
class SharedEngine:
    """A DMA engine whose reads and writes move side by side (`Engine`'s interface): each lane moves its
    copies one at a time in the order they became ready, a copy's `seconds` at its lane's own rate; while
    both lanes move, each at its share of it (`shares`, by lane), and a copy that starts moving while
    the other lane moves first pays `switch` seconds of its own moving.

    The lent v5e moved reads alone at about 750 GB/s and writes alone at about 650, but a copy's reads
    and writes together at 656 between them (`bench/tpu/v5e/` parts 14 and 16): neither one queue
    (reads and writes in turn: the writes alone then had to be as slow as beside reads) nor two
    independent ones (1,400 together). And not an even split: one write in flight beside a stream of
    reads took what it takes alone (64 KiB: 477 cycles, alone 474), one read beside a stream of writes
    far longer (64 KiB beside 64 KiB writes: 928 cycles, alone 659; part 19), so the writes keep most of
    their rate and the reads little. Placed lazily like `Engine`: a wait settles the lanes up to the
    time its copy lands, and every copy that moves before then was issued before the wait.
    """

    shares: tuple[float, float]  # by lane: the share of its own rate each keeps while both move
    switch: float = 0.0
    free: float = 0.0  # how far the lanes have been followed: nothing moves before it that is not placed
    queues: tuple[list[tuple[tuple[int, int], Copy]], ...] = field(default_factory=lambda: ([], []))
    moving: list[Copy | None] = field(default_factory=lambda: [None, None])
    left: list[float] = field(default_factory=lambda: [0.0, 0.0])  # seconds to go at the lane's own rate
    issued: itertools.count[int] = field(default_factory=itertools.count)
    unplaced: dict[int, Copy] = field(default_factory=dict)  # by id() of each entry, until it lands

    def issue(
        self, ready: float, seconds: float, signals: Iterable[tuple[list[float], float]], lane: int = READ
    ) -> None:
        copy = _unplaced(ready, seconds, signals, self.unplaced)
        heapq.heappush(self.queues[lane], (_order(ready, next(self.issued)), copy))

    def settle(self, entry: list[float]) -> None:
        while entry[0] == NOT_LANDED and self._advance():
            pass

    def settle_all(self) -> None:
        while self._advance():
            pass

    def _advance(self) -> bool:
        """Follow the lanes to the next time a copy lands or one becomes ready; False once idle for good."""
        now = self.free
        for lane, queue in enumerate(self.queues):
            if self.moving[lane] is None and queue and queue[0][0][0] <= round(now / TIE):
                _, copy = heapq.heappop(queue)
                self.moving[lane] = copy
                self.left[lane] = copy.seconds + (self.switch if self.moving[1 - lane] is not None else 0.0)
        active = [lane for lane in (READ, WRITE) if self.moving[lane] is not None]
        waiting = [
            queue[0][1].ready for lane, queue in enumerate(self.queues) if queue and lane not in active
        ]
        if not active:
            if not waiting:
                return False
            self.free = max(now, min(waiting))
            return True
        rates = self.shares if len(active) == 2 else (1.0, 1.0)
        step = min(
            [self.left[lane] / rates[lane] for lane in active] + [max(at - now, 0.0) for at in waiting]
        )
        self.free = now + step
        for lane in active:
            self.left[lane] -= step * rates[lane]
            if self.left[lane] <= TIE:
                self._land(lane)
        return True

    def _land(self, lane: int) -> None:
        copy = self.moving[lane]
        assert copy is not None
        for signalled, after in copy.signals:
            signalled[0] = self.free + after
            del self.unplaced[id(signalled)]
        self.moving[lane], self.left[lane] = None, 0.0

    def relative(self, now: float) -> list[float]:
        """The lanes as a step starting at `now` sees them (`steady`)."""
        if not any(self.queues) and self.moving == [None, None]:  # idle: only how far ahead it is
            return [max(self.free - now, 0.0)]
        found = [self.free - now]
        for lane, queue in enumerate(self.queues):
            copy = self.moving[lane]
            found += [-1.0, -1.0] if copy is None else [copy.ready - now, self.left[lane]]
            found += [len(queue)]
            for _, queued in sorted(queue, key=lambda item: item[0]):
                found += [queued.ready - now, queued.seconds]
        return found

    def shift(self, seconds: float) -> None:
        self.free += seconds
        for copy in self.moving:
            if copy is not None:
                copy.ready += seconds
        for queue in self.queues:
            for n, ((_, number), copy) in enumerate(queue):
                copy.ready += seconds
                queue[n] = (_order(copy.ready, number), copy)
            heapq.heapify(queue)
