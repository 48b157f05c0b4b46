"""The queue's last places are kept for people with few runs (`server.queue.admission`), in the
in-process engine; and a sweep leaves a slot for everyone else (`server.sweeps.shard_count`).
The same rule on Redis: `tests/scale/test_fair_admission_redis.py`."""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Callable
from typing import Any

import pytest

from sandbox.limits import default_limits
from sandbox.protocol import InterpretOptions, Job
from server.clients import Client, in_class_session, with_its_classes
from server.queue import admission
from server.queue.engine import InProcessEngine
from server.queue.interface import ClientBusyError, QueueFullError
from server.queue.problems import full_detail
from server.sweeps import shard_count
from tests.api.fakes import FakeBackend


def job_for(source: str) -> Job:
    return Job(
        id=source, source=source, chip="v5p", mode="auto", options=InterpretOptions(), limits=default_limits()
    )


def engine(**values: Any) -> InProcessEngine:
    """No slot workers: every admitted run stays queued, so the counts are the queue's."""
    settings = {"slots": 1, "queue_size": 16, "per_client": 64, "per_address": 6, "runs_kept": 64}
    return InProcessEngine(FakeBackend(), **{**settings, **values})


def admitted(queue: InProcessEngine, client: Client, tries: int) -> list[str]:
    """What each of `tries` submissions of `client` got: "ok", "full", "kept" or "busy"."""
    got = []
    for k in range(tries):
        try:
            queue.enqueue(job_for(f"{client.key} {k}"), client)
            got.append("ok")
        except QueueFullError as exc:
            got.append("kept" if exc.kept else "full")
        except ClientBusyError:
            got.append("busy")
    return got


def in_loop[T](scenario: Callable[[], T]) -> T:
    async def run() -> T:
        return scenario()

    # In a thread of its own: asyncio.run refuses a thread whose loop another test left running.
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, run()).result()


@pytest.mark.parametrize(
    ("queue_size", "reserve", "kept"),
    [(64, None, 16), (16, None, 4), (3, None, 0), (64, 0, 0), (64, 10, 10), (8, 100, 8)],
)
def test_the_kept_places_are_a_quarter_of_the_queue_unless_set(queue_size, reserve, kept):
    assert admission.kept_places(queue_size, reserve) == kept
    assert admission.open_places(queue_size, reserve) == queue_size - kept


@pytest.mark.parametrize(
    ("queued", "group_runs", "network_runs", "refused"),
    [
        (11, 5, 9, False),  # open places left: no rule
        (12, 0, 0, False),
        (12, 1, 3, False),
        (12, 2, 2, True),  # the group is not light
        (12, 0, 4, True),  # its network is not
        (15, 24, 24, True),
    ],
)
def test_only_a_group_with_few_runs_in_a_network_with_few_takes_a_kept_place(
    queued, group_runs, network_runs, refused
):
    assert admission.refuses(queued, group_runs, network_runs, open_places=12) is refused


def test_many_addresses_of_one_network_are_not_many_light_users():
    """A /48 holds 65,536 /64s and an attacker's /24 256 addresses: each a light group, they took
    every kept place. Now one network takes at most `LIGHT_NETWORK_RUNS` of them."""

    def scenario() -> tuple[list[str], list[str], list[str]]:
        queue = engine(queue_size=24, per_address=18)  # 18 open places, the last 6 kept
        admitted(queue, Client("10.0.0.1"), 18)
        sixty_fours = [admitted(queue, Client(f"2001:db8:1:{i:x}::/64"), 1)[0] for i in range(8)]
        elsewhere = admitted(queue, Client("2001:db8:2:1::/64"), 1)  # another /48
        fours = [admitted(queue, Client(f"203.0.113.{i}"), 1)[0] for i in range(1, 4)]
        return sixty_fours, elsewhere, fours

    sixty_fours, elsewhere, fours = in_loop(scenario)
    assert sixty_fours == ["ok"] * admission.LIGHT_NETWORK_RUNS + ["kept"] * 4
    assert elsewhere == ["ok"]
    assert fours == ["ok", "full", "full"]  # the last place, then the queue is full


def test_three_addresses_going_for_their_cap_leave_places_for_others():
    def scenario() -> tuple[list[list[str]], InProcessEngine]:
        queue = engine()  # 16 places, the last 4 kept; 6 runs an address
        heavy = [admitted(queue, Client(f"10.0.{i}.1", "greedy"), 7) for i in range(3)]  # 3 networks
        light = [admitted(queue, Client(f"192.0.2.{i}"), 1) for i in range(4)]
        return [*heavy, *light], queue

    got, queue = in_loop(scenario)
    # Two take their cap (12 places); the third gets a kept place while it is light, then no more.
    assert got[:3] == [["ok"] * 6 + ["busy"]] * 2 + [["ok", "ok", "kept", "kept", "kept", "kept", "kept"]]
    assert got[3:] == [["ok"], ["ok"], ["full"], ["full"]]  # light users until the queue is full
    assert queue.queued == 16  # nothing queued was dropped, and every run has its place
    assert sorted(queue.position(run) or 0 for run in queue.queue) == list(range(1, 17))


def test_a_light_address_gets_a_second_run_but_not_a_third():
    def scenario() -> list[str]:
        queue = engine(per_address=12)
        admitted(queue, Client("10.0.0.1"), 12)
        return admitted(queue, Client("192.0.2.1"), 3)

    assert in_loop(scenario) == ["ok", "ok", "kept"]


def test_a_running_run_counts_toward_a_group_being_light():
    def scenario() -> list[str]:
        queue = engine(per_address=12)
        admitted(queue, Client("10.0.0.1"), 12)
        running = queue.enqueue(job_for("mine"), Client("192.0.2.1"))
        queue.queue.remove(running.client.address, running.client.browser, running)
        running.state = "running"
        return admitted(queue, Client("192.0.2.1"), 2)

    assert in_loop(scenario) == ["ok", "kept"]


def test_two_class_owners_at_their_budget_leave_places_for_others():
    def scenario() -> list[list[str]]:
        queue = engine(class_budget=64)  # each owner's classes: half the queue, 8
        owners = [
            [admitted(queue, in_class_session(f"c{o}", f"s{k}", f"owner{o}"), 1)[0] for k in range(9)]
            for o in range(2)
        ]
        return [*owners, admitted(queue, Client("192.0.2.1"), 1)]

    first, second, newcomer = in_loop(scenario)
    assert first == ["ok"] * 8 + ["busy"]
    assert second == ["ok"] * 4 + ["kept"] * 5
    assert newcomer == ["ok"]


def test_a_class_members_own_runs_and_its_class_runs_share_one_cap():
    """Issue 41, fourth round: an address that joined another's class held its own cap (6) and the
    class's budget (8) beside it. Now its runs count together: the class's cap at most."""

    def scenario() -> tuple[list[str], list[str], list[str], list[str]]:
        queue = engine(class_budget=16)  # each owner's classes: half the queue, 8
        mine = admitted(queue, Client("203.0.113.1", "b"), 6)
        sent = [
            admitted(queue, in_class_session("c", f"s{k}", "owner", "203.0.113.1"), 1)[0] for k in range(4)
        ]
        classmate = admitted(queue, in_class_session("c", "real", "owner", "198.51.100.1"), 1)
        return mine, sent, classmate, admitted(queue, Client("203.0.113.1", "other"), 1)

    mine, sent, classmate, again = in_loop(scenario)
    assert mine == ["ok"] * 6 and sent == ["ok", "ok", "busy", "busy"]
    assert classmate == ["ok"] and again == ["busy"]


def test_an_owner_that_joins_another_class_counts_those_runs_with_its_own():
    def scenario() -> tuple[list[str], list[str]]:
        queue = engine(class_budget=16)
        home = with_its_classes(Client("10.0.0.1", "b"), "ownerA")  # its own runs, with its classes
        sent = [
            admitted(queue, in_class_session("p", f"s{k}", "ownerP", home.address), 1)[0] for k in range(4)
        ]
        return sent, admitted(queue, home, 3)

    sent, own = in_loop(scenario)
    assert sent == ["ok"] * 4 and own == ["ok", "ok", "busy"]  # its cap (6) counts the 4 it sent


def test_a_refusal_for_a_kept_place_says_why_and_when_to_try_again():
    def scenario() -> QueueFullError:
        queue = engine(per_address=13)
        admitted(queue, Client("10.0.0.1"), 12)
        with pytest.raises(QueueFullError) as refused:
            queue.enqueue(job_for("one more"), Client("10.0.0.1"))
        return refused.value

    refused = in_loop(scenario)
    assert (refused.kept, refused.queued) == (4, 12) and refused.retry_after >= 1
    assert full_detail(refused) == (
        "12 runs are waiting; its last 4 places are kept for people with fewer than 2 runs queued or "
        "running (counted per network address, or per class) in a network (an IPv4 /24, an IPv6 /48) "
        f"with fewer than 4, and yours has more; try again in {refused.retry_after} s"
    )


def test_no_kept_places_when_the_reserve_is_zero():
    def scenario() -> list[str]:
        queue = engine(per_address=16, queue_reserve=0)
        return admitted(queue, Client("10.0.0.1"), 16) + admitted(queue, Client("192.0.2.1"), 1)

    assert in_loop(scenario) == ["ok"] * 16 + ["full"]


@pytest.mark.parametrize(
    ("slots", "per_client", "total", "shards"),
    [
        (1, 8, 27, 1),  # one slot: the sweep's one shard waits its turn with everyone's runs
        (2, 8, 27, 1),  # the other slot stays free
        (4, 8, 27, 3),
        (16, 8, 27, 8),  # no more than the client may have at once
        (8, 8, 2, 2),  # no more than there are configs
        (0, 8, 27, 1),  # no live worker (Redis): one shard, refused by the queue as any run
    ],
)
def test_a_sweep_leaves_one_slot_for_everyone_else(slots, per_client, total, shards):
    assert shard_count(slots, per_client, total) == shards
