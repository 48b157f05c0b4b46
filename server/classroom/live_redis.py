"""The live state of a class in Redis (`PLAYGROUND_REDIS_URL`): every web server reads and changes
the same room, and a stream per class is the change feed all of their streams block on.

Keys (under `PLAYGROUND_REDIS_PREFIX`), each expiring `IDLE_SECONDS` after the class's last change:
`class:{id}:edit` (hash: student -> "step at"), `class:{id}:hands` (sorted set: student -> when
raised), `class:{id}:follow` (the step), `class:{id}:feed` (stream of change kinds, capped at about
`FEED_LENGTH`); `classjoin:{what}:{address}` holds the times of an address's joins (or join-code
lookups) in the last minute (a sliding window, kept by one script so web servers cannot race it).
"""

from __future__ import annotations

import functools
import logging
import secrets
import time
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from server.classroom.live import (
    EDIT_REFRESH_SECONDS,
    FEED_LENGTH,
    IDLE_SECONDS,
    JOIN_WINDOW_SECONDS,
    Change,
    Editing,
    Kind,
    LiveState,
)
from server.problems import ProblemError

log = logging.getLogger(__name__)

# A sliding-window limiter on Redis's clock: drop attempts older than the window, refuse when the rest
# reach the limit (the wait: until the oldest leaves it), else keep this one. → seconds to wait, or 0.
# KEYS: the address's set; ARGV: window seconds, limit, a unique member for this attempt.
ADMIT = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1e6
local window, limit = tonumber(ARGV[1]), tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
if redis.call('ZCARD', KEYS[1]) >= limit then
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return tostring(math.max(tonumber(oldest[2]) + window - now, 0.001))
end
redis.call('ZADD', KEYS[1], now, ARGV[3])
redis.call('EXPIRE', KEYS[1], 2 * window)
return '0'
"""


def guarded[**P, T](call: Callable[P, Coroutine[Any, Any, T]]) -> Callable[P, Coroutine[Any, Any, T]]:
    """Redis out of reach: 503 with Retry-After, as the run queue answers then (not a 500)."""

    @functools.wraps(call)
    async def guard(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return await call(*args, **kwargs)
        except (RedisError, OSError) as exc:
            log.warning("the class state (Redis) is unreachable: %s", exc)
            raise ProblemError(
                503, "Class state unavailable", "the class's live state cannot be reached; try again soon",
                headers={"Retry-After": "5"},
            ) from exc  # fmt: skip

    return guard


class RedisLive:
    def __init__(self, url: str, prefix: str) -> None:
        # Any: redis-py types replies as bytes | str | None whatever the client decodes.
        self.redis: Any = aioredis.Redis.from_url(
            url, decode_responses=True, socket_connect_timeout=2, socket_timeout=None
        )
        self.prefix = prefix
        self._admit = self.redis.register_script(ADMIT)

    def key(self, class_id: str, part: str) -> str:
        return f"{self.prefix}class:{class_id}:{part}"

    @guarded
    async def report_editing(self, class_id: str, student_id: str, step: int) -> bool:
        key, now = self.key(class_id, "edit"), time.time()
        before = _editing(await self.redis.hget(key, student_id))
        fresh = before is None or before.step != step or now - before.at >= EDIT_REFRESH_SECONDS
        if fresh:
            await self._write(class_id, lambda p: p.hset(key, student_id, f"{step} {now}"), key)
        return fresh

    @guarded
    async def set_hand(self, class_id: str, student_id: str, raised: bool) -> None:
        key = self.key(class_id, "hands")
        if raised:  # NX: a hand raised twice keeps its place
            await self._write(class_id, lambda p: p.zadd(key, {student_id: time.time()}, nx=True), key)
        else:
            await self.redis.zrem(key, student_id)

    @guarded
    async def clear_hands(self, class_id: str) -> None:
        await self.redis.delete(self.key(class_id, "hands"))

    @guarded
    async def set_follow(self, class_id: str, step: int | None) -> None:
        key = self.key(class_id, "follow")
        if step is None:
            await self.redis.delete(key)
        else:
            await self.redis.set(key, str(step), ex=IDLE_SECONDS)

    @guarded
    async def forget_student(self, class_id: str, student_id: str) -> None:
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hdel(self.key(class_id, "edit"), student_id)
            pipe.zrem(self.key(class_id, "hands"), student_id)
            await pipe.execute()

    @guarded
    async def state(self, class_id: str) -> LiveState:
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hgetall(self.key(class_id, "edit"))
            pipe.zrange(self.key(class_id, "hands"), 0, -1, withscores=True)
            pipe.get(self.key(class_id, "follow"))
            edits, hands, follow = await pipe.execute()
        editing = {sid: e for sid, text in edits.items() if (e := _editing(text)) is not None}
        return LiveState(editing, tuple((sid, float(at)) for sid, at in hands), _step(follow))

    @guarded
    async def publish(self, class_id: str, kind: Kind) -> None:
        key = self.key(class_id, "feed")
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.xadd(key, {"k": kind}, maxlen=FEED_LENGTH, approximate=True)
            pipe.expire(key, IDLE_SECONDS)
            await pipe.execute()

    async def changes(self, class_id: str, idle_seconds: float) -> AsyncIterator[Change | None]:
        key = self.key(class_id, "feed")
        newest = await self.redis.xrevrange(key, count=1)
        last = newest[0][0] if newest else "0-0"
        while True:
            got = await self.redis.xread({key: last}, count=200, block=round(idle_seconds * 1000))
            if not got:
                yield None
                continue
            for entry_id, fields in got[0][1]:
                last = entry_id
                yield Change(entry_id, fields.get("k", ""))

    @guarded
    async def admit_join(self, address: str, per_minute: int, what: str = "join") -> float:
        if per_minute <= 0:
            return 0.0
        key = f"{self.prefix}classjoin:{what}:{address}"
        wait = await self._admit(keys=[key], args=[JOIN_WINDOW_SECONDS, per_minute, secrets.token_hex(8)])
        return float(wait)

    async def close(self) -> None:
        await self.redis.aclose()

    async def _write(self, class_id: str, change: Any, key: str) -> None:
        async with self.redis.pipeline(transaction=False) as pipe:
            change(pipe)
            pipe.expire(key, IDLE_SECONDS)
            await pipe.execute()


def _editing(text: str | None) -> Editing | None:
    step, _, at = (text or "").partition(" ")
    return Editing(int(step), float(at)) if step.isdigit() and at else None


def _step(text: str | None) -> int | None:
    return int(text) if text and text.isdigit() else None
