"""The run queue on Redis: any number of web servers share runs, events, limits and the result
cache, and runner workers on any host execute the jobs (`sandbox.queue` holds the scheduling design
and the scripts; `sandbox.worker` is the other side).

A web server here is stateless: every answer comes from Redis, so GET, cancel, the queue position
and an event stream resumed after `Last-Event-ID` work whichever server a client reaches. When
Redis cannot be reached, every call raises `QueueUnavailableError` (503 with Retry-After), never a
500, and the next call tries again.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, cast

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from sandbox.backends.execute import cancelled_before_start, no_runner_result
from sandbox.host.logfmt import run_context
from sandbox.protocol import Job, RunResult, from_json_dict, to_json_dict
from sandbox.queue import lua
from sandbox.queue.keys import pool_for
from server.clients import Client
from server.queue import admission, long_runs
from server.queue.cache import job_key
from server.queue.engine import class_cap, new_run_id
from server.queue.fairness import fair_order
from server.queue.interface import (
    ClientBusyError,
    FinishedRun,
    FollowEvent,
    NoRunnerError,
    QueueFullError,
    QueueHealth,
    QueueUnavailableError,
    RateLimitedError,
    RunView,
    State,
)
from server.queue.metrics import MetricsSnapshot
from server.queue.redis_state import RedisState
from server.settings import Settings

log = logging.getLogger(__name__)
STREAM_ID = re.compile(r"\d{1,20}-\d{1,20}", re.ASCII)  # a header's "١-١" is no id Redis takes
# How often a follower of a queued run looks at its place, and how long it waits otherwise.
POSITION_SECONDS = 1.0
KEEPALIVE_SECONDS = 15.0


class RedisQueue:
    def __init__(self, settings: Settings, *, versions: str) -> None:
        self.settings, self.versions = settings, versions
        # Any: redis-py types replies as bytes | str | None whatever the client decodes.
        self.redis: Any = aioredis.Redis.from_url(
            settings.redis_url, decode_responses=True, socket_connect_timeout=2, socket_timeout=None
        )
        self.state = RedisState(self.redis, settings.redis_prefix)
        register, prefix = self.redis.register_script, settings.redis_prefix
        self._submit, self._store_done = (
            lua.bind(register, lua.SUBMIT, prefix),
            lua.bind(register, lua.STORE_DONE, prefix),
        )
        self._flag_cancel, self._abort = (
            lua.bind(register, lua.FLAG_CANCEL, prefix),
            lua.bind(register, lua.ABORT, prefix),
        )
        self._snapshot = lua.bind(register, lua.SNAPSHOT, prefix)
        self._janitor: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self._janitor = asyncio.create_task(self._keep_pools(), name="redis-queue-janitor")

    async def stop(self) -> None:
        if self._janitor is not None:
            self._janitor.cancel()
            await asyncio.gather(self._janitor, return_exceptions=True)
        await self.redis.aclose()

    # -- RunQueue ------------------------------------------------------------------------------

    async def submit(self, job: Job, client: Client, *, fresh: bool = False) -> RunView:
        return await self._guard(lambda: self._submit_run(job, client, fresh))

    async def view(self, run_id: str) -> RunView | None:
        return await self._guard(lambda: self._view(run_id))

    async def slots_for(self, mode: str, chip: str) -> int:
        return await self._guard(lambda: self._slots_for(mode, chip))

    async def cancel(self, run_id: str) -> RunView | None:
        return await self._guard(lambda: self._cancel(run_id))

    async def finished(self, run_id: str) -> FinishedRun | None:
        return await self._guard(lambda: self._finished(run_id))

    async def runs_in_flight(self, address: str, browser: str | None = None) -> list[str]:
        group = address if browser is None else f"{address}/{browser}"
        return await self._guard(lambda: self.state.in_flight(group))

    async def follow(self, run_id: str, after: str | None) -> AsyncIterator[FollowEvent | None]:
        try:
            async for item in self._follow(run_id, after):
                yield item
        except (RedisError, OSError) as exc:
            log.warning("lost Redis while following run %s: %s", run_id, exc)
            raise QueueUnavailableError() from exc

    async def health(self) -> QueueHealth:
        try:
            return await self.state.health()
        except (RedisError, OSError) as exc:
            return self.state.unreachable(exc)

    async def metrics(self) -> MetricsSnapshot:
        return await self._guard(self.state.metrics)

    # -- internals -----------------------------------------------------------------------------

    async def _guard[T](self, call: Callable[[], Awaitable[T]]) -> T:
        try:
            return await call()
        except (RedisError, OSError) as exc:
            log.warning("the run queue (Redis) is unreachable: %s", exc)
            raise QueueUnavailableError() from exc

    async def _submit_run(self, job: Job, client: Client, fresh: bool) -> RunView:
        s = self.settings
        live = await self.state.live_pools()
        pool = pool_for(job.mode, job.chip, {p for p, workers in live.items() if workers})
        if not live.get(pool):
            raise NoRunnerError(pool)
        key = job_key(job, self.versions)
        run_id = new_run_id()
        group_cap, holder_cap = admission.caps(
            client.in_class, s.per_address_queue, class_cap(s.class_queue, s.queue_size)
        )
        job_text = json.dumps(to_json_dict(job))
        if not fresh and s.cache_size > 0 and (cached := await self.state.cached(key)) is not None:
            verdict, wait = await self._store_done(
                run_id=run_id,
                pool=pool,
                address=client.address,
                browser=client.browser,
                job=job_text,
                result=json.dumps(to_json_dict(cached)),
                ttl=s.runs_ttl,
                rate_per_minute=s.rate_per_minute,
                rate_burst=s.rate_burst,
                address_rate_per_minute=s.address_rate_per_minute,
                address_rate_burst=s.address_rate_burst,
            )
            if verdict == "rate":
                raise RateLimitedError(int(wait))
            return RunView(id=run_id, state="done", position=None, result=to_json_dict(cached))
        answer = await self._submit(
            run_id=run_id,
            pool=pool,
            address=client.address,
            browser=client.browser,
            job=job_text,
            cache_key=key,
            per_client=s.per_client_queue,
            per_address=group_cap,
            holder=client.holder,
            holder_cap=holder_cap,
            queue_size=s.queue_size,
            open_places=admission.open_places(s.queue_size, s.queue_reserve),
            light_runs=admission.LIGHT_RUNS,
            network=client.network,
            light_network_runs=admission.LIGHT_NETWORK_RUNS,
            ttl=s.runs_ttl,
            cache_size=s.cache_size,
            rate_per_minute=s.rate_per_minute,
            rate_burst=s.rate_burst,
            # A class session's budget stands in for the address's: its "address" is the class.
            address_rate_per_minute=s.class_rate_per_minute if client.in_class else s.address_rate_per_minute,
            address_rate_burst=s.class_rate_burst if client.in_class else s.address_rate_burst,
            long=int(long_runs.is_long(job)),
        )
        verdict, value = answer[0], int(answer[1])
        if verdict in ("full", "kept"):
            kept = admission.kept_places(s.queue_size, s.queue_reserve) if verdict == "kept" else 0
            raise QueueFullError(await self.state.retry_after(pool, value), value, kept)
        if verdict == "busy_client":
            raise ClientBusyError(value)
        if verdict == "busy_address":
            raise ClientBusyError(value, "your class" if client.in_class else "your network address")
        if verdict == "busy_holder":
            raise ClientBusyError(value, "your network address")
        if verdict == "rate":
            raise RateLimitedError(value)
        with run_context(run_id):
            log.info("queued in pool %s (%d waiting)", pool, value)
        return RunView(id=run_id, state="queued", position=await self._position(pool, run_id), result=None)

    async def _slots_for(self, mode: str, chip: str) -> int:
        live = await self.state.live_pools()
        pool = pool_for(mode, chip, {p for p, workers in live.items() if workers})
        return sum(worker.slots for worker in live.get(pool, []))

    async def _view(self, run_id: str) -> RunView | None:
        found = await self.state.run_fields(run_id, "state", "pool", "result")
        if found is None:
            return None
        state, pool, result = found
        position = await self._position(pool, run_id) if state == "queued" else None
        return RunView(
            id=run_id,
            state=cast(State, state),
            position=position,
            result=json.loads(result) if state == "done" and result else None,
        )

    async def _finished(self, run_id: str) -> FinishedRun | None:
        found = await self.state.run_fields(run_id, "state", "job", "result", "created")
        if found is None or found[0] != "done" or not found[2]:
            return None
        _, job_text, result_text, created = found
        result = from_json_dict(RunResult, json.loads(result_text))
        return FinishedRun(
            from_json_dict(Job, json.loads(job_text)), result, result.cached_at or float(created)
        )

    async def _cancel(self, run_id: str) -> RunView | None:
        found = await self.state.run_fields(run_id, "state", "job")
        if found is None:
            return None
        state, job_text = found
        if state == "queued":
            job = from_json_dict(Job, json.loads(job_text))
            result = json.dumps(to_json_dict(cancelled_before_start(job)))
            ended = await self._abort(
                run_id=run_id, result=result, status="cancelled", failure=0, only_if="queued"
            )
            if not ended:  # a worker took it meanwhile: flag it for its holder
                await self._flag_cancel(run_id=run_id)
        elif state == "running":
            await self._flag_cancel(run_id=run_id)
        view = await self._view(run_id)
        return None if view is None else dataclasses.replace(view, result=None)

    async def _position(self, pool: str, run_id: str) -> int | None:
        """1-based place in the pool's dispatch order (the round-robin of `server.queue.fairness`)."""
        snapshot = await self._snapshot(pool=pool)
        for place, queued in enumerate(fair_order(snapshot), start=1):
            if queued == run_id:
                return place
        return None

    async def _follow(self, run_id: str, after: str | None) -> AsyncIterator[FollowEvent | None]:
        events = self.state.key("run", run_id, "ev")
        last = after if after and STREAM_ID.fullmatch(after) else "0-0"
        shown: int | None = None
        while True:
            found = await self.state.run_fields(run_id, "state", "pool")
            queued = found is not None and found[0] == "queued"
            if found is not None and queued:
                position = await self._position(found[1], run_id)
                if position is not None and position != shown:
                    shown = position
                    yield FollowEvent(None, "queued", await self.state.place(found[1], position))
            done = found is not None and found[0] == "done"
            block = POSITION_SECONDS if queued else KEEPALIVE_SECONDS
            wait = {} if done else {"block": round(block * 1000)}
            got = await self.redis.xread({events: last}, count=200, **wait)
            if not got:
                if found is None:
                    return  # unknown, or expired: nothing more will come
                if done and last != "0-0":
                    last = "0-0"  # an id past the end of a finished run: replay it, so `done` comes
                    continue
                if done:
                    return
                yield None
                continue
            for entry_id, fields in got[0][1]:
                last = entry_id
                yield FollowEvent(entry_id, fields["k"], json.loads(fields["d"]))
                if fields["k"] == "done":
                    return

    async def _keep_pools(self) -> None:
        """End the runs of a pool that stayed without any live worker for the grace period."""
        alone_since: dict[str, float] = {}
        loop = asyncio.get_running_loop()
        grace = self.settings.worker_grace_seconds
        while True:
            await asyncio.sleep(max(0.2, grace / 4))
            try:
                for pool, workers in (await self.state.live_pools()).items():
                    if workers:
                        alone_since.pop(pool, None)
                        continue
                    since = alone_since.setdefault(pool, loop.time())
                    if loop.time() - since >= grace:
                        await self._abandon(pool)
            except (RedisError, OSError):
                pass  # Redis is away: health says so; look again next round
            except Exception:
                log.exception("the pool janitor failed once; it carries on")

    async def _abandon(self, pool: str) -> None:
        for run_id in await self.state.runs_of(pool):
            found = await self.state.run_fields(run_id, "job")
            if found is None:
                continue
            result = no_runner_result(from_json_dict(Job, json.loads(found[0])), pool)
            text = json.dumps(to_json_dict(result))
            if await self._abort(
                run_id=run_id, result=text, status=result.status.value, failure=1, only_if=""
            ):
                with run_context(run_id):
                    log.warning("ended: pool %s has had no live worker for a while", pool)
