"""The hardened backend's slots: which are free, which are out of service. Shareable between pools.

Slots 0 … cpu-1 run interpret-mode jobs on the CPU; the rest each own a set of TPU chips. One
table can serve the pools of several JAX runtimes (`sandbox.backends.runtimes`): a chip slot is then
taken by one job of one runtime at a time, and the CPU slots bound the jobs of all runtimes together.
"""

from __future__ import annotations

import threading


class SlotTable:
    def __init__(self, cpu: int, chips: int) -> None:
        self.cpu, self.size = cpu, cpu + chips
        self._free = list(range(self.size))
        self._quarantined: set[int] = set()
        self._cond = threading.Condition()

    @property
    def cpu_slots(self) -> range:
        return range(self.cpu)

    @property
    def chip_slots(self) -> range:
        return range(self.cpu, self.size)

    def take(self, cancel: threading.Event, kind: range) -> int | None:
        """The lowest free slot in `kind` (the CPU slots or the chip slots); None if cancelled first."""
        with self._cond:
            while not (free := [s for s in self._free if s in kind]):
                if cancel.is_set():
                    return None
                self._cond.wait(0.1)
            self._free.remove(free[0])
            return free[0]

    def give(self, slot: int) -> None:
        with self._cond:
            self._quarantined.discard(slot)
            self._free.append(slot)
            self._free.sort()
            self._cond.notify_all()  # waiters want CPU or chip slots

    def quarantine(self, slot: int) -> bool:
        """Keep `slot` out of service (until `give`); True if every slot is now out of service."""
        with self._cond:
            self._quarantined.add(slot)
            return len(self._quarantined) >= self.size

    @property
    def quarantined(self) -> int:
        with self._cond:
            return len(self._quarantined)
