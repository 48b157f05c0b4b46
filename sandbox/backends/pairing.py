"""A run's two jobs at once: its reference's job in a second slot, when one is free right now.

A run that checks outputs is two independent jobs (`sandbox.backends.checking`): the kernel's job
makes its own inputs and the checker compares their digests, so neither waits for the other's
data. Run one after the other in the run's slot, the reference's job adds its whole time to the
run (about a fifth of a scratch run with a reference). So when a queue's slot is free this very
moment, the reference's job borrows it and runs beside the kernel's job; otherwise the two run one
after the other in the run's own slot, as before.

No deadlock in a full pool: the borrow never waits (`RunSlots.borrow`), and a run waits for its own
slot (`RunSlots.hold`) only while it holds none. A run can then wait a little for a slot another
run borrowed: no longer than that run's reference's job. Jobs on a TPU chip are never paired (both
would need the chip). The queues own the slots: the in-process engine and each Redis worker make
one `RunSlots` of their slot count and pass it to `execute`.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from sandbox.backends import checking
from sandbox.backends.base import Backend
from sandbox.protocol import Job, never_ran

log = logging.getLogger(__name__)


class RunSlots:
    """A queue's slots: each running run holds one; its reference's job may borrow one that is free."""

    def __init__(self, count: int, waiting: Callable[[], bool] = lambda: False) -> None:
        """`waiting`: whether a queued run is about to take a free slot (it is not free to borrow then)."""
        self.count, self.waiting = count, waiting
        self._free = count
        self._cond = threading.Condition()

    def hold(self, cancel: threading.Event) -> bool:
        """Take the run's own slot; False if the run was cancelled first. Waits only while one is lent."""
        with self._cond:
            while self._free <= 0:
                if cancel.is_set():
                    return False
                self._cond.wait(0.05)
            self._free -= 1
            return True

    def borrow(self) -> bool:
        """Take a second slot if one is free this moment; never waits."""
        with self._cond:
            if self._free <= 0 or self.waiting():
                return False
            self._free -= 1
            return True

    def give(self) -> None:
        with self._cond:
            self._free = min(self.count, self._free + 1)
            self._cond.notify_all()

    @property
    def free(self) -> int:
        with self._cond:
            return self._free


class Linked(threading.Event):
    """The kernel job's cancel switch: set with the run's (a user's cancel) or on its own (its
    reference failed, so its result is moot). Backends read it with `is_set` only."""

    def __init__(self, parent: threading.Event) -> None:
        super().__init__()
        self.parent = parent

    def is_set(self) -> bool:
        return super().is_set() or self.parent.is_set()


class PendingReference:
    """The reference's job of a run, running in a borrowed slot beside the kernel's job."""

    def __init__(self, backend: Backend, job: Job, cancel: threading.Event, slots: RunSlots) -> None:
        self.kernel_cancel = Linked(cancel)
        self._found: checking.Reference | checking.ReferenceFailed | None = None
        self._done = threading.Event()
        self._thread = threading.Thread(
            target=self._run, args=(backend, job, cancel, slots), name=f"reference-{job.id[:8]}", daemon=True
        )
        self._thread.start()

    def _run(self, backend: Backend, job: Job, cancel: threading.Event, slots: RunSlots) -> None:
        try:
            found = checking.expected_for(backend, job, cancel, reuse=False)
        except Exception as exc:  # a backend fault, as `execute` treats one: the run fails cleanly
            log.exception("sandbox backend failed for the reference's job of %s", job.id)
            ref_job = checking.reference_job(job) or job
            found = checking.ReferenceFailed(ref_job, never_ran(f"the sandbox failed ({type(exc).__name__})"))
        finally:
            slots.give()
        self._found = found
        if isinstance(found, checking.ReferenceFailed):
            self.kernel_cancel.set()
        self._done.set()

    def done(self) -> bool:
        return self._done.is_set()

    def result(self) -> checking.Reference | checking.ReferenceFailed | None:
        self._done.wait()
        return self._found


Started = checking.Reference | checking.ReferenceFailed | PendingReference | None


def start_reference(
    backend: Backend,
    job: Job,
    cancel: threading.Event,
    slots: RunSlots | None,
    kept: checking.Reference | None,
) -> Started:
    """The run's reference: `kept` (what the caller found an earlier run left: looked up once, so the
    run knows whether its reference is its own), computing beside the kernel's job in a borrowed
    slot, or (no slot free) computed now in the run's own slot before the kernel's job starts."""
    if kept is not None:
        return kept
    if slots is None or job.mode == "tpu" or checking.reference_job(job) is None or not slots.borrow():
        return checking.expected_for(backend, job, cancel, reuse=False)
    log.info("job %s: its reference's job runs beside it, in a free slot", job.id)
    return PendingReference(backend, job, cancel, slots)


def checker_for(job: Job, started: Started) -> checking.Checker:
    if isinstance(started, PendingReference):
        return checking.Checker(job, None, pending=started)
    assert not isinstance(started, checking.ReferenceFailed)
    return checking.Checker(job, started)


def kernel_cancel(started: Started, cancel: threading.Event) -> threading.Event:
    return started.kernel_cancel if isinstance(started, PendingReference) else cancel
