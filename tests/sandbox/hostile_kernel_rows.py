"""Hostile rows of the third attack round on the jail: what a job reaches through the kernel itself.

Rows as in `hostile_corpus` (the same `Row`, prelude and checks), run beside a victim by
`test_hostile_kernel_rows.py`. Each program is one way past a limit, to a neighbour, or out to the
host that the corpus did not try: a relay of processes that each stay under RLIMIT_CPU; watching the
neighbours' file opens (inotify) or their processes (`pidfd_open`, which needs no /proc); making the
job dumpable again, so that a pipe `core_pattern` hands its memory to a helper on the host; handing
children to the pool (CLONE_PARENT); and the limits a job would otherwise inherit from the runner
(locked memory, nice, real-time priority).
"""

from __future__ import annotations

from sandbox.protocol import RunStatus
from tests.sandbox.hostile_corpus import PRELUDE, Row, all_of, attack, denied_only, stdout_has, summary_has

# Two lanes of children, each child spinning one second under the per-process CPU limit before a
# fresh one takes over: without a limit on the job as a whole it runs until the wall clock (24 s of
# CPU on a 5 s limit, `passed`, when the lanes stopped by themselves).
CPU_RELAY = """
import resource
soft = resource.getrlimit(resource.RLIMIT_CPU)[0]

def spin(seconds):
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass

def lane():
    while True:
        child = os.fork()
        if child == 0:
            spin(soft - 1)
            os._exit(0)
        os.waitpid(child, 0)

lanes = []
for _ in range(2):
    pid = os.fork()
    if pid == 0:
        lane()
    lanes.append(pid)
for pid in lanes:
    os.waitpid(pid, 0)
"""

# inotify on the shared runtime saw a neighbour open wave.cpython-312.pyc, colorsys… (its imports);
# pidfd_open found the neighbour's pid through hidepid, and PIDFD_GET_INFO gave its uid and cgroup.
NEIGHBOURS = """
attempt("inotify_init1", lambda: sys_call(294, 0))
attempt("inotify_init", lambda: sys_call(253))
attempt("pidfd_open_init", lambda: sys_call(434, 1, 0))
attempt("pidfd_open_parent", lambda: sys_call(434, os.getppid(), 0))

def pidfd_scan():
    found = [pid for pid in range(1, 4096) if pid != os.getpid() and libc.syscall(434, pid, 0) >= 0]
    if found:
        return found
    raise OSError(ctypes.get_errno(), "pidfd_open")

attempt("pidfd_scan", pidfd_scan)
"""

DUMPABLE = """
print("dumpable:", libc.prctl(3, 0, 0, 0, 0))
attempt("set_dumpable", lambda: sys_call(157, 4, 1, 0, 0, 0))
attempt("modify_ldt", lambda: sys_call(154, 0, ctypes.byref((ctypes.c_char * 16)()), 16))
print("dumpable after:", libc.prctl(3, 0, 0, 0, 0))
"""

# Each child of clone(CLONE_PARENT) is the pool's to reap: 3,849 in 8 s cost the pool 1.6 s of CPU.
CLONE_PARENT = """
def clone_parent():
    child = sys_call(56, 0x8000 | signal.SIGCHLD, 0, 0, 0, 0)
    if child == 0:
        os._exit(0)
    return child

attempt("clone_parent", clone_parent)
"""

RUNNER_RLIMITS = """
import resource
for name in ("RLIMIT_MEMLOCK", "RLIMIT_NICE", "RLIMIT_RTPRIO"):
    print(name, resource.getrlimit(getattr(resource, name)))

def mlock_one_mib():
    buf = ctypes.create_string_buffer(1 << 20)
    sys_call(149, ctypes.addressof(buf), 1 << 20)

attempt("mlock_1mib", mlock_one_mib)
attempt("sched_fifo", lambda: os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1)))
attempt("lower_nice", lambda: os.setpriority(os.PRIO_PROCESS, 0, os.getpriority(os.PRIO_PROCESS, 0) - 1))
"""

ROWS: tuple[Row, ...] = (
    Row(
        "cpu_relay",
        PRELUDE + CPU_RELAY,
        RunStatus.RESOURCE_LIMIT,
        "cpu_seconds",
        check=summary_has("CPU limit"),
        limits={"cpu_seconds": 3, "wall_seconds": 30},
    ),
    Row(
        "watch_neighbours",
        attack(NEIGHBOURS),
        RunStatus.PASSED,
        check=denied_only(
            "inotify_init1",
            "pidfd_open_init",
            "pidfd_open_parent",
            "pidfd_scan",
            eperm=("inotify_init1", "inotify_init", "pidfd_open_init", "pidfd_open_parent", "pidfd_scan"),
        ),
    ),
    Row(
        "stay_undumpable",
        attack(DUMPABLE),
        RunStatus.PASSED,
        check=all_of(
            denied_only("set_dumpable", "modify_ldt", eperm=("set_dumpable", "modify_ldt")),
            stdout_has(r"dumpable: 0\b", r"dumpable after: 0\b"),
        ),
    ),
    Row(
        "children_to_the_pool",
        attack(CLONE_PARENT),
        RunStatus.PASSED,
        check=denied_only("clone_parent", eperm=("clone_parent",)),
    ),
    Row(
        "runner_rlimits",
        attack(RUNNER_RLIMITS),
        RunStatus.PASSED,
        check=all_of(
            denied_only("mlock_1mib", "sched_fifo", "lower_nice"),
            stdout_has(
                r"RLIMIT_MEMLOCK \(65536, 65536\)", r"RLIMIT_NICE \(0, 0\)", r"RLIMIT_RTPRIO \(0, 0\)"
            ),
        ),
    ),
)
