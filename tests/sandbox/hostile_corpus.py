"""The hostile corpus: one row = a hostile program, the status a user must see, and a post-condition.

Over 400 lines as one file: it is a table of attack programs, one row each, read by the hardened
sandbox tests and by `bench/abuse_load.py`; splitting the table would split one list of rows, not
responsibilities.

Programs are scratch-mode kernel files. Most attack at import time, print one line per attempt
(`label: DENIED <errno>` or `label: ALLOWED …`) and then define a trivial kernel that passes, so
the expected status is `passed` and the post-condition says the effect was contained. Rows that
must hit a limit name the status and the limit a user sees. `{…}` fields are filled per run with
the addresses of host listeners and canary files (see `Host`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sandbox.protocol import RunResult, RunStatus
from tests.sandbox.hostile_programs import (
    DAEMON,
    ENV_TAMPER,
    ESCAPES,
    EVENT_COUNT_FLOOD,
    EXEC,
    FORGED,
    FORGED_REPORT,
    FORK_BOMB,
    FS_READS,
    FS_WRITES,
    HEAP_WALK,
    IGNORE_SIGNALS,
    KILL_ALL,
    MOUNTINFO,
    NETWORK,
    PID_SCAN,
    PRIVILEGE,
    PROC,
    PROGRESS_FLOOD,
    REPORT_FLOOD,
    SIGNALS,
    THREAD_BOMB,
    THREADS_AFTER_ZOMBIES,
    X32_SYSCALL,
    ZOMBIE_LEADER,
    ZOMBIES,
)

PRELUDE = """
import ctypes, errno, json, os, signal, socket, sys, time
libc = ctypes.CDLL(None, use_errno=True)

def attempt(label, fn):
    try:
        value = fn()
    except OSError as exc:
        print(f"{label}: DENIED {errno.errorcode.get(exc.errno, exc.errno)}")
    except Exception as exc:
        print(f"{label}: DENIED {type(exc).__name__}")
    else:
        print(f"{label}: ALLOWED {str(value)[:60]!r}")

def sys_call(number, *args):
    result = libc.syscall(number, *args)
    if result < 0:
        raise OSError(ctypes.get_errno(), "syscall")
    return result
"""

PASSING_KERNEL = """
import numpy as np
def make_inputs(seed):
    return (np.arange(8, dtype=np.float32),)
def reference(x):
    return x * 2
def kernel(x):
    return x * 2
"""

WRONG_KERNEL = PASSING_KERNEL.replace("def kernel(x):\n    return x * 2", "def kernel(x):\n    return x * 3")


@dataclass
class Host:
    """What lives on the host side during the corpus: listeners and canaries the jobs must not reach."""

    tcp_port: int
    udp_port: int
    unix_path: str
    abstract_name: str
    secret_file: str  # 0600, root's
    public_file: str  # 0644: world-readable server-side data, still invisible to jobs
    canary: str  # a secret in the server's environment and files
    marker: str  # a unique name for files a job tries to leave on the host
    server_dir: str
    connections: list[str] = field(default_factory=list)

    def fill(self, source: str) -> str:
        for key, value in vars(self).items():
            source = source.replace("{HOST_" + key + "}", str(value))
        return source


Check = Callable[[RunResult, Host], None]


@dataclass(frozen=True)
class Row:
    name: str
    source: str
    status: RunStatus
    limit: str | None = None
    check: Check | None = None
    limits: dict[str, Any] = field(default_factory=dict)
    sequential: bool = False  # needs slot 0 to itself (its post-condition is about the next job)


def denied_only(*labels: str, eperm: tuple[str, ...] = ()) -> Check:
    """Every attempt was denied, each of `labels` was attempted, and those in `eperm` failed with
    EPERM (the seccomp filter's answer: another layer would answer differently)."""

    def check(result: RunResult, host: Host) -> None:
        lines = [line for line in result.stdout.splitlines() if ": DENIED" in line or ": ALLOWED" in line]
        allowed = [line for line in lines if ": ALLOWED" in line]
        assert not allowed, f"allowed: {allowed}"
        answers = {line.split(":")[0]: line.split()[-1] for line in lines}
        assert set(labels) <= set(answers), f"not attempted: {set(labels) - set(answers)}"
        not_eperm = {k: v for k, v in answers.items() if k in eperm and v != "EPERM"}
        assert not not_eperm, f"denied, but not by seccomp: {not_eperm}"
        assert host.canary not in result.stdout + result.stderr

    return check


def stdout_has(*patterns: str) -> Check:
    def check(result: RunResult, host: Host) -> None:
        for pattern in patterns:
            assert re.search(pattern, result.stdout), f"{pattern!r} not in stdout: {result.stdout[-800:]!r}"

    return check


def all_of(*checks: Check) -> Check:
    def check(result: RunResult, host: Host) -> None:
        for one in checks:
            one(result, host)

    return check


def no_connections(result: RunResult, host: Host) -> None:
    assert not host.connections, f"a listener on the host was reached: {host.connections}"


def no_host_file(*paths: str) -> Check:
    def check(result: RunResult, host: Host) -> None:
        for path in paths:
            filled = host.fill(path)
            assert not Path(filled).exists(), f"{filled} appeared on the host"

    return check


def summary_has(text: str) -> Check:
    def check(result: RunResult, host: Host) -> None:
        assert text in result.summary, result.summary

    return check


def _env_ok(result: RunResult, host: Host) -> None:
    line = next(x for x in result.stdout.splitlines() if x.startswith("initial_env:"))
    keys = set(eval(line.split(":", 1)[1]))  # a printed list of names
    allowed = {
        "PATH",
        "HOME",
        "TMPDIR",
        "LANG",
        "OPENBLAS_CORETYPE",
        "OPENBLAS_L2_SIZE",
        "JAX_PLATFORMS",
        "MALLOC_ARENA_MAX",
    }
    assert keys <= allowed, keys


def _sanitised(result: RunResult, host: Host) -> None:
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout and "\x08" not in result.stdout
    assert "\ufffd" in result.stdout and "red" in result.stdout


def _no_server_path(result: RunResult, host: Host) -> None:
    assert "/app/sandbox" in result.stdout, result.stdout[-800:]  # the file was read
    assert host.server_dir not in result.stdout, "a job's mountinfo shows the server's checkout"


def attack(code: str) -> str:
    return PRELUDE + code + PASSING_KERNEL


ROWS: tuple[Row, ...] = (
    # -- filesystem
    Row(
        "fs_reads",
        attack(FS_READS),
        RunStatus.PASSED,
        check=denied_only("shadow", "secret_file", "public_server_file", "server_source", "list_work"),
    ),
    Row(
        "fs_writes",
        attack(FS_WRITES),
        RunStatus.PASSED,
        check=all_of(
            denied_only("write_dev_shm", "write_etc_passwd", "write_server_dir", "write_sandbox_code"),
            stdout_has("scratch_write: ok"),
            no_host_file(
                "/tmp/{HOST_marker}",
                "/dev/shm/{HOST_marker}",
                "{HOST_server_dir}/{HOST_marker}",
                "/var/tmp/{HOST_marker}",
                "/opt/pallas-playground/{HOST_marker}",
            ),
        ),
    ),
    Row(
        "disk_fill",
        PRELUDE
        + "\nwith open('/tmp/fill', 'wb') as f:\n    while True:\n        f.write(b'x' * (1 << 20))\n",
        RunStatus.RESOURCE_LIMIT,
        "scratch_bytes",
        check=summary_has("disk limit"),
    ),
    Row(
        "disk_inodes",
        PRELUDE + "\ni = 0\nwhile True:\n    open(f'/tmp/f{i}', 'w').close()\n    i += 1\n",
        RunStatus.RESOURCE_LIMIT,
        "scratch_bytes",
    ),
    Row(
        "shm_fill",
        PRELUDE + "\nwith open('/dev/shm/{HOST_marker}', 'wb') as f:\n    f.write(b'x' * (1 << 20))\n",
        RunStatus.ERROR,
        check=all_of(summary_has("PermissionError"), no_host_file("/dev/shm/{HOST_marker}")),
    ),
    # -- process introspection
    Row(
        "proc_introspection",
        attack(PROC),
        RunStatus.PASSED,
        check=all_of(
            denied_only("proc1_cmdline", "pool_environ", "pool_mem", "ptrace_attach", "process_vm_readv"),
            stdout_has(
                r"visible_other_pids: \[\]",
                r"fds: \[0, 1, 2, 3, \d+\]",
                "proc_environ_canary: False",
            ),
        ),
    ),
    # -- network
    Row(
        "network",
        attack(NETWORK),
        RunStatus.PASSED,
        check=all_of(
            denied_only(
                "tcp_loopback",
                "udp_loopback",
                "unix_pathname",
                "unix_abstract",
                "raw_syscall_socket",
                eperm=(
                    "tcp_loopback",
                    "unix_pathname",
                    "raw_syscall_socket",
                    "raw_syscall_netlink",
                    "socketpair",
                ),
            ),
            no_connections,
        ),
    ),
    # -- privilege
    Row(
        "privilege",
        attack(PRIVILEGE),
        RunStatus.PASSED,
        check=denied_only(
            "setuid0",
            "unshare_user",
            "clone_newuser",
            "mount_tmpfs",
            "chroot",
            "io_uring_setup",
            "bpf",
            "perf_event_open",
            "userfaultfd",
            "raise_nproc",
            "write_cgroup",
            eperm=(
                "unshare_user",
                "clone_newuser",
                "io_uring_setup",
                "bpf",
                "perf_event_open",
                "userfaultfd",
                "keyctl",
            ),
        ),
    ),
    Row(
        "exec",
        attack(EXEC),
        RunStatus.PASSED,
        check=denied_only("execv_sh", "subprocess_python", "posix_spawn", "os_system", eperm=("execv_sh",)),
    ),
    # -- signals
    Row(
        "signal_pool_and_init", attack(SIGNALS), RunStatus.PASSED, check=denied_only("kill_pool", "kill_init")
    ),
    Row("kill_minus_one", attack(KILL_ALL), RunStatus.PASSED, check=stdout_has("child reaped: True")),
    Row("pid_scan", attack(PID_SCAN), RunStatus.PASSED, check=stdout_has(r"signalable_others: \[\]")),
    Row(
        "ignore_signals_then_hang",
        PRELUDE + IGNORE_SIGNALS,
        RunStatus.TIMEOUT,
        "wall_seconds",
        limits={"wall_seconds": 3},
    ),
    # -- resources
    Row("fork_bomb", PRELUDE + FORK_BOMB, RunStatus.RESOURCE_LIMIT, "processes"),
    Row("thread_bomb", PRELUDE + THREAD_BOMB, RunStatus.RESOURCE_LIMIT, "processes"),
    Row(
        "memory_bomb_python",
        PRELUDE + "\nhog = []\nwhile True:\n    hog.append(bytearray(64 << 20))\n",
        RunStatus.RESOURCE_LIMIT,
        "memory_bytes",
    ),
    Row(
        "memory_bomb_numpy",
        PRELUDE + "\nimport numpy as np\nhog = np.ones((1 << 31,), dtype=np.float64)\n",
        RunStatus.RESOURCE_LIMIT,
        "memory_bytes",
    ),
    Row(
        "cpu_spin",
        PRELUDE + "\nwhile True:\n    pass\n",
        RunStatus.RESOURCE_LIMIT,
        "cpu_seconds",
        limits={"cpu_seconds": 2},
    ),
    Row(
        "long_sleep",
        PRELUDE + "\ntime.sleep(1000)\n",
        RunStatus.TIMEOUT,
        "wall_seconds",
        limits={"wall_seconds": 3},
    ),
    Row(
        "closed_stdio_sleep",
        PRELUDE + "\nos.close(1)\nos.close(2)\ntime.sleep(1000)\n",
        RunStatus.TIMEOUT,
        "wall_seconds",
        limits={"wall_seconds": 3},
    ),
    Row(
        "stdout_flood",
        PRELUDE + "\nwhile True:\n    sys.stdout.write('x' * 65536)\n",
        RunStatus.RESOURCE_LIMIT,
        "output_bytes",
    ),
    Row(
        "stderr_flood",
        PRELUDE + "\nwhile True:\n    sys.stderr.write('y' * 65536)\n",
        RunStatus.RESOURCE_LIMIT,
        "output_bytes",
    ),
    # 90 zombies, never reaped by the job: unless the pool reaps them, they count against the slot uid's
    # RLIMIT_NPROC (80 for the next row's 64 processes) and the next job cannot start its threads.
    Row(
        "zombies",
        attack(ZOMBIES),
        RunStatus.PASSED,
        check=stdout_has("zombies left: 90"),
        limits={"processes": 128},
        sequential=True,
    ),
    Row(
        "threads_after_zombies",
        attack(THREADS_AFTER_ZOMBIES),
        RunStatus.PASSED,
        check=stdout_has("threads started: 20"),
        sequential=True,
    ),
    Row("setsid_daemon", attack(DAEMON), RunStatus.PASSED, check=stdout_has("daemon launched")),
    # -- crashes
    Row("segfault", PRELUDE + "\nctypes.string_at(0)\n", RunStatus.ERROR, check=summary_has("SIGSEGV")),
    Row("abort", PRELUDE + "\nos.abort()\n", RunStatus.ERROR, check=summary_has("SIGABRT")),
    Row("sys_exit_3", PRELUDE + "\nsys.exit(3)\n", RunStatus.ERROR, check=summary_has("exit code 3")),
    # -- supply side and output
    Row(
        "env_tamper",
        attack(ENV_TAMPER),
        RunStatus.PASSED,
        check=all_of(_env_ok, no_host_file("/tmp/{HOST_marker}-dump")),
    ),
    Row("forged_verdict_on_stdout", PRELUDE + FORGED + WRONG_KERNEL, RunStatus.MISMATCH),
    Row("terminal_escapes_and_bad_utf8", attack(ESCAPES), RunStatus.PASSED, check=_sanitised),
    # -- the server and the other users (issue 12)
    Row(
        "forged_report",
        PRELUDE + FORGED_REPORT,
        RunStatus.ERROR,
        check=summary_has("the job's report could not be read"),
    ),
    Row("report_flood", attack(REPORT_FLOOD), RunStatus.ERROR, check=summary_has("an event of more than")),
    Row("event_count_flood", attack(EVENT_COUNT_FLOOD), RunStatus.ERROR, check=summary_has("10,000 events")),
    Row("progress_flood", attack(PROGRESS_FLOOD), RunStatus.PASSED, check=stdout_has("flooded")),
    Row("heap_walk", attack(HEAP_WALK), RunStatus.PASSED, check=stdout_has(r"pool jobs: 0\b")),
    Row("x32_syscall", PRELUDE + X32_SYSCALL + PASSING_KERNEL, RunStatus.ERROR, check=summary_has("SIGSYS")),
    Row(
        "zombie_leader",
        attack(ZOMBIE_LEADER),
        RunStatus.TIMEOUT,
        "wall_seconds",
        check=stdout_has("leader leaving"),
        limits={"wall_seconds": 4},
    ),
    Row("mountinfo_paths", attack(MOUNTINFO), RunStatus.PASSED, check=_no_server_path),
)

# Limits for the corpus: small enough to hit quickly, large enough for JAX to run.
CORPUS_LIMITS = {
    "wall_seconds": 20,
    "cpu_seconds": 15,
    "memory_bytes": 1 << 30,
    "processes": 64,
    "output_bytes": 16 << 10,
    "output_kill_bytes": 1 << 20,
    "scratch_bytes": 16 << 20,
}
