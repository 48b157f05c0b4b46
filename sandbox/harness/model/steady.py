"""Steady state in a simulated program: a run of identical steps advanced in one go (`simulate`).

A pipeline of 32,768 steps is mostly runs of the same step (`iteration_classes` hands the simulator the very
same event objects for each step of an iteration class). Once a step starts from the state the previous
identical step started from (the DMA engine as far ahead, the same copies in flight with the same
times left, relative to the core's clock), every further identical step does exactly what that
one did, shifted by its duration: the rest of the run is added up instead of simulated.
States are compared to a femtosecond (clock sums differ in their last bits at large times).
Steps that signal or wait for other cores are always simulated (their times are absolute).
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from typing import Any

TOLERANCE = 1e-15  # seconds


MAX_PERIOD = 256  # steps may repeat in cycles: double buffers alternate (2), a k loop repeats (K/bk)
KEEP = 4  # past starts remembered per kind of step


class Tracker:
    """Per core: where the steps are, and the states the last simulated steps started from."""

    def __init__(self, events: Sequence[Any]) -> None:
        self.events = events
        self.marks = [i for i, e in enumerate(events) if e[0] == "step"]
        self.index = {m: n for n, m in enumerate(self.marks)}
        ends = [*self.marks[1:], len(events)] if self.marks else []
        # What each step does: its kind when `iteration_classes` named it (the same kind, the same event
        # objects), else the identities of its events.
        self.steps: list[Any] = [
            events[a][2] if len(events[a]) > 2 else tuple(map(id, events[a + 1 : b]))
            for a, b in zip(self.marks, ends, strict=True)
        ]
        talking = [i for i, e in enumerate(events) if e[0] in ("signal", "sem_wait")]
        self.talks = {bisect.bisect_right(self.marks, i) - 1 for i in talking}
        # per kind of step (its events), where recent ones started: (step, relative state, clock, bytes)
        self.history: dict[tuple[int, ...], list[tuple[int, Any, float, float]]] = {}

    def forward(self, state: Any, at: int, done: dict[int, int]) -> int:
        """At the step marker `at`: skip the cycles of steps it starts if steady; where to go on."""
        j = self.index[at]
        here = (j, _relative(state), state.t, state.moved)
        seen = self.history.setdefault(self.steps[j], [])
        for past in reversed(seen):
            period = j - past[0]
            if period <= MAX_PERIOD and _close(past[1], here[1]) and self._repeats(past[0], period, 1):
                cycles = 1
                while self._repeats(past[0], period, cycles + 1):
                    cycles += 1
                return self._skip(state, past, period, cycles, done)
        seen.append(here)
        del seen[:-KEEP]
        return at

    def _repeats(self, start: int, period: int, cycles: int) -> bool:
        """Do steps start + period·cycles ... (one more period) repeat steps start ... start + period?"""
        first = start + period * cycles
        if first + period > len(self.marks):
            return False
        return all(
            self.steps[start + m] == self.steps[first + m] and first + m not in self.talks
            for m in range(period)
        )

    def _skip(
        self, state: Any, past: tuple[int, Any, float, float], period: int, cycles: int, done: dict[int, int]
    ) -> int:
        j = past[0] + period
        delta, moved = state.t - past[2], state.moved - past[3]
        state.rows[-1].end = state.t
        templates = state.rows[-period:]
        for q in range(cycles):
            for m, template in enumerate(templates):
                label = self.events[self.marks[j + q * period + m]][1]
                state.rows.append(template.shifted(label, (q + 1) * delta))
        _shift(state, cycles * delta)
        state.moved += cycles * moved
        for m in range(period):
            stop = self.marks[j + m + 1] if j + m + 1 < len(self.marks) else len(self.events)
            for event in self.events[self.marks[j + m] + 1 : stop]:
                if id(event) in done:
                    done[id(event)] += cycles
        end = j + period * cycles
        return self.marks[end] if end < len(self.marks) else len(self.events)


def _relative(state: Any) -> tuple[list[Any], list[float]]:
    """The state as the next step sees it: which copies are in flight, and times ahead of the clock
    (0 for what is already past: it can no longer hold anything up) and sizes."""
    keys: list[Any] = []
    found = state.engine.relative(state.t)
    for key, queue in state.pending.items():
        if queue:
            keys.append((key, len(queue)))
            for entry in queue:  # a copy not yet placed: when it is ready and how long it moves, as the entry
                copy = state.engine.unplaced.get(id(entry))  # has no landing time yet (which ones matters)
                if copy is None:
                    found += [max(entry[0] - state.t, 0.0), -1.0, float(entry[1])]
                else:
                    found += [copy.ready - state.t, copy.seconds, float(entry[1])]
    return keys, found


def _close(a: tuple[list[Any], list[float]], b: tuple[list[Any], list[float]]) -> bool:
    return (
        a[0] == b[0]
        and len(a[1]) == len(b[1])  # as many copies not yet placed on the engine
        and all(abs(x - y) <= TOLERANCE for x, y in zip(a[1], b[1], strict=True))
    )


def _shift(state: Any, seconds: float) -> None:
    state.t += seconds
    state.engine.shift(seconds)
    for queue in state.pending.values():
        for entry in queue:
            entry[0] += seconds
