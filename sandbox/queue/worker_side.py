"""A worker's connection to the Redis queue (blocking calls; one per worker process, shared by its
slot threads and its heartbeat thread: the client's connection pool is thread-safe)."""

from __future__ import annotations

import contextlib
from typing import Any, Literal, cast

import redis

from sandbox.queue import lua
from sandbox.queue.keys import DEFAULT_PREFIX, GROUP, Claim, check_pool_name


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
        self._take = self.redis.register_script(lua.TAKE)
        self._renew = self.redis.register_script(lua.RENEW)
        self._emit = self.redis.register_script(lua.EMIT)
        self._finish = self.redis.register_script(lua.FINISH)
        self._abort = self.redis.register_script(lua.ABORT)
        self._heartbeat = self.redis.register_script(lua.HEARTBEAT)

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
        found = self._call(self._take, self.pool, self.consumer, slot, self.lease_ms, self.max_deliveries)
        if not found:
            return None
        kind, run_id, entry_id, attempt, job = found
        return Claim(cast(Literal["run", "lost", "skip"], kind), run_id, entry_id, int(attempt), job)

    def wait_for_work(self, timeout: float) -> None:
        """Block until a run was submitted to the pool (or `timeout`); a ring may be stale."""
        self.redis.blpop([self.key("bell", self.pool)], timeout=timeout)

    def renew(self, claim: Claim) -> Literal["lost", "carry on", "cancel"]:
        answer = int(
            self._call(self._renew, self.pool, self.consumer, claim.entry_id, claim.run_id, claim.attempt)
        )
        return "lost" if answer < 0 else "cancel" if answer == 1 else "carry on"

    def emit(self, claim: Claim, kind: str, data: str) -> bool:
        return bool(self._call(self._emit, claim.run_id, claim.attempt, kind, data))

    def finish(self, claim: Claim, result: str, status: str, *, failure: bool, reusable: bool) -> bool:
        """End the run with `result` if this attempt still holds it; False: another one does."""
        return bool(
            self._call(self._finish, claim.run_id, claim.attempt, result, status, int(failure), int(reusable))
        )

    def abort(self, run_id: str, result: str, status: str, *, failure: bool, only_if: str = "") -> bool:
        return bool(self._call(self._abort, run_id, result, status, int(failure), only_if))

    def heartbeat(self, *, slots: int, busy: int, ttl_seconds: float, host: str) -> None:
        self._call(self._heartbeat, self.pool, self.consumer, round(ttl_seconds * 1000), slots, busy, host)

    def leave(self) -> None:
        """Say goodbye: this worker is no longer live (its held runs, if any, are reclaimed later)."""
        with contextlib.suppress(redis.RedisError):
            self.redis.zrem(self.key("workers", self.pool), self.consumer)
            self.redis.delete(self.key("worker", self.consumer))

    def close(self) -> None:
        self.redis.close()

    def _call(self, script: Any, *args: object) -> Any:
        return script(keys=[], args=[self.prefix, *args])
