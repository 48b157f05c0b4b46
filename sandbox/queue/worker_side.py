"""A worker's connection to the Redis queue (blocking calls; one per worker process, shared by its
slot threads and its heartbeat thread: the client's connection pool is thread-safe)."""

from __future__ import annotations

import contextlib
import json
from typing import Literal, cast

import redis

from sandbox.queue import lua
from sandbox.queue.keys import DEFAULT_PREFIX, GROUP, Claim, check_pool_name

# Events a run's stream keeps while it runs (the oldest go first): with the per-event and per-run
# caps of `sandbox.backends.execute`, what one run can hold in Redis is bounded twice.
MAX_EVENTS = 1000


class WorkerQueue:
    def __init__(
        self,
        url: str,
        pool: str,
        consumer: str,
        *,
        prefix: str = DEFAULT_PREFIX,
        lease_seconds: float = 30.0,
        max_deliveries: int = 2,
    ) -> None:
        self.pool, self.consumer, self.prefix = check_pool_name(pool), consumer, prefix
        self.lease_ms = max(1, round(lease_seconds * 1000))
        self.max_deliveries = max_deliveries
        self.redis = redis.Redis.from_url(url, decode_responses=True, health_check_interval=10)
        register = self.redis.register_script
        self._take, self._renew = lua.bind(register, lua.TAKE, prefix), lua.bind(register, lua.RENEW, prefix)
        self._emit, self._finish = (
            lua.bind(register, lua.EMIT, prefix),
            lua.bind(register, lua.FINISH, prefix),
        )
        self._abort = lua.bind(register, lua.ABORT, prefix)
        self._heartbeat = lua.bind(register, lua.HEARTBEAT, prefix)

    def key(self, *parts: str) -> str:
        return self.prefix + ":".join(parts)

    def ensure_group(self) -> None:
        """The pool's stream and its consumer group, created once by whichever worker comes first."""
        try:
            self.redis.xgroup_create(self.key("stream", self.pool), GROUP, id="$", mkstream=True)
        except redis.ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise

    def take(self, slot: int) -> Claim | None:
        found = self._take(
            pool=self.pool,
            consumer=self.consumer,
            slot=slot,
            lease_ms=self.lease_ms,
            max_deliveries=self.max_deliveries,
        )
        if not found:
            return None
        kind, run_id, entry_id, attempt, job = found
        return Claim(cast(Literal["run", "lost", "skip"], kind), run_id, entry_id, int(attempt), job)

    def wait_for_work(self, timeout: float) -> None:
        """Block until a run was submitted to the pool (or `timeout`); a ring may be stale."""
        self.redis.blpop([self.key("bell", self.pool)], timeout=timeout)

    def renew(self, claim: Claim) -> Literal["lost", "carry on", "cancel"]:
        answer = int(
            self._renew(
                pool=self.pool,
                consumer=self.consumer,
                entry_id=claim.entry_id,
                run_id=claim.run_id,
                attempt=claim.attempt,
            )
        )
        return "lost" if answer < 0 else "cancel" if answer == 1 else "carry on"

    def emit(self, claim: Claim, kind: str, data: str) -> bool:
        return bool(
            self._emit(
                run_id=claim.run_id, attempt=claim.attempt, kind=kind, data=data, max_events=MAX_EVENTS
            )
        )

    def finish(
        self, claim: Claim, result: str, status: str, *, failure: bool, reusable: bool, phases: str = ""
    ) -> bool:
        """End the run with `result` if this attempt still holds it; False: another one does.
        `phases`: the run's `RunResult.phases` as a JSON object, counted for `/metrics`."""
        return bool(
            self._finish(
                run_id=claim.run_id,
                attempt=claim.attempt,
                result=result,
                status=status,
                failure=int(failure),
                reusable=int(reusable),
                phases=phases,
            )
        )

    def abort(self, run_id: str, result: str, status: str, *, failure: bool, only_if: str = "") -> bool:
        return bool(
            self._abort(run_id=run_id, result=result, status=status, failure=int(failure), only_if=only_if)
        )

    def heartbeat(
        self,
        *,
        slots: int,
        busy: int,
        ttl_seconds: float,
        host: str,
        unavailable: dict[str, str] | None = None,
        out_of_service: int = 0,
    ) -> None:
        """`unavailable`: jax version → why this worker cannot run jobs on it (in the user's terms);
        `out_of_service`: slots its sandbox holds out (the web servers' health tells of them)."""
        self._heartbeat(
            pool=self.pool,
            worker=self.consumer,
            ttl_ms=round(ttl_seconds * 1000),
            slots=slots,
            busy=busy,
            host=host,
            unavailable=json.dumps(unavailable or {}, sort_keys=True),
            out=out_of_service,
        )

    def leave(self) -> None:
        """Say goodbye: this worker is no longer live (its held runs, if any, are reclaimed later)."""
        with contextlib.suppress(redis.RedisError):
            self.redis.zrem(self.key("workers", self.pool), self.consumer)
            self.redis.delete(self.key("worker", self.consumer))

    def close(self) -> None:
        self.redis.close()
