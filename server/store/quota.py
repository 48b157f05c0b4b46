"""Quotas on what shares and lessons store: per network address, a rate of saves and a byte budget
(token buckets: 429 with Retry-After beyond either), and one budget on the bytes the database holds
in all (507 beyond it: nobody can save until an operator makes room).

Identical content stays content-addressed and free: saving what is already stored costs a save
(the request was made) but never bytes. The buckets live in this web server's memory (behind a
balancer each server keeps its own, so an address gets that many times the rates); the global
budget is read from the database itself, so it holds for every server together.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from server.problems import ProblemError
from server.ratelimit import RateLimiter
from server.settings import Settings
from server.store.sqlite import PROBES, RecordDatabase, content_id

# How long the database's total is trusted before it is counted again (this server's own saves are
# added as they happen; other servers' show up at the next count).
TOTAL_SECONDS = 30.0
TABLES = ("shares", "lessons", "measurements")


class StoreQuota:
    def __init__(self, settings: Settings, clock: Callable[[], float] = time.monotonic) -> None:
        self.saves = RateLimiter(settings.store_saves_per_minute, settings.store_saves_burst, clock)
        per_hour = settings.store_address_bytes_per_hour
        self.bytes = RateLimiter(per_hour / 60.0, per_hour, clock)
        self.budget, self.clock = settings.store_bytes, clock
        self._total: tuple[float, int] | None = None  # (when counted, bytes)
        self._lock = threading.Lock()

    def admit(self, address: str) -> None:
        """One save's token for `address`, or 429 with Retry-After."""
        wait = self.saves.take(address)
        if wait:
            raise _limited(f"you saved too often; try again in {round(wait)} s", wait)

    def charge(self, database: RecordDatabase, address: str, table: str, content: str) -> None:
        """Bytes for saving `content` into `table` (none when it is stored already), or a problem:
        429 with Retry-After over the address's budget, 507 over the database's."""
        if stored_already(database, table, content):
            return
        size = len(content.encode())
        if self.budget > 0 and self.total(database) + size > self.budget:
            raise ProblemError(
                507,
                "Storage full",
                "this playground has no room for more shares and lessons right now; existing links "
                "still work, and an operator has been told",
            )
        wait = self.bytes.take(address, size)
        if wait:
            detail = (
                f"you saved {size:,} more bytes than your budget allows now; try again in {round(wait)} s"
            )
            raise _limited(detail, wait)
        with self._lock:
            if self._total is not None:
                self._total = (self._total[0], self._total[1] + size)

    def total(self, database: RecordDatabase) -> int:
        """The bytes of every share and lesson stored (counted at most every `TOTAL_SECONDS`)."""
        now = self.clock()
        with self._lock:
            if self._total is not None and now - self._total[0] < TOTAL_SECONDS:
                return self._total[1]
        counted = sum(
            int(database.rows(f"SELECT COALESCE(SUM(LENGTH(record)), 0) FROM {table}")[0][0])
            for table in TABLES
        )
        with self._lock:
            self._total = (now, counted)
        return counted


def stored_already(database: RecordDatabase, table: str, content: str) -> bool:
    """Whether `content` is in `table` (under any of its probe ids): saving it again adds nothing."""
    for probe in range(PROBES):
        row = database.get(table, content_id(content, database.salt, probe))
        if row is None:
            return False
        if row[0] == content:
            return True
    return False


def _limited(detail: str, wait: float) -> ProblemError:
    seconds = str(max(1, round(wait)))
    return ProblemError(429, "Too many saves", detail, headers={"Retry-After": seconds})
