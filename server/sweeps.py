"""Sweeps on the server: one sweep is one API object over one or more runs of the run queue.

A sweep's configs are cut into shards (`sandbox.sweeps.shards`), as many as there are sandbox
slots (and the client may have runs at once), and each shard is submitted as an ordinary run to
the `Runner`; there is no second queue. A follower task reads the shards' events through the
runner's public methods and keeps the sweep's own event log (`queued`, `running`, one `config` per
judged config, `done` with the merged result), which `/api/sweeps/{id}/events` replays and streams.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import time
from dataclasses import dataclass, field
from typing import Any, Literal

from sandbox import sweeps
from sandbox.protocol import Job, RunStatus, SweepSpec, to_json_dict
from server.clients import Client
from server.runner import Run, Runner, new_run_id

log = logging.getLogger(__name__)
WAIT_SECONDS = 15.0


@dataclass
class Sweep:
    id: str
    spec: SweepSpec
    client: Client
    runs: list[Run]
    created: float = field(default_factory=time.time)
    state: Literal["queued", "running", "done"] = "queued"
    judged: set[int] = field(default_factory=set)
    result: dict[str, Any] | None = None
    events: list[dict[str, Any]] = field(default_factory=list)
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None

    def push(self, kind: str, data: dict[str, Any]) -> None:
        self.events.append({"id": len(self.events), "kind": kind, "data": data})
        self.changed.set()

    async def wait_for_events(self, index: int, timeout: float) -> bool:
        while index >= len(self.events) and self.state != "done":
            self.changed.clear()
            try:
                await asyncio.wait_for(self.changed.wait(), timeout)
            except TimeoutError:
                return False
        return True


class SweepRegistry:
    """The server's sweeps, newest kept; each followed by one task until its shards are done."""

    def __init__(self, kept: int = 200) -> None:
        self.kept = kept
        self.sweeps: collections.OrderedDict[str, Sweep] = collections.OrderedDict()

    def get(self, sweep_id: str) -> Sweep | None:
        return self.sweeps.get(sweep_id)

    def start(
        self, runner: Runner, jobs: list[Job], spec: SweepSpec, client: Client, *, fresh: bool
    ) -> Sweep:
        """Submit the shards' jobs (all or none); the runner's refusals propagate to the caller."""
        runs: list[Run] = []
        try:
            for job in jobs:
                runs.append(runner.submit(job, client, fresh=fresh))
        except Exception:  # refused part-way (queue full, rate, busy): take back what was submitted
            for run in runs:
                runner.cancel(run)
            raise
        sweep = Sweep(id=new_run_id(), spec=spec, client=client, runs=runs)
        self.sweeps[sweep.id] = sweep
        while len(self.sweeps) > self.kept:
            oldest = next(iter(self.sweeps))
            if self.sweeps[oldest].state != "done":
                break
            del self.sweeps[oldest]
        sweep.task = asyncio.get_running_loop().create_task(
            self._follow(runner, sweep), name=f"sweep-{sweep.id[:8]}"
        )
        return sweep

    def cancel(self, runner: Runner, sweep: Sweep) -> None:
        for run in sweep.runs:
            if run.state != "done":
                runner.cancel(run)

    async def _follow(self, runner: Runner, sweep: Sweep) -> None:
        try:
            await self._relay(runner, sweep)
        except asyncio.CancelledError:
            raise
        except Exception:  # our fault: the sweep still ends, with what its shards said
            log.exception("sweep %s: following its shards failed", sweep.id)
        if sweep.state != "done":
            self._finish(sweep)

    async def _relay(self, runner: Runner, sweep: Sweep) -> None:
        cursors = [0] * len(sweep.runs)
        while True:
            for i, run in enumerate(sweep.runs):
                while cursors[i] < len(run.events):
                    self._event(sweep, i, run.events[cursors[i]])
                    cursors[i] += 1
            if all(run.state == "done" and cursors[i] >= len(run.events) for i, run in enumerate(sweep.runs)):
                self._finish(sweep)
                return
            waits = [
                asyncio.ensure_future(runner.wait_for_events(run, cursors[i], WAIT_SECONDS))
                for i, run in enumerate(sweep.runs)
                if run.state != "done" or cursors[i] < len(run.events)
            ]
            _, pending = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            for task in pending:
                task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.gather(*pending, return_exceptions=True)

    def _event(self, sweep: Sweep, shard: int, event: dict[str, Any]) -> None:
        kind, data = event["kind"], event["data"]
        if kind == "queued" and sweep.state == "queued":
            sweep.push("queued", {"shard": shard, "position": data.get("position")})
        elif kind == "running" and sweep.state == "queued":
            sweep.state = "running"
            sweep.push("running", {"shard": shard})
        elif kind == "config":
            result = data["result"]
            sweep.judged.add(result["index"])
            sweep.push("config", {"result": result, "judged": len(sweep.judged), "total": sweep.spec.total})
        elif kind == "error":
            sweep.push("error", {"shard": shard, "error": data.get("error")})

    def _finish(self, sweep: Sweep) -> None:
        results = [run.result for run in sweep.runs if run.result is not None]
        merged = sweeps.merge([r.sweep for r in results if r.sweep is not None], sweep.spec)
        stopped = [
            r
            for r in results
            if r.sweep is None
            or r.status in (RunStatus.CANCELLED, RunStatus.TIMEOUT, RunStatus.RESOURCE_LIMIT)
            or r.error
        ]
        if len(results) < len(sweep.runs):
            status, summary = RunStatus.ERROR, "internal error: a shard of the sweep has no result"
        elif stopped:
            status, summary = stopped[0].status, stopped[0].summary
        else:
            status, summary = RunStatus.RAN, ""
        status, summary = sweeps.verdict(merged, status, summary)
        sweep.result = {
            "status": status.value,
            "summary": summary,
            "sweep": to_json_dict(merged),
            "shards": [
                {"id": run.id, "status": r.status.value, "summary": r.summary}
                for run, r in zip(sweep.runs, results, strict=False)
            ],
        }
        sweep.state = "done"
        sweep.push("done", sweep.result)


def shard_count(runner: Runner, total: int) -> int:
    """As many shards as slots, but no more than the client may run at once or than there are configs."""
    return max(1, min(runner.slots, runner.per_client, total))
