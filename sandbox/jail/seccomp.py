"""The job's seccomp filter, built with libseccomp (the `pyseccomp` binding): a denylist.

Allow by default (JAX and numpy use a wide, version-dependent set of syscalls), but refuse with
EPERM everything a kernel playground never needs and an attacker wants: sockets of every family
(the network namespace is empty anyway, but pathname unix sockets cross namespaces), exec, new
namespaces, mounts, ptrace and cross-process memory access, bpf, perf, io_uring, userfaultfd,
keyrings, and the module / reboot / clock calls; and what would let a job watch its neighbours
through the kernel rather than /proc: inotify (which files of the shared read-only tree they open,
hence what they import) and `pidfd_open` (any pid of the pool's namespace, hidepid or not, and
through `PIDFD_GET_INFO` its uid, parent, cgroup and exit). `prctl(PR_SET_DUMPABLE)` is refused too:
the jail makes the job undumpable (`privilege.never_dumped`) and it must stay so. `clone3` gets ENOSYS
so glibc falls back to `clone`, whose flags a classic filter can inspect (no new namespace, and no
CLONE_PARENT: a job's processes are all its own main process's descendants). Syscalls of a foreign ABI
(i386 `int 0x80`, x32) kill the whole process.

`pyseccomp` runs `find_library()` (a subprocess) at import, so the pool imports this module once at
start-up; `build()` runs in the pool and `Filter.load()` in each forked child.
"""

from __future__ import annotations

import errno
import importlib
from typing import Any

DENIED = (
    "socket", "socketpair",
    "execve", "execveat",
    "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "kcmp",
    "unshare", "setns",
    "mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen", "fsconfig",
    "fsmount", "fspick", "mount_setattr",
    "bpf", "perf_event_open", "userfaultfd",
    "io_uring_setup", "io_uring_enter", "io_uring_register",
    "keyctl", "add_key", "request_key",
    "init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load", "reboot",
    "swapon", "swapoff", "acct", "quotactl", "quotactl_fd", "syslog", "vhangup", "uselib",
    "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "sethostname", "setdomainname",
    "name_to_handle_at", "open_by_handle_at", "lookup_dcookie", "iopl", "ioperm",
    "fanotify_init", "personality", "modify_ldt",
    "inotify_init", "inotify_init1", "inotify_add_watch", "pidfd_open",
)  # fmt: skip
# Refused in `clone`'s flags: every new namespace, and CLONE_PARENT, whose child would be the pool's:
# the pool (outside the job's cgroup, one thread serving every slot) was woken to reap each one
# (3,849 such children in 8 s cost it 1.6 s of CPU).
CLONE_REFUSED_FLAGS = (
    0x00008000,  # CLONE_PARENT
    0x00020000,  # CLONE_NEWNS
    0x02000000,  # CLONE_NEWCGROUP
    0x04000000,  # CLONE_NEWUTS
    0x08000000,  # CLONE_NEWIPC
    0x10000000,  # CLONE_NEWUSER
    0x20000000,  # CLONE_NEWPID
    0x40000000,  # CLONE_NEWNET
    0x00000080,  # CLONE_NEWTIME
)
TIOCSTI = 0x5412  # push bytes into a terminal's input queue
PR_SET_DUMPABLE = 4


def available() -> str | None:
    """None if a filter can be built here, else why not (for the capability report)."""
    try:
        importlib.import_module("pyseccomp")
    except (ImportError, RuntimeError, OSError) as exc:
        return f"seccomp unavailable: {type(exc).__name__}: {exc}"
    return None


def build() -> Any:
    """The filter, ready to `load()` in a child (it applies to the calling thread and its forks)."""
    import pyseccomp as sc

    native = sc.system_arch()
    flt = sc.SyscallFilter(sc.ALLOW)
    # A syscall of another ABI (i386 `int 0x80`, x32's nr | 0x40000000) kills the whole process.
    # libseccomp's default kills only the calling thread, which left a job whose other threads
    # held it alive and unkillable (a zombie leader with live threads): the pool had to be killed.
    flt.set_attr(sc.Attr.ACT_BADARCH, sc.KILL_PROCESS)
    eperm = sc.ERRNO(errno.EPERM)
    for name in DENIED:
        if sc.resolve_syscall(native, name) >= 0:  # a syscall this arch lacks needs no rule
            flt.add_rule(eperm, name)
    for flag in CLONE_REFUSED_FLAGS:
        flt.add_rule(eperm, "clone", sc.Arg(0, sc.MASKED_EQ, flag, flag))
    flt.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
    flt.add_rule(eperm, "ioctl", sc.Arg(1, sc.EQ, TIOCSTI))
    flt.add_rule(eperm, "prctl", sc.Arg(0, sc.EQ, PR_SET_DUMPABLE))
    return flt
