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

Many addresses of one holder are not many light users: a /48 holds 65,536 IPv6 /64s, each a group
of its own, which would take every kept place two runs at a time. So a kept place also needs the
group's network (`server.clients.network_of`: an IPv4 /24, an IPv6 /48, a class owner's network)
to hold fewer than `LIGHT_NETWORK_RUNS` runs: two light people of one network at a time. (Holders of
many networks are not told apart: that needs accounts, which the playground does not have.)

A class member's own address is a group of its own too (`caps`): its own runs and the class runs it
sends count together, so joining someone else's class does not add the class's budget to the
address's own cap.

The in-process engine asks `refuses` and `caps`; the Redis queue passes `open_places`, `LIGHT_RUNS` and
`LIGHT_NETWORK_RUNS` (and the caps) to its `SUBMIT` script (`sandbox.queue.lua`, which may not import
the server), whose comparison is this one.
"""

from __future__ import annotations

# A group with fewer runs than this, queued or running, may take a kept place: one run and the
# next try after it, which is what a person at a keyboard sends.
LIGHT_RUNS = 2
# A network with fewer runs than this may take a kept place: two light groups' worth.
LIGHT_NETWORK_RUNS = 2 * LIGHT_RUNS


def kept_places(queue_size: int, queue_reserve: int | None) -> int:
    """Places kept for light groups: `queue_reserve` (a quarter of the queue when unset), at most all."""
    return queue_size // 4 if queue_reserve is None else max(0, min(queue_reserve, queue_size))


def open_places(queue_size: int, queue_reserve: int | None) -> int:
    """Runs that may wait before only light groups are admitted."""
    return queue_size - kept_places(queue_size, queue_reserve)


def refuses(queued: int, group_runs: int, network_runs: int, open_places: int) -> bool:
    """Whether a group holding `group_runs` runs (queued or running), in a network holding
    `network_runs`, is refused a place in a queue where `queued` runs wait: only once the open places
    are taken, and only a group that is not light or whose network is not."""
    return queued >= open_places and (group_runs >= LIGHT_RUNS or network_runs >= LIGHT_NETWORK_RUNS)


def caps(in_class: bool, per_address: int, class_cap: int) -> tuple[int, int]:
    """The two caps a run is counted against, both queues' one rule: its group's (an address's runs,
    or the budget of every class one owner started) and its holder's (the address it came from: its
    own runs and its class runs together, `Client.holder`). A class run's holder may have the class's
    whole budget (a room behind one school address is one address), never that beside its own cap:
    the bound an address that started classes has (`server.clients.with_its_classes`)."""
    if in_class:
        return class_cap, max(per_address, class_cap)
    return per_address, per_address
