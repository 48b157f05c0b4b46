"""Sweeps on the server: one sweep is one API object over one or more runs of the run queue.

A sweep's configs are cut into shards (`sandbox.jobs.sweeps.shards`): as many as there are sandbox
slots but one (`shard_count`: a slot stays for everyone else), and no more than the client may have
runs at once. Each shard is submitted as an ordinary run to the run queue (`server.queue.interface.RunQueue`: in-process or Redis); there is no second queue. A
follower task reads the shards' events through the queue's `follow` and keeps the sweep's own event
log (`queued`, `running`, one `config` per judged config, `done` with the merged result), which
`/api/sweeps/{id}/events` replays and streams. The sweep object itself lives on the web server that
started it (with several web servers, its followers must reach that one).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import time
from dataclasses import dataclass, field
from typing import Any, Literal

from sandbox.catalog.entries import Catalog
from sandbox.jobs import sweeps
from sandbox.jobs.build import JobError, make_sweep_job
from sandbox.protocol import Job, RunResult, RunStatus, SweepSpec, from_json_dict, to_json_dict
from server import convert
from server.clients import Client
from server.problems import ProblemError
from server.queue.engine import new_run_id
from server.queue.interface import ClientBusyError, QueueUnavailableError, RunQueue
from server.queue.problems import queue_problems
from server.settings import Settings
from server.submit import check_request, placed_mode
from server.wire.sweeps import SweepRequest

log = logging.getLogger(__name__)


# How long a shard's follower keeps trying while the run queue cannot be reached (a Redis restart,
# a failover, dropped connections), and how often: the shard's run goes on meanwhile, and its events
# and result wait in Redis for the follower to come back (issue 41: one dropped connection ended
# every live sweep as "internal error" while its shards went on holding their slots).
OUTAGE_SECONDS = 300.0
RETRY_SECONDS = 1.0


@dataclass
class Shard:
    """One run of the sweep: its id in the run queue and, when it is done, its result (JSON); `lost`:
    why it has none (its follower could not reach the queue)."""

    run_id: str
    result: dict[str, Any] | None = None
    lost: str = ""


@dataclass
class Sweep:
    id: str
    spec: SweepSpec
    client: Client
    shards: list[Shard]
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

    async def start(
        self, queue: RunQueue, jobs: list[Job], spec: SweepSpec, client: Client, *, fresh: bool
    ) -> Sweep:
        """Submit the shards' jobs (all or none); the queue's refusals propagate to the caller."""
        views = []
        try:
            for job in jobs:
                views.append(await queue.submit(job, client, fresh=fresh))
        except Exception:  # refused part-way (queue full, rate, busy): take back what was submitted
            for view in views:
                with contextlib.suppress(Exception):
                    await queue.cancel(view.id)
            raise
        shards = [Shard(v.id, v.result if v.state == "done" else None) for v in views]
        sweep = Sweep(id=new_run_id(), spec=spec, client=client, shards=shards)
        self.sweeps[sweep.id] = sweep
        while len(self.sweeps) > self.kept:
            oldest = next(iter(self.sweeps))
            if self.sweeps[oldest].state != "done":
                break
            del self.sweeps[oldest]
        sweep.task = asyncio.get_running_loop().create_task(
            self._follow(queue, sweep), name=f"sweep-{sweep.id[:8]}"
        )
        return sweep

    async def cancel(self, queue: RunQueue, sweep: Sweep) -> None:
        for shard in sweep.shards:
            if shard.result is None:
                await queue.cancel(shard.run_id)

    async def close(self, queue: RunQueue) -> None:
        """The server is stopping: a sweep lives only in this process, so nobody could read or cancel
        its shards afterwards, and with Redis they would go on holding workers' slots for minutes. Stop
        following, and cancel every shard of a sweep not done (a queue already unreachable: logged)."""
        live = [sweep for sweep in self.sweeps.values() if sweep.state != "done"]
        tasks = [sweep.task for sweep in live if sweep.task is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for sweep in live:
            try:
                await self.cancel(queue, sweep)
            except Exception as exc:  # Redis away: the shards end at their own time limit
                log.warning("sweep %s: its shards could not be cancelled on shutdown: %s", sweep.id, exc)

    async def _follow(self, queue: RunQueue, sweep: Sweep) -> None:
        try:
            await asyncio.gather(*(self._relay(queue, sweep, i) for i in range(len(sweep.shards))))
        except asyncio.CancelledError:
            raise
        except Exception:  # our fault: the sweep still ends, with what its shards said
            log.exception("sweep %s: following its shards failed", sweep.id)
        if sweep.state != "done":
            try:
                self._finish(sweep)
            except Exception as exc:  # our fault too: the sweep must still end, and say why
                log.exception("sweep %s: merging its shards' results failed", sweep.id)
                self._fail(
                    sweep, f"internal error: merging the shards' results failed ({type(exc).__name__}: {exc})"
                )

    @staticmethod
    def _fail(sweep: Sweep, summary: str) -> None:
        """End a sweep whose result could not be made: an error with its cause, the configs already
        relayed kept in the event stream."""
        sweep.result = {
            "status": RunStatus.ERROR.value,
            "summary": summary[:500],
            "sweep": None,
            "shards": [],
        }
        sweep.state = "done"
        sweep.push("done", sweep.result)

    async def _relay(self, queue: RunQueue, sweep: Sweep, index: int) -> None:
        """Relay one shard's events until its `done` (which carries its result), going on from the
        last event relayed when the queue was unreachable for a while."""
        shard = sweep.shards[index]
        after: str | None = None
        loop = asyncio.get_running_loop()
        unreachable_since: float | None = None
        while shard.result is None:  # not answered from the result cache
            try:
                async for event in queue.follow(shard.run_id, after):
                    unreachable_since = None
                    if event is None:  # a quiet spell
                        continue
                    after = event.id or after  # a queue position has no id
                    if event.kind == "done":
                        shard.result = event.data
                        return
                    self._event(sweep, index, event.kind, event.data)
                view = await queue.view(shard.run_id)  # the stream ended without `done` (a forgotten run)
                if view is not None and view.result is not None:
                    shard.result = view.result
                return
            except QueueUnavailableError:
                unreachable_since = unreachable_since or loop.time()
                if loop.time() - unreachable_since > OUTAGE_SECONDS:
                    shard.lost = f"the run queue was unreachable for over {OUTAGE_SECONDS:.0f} s"
                    return
                log.warning(
                    "sweep %s: the run queue is unreachable; following shard %d again soon", sweep.id, index
                )
                await asyncio.sleep(RETRY_SECONDS)

    def _event(self, sweep: Sweep, shard: int, kind: str, data: dict[str, Any]) -> None:
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
        answered = [(s, from_json_dict(RunResult, s.result)) for s in sweep.shards if s.result is not None]
        results = [r for _, r in answered]
        merged = sweeps.merge([r.sweep for r in results if r.sweep is not None], sweep.spec)
        for config in merged.configs:  # configs of a cached shard were never relayed one by one
            if config.index not in sweep.judged:
                sweep.judged.add(config.index)
                sweep.push(
                    "config",
                    {"result": to_json_dict(config), "judged": len(sweep.judged), "total": sweep.spec.total},
                )
        stopped = [
            r
            for r in results
            if r.sweep is None
            or r.status in (RunStatus.CANCELLED, RunStatus.TIMEOUT, RunStatus.RESOURCE_LIMIT)
            or r.error
        ]
        if len(results) < len(sweep.shards):
            why = next((s.lost for s in sweep.shards if s.lost), "")
            status, summary = (
                RunStatus.ERROR,
                f"internal error: a shard of the sweep has no result ({why or 'lost'})",
            )
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
                {"id": shard.run_id, "status": r.status.value, "summary": r.summary} for shard, r in answered
            ],
        }
        sweep.state = "done"
        sweep.push("done", sweep.result)


def shard_count(slots: int, per_client: int, total: int) -> int:
    """As many shards as slots but one, so other users' runs always have a slot to go to while a sweep
    runs (a shard holds its slot for a minute and more; every slot when there is only one), and no more
    than the client may run at once or than there are configs."""
    return max(1, min(slots - 1, per_client, total))


async def sweep_jobs(
    body: SweepRequest, settings: Settings, catalog: Catalog, queue: RunQueue
) -> tuple[list[Job], SweepSpec]:
    """The shard jobs of a sweep request (`POST /api/sweeps`, the MCP server's `tune_kernel`), or the
    problem that refuses it: the checks of every run, then the sweep's own (422 "Invalid sweep").
    Shards are counted from the slots that will run them: with Redis, the live workers' of the pool
    the jobs go to, not this web server's `PLAYGROUND_SLOTS`."""
    entry = check_request(
        settings, catalog, entry=body.entry, source=body.source, chip=body.chip, mode=body.mode
    )
    mode = placed_mode(settings, body.chip, body.mode)
    with queue_problems():
        slots = await queue.slots_for(mode, body.chip)
    try:
        spec = sweeps.make_spec(
            entry,
            params=body.params,
            size=body.size,
            chips=body.lower_chips,
            check_size=body.check_size,
            bind=body.bind,
        )
        options = convert.interpret_options(body.options, entry.options if entry else None)
        parts = sweeps.shards(spec, shard_count(slots, settings.per_client_queue, spec.total))
        jobs = [
            make_sweep_job(
                body.source,
                part,
                entry=entry,
                chip=body.chip,
                mode=mode,
                options=options,
                limits=convert.limits(settings),
            )
            for part in parts
        ]
    except (sweeps.SweepError, JobError) as exc:
        raise ProblemError(422, "Invalid sweep", str(exc)) from exc
    return jobs, spec


async def start_sweep(
    registry: SweepRegistry, queue: RunQueue, jobs: list[Job], spec: SweepSpec, client: Client, *, fresh: bool
) -> Sweep:
    """Start the sweep's shard runs, or the queue's refusal as a problem (saying what a sweep needs)."""
    try:
        with queue_problems():
            return await registry.start(queue, jobs, spec, client, fresh=fresh)
    except ProblemError as problem:
        if isinstance(problem.__cause__, ClientBusyError):
            problem.detail = f"{problem.__cause__}; a sweep needs {len(jobs)}; wait for one to finish"
        raise
