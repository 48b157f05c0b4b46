"""The dispatch order: addresses take turns, browsers within an address take turns, FIFO within one."""

from server.queue.fairness import FairQueue


def drain(queue: FairQueue[str]) -> list[str]:
    taken = []
    while (item := queue.take()) is not None:
        taken.append(item)
    return taken


def test_addresses_take_turns_however_many_browser_ids_one_mints():
    queue: FairQueue[str] = FairQueue()
    for i in range(6):
        queue.push("6.6.6.6", f"minted-{i}", f"greedy-{i}")
    queue.push("192.0.2.1", "alice", "alice-1")
    queue.push("192.0.2.2", "bob", "bob-1")
    queue.push("192.0.2.1", "alice", "alice-2")
    expected = [
        "greedy-0",
        "alice-1",
        "bob-1",
        "greedy-1",
        "alice-2",
        "greedy-2",
        "greedy-3",
        "greedy-4",
        "greedy-5",
    ]
    assert queue.order() == expected
    assert drain(queue) == expected
    assert len(queue) == 0


def test_browsers_at_one_address_take_turns():
    queue: FairQueue[str] = FairQueue()
    for item in ("a1", "a2", "a3"):
        queue.push("proxy", "a", item)
    queue.push("proxy", "b", "b1")
    assert drain(queue) == ["a1", "b1", "a2", "a3"]


def test_the_served_address_goes_to_the_back():
    queue: FairQueue[str] = FairQueue()
    queue.push("x", "", "x1")
    queue.push("x", "", "x2")
    queue.push("y", "", "y1")
    assert queue.take() == "x1"
    queue.push("z", "", "z1")
    assert queue.order() == ["y1", "x2", "z1"]  # a newcomer joins at the back of the rotation


def test_remove_drops_one_item_and_empty_levels():
    queue: FairQueue[str] = FairQueue()
    queue.push("x", "b", "x1")
    queue.push("y", "b", "y1")
    assert queue.remove("x", "b", "x1") and not queue.remove("x", "b", "x1")
    assert queue.order() == ["y1"] and len(queue) == 1


def test_a_queue_says_whether_anything_waits():
    queue: FairQueue[str] = FairQueue()
    assert not queue
    queue.push("a", "b", "run")
    assert queue
    assert queue.take() == "run" and not queue


def test_an_item_passed_over_keeps_its_turn():
    """`server.queue.long_runs`: a sweep's shard that may not start yet is passed over for the next run
    that may, and is the next one out once it may start."""
    queue: FairQueue[str] = FairQueue()
    queue.push("x", "b", "x-sweep")
    queue.push("x", "b", "x-run")
    queue.push("y", "b", "y-sweep")
    queue.push("z", "b", "z-run")

    def plain(item: str) -> bool:
        return not item.endswith("sweep")

    assert queue.take(plain) == "x-run"  # behind its own browser's sweep, in x's turn
    assert queue.take(plain) == "z-run"
    assert queue.take(plain) is None and len(queue) == 2
    assert drain(queue) == ["y-sweep", "x-sweep"]  # x was served last: y's turn comes first
