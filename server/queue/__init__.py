"""The run queue, chosen once per app: in this process with a local sandbox backend (the embedded
default), or Redis with runner workers elsewhere (`PLAYGROUND_REDIS_URL`)."""

from __future__ import annotations

from collections.abc import Callable

from sandbox.backends import Backend
from server import versions
from server.queue.cache import ResultCache
from server.queue.inprocess import InProcessQueue
from server.queue.interface import RunQueue
from server.ratelimit import RateLimiter
from server.settings import Settings


def create_queue(settings: Settings, backend: Callable[[], Backend]) -> RunQueue:
    """The configured queue; `backend` makes the local sandbox backend, only when one is used."""
    return on_redis(settings) if settings.redis_url else in_process(settings, backend())


def in_process(settings: Settings, backend: Backend) -> RunQueue:
    return InProcessQueue(
        backend,
        slots=settings.slots,
        queue_size=settings.queue_size,
        queue_reserve=settings.queue_reserve,
        per_client=settings.per_client_queue,
        runs_kept=settings.runs_kept,
        runs_kept_bytes=settings.runs_kept_bytes,
        cache=ResultCache(settings.cache_size),
        per_address=settings.per_address_queue,
        limiter=RateLimiter(settings.rate_per_minute, settings.rate_burst),
        address_limiter=RateLimiter(settings.address_rate_per_minute, settings.address_rate_burst),
        class_budget=settings.class_queue,
        class_limiter=RateLimiter(settings.class_rate_per_minute, settings.class_rate_burst),
        versions=versions.cache_key(),
    )


# Not named `redis_queue`: importing the submodule of that name would replace it on this package.
def on_redis(settings: Settings) -> RunQueue:
    from server.queue.redis_queue import RedisQueue  # imports redis only when it is used

    return RedisQueue(settings, versions=versions.cache_key())
