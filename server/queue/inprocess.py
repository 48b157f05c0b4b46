"""The embedded run queue: `server.queue.engine.InProcessEngine` (slots in this process, runs in memory) behind the
`RunQueue` interface the routes speak. Event ids count the run's events (0, 1, …)."""

from __future__ import annotations

import bisect
import time
from collections.abc import AsyncIterator
from typing import Any

from sandbox.protocol import Job, to_json_dict
from server.clients import Client
from server.queue.engine import LOCAL_POOL, InProcessEngine, Run
from server.queue.interface import FinishedRun, FollowEvent, QueueHealth, RunView
from server.queue.metrics import MetricsSnapshot

# A queued run that waited this long while a slot was free means the dispatcher is stuck.
STUCK_QUEUE_SECONDS = 30.0


class InProcessQueue(InProcessEngine):
    async def submit(self, job: Job, client: Client, *, fresh: bool = False) -> RunView:
        return self._view(self.enqueue(job, client, fresh=fresh))

    async def slots_for(self, mode: str, chip: str) -> int:
        return self.slots

    async def view(self, run_id: str) -> RunView | None:
        run = self.get(run_id)
        return None if run is None else self._view(run)

    async def cancel(self, run_id: str) -> RunView | None:
        run = self.get(run_id)
        if run is None:
            return None
        if run.state != "done":
            self.cancel_run(run)
        return RunView(id=run.id, state=run.state, position=self.position(run), result=None)

    async def runs_in_flight(self, address: str, browser: str | None = None) -> list[str]:
        return [run.id for run in self.live_runs(address, browser)]

    async def finished(self, run_id: str) -> FinishedRun | None:
        run = self.get(run_id)
        if run is None or run.state != "done" or run.result is None:
            return None
        return FinishedRun(run.job, run.result, run.result.cached_at or run.created)

    async def follow(self, run_id: str, after: str | None) -> AsyncIterator[FollowEvent | None]:
        run = self.get(run_id)
        if run is None:
            return
        # Our ids count the run's events: one we never issued (malformed, huge, past the end) replays
        # the run from the start, so a reconnecting client always ends with `done`. A done run's log
        # lacks its live-only events (`server.queue.kept`): a follower goes on from the next kept one.
        # ASCII digits only: "²" is a digit to `str.isdigit` and not to `int` (a header is Latin-1).
        last = int(after) if after and after.isascii() and after.isdigit() and len(after) <= 9 else -1
        last = last if last < run.next_id else -1
        while True:
            while (event := _after(run.events, last)) is not None:
                last = event["id"]
                yield FollowEvent(str(event["id"]), event["kind"], event["data"])
            if run.state == "done":
                return
            if not await self.wait_for_events(run, last, 15.0):
                yield None

    async def health(self) -> QueueHealth:
        """Unhealthy when runs cannot complete: a slot worker gone, the sandbox unable to run jobs, or
        the queue not moving although a slot is free; degraded when some slots are out of service."""
        sandbox = self.backend.health()
        waited = self.oldest_wait_with_free_slot()
        alive = self.slots_alive()
        problems, notes = [], []
        if alive < self.slots:
            problems.append(f"{self.slots - alive} of {self.slots} run slots are not working")
        if not sandbox.ok:
            problems.append(f"the sandbox cannot run jobs: {sandbox.detail}")
        if waited > STUCK_QUEUE_SECONDS:
            problems.append(f"a queued run has waited {waited:.0f} s although a slot is free")
        if sandbox.quarantined_slots:
            notes.append(sandbox.detail)
        notes += [f"jax {name} cannot run jobs: {why}" for name, why in sandbox.unavailable]
        return QueueHealth(
            kind="in-process",
            problems=problems,
            notes=notes,
            queued=self.queued,
            running=len(self.running),
            slots=self.slots,
            slots_alive=alive,
            worker_restarts=self.worker_restarts,
            oldest_wait_seconds=round(waited, 1),
            sandbox=sandbox,
        )

    async def metrics(self) -> MetricsSnapshot:
        snapshot = self.book.totals
        waiting = [r.created for r in self.queue]
        snapshot.queued = {LOCAL_POOL: self.queued}
        snapshot.oldest_wait = {LOCAL_POOL: time.time() - min(waiting) if waiting else 0.0}
        snapshot.workers = {LOCAL_POOL: 1}
        snapshot.slots = {LOCAL_POOL: self.slots_alive()}
        snapshot.busy = {LOCAL_POOL: len(self.running)}
        return snapshot

    def _view(self, run: Run) -> RunView:
        result = to_json_dict(run.result) if run.result else None
        return RunView(id=run.id, state=run.state, position=self.position(run), result=result)


def _after(events: list[dict[str, Any]], last: int) -> dict[str, Any] | None:
    """The first event whose id is after `last` (ids ascend), or None."""
    place = bisect.bisect_right(events, last, key=lambda e: e["id"])
    return events[place] if place < len(events) else None
