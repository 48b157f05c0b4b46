"""Which cgroup hierarchy serves which purpose, on cgroup v1, v2 or a hybrid of both.

`detect()` reads the mounts and picks, per controller, the hierarchy that provides it (v2 when its
controller is available there, else v1); the kill uses v2's `cgroup.kill` whenever a v2 hierarchy
exists (on a hybrid machine often the otherwise empty "unified" one). Also the small file helpers
every cgroup file access goes through.

On cgroup v2 a cgroup may enable controllers for its children only while no process lives in it,
so a runner cannot make job cgroups with limits below its own cgroup. A runner that lives in a
leaf named `SUPERVISOR` (systemd's `DelegateSubgroup=supervisor`, or `scripts/runner-entrypoint`
in a container) therefore puts its pools beside that leaf, in the delegated cgroup above it.
"""

from __future__ import annotations

import contextlib
import os
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

SUPERVISOR = "supervisor"


@dataclass(frozen=True)
class Hierarchy:
    mount: Path
    version: int
    controllers: frozenset[str]
    own: str  # this process's cgroup, relative to the mount

    @property
    def here(self) -> Path:
        return self.mount / self.own.lstrip("/")


@dataclass(frozen=True)
class Layout:
    """Which hierarchy serves which purpose."""

    memory: Hierarchy | None
    pids: Hierarchy | None
    cpu: Hierarchy | None
    kill: Hierarchy | None  # a v2 hierarchy: cgroup.kill

    @property
    def used(self) -> tuple[Hierarchy, ...]:
        seen: dict[Path, Hierarchy] = {}
        for h in (self.memory, self.pids, self.cpu, self.kill):
            if h is not None:
                seen.setdefault(h.mount, h)
        return tuple(seen.values())

    @property
    def mode(self) -> str:
        versions = {h.version for h in self.used}
        return "hybrid" if versions == {1, 2} else f"v{versions.pop()}" if versions else "none"

    def describe(self) -> str:
        parts = [
            f"{name} v{h.version}"
            for name, h in (("memory", self.memory), ("pids", self.pids), ("cpu", self.cpu))
            if h is not None
        ]
        kill = "cgroup.kill (v2)" if self.kill else "SIGKILL of cgroup.procs"
        return f"cgroups {self.mode} ({', '.join(parts) or 'no controllers'}; kill by {kill})"

    def problem(self) -> str | None:
        missing = [n for n, h in (("memory", self.memory), ("pids", self.pids)) if h is None]
        if missing:
            return f"no usable cgroup controller for {' and '.join(missing)}"
        not_writable = [str(h.here) for h in self.used if not os.access(h.here, os.W_OK)]
        if not_writable:
            return f"cgroup directories not writable: {', '.join(not_writable)}"
        return None


def detect(mountinfo: str = "/proc/self/mountinfo", cgroup: str = "/proc/self/cgroup") -> Layout:
    own_v1: dict[str, str] = {}
    own_v2 = "/"
    for line in Path(cgroup).read_text().splitlines():
        _, names, path = line.split(":", 2)
        if names:
            for name in names.split(","):
                own_v1[name] = path
        else:
            own_v2 = path
    found: list[Hierarchy] = []
    for line in Path(mountinfo).read_text().splitlines():
        left, _, right = line.partition(" - ")
        fields, (fstype, _source, options) = left.split(), right.split()[:3]
        root, mount = fields[3], Path(fields[4])
        if fstype == "cgroup2":
            own = relative(own_v2, root)
            if PurePosixPath(own).name == SUPERVISOR:
                own = str(PurePosixPath(own).parent)
            available = frozenset(read(mount / own.lstrip("/") / "cgroup.controllers").split())
            found.append(Hierarchy(mount, 2, available, own))
        elif fstype == "cgroup":
            ours = frozenset(o for o in options.split(",") if o in ("memory", "pids", "cpu", "cpuacct"))
            if ours:
                found.append(Hierarchy(mount, 1, ours, relative(own_v1[next(iter(ours))], root)))
    return _plan(found)


def _plan(found: list[Hierarchy]) -> Layout:
    v2 = next((h for h in found if h.version == 2), None)

    def pick(controller: str) -> Hierarchy | None:
        if v2 is not None and controller in v2.controllers:
            return v2
        return next((h for h in found if h.version == 1 and controller in h.controllers), None)

    kill = v2 if v2 is not None and kernel_at_least(5, 14) else None
    return Layout(memory=pick("memory"), pids=pick("pids"), cpu=pick("cpu"), kill=kill)


def relative(path: str, root: str) -> str:
    if root != "/" and path.startswith(root):
        return path[len(root) :] or "/"
    return path


def kernel_at_least(major: int, minor: int) -> bool:
    found = re.match(r"(\d+)\.(\d+)", os.uname().release)
    return found is not None and (int(found[1]), int(found[2])) >= (major, minor)


def read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def read_int(path: Path) -> int:
    text = read(path).strip()
    return int(text) if text.isdigit() else 0


def keyed(path: Path) -> dict[str, int]:
    pairs = (line.split() for line in read(path).splitlines())
    return {p[0]: int(p[1]) for p in pairs if len(p) == 2 and p[1].isdigit()}


def write(path: Path, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def write_if_exists(path: Path, text: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        write(path, text)
