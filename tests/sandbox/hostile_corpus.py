"""The hostile corpus: one row = a hostile program, the status a user must see, and a post-condition.

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

PRELUDE = '''
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
'''

PASSING_KERNEL = '''
import numpy as np
def make_inputs(seed):
    return (np.arange(8, dtype=np.float32),)
def reference(x):
    return x * 2
def kernel(x):
    return x * 2
'''

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


FS_READS = """
attempt("shadow", lambda: open("/etc/shadow").read())
attempt("secret_file", lambda: open("{HOST_secret_file}").read())
attempt("public_server_file", lambda: open("{HOST_public_file}").read())
attempt("server_source", lambda: open("{HOST_server_dir}/server/app.py").read())
attempt("server_var", lambda: os.listdir("{HOST_server_dir}/var"))
attempt("list_root_home", lambda: os.listdir("/root"))
attempt("list_home", lambda: os.listdir("/home"))
attempt("list_work", lambda: os.listdir("/work"))
attempt("list_slash", lambda: os.listdir("/"))
attempt("read_via_symlink", lambda: (os.symlink("{HOST_secret_file}", "/tmp/link"), open("/tmp/link").read()))
attempt("hardlink_secret", lambda: os.link("{HOST_secret_file}", "/tmp/hard"))
"""

FS_WRITES = """
attempt("write_dev_shm", lambda: open("/dev/shm/{HOST_marker}", "w").write("x"))
attempt("write_etc_passwd", lambda: open("/etc/passwd", "a").write("x"))
attempt("write_server_dir", lambda: open("{HOST_server_dir}/{HOST_marker}", "w").write("x"))
attempt("write_usr", lambda: open("/usr/{HOST_marker}", "w").write("x"))
attempt("write_runtime", lambda: open("/opt/pallas-playground/{HOST_marker}", "w").write("x"))
attempt("write_sandbox_code", lambda: open("/app/sandbox/{HOST_marker}", "w").write("x"))
attempt("write_var_tmp", lambda: open("/var/tmp/{HOST_marker}", "w").write("x"))
open("/tmp/{HOST_marker}", "w").write("this stays in the job's scratch")
print("scratch_write: ok")
"""

PROC = """
mine = {os.getpid()}
others = [p for p in os.listdir("/proc") if p.isdigit() and int(p) not in mine]
print("visible_other_pids:", others)
attempt("proc1_cmdline", lambda: open("/proc/1/cmdline").read())
attempt("pool_environ", lambda: open(f"/proc/{os.getppid()}/environ").read())
attempt("pool_mem", lambda: open(f"/proc/{os.getppid()}/mem", "rb").read(16))
attempt("pool_cmdline", lambda: open(f"/proc/{os.getppid()}/cmdline").read())
attempt("ptrace_attach", lambda: sys_call(101, 16, os.getppid(), 0, 0))
iov = (ctypes.c_char * 16)()
attempt("process_vm_readv", lambda: sys_call(310, os.getppid(), ctypes.byref(iov), 1, ctypes.byref(iov), 1, 0))
print("fds:", sorted(int(f) for f in os.listdir("/proc/self/fd")))
print("env_keys:", sorted(os.environ))
try:
    own_environ = open("/proc/self/environ", "rb").read()  # denied too: the job is not dumpable
except OSError:
    own_environ = b""
print("proc_environ_canary:", b"{HOST_canary}" in own_environ)
"""

NETWORK = """
attempt("tcp_loopback", lambda: socket.create_connection(("127.0.0.1", {HOST_tcp_port}), timeout=1))
attempt("udp_loopback", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("127.0.0.1", {HOST_udp_port})))
attempt("unix_pathname", lambda: socket.socket(socket.AF_UNIX).connect("{HOST_unix_path}"))
attempt("unix_abstract", lambda: socket.socket(socket.AF_UNIX).connect("\\0{HOST_abstract_name}"))
attempt("socketpair", lambda: socket.socketpair())
attempt("raw_syscall_socket", lambda: sys_call(41, 2, 1, 0))
attempt("raw_syscall_netlink", lambda: sys_call(41, 16, 3, 0))
attempt("ipv6", lambda: socket.socket(socket.AF_INET6, socket.SOCK_STREAM))
"""

PRIVILEGE = """
attempt("setuid0", lambda: os.setuid(0))
attempt("setgid0", lambda: os.setgid(0))
attempt("setgroups", lambda: os.setgroups([0]))
attempt("unshare_user", lambda: os.unshare(os.CLONE_NEWUSER))
attempt("unshare_net", lambda: os.unshare(os.CLONE_NEWNET))
attempt("clone_newuser", lambda: sys_call(56, 0x10000000 | 17, 0, 0, 0, 0))
attempt("mount_tmpfs", lambda: sys_call(165, b"none", b"/tmp", b"tmpfs", 0, None))
attempt("chroot", lambda: os.chroot("/tmp"))
attempt("io_uring_setup", lambda: sys_call(425, 8, ctypes.byref((ctypes.c_char * 120)())))
attempt("bpf", lambda: sys_call(321, 0, ctypes.byref((ctypes.c_char * 64)()), 64))
attempt("perf_event_open", lambda: sys_call(298, ctypes.byref((ctypes.c_char * 128)()), 0, -1, -1, 0))
attempt("userfaultfd", lambda: sys_call(323, 0))
attempt("keyctl", lambda: sys_call(250, 0, 0, 0, 0))
attempt("raise_nproc", lambda: __import__("resource").setrlimit(__import__("resource").RLIMIT_NPROC, (10**6, 10**6)))
attempt("write_cgroup", lambda: open("/sys/fs/cgroup/pids/pids.max", "w").write("max"))
attempt("list_cgroupfs", lambda: os.listdir("/sys/fs/cgroup/memory"))
"""

EXEC = """
import subprocess
attempt("execv_sh", lambda: os.execv("/bin/sh", ["sh", "-c", "id"]))
attempt("subprocess_python", lambda: subprocess.run([sys.executable, "-c", "print(1)"]))
attempt("posix_spawn", lambda: os.posix_spawn("/bin/true", ["true"], {}))
def system():
    status = os.system("id")
    if status != 0:
        raise OSError(errno.EPERM, f"exit status {status}")
    return status
attempt("os_system", system)
"""

SIGNALS = """
attempt("kill_pool", lambda: os.kill(os.getppid(), signal.SIGKILL))
attempt("kill_init", lambda: os.kill(1, signal.SIGKILL))
"""

KILL_ALL = """
child = os.fork()
if child == 0:
    time.sleep(60)
    os._exit(0)
os.kill(-1, signal.SIGKILL)
time.sleep(0.2)
print("child reaped:", os.waitpid(child, 0)[1] == signal.SIGKILL)
"""

PID_SCAN = """
pid_max = min(int(open("/proc/sys/kernel/pid_max").read()), 1 << 17)
signalable = []
for pid in range(1, pid_max):
    try:
        os.kill(pid, 0)
        signalable.append(pid)
    except (PermissionError, ProcessLookupError):
        pass
mine = {int(t) for t in os.listdir("/proc/self/task")}  # kill() accepts a thread id too
print("signalable_others:", [p for p in signalable if p not in mine])
"""

IGNORE_SIGNALS = """
for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGXCPU):
    signal.signal(sig, signal.SIG_IGN)
while True:
    time.sleep(1)
"""

FORK_BOMB = """
while True:
    os.fork()
"""

THREAD_BOMB = """
import threading
event = threading.Event()
while True:
    threading.Thread(target=event.wait, daemon=True).start()
"""

ZOMBIES = """
for made in range(90):
    if os.fork() == 0:
        os._exit(0)
print("zombies left:", made + 1)
"""

THREADS_AFTER_ZOMBIES = """
import threading
event = threading.Event()
threads = [threading.Thread(target=event.wait) for _ in range(20)]
for t in threads:
    t.start()
event.set()
print("threads started:", len(threads))
"""

DAEMON = """
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.close(1); os.close(2)
        time.sleep(600)
    os._exit(0)
time.sleep(0.2)
print("daemon launched")
"""

ENV_TAMPER = """
print("initial_env:", sorted(os.environ))
os.environ["XLA_FLAGS"] = "--xla_dump_to=/tmp/{HOST_marker}-dump --xla_dump_hlo_as_text"
os.environ["LD_PRELOAD"] = "/tmp/evil.so"
os.environ["PYTHONPATH"] = "/tmp"
"""

FORGED = """
print(json.dumps({"kind": "done", "data": {}, "t": 0}))
print(json.dumps({"kind": "case", "data": {"result": {"passed": True}}, "t": 0}))
sys.stdout.flush()
"""

ESCAPES = r"""
print("\x1b]0;pwned title\x07\x1b[31mred\x1b[0m \x1b[2J\r\x08beep\x07")
sys.stdout.flush()
sys.stdout.buffer.write(b"bad utf-8: \xff\xfe\xc3\x28\n")
sys.stdout.flush()
"""

MULTI_DEVICE = """
import jax
print("devices:", jax.device_count())
"""


def _env_ok(result: RunResult, host: Host) -> None:
    line = next(x for x in result.stdout.splitlines() if x.startswith("initial_env:"))
    keys = set(eval(line.split(":", 1)[1]))  # a printed list of names
    assert keys <= {"PATH", "HOME", "TMPDIR", "LANG", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"}, keys


def _sanitised(result: RunResult, host: Host) -> None:
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout and "\x08" not in result.stdout
    assert "\ufffd" in result.stdout and "red" in result.stdout


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
                "/tmp/{HOST_marker}", "/dev/shm/{HOST_marker}", "{HOST_server_dir}/{HOST_marker}",
                "/var/tmp/{HOST_marker}", "/opt/pallas-playground/{HOST_marker}",
            ),
        ),
    ),
    Row(
        "disk_fill",
        PRELUDE + "\nwith open('/tmp/fill', 'wb') as f:\n    while True:\n        f.write(b'x' * (1 << 20))\n",
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
                "tcp_loopback", "udp_loopback", "unix_pathname", "unix_abstract", "raw_syscall_socket",
                eperm=("tcp_loopback", "unix_pathname", "raw_syscall_socket", "raw_syscall_netlink", "socketpair"),
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
            "setuid0", "unshare_user", "clone_newuser", "mount_tmpfs", "chroot", "io_uring_setup", "bpf",
            "perf_event_open", "userfaultfd", "raise_nproc", "write_cgroup",
            eperm=("unshare_user", "clone_newuser", "io_uring_setup", "bpf", "perf_event_open", "userfaultfd",
                   "keyctl"),
        ),
    ),
    Row(
        "exec",
        attack(EXEC),
        RunStatus.PASSED,
        check=denied_only("execv_sh", "subprocess_python", "posix_spawn", "os_system", eperm=("execv_sh",)),
    ),
    # -- signals
    Row("signal_pool_and_init", attack(SIGNALS), RunStatus.PASSED, check=denied_only("kill_pool", "kill_init")),
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
    Row("long_sleep", PRELUDE + "\ntime.sleep(1000)\n", RunStatus.TIMEOUT, "wall_seconds", limits={"wall_seconds": 3}),
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
