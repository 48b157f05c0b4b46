"""The run queue as the routes see it: one interface, two implementations chosen at start-up.

`server.queue.inprocess.InProcessQueue` (the embedded default: slots in this process, state in memory)
and `server.queue.redis_queue.RedisQueue` (`PLAYGROUND_REDIS_URL`: state in Redis, jobs on workers of
any host; see `sandbox.queue`). Routes speak only this: run views, events to follow, health facts
and metrics; never a queue's internals.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from sandbox.backends import BackendHealth
from sandbox.protocol import Job, RunResult
from server.clients import Client
from server.queue.metrics import MetricsSnapshot

State = Literal["queued", "running", "done"]


@dataclass(frozen=True)
class RunView:
    """A run as a client may see it: its state, its place in the queue, its result (JSON) when done."""

    id: str
    state: State
    position: int | None
    result: dict[str, Any] | None


@dataclass(frozen=True)
class FollowEvent:
    """One event of a run; `id` None: a queue position update, sent again rather than replayed."""

    id: str | None
    kind: str
    data: dict[str, Any]


@dataclass(frozen=True)
class FinishedRun:
    """A done run as the server itself knows it: what ran, what came out, and when."""

    job: Job
    result: RunResult
    at: float  # when the result was made (a cached result: when its original run made it)


@dataclass(frozen=True)
class PoolHealth:
    name: str
    workers: int
    slots: int
    busy: int
    queued: int
    oldest_wait_seconds: float


@dataclass(frozen=True)
class QueueHealth:
    """What `/api/health` reports: problems (unhealthy), notes (degraded), and the numbers."""

    kind: Literal["in-process", "redis"]
    problems: list[str]
    notes: list[str]
    queued: int
    running: int
    slots: int
    slots_alive: int
    worker_restarts: int
    oldest_wait_seconds: float
    sandbox: BackendHealth
    pools: list[PoolHealth] = field(default_factory=list)


class QueueFullError(Exception):
    """No place for this run: the queue is full, or (`kept` > 0) only its last `kept` places are left,
    and those are kept for people with few runs (`server.queue.admission`)."""

    def __init__(self, retry_after: int, queued: int, kept: int = 0) -> None:
        super().__init__("the run queue is full")
        self.retry_after, self.queued, self.kept = retry_after, queued, kept


class RateLimitedError(Exception):
    def __init__(self, retry_after: float) -> None:
        super().__init__("too many runs from this client")
        self.retry_after = max(1, round(retry_after))


class ClientBusyError(Exception):
    def __init__(self, limit: int, whose: str = "you") -> None:
        super().__init__(
            f"{whose} already {'has' if whose != 'you' else 'have'} {limit} runs queued or running"
        )
        self.limit, self.whose = limit, whose


class NoRunnerError(Exception):
    """No live worker serves the pool a run needs."""

    def __init__(self, pool: str) -> None:
        super().__init__(
            f"no runner is serving pool {pool!r} right now, so the run could not start; try again later"
        )
        self.pool = pool


class QueueUnavailableError(Exception):
    """The queue's store (Redis) cannot be reached; nothing was decided."""

    retry_after = 5


class RunQueue(Protocol):
    async def start(self) -> None: ...

    async def stop(self) -> None: ...

    async def submit(self, job: Job, client: Client, *, fresh: bool = False) -> RunView:
        """Queue `job` (or answer from the cache); raises the errors above when it cannot."""
        ...

    async def view(self, run_id: str) -> RunView | None: ...

    async def slots_for(self, mode: str, chip: str) -> int:
        """Slots that run jobs of this mode and chip now (with Redis: the live workers' of its pool;
        0 when none serves it)."""
        ...

    async def cancel(self, run_id: str) -> RunView | None:
        """Cancel a queued or running run (a done one is left as it is); None if unknown."""
        ...

    async def finished(self, run_id: str) -> FinishedRun | None:
        """A done run's job and result (for a share that keeps them); None unless it is done."""
        ...

    async def runs_in_flight(self, address: str, browser: str | None = None) -> list[str]:
        """The ids of the runs queued or running of the group `address` (a `Client.address`: a class
        group's are every class of its owner), or of its `browser` only (one student of a class)."""
        ...

    def follow(self, run_id: str, after: str | None) -> AsyncIterator[FollowEvent | None]:
        """The run's events after `after` (an event id), ending with `done`; None now and then
        while nothing happens (the caller sends a keep-alive and checks the client is there)."""
        ...

    async def health(self) -> QueueHealth: ...

    async def metrics(self) -> MetricsSnapshot: ...
