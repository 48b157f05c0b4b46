"""Long runs never take every slot: the one rule both run queues dispatch by.

A sweep's shard holds its slot for minutes (60 s + 10 s a config; 30 s a config on a chip), a plain
run for at most a minute. A sweep is cut into as many shards as slots but one (`server.sweeps`), but
that held for one sweep only: two sweeps (one holder's, or two people's) took both of two slots, and
every other run waited for them, up to 700 s (33 minutes on a chip). So when a slot asks for work,
a long run is handed out only while fewer than `long_slots(slots)` long runs are running; otherwise
the next run in fair order that is not long goes first, and the long ones keep their turn for the
next slot a long run frees. A pool of one slot still runs sweeps there (nothing else could).

The in-process engine asks `is_long` and `may_start_long`; the Redis queue marks a long run when it
is submitted (`long` in its hash) and its `TAKE` script (`sandbox.queue.lua`, which may not import
the server) counts its pool's live worker slots and its running long runs by this same rule.
"""

from __future__ import annotations

from sandbox.protocol import Job


def is_long(job: Job) -> bool:
    """Whether `job` may hold its slot for minutes: a sweep's shard."""
    return job.sweep is not None


def long_slots(slots: int) -> int:
    """How many of a pool's `slots` long runs may hold at once: all but one (one, of one slot)."""
    return max(1, slots - 1)


def may_start_long(slots: int, running_long: int) -> bool:
    """Whether another long run may start while `running_long` of them hold slots of `slots`."""
    return running_long < long_slots(slots)
