"""The hostile programs of the corpus: each one source text, run as a job (see `hostile_corpus.ROWS`).

Each tries one way out (files, processes, network, privileges, signals, resources, output) and prints
what happened per attempt, so the row's check can tell "denied" from "got through".
"""

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

# -- issue 12: the runner, other users' runs, unstoppable jobs, host paths ------------------------

# Made-up protocol events on the job's own event descriptor (fd 3), then a clean exit.
FORGED_REPORT = """
os.write(3, b'{"kind": "case", "data": {"index": "zero", "result": {"passed": true}}, "t": 0}\\n')
os.write(3, b'{"kind": "done", "data": {}, "t": 0}\\n')
sys.stdout.flush()
os._exit(0)
"""

# A report far over its cap, without a single newline.
REPORT_FLOOD = """
chunk = b"x" * (1 << 20)
for _ in range(64):
    os.write(3, chunk)
"""

# Well-formed events, too many of them.
EVENT_COUNT_FLOOD = """
line = b'{"kind": "imported", "data": {}, "t": 0}\\n'
os.write(3, line * 20000)
"""

# Schema-valid progress events of 4 MiB each, under every report cap: the run passes, and what the
# web server forwards and keeps of them must stay small (#28: +51 MB of server memory per run before).
PROGRESS_FLOOD = """
event = {"kind": "progress", "data": {"phase": "run", "case": "x" * (4 << 20), "seconds": 0.0}, "t": 0}
line = (json.dumps(event) + "\\n").encode()
for _ in range(11):
    os.write(3, line)
print("flooded")
"""

# Walk the heap inherited from the pool: every string reachable from any container, and the pool's
# own table of running jobs.
HEAP_WALK = """
import gc, re
ids, pool_jobs = set(), None
hexid = re.compile(r"^[0-9a-f]{32}$|^[A-Za-z0-9_-]{22}$")
for obj in gc.get_objects():
    if type(obj).__name__ == "Pool" and hasattr(obj, "jobs"):
        pool_jobs = len(obj.jobs)
    for ref in gc.get_referents(obj):
        if isinstance(ref, str) and hexid.match(ref):
            ids.add(ref)
print("pool jobs:", pool_jobs)
print("ids:", sorted(ids))
"""

# An x32-ABI syscall (getpid | __X32_SYSCALL_BIT): must end the job, not just one of its threads.
X32_SYSCALL = """
print("before", flush=True)
libc.syscall(0x40000000 | 39)
print("after", flush=True)
"""

# The main thread leaves while another thread lives: a zombie leader that `cgroup.kill` and
# `cgroup.procs` skip; only killing its threads ends it.
ZOMBIE_LEADER = """
import threading
threading.Thread(target=time.sleep, args=(1000,)).start()
print("leader leaving", flush=True)
libc.pthread_exit(None)
"""

MOUNTINFO = """
print(open("/proc/self/mountinfo").read())
"""
