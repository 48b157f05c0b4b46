"""The warm pool (zygote): imports JAX once, then forks one jailed child per job.

Started by the hardened backend inside bubblewrap (own pid namespace, no network, a minimal
read-only root, `--clearenv`), as `python -I -B -u -c "…sandbox.jail.pool.main()" CONFIG_JSON`. It has
imported JAX, Pallas and the harness's modules but never initialised a JAX backend (a forked child
of a process that executed JAX deadlocks), holds no secrets and never sees a job's source (the
backend writes it into the job's stdin). It is single-threaded: one `select` loop over the control
channel and SIGCHLD. As a child subreaper it reaps every orphan a job leaves; at start-up it sweeps
the cgroups of pools that died before it.

Control messages (see `sandbox.jail.channel`): backend → pool `run` (with the job's four pipes) and
`kill`; pool → backend `ready`, `spawned` and `exit` (the raw facts the backend turns into an
`Execution`). A job's `exit` is sent only once nothing of it is left: no process, cgroup or scratch.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib
import json
import os
import re
import selectors
import signal
import socket
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sandbox import limits as default_limits
from sandbox.harness.jaxapi import process as jax_internals
from sandbox.host.jobenv import job_environment
from sandbox.host.tpuhost import TpuSlot, cpu_share
from sandbox.jail import cgroup_layout, cgroups, channel, namespaces
from sandbox.protocol import Limits, from_json_dict
from sandbox.protocol.codec import DecodeError
from sandbox.protocol.pool import (
    JobExited,
    JobSpawned,
    KillJob,
    PoolMessage,
    PoolReady,
    StartJob,
    decode,
    encode,
)

_PR_SET_CHILD_SUBREAPER = 36
_JOB_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
BACKSTOP_SECONDS = 10.0  # the backend owns the wall clock; this only catches a backend that forgot
TEARDOWN_SECONDS = 5.0


class SlotBusy(ValueError):
    """The host asked for a slot whose last job has not ended yet."""


@dataclass(frozen=True)
class Config:
    token: str
    slots: int
    uid_base: int
    server_uid: int
    runtime_prefix: str
    cpu_cores: float
    env: dict[str, str]
    control_fd: int
    cgroup_name: str = cgroups.BASE_NAME
    # Slots 0 … slots-len(tpu_slots)-1 run on the CPU; the rest own the chips of `tpu_slots`, in order.
    tpu_slots: tuple[TpuSlot, ...] = ()


@dataclass
class _Job:
    id: str
    slot: int
    limits: Limits
    pid: int
    cgroup: cgroups.JobCgroup
    scratch: str
    setup_r: int
    deadline: float
    status: int | None = None
    rusage: Any = None
    facts: dict[str, Any] = field(default_factory=dict)


PRELOAD = (
    "jax",
    "jax.numpy",
    "jax.experimental.pallas",
    "jax.experimental.pallas.tpu",
    "sandbox.harness.session",
    "sandbox.jail.child",
    "sandbox.jail.seccomp",
)
# Only a speed-up: imported lazily by the first Pallas lowering otherwise (about 0.25 s per job;
# found by diffing sys.modules before and after catalog runs; every module a catalog file imports is
# preloaded too, which tests/unit/test_pool_preload.py checks). Not every JAX runtime has each (jax
# 0.10.2's Mosaic GPU interpreter fails to import on a CPU host), and none may stop the pool.
PRELOAD_IF_PRESENT = (
    "jax.experimental.pallas.tpu_sc",
    *jax_internals.PRELOAD,
    "jax.experimental.multihost_utils",
    "jax.extend",
    # Imported by a kernel's first call in interpret mode (found by diffing sys.modules around a
    # catalog run's first case): 0.1–0.3 s of every job's time to its first verdict otherwise.
    "jaxlib.mlir.dialects.mhlo",
)


def preload() -> None:
    """Import everything a job needs, and prove no JAX backend exists yet (fork safety)."""
    for name in PRELOAD:
        importlib.import_module(name)
    for name in PRELOAD_IF_PRESENT:
        try:
            importlib.import_module(name)
        except Exception as exc:  # this runtime's JAX lacks it: the job imports it if it needs it
            print(f"pool: not preloaded: {name} ({type(exc).__name__})", file=sys.stderr)
    if jax_internals.backends_initialised():
        raise RuntimeError("a JAX backend was initialised in the pool; forked jobs would deadlock")


def main(argv: list[str]) -> int:
    config = from_json_dict(Config, json.loads(argv[1]))
    sock = socket.socket(fileno=config.control_fd)
    if channel.peer_uid(sock) != config.server_uid:
        print("pool: control channel peer is not the server's uid; refusing", file=sys.stderr)
        return 2
    preload()
    from sandbox.jail import seccomp

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")
    layout = cgroup_layout.detect()
    pool_cgroups = cgroups.PoolCgroups(layout, config.token, config.cgroup_name)
    swept = pool_cgroups.start() + [f"scratch {n}" for n in namespaces.leftover_scratch()]
    pool = Pool(config, sock, layout, pool_cgroups, seccomp.build())
    pool.send(PoolReady(swept=tuple(swept), cgroups=layout.describe(), pid=os.getpid()))
    try:
        pool.serve()
    finally:
        pool.shutdown()
    return 0


class Pool:
    def __init__(
        self,
        config: Config,
        sock: socket.socket,
        layout: cgroup_layout.Layout,
        pool_cgroups: cgroups.PoolCgroups,
        seccomp_filter: Any,
    ) -> None:
        self.config, self.sock, self.layout = config, sock, layout
        self.cgroups, self.seccomp = pool_cgroups, seccomp_filter
        self.jobs: dict[str, _Job] = {}
        self.by_pid: dict[int, _Job] = {}
        self.running = True

    def send(self, message: PoolMessage) -> None:
        with contextlib.suppress(OSError):
            channel.send(self.sock, encode(message))

    def serve(self) -> None:
        wake_r, wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        signal.set_wakeup_fd(wake_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        signal.signal(signal.SIGTERM, lambda *_: setattr(self, "running", False))
        with selectors.DefaultSelector() as sel:
            sel.register(self.sock, selectors.EVENT_READ)
            sel.register(wake_r, selectors.EVENT_READ)
            while self.running:
                for key, _ in sel.select(self._next_timeout()):
                    if key.fd == wake_r:
                        with contextlib.suppress(BlockingIOError):
                            os.read(wake_r, 4096)
                    else:
                        self._receive()
                self._reap()
                self._finish_exited()
                self._enforce_backstops()

    def shutdown(self) -> None:
        """The backend went away (or asked us to stop): kill every job and clean up after it."""
        for job in list(self.jobs.values()):
            job.cgroup.kill()
        deadline = time.monotonic() + TEARDOWN_SECONDS
        while self.jobs and time.monotonic() < deadline:
            self._reap()
            self._finish_exited(report=False)
            time.sleep(0.01)
        self.cgroups.close()

    # -- messages -----------------------------------------------------------------------------

    def _receive(self) -> None:
        try:
            message, fds = channel.recv(self.sock)
        except channel.ChannelError:
            return
        if message is None:
            self.running = False
            return
        try:
            decoded = decode(message)
        except DecodeError as exc:
            for fd in fds:
                os.close(fd)
            if message.get("op") == "run":  # the host waits for this job's end: say why it has none
                self.send(JobExited(job=str(message.get("job", "")), setup_error=f"DecodeError: {exc}"))
            return
        if isinstance(decoded, StartJob):
            self._start(decoded, fds)
            return
        for fd in fds:
            os.close(fd)
        job = self.jobs.get(decoded.job) if isinstance(decoded, KillJob) else None
        if job is not None:
            job.cgroup.kill()

    def _start(self, message: StartJob, fds: list[int]) -> None:
        job_id = message.job
        try:
            if len(fds) != 4 or not _JOB_ID.match(job_id) or job_id in self.jobs:
                raise ValueError("malformed run request")
            slot = message.slot
            if not 0 <= slot < self.config.slots:
                raise ValueError(f"slot {slot} does not exist")
            if any(j.slot == slot for j in self.jobs.values()):
                raise SlotBusy(f"slot {slot} is not free")
            self._fork(job_id, slot, message.limits, message.devices, fds)
        except Exception as exc:
            busy = isinstance(exc, SlotBusy)
            self.send(JobExited(job=job_id, setup_error=f"{type(exc).__name__}: {exc}", slot_busy=busy))
        finally:
            for fd in fds:
                os.close(fd)

    def _fork(self, job_id: str, slot: int, limits: Limits, devices: int, fds: list[int]) -> None:
        from sandbox.jail import child

        uid = self.config.uid_base + slot
        chip_slots = len(self.config.tpu_slots)
        first_chip_slot = self.config.slots - chip_slots
        tpu = self.config.tpu_slots[slot - first_chip_slot] if slot >= first_chip_slot else None
        cpus: tuple[int, ...] = ()
        cores = self.config.cpu_cores
        if tpu is not None:
            limits = default_limits.for_tpu(limits)
            cpus = cpu_share(sorted(os.sched_getaffinity(0)), slot - first_chip_slot, chip_slots)
            cores = max(cores, float(len(cpus)))  # libtpu and the TPU compiler run on the slot's CPUs
        cgroup = self.cgroups.create(job_id, limits, cores)
        try:
            scratch = namespaces.mount_scratch(job_id, limits.scratch_bytes, uid, uid)
        except OSError:
            cgroup.remove()
            raise
        spec = child.Spec(
            job=job_id,
            uid=uid,
            limits=limits,
            env=job_environment(self.config.env, devices=devices, tpu=tpu),
            scratch=scratch,
            cgroup=cgroup,
            memory_in_cgroup=self.layout.memory is not None,
            pool_pid=os.getpid(),
            runtime_prefix=self.config.runtime_prefix,
            seccomp=self.seccomp,
            tpu_nodes=tpu.device_nodes if tpu is not None else (),
            cpus=cpus,
        )
        setup_r, setup_w = os.pipe2(os.O_CLOEXEC)
        pid = os.fork()
        if pid == 0:
            os.close(setup_r)
            # The child inherits this heap: drop what it could learn of the other running jobs.
            self.jobs.clear()
            self.by_pid.clear()
            child.run(spec, fds, setup_w)
        os.close(setup_w)
        deadline = time.monotonic() + limits.wall_seconds + BACKSTOP_SECONDS
        job = _Job(job_id, slot, limits, pid, cgroup, scratch, setup_r, deadline)
        self.jobs[job_id] = self.by_pid[pid] = job
        self.send(JobSpawned(job=job_id))

    # -- endings ------------------------------------------------------------------------------

    def _reap(self) -> None:
        while True:
            try:
                pid, status, rusage = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            job = self.by_pid.pop(pid, None)
            if job is not None:
                job.status, job.rusage = status, rusage

    def _finish_exited(self, report: bool = True) -> None:
        for job in [j for j in self.jobs.values() if j.status is not None]:
            message = self._teardown(job)
            del self.jobs[job.id]
            if report:
                self.send(message)

    def _teardown(self, job: _Job) -> JobExited:
        facts = job.cgroup.facts()  # before the kill, which would not change them anyway
        job.cgroup.kill()
        leftovers = self._wait_gone(job)
        setup_error = _read_all(job.setup_r)
        os.close(job.setup_r)
        try:
            use = namespaces.release_scratch(job.scratch)
        except OSError as exc:
            use = namespaces.ScratchUse(0, False)
            leftovers.append(f"scratch {job.scratch}: {exc.strerror}")
        leftovers += job.cgroup.remove()
        assert job.status is not None
        ru = job.rusage
        return JobExited(
            job=job.id,
            exit_code=os.WEXITSTATUS(job.status) if os.WIFEXITED(job.status) else None,
            signal=os.WTERMSIG(job.status) if os.WIFSIGNALED(job.status) else None,
            max_rss_bytes=ru.ru_maxrss * 1024,
            cpu_seconds=round(max(ru.ru_utime + ru.ru_stime, facts.cpu_seconds), 3),
            oom_kills=facts.oom_kills,
            pids_limit_hits=facts.pids_limit_hits,
            memory_peak_bytes=facts.memory_peak_bytes,
            scratch_full=use.full,
            scratch_used_bytes=use.used_bytes,
            setup_error=setup_error or None,
            leftovers=tuple(leftovers),
        )

    def _wait_gone(self, job: _Job) -> list[str]:
        """Until the job's cgroup is empty and no process (not even a zombie) has its uid."""
        uid = self.config.uid_base + job.slot
        deadline = time.monotonic() + TEARDOWN_SECONDS
        while True:
            self._reap()
            alive = _pids_of_uid(uid)
            if job.cgroup.empty() and not alive:
                return []
            if time.monotonic() > deadline:
                return [f"processes of uid {uid} still alive: {alive}"]
            job.cgroup.kill()
            for pid in alive:  # a backstop: the slot uid is this job's alone, in this pid namespace
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.002)

    def _enforce_backstops(self) -> None:
        """The wall clock's backstop, and the job's CPU time as a whole (checked at least once a
        second while jobs run: `_next_timeout`): RLIMIT_CPU stops each process, not a relay of
        children that each stay under it."""
        now = time.monotonic()
        for job in self.jobs.values():
            cpu_limit = job.limits.cpu_seconds + default_limits.CPU_GRACE_SECONDS
            if now > job.deadline or job.cgroup.cpu_seconds() > cpu_limit:
                job.cgroup.kill()

    def _next_timeout(self) -> float:
        if not self.jobs:
            return 5.0
        return max(0.0, min(min(j.deadline for j in self.jobs.values()) - time.monotonic(), 1.0))


def _pids_of_uid(uid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            for line in (entry / "status").read_text().splitlines():
                if line.startswith("Uid:"):
                    if int(line.split()[1]) == uid:
                        found.append(int(entry.name))
                    break
    return found


def _read_all(fd: int) -> str:
    chunks = []
    os.set_blocking(fd, False)
    with contextlib.suppress(BlockingIOError):
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
    return b"".join(chunks).decode(errors="replace").strip()
