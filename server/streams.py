"""Event streams open at once per client address, in one server process: each holds a connection and
a task for as long as the client keeps it, so one address could otherwise hold thousands (a run's,
a sweep's, a class's). Beyond the cap a new stream is 429 with Retry-After; closing one frees its place.

Also how one event is written on a stream (`message`): as strict JSON (`strict_json`), which a
browser's `JSON.parse` reads whatever a job reported."""

from __future__ import annotations

import json
import math
import weakref
from collections import Counter
from collections.abc import AsyncIterator, Callable
from typing import Any

from server.problems import ProblemError

RETRY_SECONDS = 5


class OpenStreams:
    def __init__(self, per_address: int) -> None:
        self.per_address = per_address  # 0: unlimited
        self._open: Counter[str] = Counter()

    def opened(self, address: str, events: AsyncIterator[str]) -> AsyncIterator[str]:
        """`events`, counted against `address` from now until the stream ends or the client leaves;
        raises 429 when the address already holds `per_address` streams."""
        if self.per_address and self._open[address] >= self.per_address:
            raise ProblemError(
                429,
                "Too many open event streams",
                f"this address already follows {self._open[address]} event streams at once (the most "
                f"one address may: {self.per_address}); close one, or follow fewer runs at a time",
                headers={"Retry-After": str(RETRY_SECONDS)},
            )
        self._open[address] += 1
        release = self._release_once(address)
        counted = _counted(events, release)
        # A stream the server never started (the client left before its first byte) is never run, so
        # its `finally` never runs either: its place is freed when it is collected.
        weakref.finalize(counted, release)
        return counted

    def _release_once(self, address: str) -> Callable[[], None]:
        done = False

        def release() -> None:
            nonlocal done
            if done:
                return
            done = True
            self._open[address] -= 1
            if self._open[address] <= 0:
                del self._open[address]

        return release

    def held(self, address: str) -> int:
        return self._open.get(address, 0)


async def _counted(events: AsyncIterator[str], release: Callable[[], None]) -> AsyncIterator[str]:
    try:
        async for event in events:
            yield event
    finally:
        release()


def message(kind: str, data: Any, event_id: int | str | None = None) -> str:
    """One Server-Sent Event, its data as `strict_json`."""
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: {kind}\ndata: {strict_json(data)}\n\n"


def strict_json(data: Any, *, compact: bool = False) -> str:
    """`data` as JSON a browser's `JSON.parse` reads: Python writes NaN and infinity as `NaN` and
    `Infinity`, which no JSON parser takes (a job's made-up time once broke every follower of its
    run, issue 41), so a value that is not finite is written as null. `compact`: no spaces."""
    separators = (",", ":") if compact else None
    try:
        return json.dumps(data, allow_nan=False, separators=separators)
    except ValueError:
        return json.dumps(_finite(data), allow_nan=False, separators=separators)


def _finite(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value
