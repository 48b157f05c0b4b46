"""The run queue: the one place that owns queueing, fairness, concurrency, cancellation and cleanup.

Runs wait in a two-level round-robin queue (`server.queue.fairness`: network addresses take turns, and
browsers within an address), so one client that submits many runs, however many browser ids it
mints, cannot starve the others; caps and rate limits hold per browser and per address (a cache hit
is a run for the rate limits, though not for the caps on runs in flight; a class member's address
counts its class runs with its own: `server.queue.admission.caps`), and the queue's last places
are kept for addresses with few runs (`server.queue.admission`); `slots` worker tasks take
the next run and execute it on the sandbox backend in a thread (backends are blocking). Every run
keeps its event log, so a Server-Sent-Events subscriber that connects late (or reconnects) replays
what it missed; a done run keeps its milestones only, and done runs are bounded by count and bytes
(`server.queue.kept`).

The queue must outlive anything a job does: every step after a job (classifying, caching,
notifying) is guarded, a run always ends `done`, and a slot worker that fails anyway is logged and
replaced. A run's id is an unguessable capability that never leaves the server but to its creator:
the job (and the sandbox pool that forks it) knows only the job's own id.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import logging
import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from sandbox.backends import Backend
from sandbox.backends.execute import Finished, cancelled_before_start, execute, internal_error
from sandbox.backends.pairing import RunSlots
from sandbox.backends.phases import with_queued
from sandbox.protocol import Job, RunResult, to_json_dict
from server.clients import Client
from server.queue import admission, kept, long_runs
from server.queue.cache import ResultCache, job_key
from server.queue.fairness import FairQueue
from server.queue.interface import ClientBusyError, QueueFullError, RateLimitedError, State
from server.queue.metrics import MetricsBook
from server.queue.waits import WaitModel
from server.ratelimit import RateLimiter

log = logging.getLogger(__name__)
# The pool label of runs executed in this process (the Redis queue names real pools).
LOCAL_POOL = "local"


@dataclass
class Run:
    id: str
    job: Job
    client: Client
    created: float = field(default_factory=time.time)
    state: State = "queued"
    result: RunResult | None = None
    events: list[dict[str, Any]] = field(default_factory=list)
    cancel: threading.Event = field(default_factory=threading.Event)
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    started: float | None = None
    failure: bool = False  # the sandbox failed to run it (counted in the metrics)
    next_id: int = 0  # event ids are never reused, though a done run's log drops live-only events
    bytes: int = 0  # what its kept log holds, once done

    def push(self, kind: str, data: dict[str, Any]) -> None:
        self.events.append({"id": self.next_id, "kind": kind, "data": data})
        self.next_id += 1
        self.changed.set()


class InProcessEngine:
    def __init__(
        self,
        backend: Backend,
        *,
        slots: int,
        queue_size: int,
        queue_reserve: int | None = None,
        per_client: int,
        per_address: int | None = None,
        runs_kept: int,
        runs_kept_bytes: int = 256 << 20,
        cache: ResultCache | None = None,
        limiter: RateLimiter | None = None,
        address_limiter: RateLimiter | None = None,
        class_budget: int | None = None,
        class_limiter: RateLimiter | None = None,
        versions: str = "",
    ) -> None:
        self.backend = backend
        self.cache = cache or ResultCache(0)
        self.limiter = limiter or RateLimiter(per_minute=0, burst=0)
        self.address_limiter = address_limiter or RateLimiter(per_minute=0, burst=0)
        self.per_address = per_address if per_address is not None else per_client
        # A class session's students share one budget instead of their school's address cap.
        self.class_budget = class_budget if class_budget is not None else self.per_address
        self.class_limiter = class_limiter or self.address_limiter
        self.versions = versions
        self.keys: dict[str, str] = {}
        self.slots, self.queue_size, self.per_client, self.runs_kept = (
            slots,
            queue_size,
            per_client,
            runs_kept,
        )
        self.runs_kept_bytes = runs_kept_bytes
        # The queue's last places are for light groups (`server.queue.admission`).
        self.kept_places = admission.kept_places(queue_size, queue_reserve)
        self.runs: collections.OrderedDict[str, Run] = collections.OrderedDict()
        self.queue: FairQueue[Run] = FairQueue()
        self.running: set[str] = set()
        # A run holds one while it executes; its reference's job may borrow a free one (`pairing`).
        self.run_slots = RunSlots(slots, waiting=lambda: bool(self.queue))
        self._work = asyncio.Condition()
        self._workers: dict[int, asyncio.Task[None]] = {}
        self._stopping = False
        self.worker_restarts = 0
        self.waits = WaitModel(slots)
        self.book = MetricsBook()

    # -- lifecycle -----------------------------------------------------------------------------

    async def start(self) -> None:
        for slot in range(self.slots):
            self._start_worker(slot)

    async def stop(self) -> None:
        self._stopping = True
        for run in self.runs.values():
            run.cancel.set()
        for task in self._workers.values():
            task.cancel()
        await asyncio.gather(*self._workers.values(), return_exceptions=True)
        await asyncio.to_thread(self.backend.close)

    def _start_worker(self, slot: int) -> None:
        task = asyncio.create_task(self._worker(slot), name=f"run-slot-{slot}")
        self._workers[slot] = task
        task.add_done_callback(lambda done: self._worker_ended(slot, done))

    def _worker_ended(self, slot: int, task: asyncio.Task[None]) -> None:
        """A worker only ends when the queue stops; if one dies otherwise, say so and replace it."""
        if self._stopping or task.cancelled():
            return
        log.error("run slot %d stopped (%r); starting a new worker for it", slot, task.exception())
        self.worker_restarts += 1
        self._start_worker(slot)

    def slots_alive(self) -> int:
        return sum(1 for task in self._workers.values() if not task.done())

    def oldest_wait_with_free_slot(self) -> float:
        """How long the oldest queued run has waited while a slot was free for it (0: the queue moves;
        a long run waiting for a long run's slot is not stuck)."""
        if len(self.running) >= self.slots:
            return 0.0
        may_start_long = self._long_may_start()
        waiting = [r.created for r in self.queue if may_start_long or not long_runs.is_long(r.job)]
        return max(0.0, time.time() - min(waiting)) if waiting else 0.0

    # -- API -----------------------------------------------------------------------------------

    @property
    def queued(self) -> int:
        return len(self.queue)

    def enqueue(self, job: Job, client: Client, *, fresh: bool = False) -> Run:
        key = job_key(job, self.versions)
        cached = None if fresh else self.cache.get(key)
        if cached is not None:
            self._take_tokens(client)
            return self._cached_run(job, client, cached)
        if self.queued >= self.queue_size:
            raise QueueFullError(self.retry_after(), self.queued)
        group, held = self._check_caps(client)
        neighbours = sum(1 for r in self.live_runs() if r.client.network == client.network)
        if admission.refuses(self.queued, max(group, held), neighbours, self.queue_size - self.kept_places):
            raise QueueFullError(self.retry_after(), self.queued, self.kept_places)
        self._take_tokens(client)
        run = Run(id=new_run_id(), job=job, client=client)
        self.keys[run.id] = key
        self.runs[run.id] = run
        self.queue.push(client.address, client.browser, run)
        self._forget_old()
        self._announce_positions()
        asyncio.get_running_loop().create_task(self._notify())
        return run

    def _check_caps(self, client: Client) -> tuple[int, int]:
        """The runs in flight of `client`'s group and of its holder (`admission.caps`), or
        `ClientBusyError` when the browser, the group or the holder is at its cap."""
        live = self.live_runs()
        group = [r for r in live if r.client.address == client.address]
        if sum(1 for r in group if r.client.key == client.key) >= self.per_client:
            raise ClientBusyError(self.per_client)
        held = sum(1 for r in live if client.holder in (r.client.address, r.client.holder))
        group_cap, holder_cap = admission.caps(
            client.in_class, self.per_address, class_cap(self.class_budget, self.queue_size)
        )
        if len(group) >= group_cap:
            raise ClientBusyError(group_cap, "your class" if client.in_class else "your network address")
        if held >= holder_cap:
            raise ClientBusyError(holder_cap, "your network address")
        return len(group), held

    def live_runs(self, address: str | None = None, browser: str | None = None) -> list[Run]:
        """Runs queued or running: all, or those of group `address` (of its `browser` only, if given)."""
        return [
            r
            for r in self.runs.values()
            if r.state != "done"
            and (address is None or r.client.address == address)
            and (browser is None or r.client.browser == browser)
        ]

    def _take_tokens(self, client: Client) -> None:
        """One run's tokens from the browser's and the address's buckets, or `RateLimitedError`."""
        group_limiter = self.class_limiter if client.in_class else self.address_limiter
        wait = max(self.limiter.take(client.key), group_limiter.take(client.address))
        if wait:
            raise RateLimitedError(wait)

    def _cached_run(self, job: Job, client: Client, result: RunResult) -> Run:
        run = Run(id=new_run_id(), job=job, client=client, state="done", result=result)
        self.runs[run.id] = run
        run.push("done", to_json_dict(result))
        run.bytes = kept.log_bytes(run.events)
        self._forget_old()
        return run

    def get(self, run_id: str) -> Run | None:
        return self.runs.get(run_id)

    def position(self, run: Run) -> int | None:
        """1-based place in the dispatch order (round-robin over addresses), None unless queued."""
        if run.state != "queued":
            return None
        for place, queued in enumerate(self.queue.order(), start=1):
            if queued is run:
                return place
        return None

    def cancel_run(self, run: Run) -> None:
        if run.state == "queued":
            self.queue.remove(run.client.address, run.client.browser, run)
            self._end(run, cancelled_before_start(run.job))
            self._announce_positions()
        else:
            run.cancel.set()

    async def wait_for_events(self, run: Run, after: int, timeout: float) -> bool:
        """Wait until `run` has an event after id `after` or is done; False if `timeout` passed first."""
        while after >= run.next_id - 1 and run.state != "done":
            run.changed.clear()
            if after < run.next_id - 1:
                break
            try:
                await asyncio.wait_for(run.changed.wait(), timeout)
            except TimeoutError:
                return False
        return True

    def retry_after(self) -> int:
        """Seconds until a queue place is likely free: the recent mean run time, at least 1."""
        return max(1, round(self._mean_seconds() * max(1, self.queued) / self.slots))

    def _mean_seconds(self) -> float:
        return self.waits.mean_seconds()

    # -- internals -----------------------------------------------------------------------------

    def _take(self) -> Run | None:
        """The next run in fair order that may start now: a long one only while a slot stays for the
        rest (`server.queue.long_runs`)."""
        if self._long_may_start():
            return self.queue.take()
        return self.queue.take(lambda run: not long_runs.is_long(run.job))

    def _long_may_start(self) -> bool:
        running = (self.runs.get(run_id) for run_id in self.running)
        held = sum(1 for run in running if run is not None and long_runs.is_long(run.job))
        return long_runs.may_start_long(self.slots, held)

    async def _notify(self) -> None:
        async with self._work:
            self._work.notify()

    async def _worker(self, slot: int) -> None:
        while True:
            async with self._work:
                run = self._take()
                while run is None:
                    await self._work.wait()
                    run = self._take()
            try:
                self._announce_positions()
                await self._execute(run, slot)
            except asyncio.CancelledError:
                raise
            except Exception:
                # A fault of ours, after or around the job: the run still ends, the slot carries on.
                log.exception("slot %d: the queue failed on run %s", slot, run.id)
                self._end(run, self._unfinished(run))
            finally:
                self.running.discard(run.id)

    async def _execute(self, run: Run, slot: int) -> None:
        loop = asyncio.get_running_loop()
        run.state, run.started = "running", time.time()
        self.running.add(run.id)
        self.waits.started(run.id)
        run.push("running", {"slot": slot})

        def forward(kind: str, data: dict[str, Any]) -> None:
            with contextlib.suppress(RuntimeError):  # the loop closed: the server is stopping
                loop.call_soon_threadsafe(run.push, kind, data)

        finished = await asyncio.to_thread(
            execute, self.backend, run.job, run.cancel, forward, self.run_slots
        )
        self.running.discard(run.id)
        # How long the slot was taken (the sandbox's start-up and the result's checks included), not
        # just the job's own wall time: what the next run in the queue waits for.
        self.waits.finished(run.id)
        await asyncio.sleep(0)  # let queued call_soon_threadsafe events land before `done`
        queued = (run.started or run.created) - run.created
        self._finish(run, dataclasses.replace(finished, result=with_queued(finished.result, queued)))

    def _finish(self, run: Run, finished: Finished) -> None:
        run.failure = finished.failure
        key = self.keys.pop(run.id, None)
        if key is not None and finished.reusable:
            try:
                self.cache.put(key, run.id, finished.result)
            except Exception:
                log.exception("run %s: the result could not be cached", run.id)
        self._end(run, finished.result)

    def _end(self, run: Run, result: RunResult) -> None:
        """The one way a run becomes done: its result set, its subscribers told."""
        if run.state == "done":
            return
        run.result, run.state = result, "done"
        self.keys.pop(run.id, None)
        run.push("done", to_json_dict(result))
        run.events = kept.compact(run.events)
        run.bytes = kept.log_bytes(run.events)
        self._forget_old()
        self.book.ended(
            LOCAL_POOL,
            result.status.value,
            created=run.created,
            started=run.started,
            now=time.time(),
            failure=run.failure,
            phases=result.phases,
        )

    def _unfinished(
        self, run: Run, reason: str = "the playground failed while finishing the run"
    ) -> RunResult:
        return internal_error(run.job, reason)

    def _announce_positions(self) -> None:
        for place, run in enumerate(self.queue.order(), start=1):
            last = next((e for e in reversed(run.events) if e["kind"] == "queued"), None)
            if last is None or last["data"]["position"] != place:
                eta = self.wait_estimate(place)
                run.push("queued", {"position": place, "queued": self.queued, "eta_seconds": round(eta, 1)})

    def wait_estimate(self, place: int) -> float:
        """Seconds until the run at `place` starts (`server.queue.waits`); 0 if a slot is free for it."""
        now = time.time()
        elapsed = [now - (self.runs[i].started or now) for i in self.running if i in self.runs]
        limits = [r.job.limits.wall_seconds for r in self.runs.values() if r.state != "done"]
        return self.waits.wait(place, elapsed, max(limits, default=None))

    def _forget_old(self) -> None:
        done = [
            kept.KeptRun(r.id, r.client.address, r.bytes) for r in self.runs.values() if r.state == "done"
        ]
        for rid in kept.to_forget(done, self.runs_kept, self.runs_kept_bytes):
            del self.runs[rid]


def new_run_id() -> str:
    """An unguessable run id (128 random bits): whoever holds it may read and cancel the run."""
    return secrets.token_urlsafe(16)


def class_cap(class_budget: int, queue_size: int) -> int:
    """Runs the classes of one owner may have queued or running at once: their budget, but never more
    than half the queue, so other users keep their share of it."""
    return max(1, min(class_budget, queue_size // 2))
