"""The queue's last places, kept for people with few runs: the one rule both run queues admit by.

Caps per browser, per address and per class owner bound what one group holds, but not what a few
groups hold together: three addresses at their cap (24), or two class owners at their classes'
budget (32), filled a queue of 64, and every other user got 503 until their runs drained. So once
`open_places` runs wait, a run is admitted only for a group (the unit its cap counts: its address,
or its class owner's budget for a class member or the owner itself) that holds fewer than
`LIGHT_RUNS` runs queued or running; anyone else gets the queue's "full" answer (503 with
Retry-After). Someone trying the playground, or a student behind an address of their own, always
finds a place while the heavy users wait their turn. Nothing already queued is dropped: the rule
only decides who joins.

The in-process engine asks `refuses`; the Redis queue passes `open_places` and `LIGHT_RUNS` to its
`SUBMIT` script (`sandbox.queue.lua`, which may not import the server), whose comparison is this one.
"""

from __future__ import annotations

# A group with fewer runs than this, queued or running, may take a kept place: one run and the
# next try after it, which is what a person at a keyboard sends.
LIGHT_RUNS = 2


def kept_places(queue_size: int, queue_reserve: int | None) -> int:
    """Places kept for light groups: `queue_reserve` (a quarter of the queue when unset), at most all."""
    return queue_size // 4 if queue_reserve is None else max(0, min(queue_reserve, queue_size))


def open_places(queue_size: int, queue_reserve: int | None) -> int:
    """Runs that may wait before only light groups are admitted."""
    return queue_size - kept_places(queue_size, queue_reserve)


def refuses(queued: int, group_runs: int, open_places: int) -> bool:
    """Whether a group holding `group_runs` runs (queued or running) is refused a place in a queue
    where `queued` runs wait: only once the open places are taken, and only a group that is not light."""
    return queued >= open_places and group_runs >= LIGHT_RUNS
