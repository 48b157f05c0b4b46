"""Two-level round-robin: addresses take turns, and within an address its browsers take turns.

A class of thirty, each at their own address, gets one run each before anyone gets a second; a
script that mints a new browser id per request still sits at one address and gets one turn per
round. Items are kept in FIFO order per (address, browser).
"""

from __future__ import annotations

import collections
import itertools
from collections.abc import Callable, Iterator, Sequence


class FairQueue[T]:
    def __init__(self) -> None:
        # address -> browser -> FIFO; both levels rotate (the served one moves to the back).
        self._queues: collections.OrderedDict[str, collections.OrderedDict[str, collections.deque[T]]] = (
            collections.OrderedDict()
        )

    def __len__(self) -> int:
        return sum(len(q) for browsers in self._queues.values() for q in browsers.values())

    def __bool__(self) -> bool:
        # Whether anything waits, without iterating: safe to ask from another thread (an address
        # leaves the table with its last item).
        return bool(self._queues)

    def __iter__(self) -> Iterator[T]:
        return iter(self.order())

    def push(self, address: str, browser: str, item: T) -> None:
        browsers = self._queues.setdefault(address, collections.OrderedDict())
        browsers.setdefault(browser, collections.deque()).append(item)

    def take(self, accept: Callable[[T], bool] | None = None) -> T | None:
        """The next item in turn that `accept` takes (any, by default), or None. An item passed over
        keeps its place: the served browser and address go to the back, the others stay ahead of
        them (`server.queue.long_runs`: a long run that may not start yet waits for the next slot)."""
        for address, browsers in self._queues.items():
            for browser, queue in browsers.items():
                place = next((n for n, i in enumerate(queue) if accept is None or accept(i)), None)
                if place is None:
                    continue
                item = queue[place]
                del queue[place]
                browsers.move_to_end(browser)
                if not queue:
                    del browsers[browser]
                self._queues.move_to_end(address)
                if not browsers:
                    del self._queues[address]
                return item
        return None

    def remove(self, address: str, browser: str, item: T) -> bool:
        browsers = self._queues.get(address)
        queue = browsers.get(browser) if browsers is not None else None
        if queue is None or item not in queue:
            return False
        queue.remove(item)
        if not queue:
            del self._queues[address][browser]
            if not self._queues[address]:
                del self._queues[address]
        return True

    def order(self) -> list[T]:
        """Every item in the order `take` would hand them out."""
        return fair_order([list(browsers.values()) for browsers in self._queues.values()])


def fair_order[T](addresses: Sequence[Sequence[Sequence[T]]]) -> list[T]:
    """The dispatch order of a snapshot: addresses (in turn order), each a list of its browsers' FIFOs
    (in turn order). The one statement of the rule; the Redis queue's positions use it too."""
    return _interleave([_interleave(browsers) for browsers in addresses])


def _interleave[T](sequences: Sequence[Sequence[T]]) -> list[T]:
    rounds = itertools.zip_longest(*(list(s) for s in sequences))
    return [item for group in rounds for item in group if item is not None]
