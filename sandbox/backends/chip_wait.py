"""Running a job on a chip that another program may hold: wait, then run it again.

libtpu lets one process own a chip; a second one fails within about 2 s with "The TPU is already in
use by process with pid N" (measured on a v5e VM), and the harness reports that as an `error` event
with fault `chip_busy` before any user code ran. Our own jobs never collide (each backend runs one
job per chip slot at a time); another program on the VM can hold a chip (a notebook, a benchmark, a
stuck job of another playground). So the job waits in its queue and is run again, up to
`CHIP_WAIT_SECONDS`; after that the user sees the busy message itself, with the holder's pid.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from sandbox.protocol import Execution

log = logging.getLogger(__name__)

CHIP_WAIT_SECONDS = 60.0
RETRY_SECONDS = 2.0


def chip_was_busy(execution: Execution) -> bool:
    """Whether the job stopped because its chips were held by another program (nothing ran)."""
    return any(e.kind == "error" and e.data.get("fault") == "chip_busy" for e in execution.events)


def run_waiting_for_chip(
    run_once: Callable[[], Execution],
    cancel: threading.Event,
    *,
    wait_seconds: float = CHIP_WAIT_SECONDS,
    retry_seconds: float = RETRY_SECONDS,
    clock: Callable[[], float] = time.monotonic,
) -> Execution:
    """`run_once()` until it is not refused for a busy chip, the wait is over, or the run is cancelled."""
    give_up = clock() + wait_seconds
    tries = 0
    while True:
        execution = run_once()
        tries += 1
        if not chip_was_busy(execution) or clock() + retry_seconds > give_up:
            if tries > 1:
                log.info("chip job ran after %d tries (busy: %s)", tries, chip_was_busy(execution))
            return execution
        if cancel.wait(retry_seconds):
            return execution
