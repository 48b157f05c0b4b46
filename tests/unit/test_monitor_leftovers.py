"""Which DMAs a device still owes at its kernel's end (the UnfinishedDMA finding), on stand-in DMAs shaped
like JAX's interpreter's (`state`, `lock`, source and destination devices)."""

from __future__ import annotations

import enum
import threading
import time
from dataclasses import dataclass, field

import pytest

from sandbox.harness.monitor.core import _owed_by


class State(enum.Enum):
    STARTED = 0
    READ = 1
    COMPLETED = 2


@dataclass
class Dma:
    src_device_id: int
    dst_device_id: int
    state: State
    lock: threading.Lock = field(default_factory=threading.Lock)


@pytest.mark.parametrize(
    ("dma", "device", "owed"),
    [
        (Dma(0, 1, State.STARTED), 0, True),  # a remote send nobody ran
        (Dma(0, 1, State.READ), 0, False),  # sent: the write is the receiver's to wait for
        (Dma(0, 1, State.READ), 1, True),  # the receiver never waited for it
        (Dma(0, 1, State.COMPLETED), 0, False),
        (Dma(0, 0, State.READ), 0, True),  # a local copy is done only when written
        (Dma(0, 0, State.STARTED), 0, True),
    ],
    ids=["remote-started", "remote-read-sender", "remote-read-receiver", "completed", "local-read", "local"],
)
def test_a_device_owes_what_it_has_not_waited_for(dma: Dma, device: int, owed: bool) -> None:
    assert _owed_by(dma, device) is owed


def test_a_copy_the_receiver_is_running_is_read_once_it_lets_go() -> None:
    # The receiver's thread has signalled the sender's send semaphore inside the DMA's lock and not yet
    # marked the read done: the sender, already at its kernel's end, must not call it in flight.
    dma = Dma(0, 1, State.STARTED)
    dma.lock.acquire()

    def receiver() -> None:
        time.sleep(0.2)
        dma.state = State.READ
        dma.lock.release()

    thread = threading.Thread(target=receiver)
    thread.start()
    try:
        assert _owed_by(dma, 0) is False
    finally:
        thread.join()
