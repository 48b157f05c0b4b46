"""The monitor's state: what the hooks learned about the running kernels, and what it means.

`Monitor` holds it for one job process: the first failure of a kernel call (the exception and the
callback context attached to it), findings at a kernel's end, the waits the deadlock watchdog reads,
counts for progress, and the `Book` of names. `sandbox.harness.monitor.hooks` feeds it.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import threading
from collections.abc import Callable
from typing import Any

from sandbox.harness.monitor import deadlock as dl
from sandbox.harness.monitor.book import Book, memory_space_name
from sandbox.harness.monitor.pipelines import Pipelines
from sandbox.harness.monitor.source import Location, source_info_location
from sandbox.protocol.chips import ChipInfo

CONTEXT_ATTR = "_playground_context"


@dataclasses.dataclass(frozen=True)
class Failure:
    """The first exception of a failing run, and what the callback that raised it was doing."""

    exception: BaseException
    thread: Any = None  # the interpreter's failed thread, e.g. (device, core)

    @property
    def context(self) -> dict[str, Any]:
        return getattr(self.exception, CONTEXT_ATTR, None) or {}


@dataclasses.dataclass(frozen=True)
class Finding:
    """Something wrong with how a kernel ended: a DMA never waited for, a semaphore left non-zero."""

    kind: str  # "pending_dma" | "leftover_semaphore" (the kernel fails) | "overtaken_dma" (a note)
    device: int
    core: int
    sem_id: int
    count: int = 0
    location: Location | None = None
    src: tuple[str, int, int] | None = None  # (space, buffer id, device) of a DMA
    dst: tuple[str, int, int] | None = None


class ChipMismatchError(ValueError):
    """A kernel asks for more of the chip than the chip has (the simulator would run it anyway)."""


def too_many_cores(cores: int, chip: ChipInfo) -> str:
    have = chip.device_tensor_cores
    split = (
        f" (its chip's {chip.tensor_cores} TensorCores are {chip.tensor_cores} JAX devices)"
        if have < chip.tensor_cores
        else ""
    )
    return (
        f"pltpu.TensorCoreMesh(num_cores={cores}) asks for {cores} TensorCores, but a {chip.device_kind} "
        f"device has {have}{split}: leave num_cores out (the mesh then takes the chip's count, "
        f"pltpu.get_tpu_info().num_cores) or split the work over {have} core{'s' if have > 1 else ''}"
    )


class UnfinishedKernelError(Exception):
    """Raised by the session after a kernel call that left DMAs in flight or semaphores non-zero."""

    def __init__(self, findings: list[Finding]) -> None:
        super().__init__(f"the kernel ended with {len(findings)} unfinished DMA(s) or semaphore(s)")
        self.findings = findings


class Monitor:
    """Everything the hooks learn. One per job process; `install()` makes it and wires it in."""

    def __init__(self, files: tuple[str, ...], reason: str = "", chip: ChipInfo | None = None) -> None:
        self.files = files
        self.chip = chip  # the simulated chip: a TensorCoreMesh larger than it is refused
        self.reason = reason  # why the interpreter is not monitored; "" when it is
        self.book = Book()
        self.pipelines = Pipelines(files)
        self.counts: collections.Counter[str] = collections.Counter()
        self.activity = 0
        self.lock = threading.Lock()
        self.failure: Failure | None = None
        self.findings: list[Finding] = []
        self.notes: list[Finding] = []  # things worth saying about a run that does not fail by them
        self.waits: dict[int, dl.Wait] = {}
        self.thread_core: dict[int, tuple[int, int]] = {}
        self.finished: set[tuple[int, int]] = set()
        self.last_signal: dict[int, Location | None] = {}
        self.seen_dmas: set[int] = set()
        self.deadlock: dl.Deadlock | None = None
        self.callback_log: list[str] = []  # JAX's own reports of failed callbacks, for the server log
        self.on_deadlock: Callable[[dl.Deadlock], None] = lambda deadlock: None
        self.ipc: Any = None

    @property
    def available(self) -> bool:
        return not self.reason

    # -- what the session and the translator ask --------------------------------------------------

    def reset(self) -> None:
        """Before a kernel call: forget the previous call's failure and findings."""
        with self.lock:
            self.failure = None
            self.findings = []
            self.notes = []
            self.seen_dmas = set()
            self.deadlock = None

    def take_failure(self) -> Failure | None:
        with self.lock:
            failure, self.failure = self.failure, None
            return failure

    def take_findings(self) -> list[Finding]:
        with self.lock:
            findings, self.findings = self.findings, []
            return findings

    # -- the deadlock watchdog's view ---------------------------------------------------------------

    def snapshot(self) -> dl.Snapshot:
        shm = getattr(self.ipc, "_shared_memory", None)
        with self.lock:
            waits = list(self.waits.values())
            finished = set(self.finished)
        if shm is None or not waits:
            return [], finished, [], self.activity
        cores = [(d, c) for d in range(shm.num_devices) for c in range(shm.num_cores_per_device)]
        states = [
            dl.WaitState(
                w, int(w.semaphore.count_by_core[w.global_core]), len(w.semaphore.tasks[w.global_core])
            )
            for w in waits
        ]
        return cores, finished, states, self.activity

    def declare_deadlock(self, deadlock: dl.Deadlock) -> None:
        """Fail the stuck kernel the interpreter's own way: every waiter raises at its next poll."""
        shm = getattr(self.ipc, "_shared_memory", None)
        if shm is None or self.deadlock is not None:
            return
        self.deadlock = deadlock
        self.on_deadlock(deadlock)  # first: the session starts waiting for the kernel to come back
        shm.set_failed(dl.DeadlockError(deadlock), top_level=False)

    # -- bookkeeping for the hooks ------------------------------------------------------------

    def after_semaphore_signal(self, out: Any, a: dict[str, Any]) -> None:
        self.last_signal[int(a["sem_id"])] = source_info_location(a.get("source_info"), self.files)

    def after_allocate_buffer(self, out: Any, a: dict[str, Any]) -> None:
        space = self.space(a["memory_space"])
        location = source_info_location(a.get("source_info"), self.files)
        self.book.buffer_allocated(
            int(a["device_id"]), a["local_core_id"] is None, space, int(out[1]), location
        )

    def after_allocate_semaphores(self, out: Any, a: dict[str, Any]) -> None:
        ids = out[1]
        shape = tuple(int(n) for n in getattr(ids, "shape", ()))
        first = int(ids.flat[0]) if getattr(ids, "size", 0) else 0
        self.book.semaphores_allocated(int(a["device_id"]), a["local_core_id"] is None, first, shape)

    def after_get_barrier_semaphore(self, out: Any, a: dict[str, Any]) -> None:
        self.book.barrier_semaphore(int(out[1]))

    # -- helpers -----------------------------------------------------------------------------------

    def space(self, memory_space: Any) -> str:
        names = getattr(self.ipc, "TPU_MEMORY_SPACE_NAMES", {})
        return memory_space_name(names.get(int(memory_space), "vmem"))

    def note_overtaking(self, wait: dl.Wait, before: list[Any], after: list[Any]) -> None:
        """A DMA wait that ran a later copy while an earlier one on the same semaphore stays queued.

        The interpreter runs the DMAs queued on a semaphore last-in first-out when a core waits, and a
        wait counts bytes, not copies: with two copies in flight on one semaphore, the wait can
        return for the later one. A kernel that then reads what the earlier copy was to deliver reads
        stale memory. (On a TPU the order in which two DMAs land is not promised either.)
        """
        ran = [t for t in before if all(t is not a for a in after)]
        left = [t for t in after if any(t is b for b in before)]
        ran_ids = [getattr(getattr(t, "__self__", None), "id", -1) for t in ran]
        left_ids = [getattr(getattr(t, "__self__", None), "id", -1) for t in left]
        if not ran_ids or not left_ids or min(left_ids) >= max(ran_ids):
            return
        finding = Finding("overtaken_dma", wait.device, wait.core, wait.sem_id, location=wait.location)
        with self.lock:
            if not any(f.kind == "overtaken_dma" and f.sem_id == wait.sem_id for f in self.notes):
                self.notes.append(finding)

    def take_notes(self) -> list[Finding]:
        with self.lock:
            notes, self.notes = self.notes, []
            return notes

    def find_leftovers(self, device: int) -> None:
        """At a kernel's end on `device`: DMAs that never completed, semaphores not back at zero.

        A remote copy queues two tasks (the read on the sender's send semaphore, the read-and-write on
        the receiver's); once the receiver ran it, the sender's task is a no-op left in the queue, so
        only DMAs still owed by this device count (`_owed_by`).
        """
        shm = self.ipc._shared_memory
        found: list[Finding] = []
        sems = list(shm.sem.values()) + list(shm.fixed_id_sem.values())
        for gci in shm.get_global_core_ids(device):
            core = gci % shm.num_cores_per_device
            for sem in sems:
                for task in list(sem.tasks[gci]):
                    dma = getattr(task, "__self__", None)
                    if dma is None or dma.id in self.seen_dmas or not _owed_by(dma, device):
                        continue
                    self.seen_dmas.add(dma.id)
                    found.append(_pending(dma, device, core, sem.id, self.space, self.files))
                count = int(sem.count_by_core[gci])
                if count:
                    found.append(
                        Finding(
                            "leftover_semaphore", device, core, sem.id, count, self.last_signal.get(sem.id)
                        )
                    )
        with self.lock:
            self.findings += found


def _owed_by(dma: Any, device: int) -> bool:
    """Whether `device` ends its kernel with this DMA still to wait for.

    Not once the copy completed; nor, for a remote copy this device sent, once its read ran: that
    signalled the send semaphore (what `wait_send` waits for; a send never waited shows as that
    semaphore's leftover count), and the write is the receiver's to wait for (its own end-of-kernel
    check sees it). The receiver may be running the copy in its own thread at this moment, having
    signalled our send semaphore but not yet marked the read done: the DMA's lock is taken first so
    its state is not read half-way (else a correct ring kernel now and then ended "with a DMA in
    flight").
    """
    lock = getattr(dma, "lock", None)
    if lock is not None and lock.acquire(timeout=1.0):
        lock.release()
    state = str(getattr(getattr(dma, "state", None), "name", ""))
    if state == "COMPLETED":
        return False
    sent_remotely = int(dma.src_device_id) == device != int(dma.dst_device_id)
    return not (sent_remotely and state == "READ")


def _pending(
    dma: Any, device: int, core: int, sem_id: int, space: Callable[[Any], str], files: tuple[str, ...]
) -> Finding:
    return Finding(
        "pending_dma",
        device,
        core,
        sem_id,
        location=source_info_location(getattr(dma, "source_info", None), files),
        src=(space(dma.src_memory_space), int(dma.src_buffer_id), int(dma.src_device_id)),
        dst=(space(dma.dst_memory_space), int(dma.dst_buffer_id), int(dma.dst_device_id)),
    )


def annotate(exc: BaseException, context: dict[str, Any]) -> None:
    """Keep the innermost callback's arguments on the exception (the first to see it knows most)."""
    if getattr(exc, CONTEXT_ATTR, None) is None:
        with contextlib.suppress(AttributeError):  # a type without a __dict__ goes unannotated
            setattr(exc, CONTEXT_ATTR, context)
