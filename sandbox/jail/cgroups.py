"""Per-job cgroups on cgroup v1, v2 or a hybrid of both: memory, pids and CPU caps, and a kill.

Which hierarchy serves which controller is `cgroup_layout`'s business; the kill uses `cgroup.kill`
where a v2 hierarchy exists, else SIGKILLs `cgroup.procs` until the cgroup is empty. The layout
under each hierarchy is

    <this process's cgroup>/pallas-playground/pool-<token>/job-<id>

and each pool holds an flock on its `pool-<token>` directory in every hierarchy for as long as it
lives. Several pools may share a host (two servers, a server and a test suite), and they may share
some hierarchies (pids, cpu, the v2 one) while their own cgroup differs in others (memory): so a
pool directory is proven dead only in the hierarchy where it is found, by taking its flock there.
A sweep and a pool's creation in one hierarchy both hold the flock of that hierarchy's
`pallas-playground` directory, so a sweeper can never see a live pool's directory before its owner
holds it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import signal
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from sandbox.jail import cgroup_layout
from sandbox.jail.cgroup_layout import Hierarchy, Layout
from sandbox.protocol import Limits

BASE_NAME = "pallas-playground"
CPU_PERIOD_US = 100_000
_NAME = re.compile(r"^[A-Za-z0-9_-]{1,80}$")


class CgroupError(OSError):
    """The cgroups a job needs could not be set up."""


@dataclass
class Facts:
    """What the kernel counted for one job."""

    oom_kills: int = 0
    pids_limit_hits: int = 0
    memory_peak_bytes: int = 0
    cpu_seconds: float = 0.0


class JobCgroup:
    """One job's cgroup in every hierarchy the layout uses."""

    def __init__(self, layout: Layout, dirs: dict[Path, Path]) -> None:
        self.layout = layout
        self.dirs = dirs  # hierarchy mount -> this job's directory

    def dir(self, h: Hierarchy | None) -> Path | None:
        return self.dirs.get(h.mount) if h is not None else None

    def join(self) -> None:
        """Move the calling process into every one of them (called by the job child itself)."""
        for path in self.dirs.values():
            cgroup_layout.write(path / "cgroup.procs", "0")

    def facts(self) -> Facts:
        facts = Facts()
        memory = self.dir(self.layout.memory)
        if memory is not None:
            v2 = self.layout.memory is not None and self.layout.memory.version == 2
            events = cgroup_layout.keyed(memory / ("memory.events" if v2 else "memory.oom_control"))
            facts.oom_kills = events.get("oom_kill", 0)
            facts.memory_peak_bytes = cgroup_layout.read_int(
                memory / ("memory.peak" if v2 else "memory.max_usage_in_bytes")
            )
        pids = self.dir(self.layout.pids)
        if pids is not None:
            facts.pids_limit_hits = cgroup_layout.keyed(pids / "pids.events").get("max", 0)
        facts.cpu_seconds = self.cpu_seconds()
        return facts

    def cpu_seconds(self) -> float:
        """CPU time every process of the job has used so far, ended or not (RLIMIT_CPU counts one
        process: children that each stay under it add up). From a v2 `cpu.stat` (every v2 cgroup
        keeps one, the kill hierarchy's too), else v1 `cpuacct.usage` where cpuacct shares the cpu
        hierarchy; 0 where neither exists."""
        for path in self.dirs.values():
            usage = cgroup_layout.keyed(path / "cpu.stat").get("usage_usec")
            if usage is not None:
                return usage / 1e6
        cpu = self.dir(self.layout.cpu)
        if cpu is not None:
            return cgroup_layout.read_int(cpu / "cpuacct.usage") / 1e9
        return 0.0

    def kill(self) -> None:
        """SIGKILL everything in the job: `cgroup.kill` where there is one, and every thread listed.

        Threads, not just processes: when a process's main thread has exited (pthread_exit, or
        killed alone by a thread-scoped signal) its other threads live on under a zombie leader,
        and both `cgroup.kill` and `cgroup.procs` skip such a process. A signal sent to any one of
        its threads' ids still kills the whole process.
        """
        kill_dir = self.dir(self.layout.kill)
        if kill_dir is not None:
            with contextlib.suppress(FileNotFoundError):
                cgroup_layout.write(kill_dir / "cgroup.kill", "1")
        for path in self.dirs.values():
            for tid in {*_pids(path), *_threads(path)}:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(tid, signal.SIGKILL)

    def empty(self) -> bool:
        kill_dir = self.dir(self.layout.kill)
        if kill_dir is not None and cgroup_layout.keyed(kill_dir / "cgroup.events").get("populated", 0):
            return False
        return not any(_pids(path) or _threads(path) for path in self.dirs.values())

    def remove(self) -> list[str]:
        """Remove the directories; returns those that could not be removed (still busy)."""
        left = []
        for path in self.dirs.values():
            try:
                _rmdir_retrying(path)
            except OSError as exc:
                left.append(f"{path}: {exc.strerror}")
        return left


class PoolCgroups:
    """The cgroups of one pool: its `pool-<token>` directories and a job cgroup per running job."""

    def __init__(self, layout: Layout, token: str, base_name: str = BASE_NAME) -> None:
        if not _NAME.match(token) or not _NAME.match(base_name):
            raise ValueError(f"bad cgroup names {base_name!r}/{token!r}")
        self.layout, self.token, self.base_name = layout, token, base_name
        self._lock_fds: list[int] = []

    def bases(self) -> dict[Path, Path]:
        return {h.mount: h.here / self.base_name for h in self.layout.used}

    def start(self) -> list[str]:
        """Create this pool's directories, hold them, and sweep what dead pools left; one hierarchy
        at a time, each under its base directory's lock."""
        problem = self.layout.problem()
        if problem:
            raise CgroupError(problem)
        swept: list[str] = []
        for h in self.layout.used:
            base = h.here / self.base_name
            base.mkdir(exist_ok=True)
            with _locked(base):
                swept += _sweep(base, keep=f"pool-{self.token}")
                pool = base / f"pool-{self.token}"
                pool.mkdir(exist_ok=True)
                self._lock_fds.append(_hold(pool))
                if h.version == 2:
                    self._enable_controllers(h)
        return swept

    def create(self, job: str, limits: Limits, cpu_cores: float) -> JobCgroup:
        if not _NAME.match(job):
            raise ValueError(f"bad job id {job!r}")
        dirs: dict[Path, Path] = {}
        cgroup = JobCgroup(self.layout, dirs)
        try:
            for h in self.layout.used:
                path = h.here / self.base_name / f"pool-{self.token}" / f"job-{job}"
                path.mkdir()
                dirs[h.mount] = path
            self._limit(cgroup, limits, cpu_cores)
        except OSError as exc:
            cgroup.remove()
            raise CgroupError(exc.errno, f"job cgroup: {exc.strerror}: {exc.filename}") from exc
        return cgroup

    def jobs(self) -> list[Path]:
        return [p for base in self.bases().values() for p in (base / f"pool-{self.token}").glob("job-*")]

    def close(self) -> None:
        """Remove this pool's (empty) directories; jobs must have been removed first."""
        for base in self.bases().values():
            with contextlib.suppress(OSError):
                (base / f"pool-{self.token}").rmdir()
        for fd in self._lock_fds:
            os.close(fd)
        self._lock_fds.clear()

    # -- internals ---------------------------------------------------------------------------

    def _enable_controllers(self, h: Hierarchy) -> None:
        wanted = [c for c in ("memory", "pids", "cpu") if c in h.controllers]
        if not wanted:
            return
        text = " ".join(f"+{c}" for c in wanted)
        for path in (h.here, h.here / self.base_name, h.here / self.base_name / f"pool-{self.token}"):
            try:
                cgroup_layout.write(path / "cgroup.subtree_control", text)
            except OSError as exc:
                raise CgroupError(
                    exc.errno,
                    f"cannot enable {text} in {path}: {exc.strerror} (cgroup v2 allows controllers "
                    "below a cgroup only if no process lives in it: start the playground in a leaf of "
                    "a delegated subtree, see SECURITY.md)",
                ) from exc

    def _limit(self, cgroup: JobCgroup, limits: Limits, cpu_cores: float) -> None:
        memory = cgroup.dir(self.layout.memory)
        if memory is not None:
            if self.layout.memory is not None and self.layout.memory.version == 2:
                cgroup_layout.write(memory / "memory.max", str(limits.memory_bytes))
                cgroup_layout.write_if_exists(memory / "memory.swap.max", "0")
                cgroup_layout.write(memory / "memory.oom.group", "1")
            else:
                cgroup_layout.write(memory / "memory.limit_in_bytes", str(limits.memory_bytes))
                cgroup_layout.write_if_exists(
                    memory / "memory.memsw.limit_in_bytes", str(limits.memory_bytes)
                )
        pids = cgroup.dir(self.layout.pids)
        if pids is not None:
            cgroup_layout.write(pids / "pids.max", str(limits.processes))
        cpu = cgroup.dir(self.layout.cpu)
        if cpu is not None:
            quota = max(1000, int(cpu_cores * CPU_PERIOD_US))
            if self.layout.cpu is not None and self.layout.cpu.version == 2:
                cgroup_layout.write(cpu / "cpu.max", f"{quota} {CPU_PERIOD_US}")
            else:
                cgroup_layout.write(cpu / "cpu.cfs_period_us", str(CPU_PERIOD_US))
                cgroup_layout.write(cpu / "cpu.cfs_quota_us", str(quota))


@contextlib.contextmanager
def _locked(directory: Path) -> Iterator[None]:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _hold(directory: Path) -> int:
    """An open, flocked fd on `directory`: the proof of life other pools test (released at death)."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def _held(directory: Path) -> bool:
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)


def _sweep(base: Path, keep: str) -> list[str]:
    """Destroy every pool directory under `base` that no live pool holds (call under `base`'s lock)."""
    swept = []
    for pool_dir in sorted(base.glob("pool-*")):
        if pool_dir.name != keep and pool_dir.is_dir() and not _held(pool_dir):
            _destroy(pool_dir)
            swept.append(str(pool_dir))
    return swept


def _destroy(pool_dir: Path) -> None:
    """Kill every process under a dead pool's directory and remove it, leaves first."""
    for job in [p for p in pool_dir.iterdir() if p.is_dir()]:
        deadline = time.monotonic() + 2.0
        while _pids(job) or _threads(job) or cgroup_layout.keyed(job / "cgroup.events").get("populated", 0):
            if (job / "cgroup.kill").exists():
                cgroup_layout.write(job / "cgroup.kill", "1")
            for tid in {*_pids(job), *_threads(job)}:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(tid, signal.SIGKILL)
            if time.monotonic() > deadline:
                break
            time.sleep(0.01)
        with contextlib.suppress(OSError):
            _rmdir_retrying(job)
    with contextlib.suppress(OSError):
        _rmdir_retrying(pool_dir)


def _pids(path: Path) -> list[int]:
    try:
        return [int(p) for p in (path / "cgroup.procs").read_text().split()]
    except FileNotFoundError:
        return []


def _threads(path: Path) -> list[int]:
    """Every thread id in a cgroup (v1 `tasks`; v2 `cgroup.threads`)."""
    for name in ("tasks", "cgroup.threads"):
        try:
            return [int(p) for p in (path / name).read_text().split()]
        except FileNotFoundError:
            continue
        except OSError:  # v2 domain cgroups may refuse cgroup.threads: their procs list covers them
            return []
    return []


def _rmdir_retrying(path: Path, seconds: float = 2.0) -> None:
    deadline = time.monotonic() + seconds
    while True:
        try:
            path.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.005)
