"""What the web servers read from the Redis queue: live workers per pool, the cache, a run's fields,
health facts and the metrics every worker and script counts (`sandbox.queue` says what each key is)."""

from __future__ import annotations

import dataclasses
import json
import logging
from dataclasses import dataclass, field
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import ResponseError

from sandbox.backends import BackendHealth
from sandbox.protocol import RunResult, from_json_dict
from sandbox.protocol.result import PHASE_NAMES
from sandbox.queue import GROUP, lua
from sandbox.queue.metrics import BUCKETS
from server.queue import long_runs
from server.queue.cache import cache_ref
from server.queue.interface import PoolHealth, QueueHealth
from server.queue.metrics import Histogram, MetricsSnapshot, lua_number

log = logging.getLogger(__name__)

# A waiting run that waited this long while its pool had a free slot means dispatch is stuck.
STUCK_QUEUE_SECONDS = 30.0
MEAN_SECONDS_UNKNOWN = 5.0


@dataclass(frozen=True)
class WorkerInfo:
    name: str
    slots: int
    busy: int
    # jax version → why this worker's sandbox cannot run it (its own words: the user's terms).
    unavailable: dict[str, str] = field(default_factory=dict)
    out_of_service: int = 0  # slots its sandbox holds out (a job it could not stop, or the pool still runs)


class RedisState:
    def __init__(self, redis: aioredis.Redis, prefix: str) -> None:
        # Any: redis-py types replies as bytes | str | None whatever the client decodes.
        self.redis: Any = redis
        self.prefix = prefix
        self._live = lua.bind(redis.register_script, lua.LIVE_WORKERS, prefix)

    def key(self, *parts: str) -> str:
        return self.prefix + ":".join(parts)

    async def pools(self) -> list[str]:
        return sorted(await self.redis.smembers(self.key("pools")))

    async def live_pools(self) -> dict[str, list[WorkerInfo]]:
        """Every pool ever served, with its live workers (none: nobody would run a job there now)."""
        found = {}
        for pool in await self.pools():
            rows = await self._live(pool=pool)
            found[pool] = [
                WorkerInfo(name, int(slots), int(busy), _runtimes(unavailable), int(out))
                for name, slots, busy, unavailable, out in rows
            ]
        return found

    async def run_fields(self, run_id: str, *fields: str) -> list[Any] | None:
        values = await self.redis.hmget(self.key("run", run_id), list(fields))
        return None if values[0] is None else values

    async def in_flight(self, group: str) -> list[str]:
        """The runs queued or running of `group` (an address, or `address/browser`): its set of active
        runs (`active:GROUP`, kept by the SUBMIT script and `end_run`), less any that ended or expired."""
        ids = sorted(await self.redis.smembers(self.key("active", group)))
        async with self.redis.pipeline(transaction=False) as pipe:
            for run_id in ids:
                pipe.hget(self.key("run", run_id), "state")
            states = await pipe.execute()
        return [run_id for run_id, state in zip(ids, states, strict=True) if state in ("queued", "running")]

    async def cached(self, key: str) -> RunResult | None:
        """The result of an identical earlier run, flagged as a copy (the entry a worker's FINISH wrote)."""
        text = await self.redis.get(self.key("cache", key))
        if text is None:
            return None
        await self.redis.zadd(self.key("cache", "lru"), {key: await self._now()})
        entry = json.loads(text)
        result = from_json_dict(RunResult, entry["result"])
        return dataclasses.replace(
            result, cached_from=cache_ref(entry["run"]), cached_at=float(entry["at"]), phases=None
        )

    async def runs_of(self, pool: str) -> list[str]:
        """The pool's waiting runs and the runs its workers hold."""
        waiting = await self.redis.zrange(self.key("q", pool, "since"), 0, -1)
        stream = self.key("stream", pool)
        held = []
        try:
            pending = await self.redis.xpending_range(stream, GROUP, min="-", max="+", count=1000)
        except ResponseError:  # no worker ever served the pool: no group, nothing held
            pending = []
        for row in pending:
            for _, fields in await self.redis.xrange(stream, row["message_id"], row["message_id"]):
                held.append(fields.get("run", ""))
        return [*waiting, *[r for r in held if r]]

    async def mean_run_seconds(self, pool: str) -> float:
        total, count = await self.redis.hmget(self.key("metrics", "run", pool), ["sum", "+Inf"])
        return float(total) / int(count) if count and int(count) else MEAN_SECONDS_UNKNOWN

    async def retry_after(self, pool: str, queued: int) -> int:
        slots = sum(w.slots for w in (await self.live_pools()).get(pool, [])) or 1
        return max(1, round(await self.mean_run_seconds(pool) * max(1, queued) / slots))

    async def place(self, pool: str, position: int) -> dict[str, Any]:
        """A `queued` event's data: the place, how many wait, a rough wait estimate."""
        slots = sum(w.slots for w in (await self.live_pools()).get(pool, [])) or 1
        mean = await self.mean_run_seconds(pool)
        queued = await self.redis.zcard(self.key("q", pool, "since"))
        return {
            "position": position,
            "queued": queued,
            "eta_seconds": round(mean * ((position - 1) // slots + 1), 1),
        }

    async def health(self) -> QueueHealth:
        now = await self._now()
        pools, problems, notes = [], [], []
        every = await self.live_pools()
        for pool, workers in every.items():
            since = self.key("q", pool, "since")
            queued = await self.redis.zcard(since)
            oldest = await self.redis.zrange(since, 0, 0, withscores=True)
            waited = max(0.0, now - oldest[0][1]) if oldest else 0.0
            # Stuck: waiting that long although nothing was dispatched for as long (a slot's busy
            # flag comes with heartbeats and may be a moment old; the last dispatch is exact).
            moved = float(await self.redis.get(self.key("q", pool, "moved")) or 0.0)
            stalled = min(waited, now - moved)
            slots, busy = sum(w.slots for w in workers), sum(w.busy for w in workers)
            pools.append(PoolHealth(pool, len(workers), slots, busy, queued, round(waited, 1)))
            if not workers and queued:
                problems.append(f"pool {pool!r} has {queued} waiting runs and no live worker")
            elif not workers:
                notes.append(f"pool {pool!r} has no live worker")
            elif busy < slots and stalled > STUCK_QUEUE_SECONDS and await self._one_may_start(pool, slots):
                problems.append(f"a run in pool {pool!r} has waited {waited:.0f} s although a slot is free")
            out = sum(w.out_of_service for w in workers)
            if out:  # a job its sandbox could not stop holds a slot; every slot: nothing can run
                said = f"{out} of {slots} slots of pool {pool!r} are out of service (a job that could not be stopped)"
                (problems if out >= slots else notes).append(said)
        live = sum(p.workers for p in pools)
        if not live:
            problems.insert(0, "no runner worker is live in any pool, so no run can start")
        # A runtime one live worker cannot start is unavailable: a run of it may land on that worker.
        unavailable = {
            name: why
            for workers in (await self.live_pools()).values()
            for w in workers
            for name, why in w.unavailable.items()
        }
        notes += [f"jax {name} cannot run jobs: {why}" for name, why in sorted(unavailable.items())]
        return QueueHealth(
            kind="redis",
            problems=problems,
            notes=notes,
            queued=sum(p.queued for p in pools),
            running=sum(p.busy for p in pools),
            slots=sum(p.slots for p in pools),
            slots_alive=sum(p.slots for p in pools),
            worker_restarts=0,
            oldest_wait_seconds=max((p.oldest_wait_seconds for p in pools), default=0.0),
            sandbox=BackendHealth(
                ok=live > 0,
                detail=f"{live} live workers in {len(pools)} pools",
                quarantined_slots=sum(w.out_of_service for workers in every.values() for w in workers),
                unavailable=tuple(sorted(unavailable.items())),
            ),
            pools=pools,
        )

    async def _one_may_start(self, pool: str, slots: int) -> bool:
        """Whether a waiting run of `pool` may take a free slot: one that is not long, or a long one
        while long runs hold fewer than their share (`server.queue.long_runs`); a sweep's shard
        waiting for a sweep's slot is not a stuck queue."""
        waiting = await self.redis.zrange(self.key("q", pool, "since"), 0, -1)
        running = sorted(await self.redis.smembers(self.key("long", pool)))
        async with self.redis.pipeline(transaction=False) as pipe:
            for run_id in [*waiting, *running]:
                pipe.hmget(self.key("run", run_id), ["long", "state"])
            found = await pipe.execute()
        if any(flag != "1" for flag, _ in found[: len(waiting)]):
            return True
        held = sum(1 for _, state in found[len(waiting) :] if state == "running")
        return long_runs.may_start_long(slots, held)

    def unreachable(self, exc: BaseException) -> QueueHealth:
        # The address and the error name our hosts: the log has them, health (public) does not.
        log.warning("health: the run queue (Redis) is unreachable: %s", exc)
        reason = "the run queue (Redis) is unreachable, so no run can be queued or followed"
        return QueueHealth(
            kind="redis",
            problems=[reason],
            notes=[],
            queued=0,
            running=0,
            slots=0,
            slots_alive=0,
            worker_restarts=0,
            oldest_wait_seconds=0.0,
            sandbox=BackendHealth(ok=False, detail=reason),
        )

    async def metrics(self) -> MetricsSnapshot:
        snapshot = MetricsSnapshot()
        for name, n in (await self.redis.hgetall(self.key("metrics", "runs"))).items():
            pool, _, status = name.partition("|")
            snapshot.runs[(pool, status)] = int(n)
        failures = await self.redis.hgetall(self.key("metrics", "failures"))
        snapshot.failures = {pool: int(n) for pool, n in failures.items()}
        health = await self.health()
        for p in health.pools:
            for name, into in (("wait", snapshot.wait), ("run", snapshot.run), ("latency", snapshot.latency)):
                into[p.name] = _histogram(await self.redis.hgetall(self.key("metrics", name, p.name)))
            await self._phase_metrics(snapshot, p.name)
            snapshot.queued[p.name], snapshot.oldest_wait[p.name] = p.queued, p.oldest_wait_seconds
            snapshot.workers[p.name], snapshot.slots[p.name], snapshot.busy[p.name] = (
                p.workers,
                p.slots,
                p.busy,
            )
        return snapshot

    async def _phase_metrics(self, snapshot: MetricsSnapshot, pool: str) -> None:
        """The phases workers count at each run's end (`lua.FINISH`); the queue wait is `wait`'s."""
        snapshot.phases[(pool, "queued")] = snapshot.wait[pool]
        for name in PHASE_NAMES[1:]:
            fields = await self.redis.hgetall(self.key("metrics", "phase", name, pool))
            if fields:
                snapshot.phases[(pool, name)] = _histogram(fields)
        first = await self.redis.hgetall(self.key("metrics", "first_verdict", pool))
        if first:
            snapshot.first_verdict[pool] = _histogram(first)

    async def _now(self) -> float:
        seconds, micros = await self.redis.time()
        return seconds + micros / 1e6


def _histogram(fields: dict[str, str]) -> Histogram:
    counts = [int(fields.get(lua_number(b), 0)) for b in BUCKETS] + [int(fields.get("+Inf", 0))]
    return Histogram(counts=counts, sum=float(fields.get("sum", 0.0)))


def _runtimes(text: str) -> dict[str, str]:
    """A heartbeat's `unavailable` field (a worker of an older release sends none: nothing)."""
    try:
        found = json.loads(text)
    except ValueError:
        return {}
    return {str(k): str(v) for k, v in found.items()} if isinstance(found, dict) else {}
