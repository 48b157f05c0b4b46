"""Per-client token buckets: a steady rate of runs (or saves, or bytes) with some burst, then 429 with
Retry-After."""

from __future__ import annotations

import math
import time
from collections.abc import Callable


class RateLimiter:
    def __init__(self, per_minute: float, burst: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.rate = per_minute / 60.0
        self.burst = burst
        self.clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}

    def take(self, client: str, cost: float = 1.0) -> float:
        """Spend `cost` tokens (one run; or bytes, for a byte budget); returns 0 if allowed, else the
        seconds until that many are available."""
        if self.rate <= 0:
            return 0.0
        now = self.clock()
        tokens, last = self._buckets.get(client, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + (now - last) * self.rate)
        if tokens >= cost:
            self._buckets[client] = (tokens - cost, now)
            return 0.0
        self._buckets[client] = (tokens, now)
        return math.ceil((cost - tokens) / self.rate)
