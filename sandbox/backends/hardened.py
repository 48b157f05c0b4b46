"""The `hardened` backend: jobs forked from a warm pool inside bubblewrap, each in its own jail.

The backend starts the pool (`sandbox.jail.pool`) under bwrap (`pool_process`, `sandbox.jail.outer`:
an empty environment, its own pid, network, IPC and UTS namespaces, a minimal read-only root holding
nothing of the server), and talks to it over one SOCK_SEQPACKET socket pair. Per job it creates the
four pipes, hands the child's ends to the pool, writes the job into stdin and watches the rest with
`watch.Watch`. A keeper thread owns the pool process: it spawned it (so
bwrap's --die-with-parent is tied to a thread that lives as long as the backend), reads its
messages, and when the pool dies fails the runs in flight with an `infra_error` and starts a new
pool, which sweeps what the dead one left.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import socket
import threading
import time
import uuid
from dataclasses import replace
from pathlib import Path

import sandbox
from sandbox import limits as default_limits
from sandbox.backends import staging, uid_lease
from sandbox.backends.base import BackendHealth, EventSink
from sandbox.backends.chip_wait import run_waiting_for_chip
from sandbox.backends.pool_process import PoolProcess, Waiter, kill_pool, start_pool_process, stop_process
from sandbox.backends.slots import SlotTable
from sandbox.backends.watch import Outcome, Pipes, Watch, close_quietly
from sandbox.host.jobenv import base_environment
from sandbox.host.tpuhost import TpuHostError, TpuSlot, host_slots, runs_on_chip
from sandbox.jail import channel
from sandbox.jail.probe import probe
from sandbox.jail.runtime import Runtime
from sandbox.protocol import Execution, Job, never_ran, to_json_dict
from sandbox.protocol.codec import DecodeError
from sandbox.protocol.pool import JobExited, PoolReady, StartJob, decode

log = logging.getLogger(__name__)

UID_BASE = 21000
DEFAULT_SLOTS = 8
# Past a job's wall time, what the pool takes at most to end it by itself (its backstop, then teardown).
BUSY_HOLD_SECONDS = 20.0


class BackendUnavailable(RuntimeError):
    """This machine cannot run the hardened backend; the message says why."""


class HardenedBackend:
    name = "hardened"

    def __init__(
        self,
        *,
        slots: int | None = None,
        uid_base: int = UID_BASE,
        runtime: Runtime | None = None,
        cpu_cores: float | None = default_limits.CPU_CORES,
        start_seconds: float = 120.0,
        sandbox_dir: Path | None = None,
        tpu_slots: tuple[TpuSlot, ...] | None = None,
        slot_table: SlotTable | None = None,
    ) -> None:
        """`sandbox_dir`: the `sandbox` package the pool runs (default: this one), mounted read-only.
        `slots`: jobs at once on the CPU (interpret mode). `tpu_slots`: chip sets, one job at a time
        on each (default: one per chip of this host; none on a CPU machine). `slot_table`: slots
        shared with the pools of other runtimes (it sets the CPU slot count; default: this pool's own)."""
        self.runtime = runtime or Runtime()
        try:
            self.tpu_slots = host_slots() if tpu_slots is None else tpu_slots
        except TpuHostError as exc:
            raise BackendUnavailable(f"local (hardened unavailable: {exc})") from exc
        # Before anything is written: without root, staging's folder under /run is not ours to make.
        found = probe(self.runtime, self.tpu_slots)
        if not found.ok:
            raise BackendUnavailable(found.report())
        # Mounted from a neutral copy: a job's mountinfo must not reveal the server's checkout.
        self._staged = staging.stage(sandbox_dir or Path(sandbox.__file__).parent)
        self.sandbox_dir = self._staged.path
        cpu = slot_table.cpu if slot_table else DEFAULT_SLOTS if slots is None else slots
        # Chip slots come last (see `pool.Config`).
        self.table = slot_table or SlotTable(cpu, len(self.tpu_slots))
        self.cpu_slots, slots = cpu, self.table.size
        # Slot uids of our own: another pool on this host never runs a job as one of them.
        self._uids = uid_lease.lease(uid_base, slots)
        self.slots, self.uid_base = slots, self._uids.first
        self.cpu_cores = cpu_cores or float(len(os.sched_getaffinity(0)))
        self.start_seconds = start_seconds
        self._pool: PoolProcess | None = None
        self._pool_error: str | None = None
        self._pool_cond = threading.Condition()
        self._closing = threading.Event()
        self.restarts = 0
        self._keeper = threading.Thread(target=self._keep, name="sandbox-pool-keeper", daemon=True)
        self._keeper.start()

    # -- Backend -------------------------------------------------------------------------------

    def run(self, job: Job, on_event: EventSink, cancel: threading.Event) -> Execution:
        host_chip = self.tpu_slots[0].chip if self.tpu_slots else None
        on_chip = runs_on_chip(job.mode, job.chip, host_chip, job.role)
        if not on_chip and self.cpu_slots == 0:
            return never_ran("this job runner has no CPU slots for interpret-mode runs")
        kind = self.table.chip_slots if on_chip else self.table.cpu_slots
        job = default_limits.on_chip(job) if on_chip else job

        def attempt() -> Execution:
            execution = never_ran(None, cancelled=True)
            for _ in range(2):  # a slot the pool finds still busy is held out, and the job tries another
                slot = self.table.take(cancel, kind)
                if slot is None:
                    return never_ran(None, cancelled=True)
                execution, busy = self._run_on(slot, job, on_event, cancel)
                if not busy:
                    break
            return replace(execution, on_chip=on_chip and slot in self.table.chip_slots)

        # A chip another program holds: the job gives its slot back and waits (`chip_wait`).
        return run_waiting_for_chip(attempt, cancel) if on_chip else attempt()

    def _run_on(
        self, slot: int, job: Job, on_event: EventSink, cancel: threading.Event
    ) -> tuple[Execution, bool]:
        """The job run on `slot`, which it gives back unless the job outlived every kill or the pool
        said the slot still runs an earlier job (True then: that slot is held out for a while)."""
        quarantined = busy = False
        try:
            pool = self.wait_ready(self.start_seconds)
            if pool is None:
                return never_ran(f"the sandbox pool is not running ({self._pool_state()})"), False
            execution, quarantined, busy = self._run_in(pool, slot, job, on_event, cancel)
            if busy:
                self._hold_out(pool, slot, job.limits.wall_seconds + BUSY_HOLD_SECONDS)
            return execution, busy
        finally:
            if not (quarantined or busy):
                self.table.give(slot)

    def health(self) -> BackendHealth:
        with self._pool_cond:
            pool, error = self._pool, self._pool_error
        quarantined = self.table.quarantined
        ready = pool is not None and pool.ready is not None
        if not ready:
            detail = f"the sandbox pool is not running ({self._pool_state(error)})"
        elif quarantined:
            detail = (
                f"{quarantined} of {self.slots} slots out of service "
                "(a job that could not be stopped, or one the sandbox pool still runs)"
            )
        else:
            detail = f"pool ready, {self.slots} slots"
        return BackendHealth(
            ok=ready and quarantined < self.slots,
            detail=detail,
            restarts=self.restarts,
            quarantined_slots=quarantined,
        )

    def _pool_state(self, error: str | None = None) -> str:
        """Why the pool is not running, in a user's terms: its error names install folders, so it
        stays in the log (`sandbox pool failed to start: …`)."""
        if error is None:
            with self._pool_cond:
                error = self._pool_error
        return "starting" if error is None else "it failed to start; the operator's log says why"

    def close(self) -> None:
        self._closing.set()
        with self._pool_cond:
            pool = self._pool
        if pool is not None:
            # The pool sees EOF, kills its jobs, cleans up and exits; shutdown (not close) also wakes
            # the keeper thread blocked in recv on this socket.
            with contextlib.suppress(OSError):
                pool.sock.shutdown(socket.SHUT_RDWR)
        self._keeper.join(timeout=15)
        if not self._keeper.is_alive():
            self._uids.release()
            self._staged.release()

    # -- for tests and the benchmark -----------------------------------------------------------

    def wait_ready(self, seconds: float) -> PoolProcess | None:
        """The running pool, waiting up to `seconds` for one to be up."""
        deadline = time.monotonic() + seconds
        with self._pool_cond:
            while self._pool is None or self._pool.ready is None:
                left = deadline - time.monotonic()
                if left <= 0 or self._closing.is_set():
                    return None
                self._pool_cond.wait(left)
            return self._pool

    def pool_host_pid(self) -> int | None:
        pool = self.wait_ready(self.start_seconds)
        return pool.host_pid() if pool else None

    # -- one job -------------------------------------------------------------------------------

    def _run_in(
        self, pool: PoolProcess, slot: int, job: Job, on_event: EventSink, cancel: threading.Event
    ) -> tuple[Execution, bool, bool]:
        """The job's Execution, whether its slot had to be taken out of service, and whether the pool
        refused the slot as still busy."""
        stdin_r, stdin_w = os.pipe2(os.O_CLOEXEC)
        stdout_r, stdout_w = os.pipe2(os.O_CLOEXEC)
        stderr_r, stderr_w = os.pipe2(os.O_CLOEXEC)
        events_r, events_w = os.pipe2(os.O_CLOEXEC)
        message = StartJob(job=job.id, slot=slot, limits=job.limits, devices=job.devices)
        try:
            waiter = pool.submit(message, (stdin_r, stdout_w, stderr_w, events_w))
        except OSError as exc:
            close_quietly(stdin_w, stdout_r, stderr_r, events_r)
            return never_ran(f"the sandbox pool did not take the job ({exc})"), False, False
        finally:
            close_quietly(stdin_r, stdout_w, stderr_w, events_w)
        pipes = Pipes(stdin_w, stdout_r, stderr_r, events_r)
        data = json.dumps(to_json_dict(job)).encode()
        outcome: Outcome | None = None
        try:
            try:
                outcome = Watch(job.limits, pipes, data, on_event, cancel).run(
                    waiter.done.is_set, lambda: pool.kill(job.id), waiter.done.wait
                )
            except Exception:  # never give a slot back while its job may still run
                log.exception("job %s: watching it failed; stopping it", job.id)
                pool.kill(job.id)
            if not waiter.done.wait(10.0):  # the pool answers once nothing of the job is left
                pool.kill(job.id)
            quarantined = not waiter.done.wait(5.0)
            if quarantined:
                # The job outlived every kill: it takes its own slot down, never its neighbours.
                self._quarantine(pool, slot, job.id, waiter)
        finally:
            close_quietly(stdout_r, stderr_r, events_r)
        busy = waiter.exit is not None and waiter.exit.slot_busy
        if outcome is None:
            return never_ran("the sandbox failed while it watched the job; it was stopped"), quarantined, busy
        return _execution(job, outcome, waiter), quarantined, busy

    def _quarantine(self, pool: PoolProcess, slot: int, job_id: str, waiter: Waiter) -> None:
        """Keep `slot` out of service until the pool reports the job gone (or the pool itself goes).

        Only when every slot is out of service does the pool go: killing its pid namespace ends the
        stuck jobs, and no healthy job is running by then. Queued runs wait in the server meanwhile.
        """
        all_out = self.table.quarantine(slot)
        log.error("job %s could not be stopped; slot %d is out of service until it is gone", job_id, slot)
        if all_out:
            log.error("every slot is out of service; restarting the sandbox pool")
            kill_pool(pool)

        def wait_then_return() -> None:
            waiter.done.wait()
            self.table.give(slot)

        threading.Thread(target=wait_then_return, name=f"sandbox-slot-{slot}-quarantine", daemon=True).start()

    def _hold_out(self, pool: PoolProcess, slot: int, seconds: float) -> None:
        """Keep `slot` out of service for `seconds`: the pool still runs a job there that the host
        lost track of (a bug; logged), and the pool's own backstop ends any job well within that."""
        log.error("the sandbox pool says slot %d still runs a job; it is held out for %.0f s", slot, seconds)
        if self.table.quarantine(slot):
            log.error("every slot is out of service; restarting the sandbox pool")
            kill_pool(pool)
        timer = threading.Timer(seconds, self.table.give, args=(slot,))
        timer.daemon = True
        timer.start()

    # -- the pool's life -----------------------------------------------------------------------

    def _keep(self) -> None:
        backoff = 0.5
        while not self._closing.is_set():
            try:
                pool = self._start_pool()
            except Exception as exc:
                log.error("sandbox pool failed to start: %s", exc)
                with self._pool_cond:
                    self._pool_error = str(exc)
                    self._pool_cond.notify_all()
                self._closing.wait(backoff)
                backoff = min(backoff * 2, 30.0)
                continue
            if self._serve(pool):
                backoff = 0.5
            else:
                self._closing.wait(backoff)
                backoff = min(backoff * 2, 30.0)
            if not self._closing.is_set():
                self.restarts += 1
                log.warning("sandbox pool exited (%s); restarting it", pool.proc.returncode)

    def _start_pool(self) -> PoolProcess:
        token = uuid.uuid4().hex[:12]  # per pool process: a successor sweeps what this one leaves
        config = {
            "token": token,
            "slots": self.slots,
            "uid_base": self.uid_base,
            "server_uid": os.getuid(),
            "runtime_prefix": str(self.runtime.prefix),
            "cpu_cores": self.cpu_cores,
            "env": base_environment(os.environ, home="/tmp"),
            "tpu_slots": to_json_dict(self.tpu_slots),
        }
        nodes = [node for slot in self.tpu_slots for node in slot.device_nodes]
        return start_pool_process(self.runtime, self.sandbox_dir, config, nodes)

    def _serve(self, pool: PoolProcess) -> bool:
        """Read the pool's messages until it goes away (the keeper thread's main job); False if it
        never got ready."""
        try:
            pool.sock.settimeout(self.start_seconds)
            message, _ = channel.recv(pool.sock)
            ready = _ready(message)
            if ready is None:
                pool.proc.wait(timeout=5)
                raise channel.ChannelError(f"the pool did not start (exit {pool.proc.returncode})")
            pool.sock.settimeout(None)
            pool.ready = ready
            if ready.swept:
                log.warning("sandbox pool swept leftovers of a dead pool: %s", list(ready.swept))
            with self._pool_cond:
                self._pool, self._pool_error = pool, None
                self._pool_cond.notify_all()
            while True:
                message, fds = channel.recv(pool.sock)
                close_quietly(*fds)
                if message is None:
                    break
                pool.dispatch(message)
        except OSError as exc:
            if not self._closing.is_set():
                log.error("sandbox pool channel: %s", exc)
                with self._pool_cond:
                    self._pool_error = str(exc)
        finally:
            with self._pool_cond:
                if self._pool is pool:
                    self._pool = None
            pool.fail_all("the sandbox pool died while the job ran (it is being restarted)")
            stop_process(pool.proc, graceful=self._closing.is_set())
            pool.sock.close()
        return pool.ready is not None


def _ready(message: dict[str, object] | None) -> PoolReady | None:
    """The pool's first message, if it is the `ready` it must be."""
    try:
        decoded = decode(message) if message is not None else None
    except DecodeError as exc:
        log.error("sandbox pool's first message is unreadable: %s", exc)
        return None
    return decoded if isinstance(decoded, PoolReady) else None


def _execution(job: Job, outcome: Outcome, waiter: Waiter) -> Execution:
    facts = waiter.exit or JobExited(job=job.id)
    infra = waiter.infra_error
    if facts.setup_error:
        infra = "the sandbox could not set up the job: " + facts.setup_error.splitlines()[-1]
        log.error("job %s: sandbox setup failed: %s", job.id, facts.setup_error)
    elif not waiter.done.is_set():
        infra = "the sandbox pool did not report the job's end"
    if facts.leftovers:
        log.error("job %s left behind: %s", job.id, list(facts.leftovers))
    sig = facts.signal
    # `cpu_seconds` is the whole job's (its cgroup's): past the grace, the pool killed it for that,
    # or its processes together used more than the limit while the main one ended by itself.
    cpu_killed = (
        sig == signal.SIGXCPU
        or (sig == signal.SIGKILL and facts.cpu_seconds >= job.limits.cpu_seconds)
        or facts.cpu_seconds > job.limits.cpu_seconds + default_limits.CPU_GRACE_SECONDS
    )
    return outcome.execution(
        exit_code=facts.exit_code,
        signal=sig,
        memory_limit_hit=facts.oom_kills > 0,
        cpu_limit_hit=cpu_killed,
        peak_rss_bytes=facts.max_rss_bytes,
        infra_error=infra,
        pids_limit_hit=facts.pids_limit_hits > 0,
        disk_limit_hit=facts.scratch_full,
    )
