"""Process-level layers: file descriptors, rlimits, environment, uid drop, parent-death signal."""

from __future__ import annotations

import ctypes
import fcntl
import os
import resource
import signal

from sandbox.limits import CPU_GRACE_SECONDS
from sandbox.protocol import Limits

EVENTS_FD = 3
SETUP_FD = 4  # the child's setup-failure channel to the pool; closed before user code runs
NOFILE = 1024
# Locked memory off a chip: the kernel's old default. mlock pins pages however they are charged, and a
# page of a shared file another process read first stays charged to that process's cgroup: with the
# runner's `--ulimit memlock=-1` (docs/tpu-vm.md) a job could pin gigabytes of the runtime's files.
MEMLOCK_BYTES = 64 * 1024
_PR_SET_PDEATHSIG = 1
_PR_SET_DUMPABLE = 4
_libc = ctypes.CDLL(None, use_errno=True)


def place_fds(stdin: int, stdout: int, stderr: int, events: int, setup: int) -> None:
    """Put the job's pipes at 0-4 and close every other descriptor the pool had open."""
    high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 100) for fd in (stdin, stdout, stderr, events, setup)]
    for target, fd in enumerate(high):
        os.dup2(fd, target, inheritable=False)
    os.closerange(SETUP_FD + 1, os.sysconf("SC_OPEN_MAX"))
    for fd in (0, 1, 2):
        os.set_inheritable(fd, True)


def set_rlimits(limits: Limits, memory_in_cgroup: bool, pinned_memory: bool = False) -> None:
    """Per-process limits. NPROC is a backstop behind pids.max (it counts the slot uid's threads).

    `pinned_memory`: the job drives a VFIO device, which pins host pages for DMA against
    RLIMIT_MEMLOCK (a job has no CAP_IPC_LOCK). It may pin up to its memory limit, within the hard
    limit the runner was started with (`--ulimit memlock=-1`; no process here may raise it); any
    other job, `MEMLOCK_BYTES`.
    """
    # Soft < hard: SIGXCPU first, which the backend reports as the CPU limit.
    resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds + CPU_GRACE_SECONDS))
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits.scratch_bytes, limits.scratch_bytes))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_NOFILE, (NOFILE, NOFILE))
    resource.setrlimit(resource.RLIMIT_NPROC, (limits.processes + 16, limits.processes + 16))
    if not memory_in_cgroup:
        resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))
    # Nothing is left as the runner had it: no higher priority than the job started with, and no
    # real-time scheduling, which no CPU quota bounds (a SCHED_FIFO spin takes 95% of its core).
    resource.setrlimit(resource.RLIMIT_NICE, (0, 0))
    resource.setrlimit(resource.RLIMIT_RTPRIO, (0, 0))
    hard = resource.getrlimit(resource.RLIMIT_MEMLOCK)[1]
    pinned = limits.memory_bytes if pinned_memory else MEMLOCK_BYTES
    pinned = pinned if hard == resource.RLIM_INFINITY else min(hard, pinned)
    resource.setrlimit(resource.RLIMIT_MEMLOCK, (pinned, pinned))


def replace_environ(env: dict[str, str]) -> None:
    os.environ.clear()
    os.environ.update(env)


def reset_signals() -> None:
    """Undo the pool's own signal handling; a job starts like a fresh interpreter."""
    signal.set_wakeup_fd(-1)
    for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.pthread_sigmask(signal.SIG_SETMASK, set())


def drop_to(uid: int, gid: int) -> None:
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    if os.getresuid() != (uid, uid, uid) or os.getgroups():
        raise PermissionError(f"uid drop to {uid} did not take")


def never_dumped() -> None:
    """No core dump of the job, ever: the uid drop leaves it as `fs.suid_dumpable` says (2 on Ubuntu
    with apport), and a pipe `core_pattern` (apport, systemd-coredump; a container shares the host's)
    gets a dumpable process's memory in a helper running as root in the host's namespaces, whatever
    RLIMIT_CORE says. seccomp then keeps the job from making itself dumpable again."""
    if _libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE)")


def die_with_parent(parent: int) -> None:
    """SIGKILL this process when the pool dies; set after the uid drop, which clears it."""
    if _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG)")
    if os.getppid() != parent:  # the pool died before the signal was armed
        os._exit(137)
