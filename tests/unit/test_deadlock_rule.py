"""The deadlock rule over snapshots: every core waits or has finished, and no wait can end by itself."""

from sandbox.harness.monitor.deadlock import Wait, WaitState, stuck


def waiting(device: int, core: int, count: int = 0, value: int = 1, pending: int = 0) -> WaitState:
    wait = Wait(device, core, sem_id=2000, value=value, dma=False, location=None, semaphore=None)
    return WaitState(wait, count=count, pending=pending)


def test_a_lone_core_waiting_for_a_signal_that_cannot_come_is_stuck():
    assert stuck([(0, 0)], set(), [waiting(0, 0)])


def test_a_core_still_running_can_still_signal():
    assert not stuck([(0, 0), (0, 1)], set(), [waiting(0, 1)])


def test_a_finished_core_cannot_signal_any_more():
    assert stuck([(0, 0), (0, 1)], {(0, 0)}, [waiting(0, 1, count=1, value=2)])


def test_a_wait_with_a_queued_dma_ends_by_itself():
    # The waiting core runs the DMAs queued for its semaphore: that is how on_wait DMAs happen.
    assert not stuck([(0, 0)], set(), [waiting(0, 0, pending=1)])


def test_a_wait_already_satisfied_is_about_to_return():
    assert not stuck([(0, 0)], set(), [waiting(0, 0, count=1, value=1)])


def test_no_waits_no_verdict():
    assert not stuck([(0, 0)], set(), [])
    assert not stuck([], set(), [waiting(0, 0)])


def test_every_device_of_a_ring_waiting_is_stuck():
    cores = [(d, 0) for d in range(4)]
    assert stuck(cores, set(), [waiting(d, 0) for d in range(4)])
    assert not stuck(cores, set(), [waiting(d, 0) for d in range(3)])
