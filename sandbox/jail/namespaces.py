"""Namespaces and mounts: the job's private view inside the pool's (already minimal) root.

The pool mounts one size- and inode-capped tmpfs per job under `SCRATCH_ROOT` in its own private
mount namespace (so a crashed pool leaves nothing on the host's disk), and reads its fill level
after the job. The job child unshares net, IPC, UTS, cgroup and mount namespaces and then sees:
its scratch at /tmp, a /proc mounted with hidepid (only its own processes), the cgroup filesystem
and every job's scratch mount detached (so not even its mountinfo names them), and empty read-only
tmpfs over where they were.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
from dataclasses import dataclass

SCRATCH_ROOT = "/run/scratch"
JOB_TMP = "/tmp"

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_BIND, MS_REC, MS_PRIVATE = 4096, 16384, 1 << 18
MNT_DETACH = 2
_UNSHARE = os.CLONE_NEWNS | os.CLONE_NEWNET | os.CLONE_NEWIPC | os.CLONE_NEWUTS | os.CLONE_NEWCGROUP
INODES_PER_MIB = 64

_libc = ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def mount(source: str, target: str, fstype: str | None, flags: int, data: str = "") -> None:
    _check(
        _libc.mount(
            source.encode(), target.encode(), fstype.encode() if fstype else None, flags, data.encode()
        ),
        f"mount {target}",
    )


def umount(target: str) -> None:
    _check(_libc.umount2(target.encode(), MNT_DETACH), f"umount {target}")


@dataclass(frozen=True)
class ScratchUse:
    used_bytes: int
    full: bool  # no free blocks or no free inodes left: a write failed with ENOSPC


def mount_scratch(job: str, size_bytes: int, uid: int, gid: int) -> str:
    """Pool side: a fresh tmpfs for one job, owned by its slot uid, nothing executable on it."""
    path = os.path.join(SCRATCH_ROOT, job)
    os.makedirs(SCRATCH_ROOT, mode=0o700, exist_ok=True)
    os.mkdir(path, 0o700)
    inodes = max(256, size_bytes // (1 << 20) * INODES_PER_MIB)
    try:
        mount(
            "scratch",
            path,
            "tmpfs",
            MS_NOSUID | MS_NODEV | MS_NOEXEC,
            f"size={size_bytes},nr_inodes={inodes},mode=0700,uid={uid},gid={gid}",
        )
    except OSError:
        os.rmdir(path)
        raise
    return path


def release_scratch(path: str) -> ScratchUse:
    """Pool side, after the job: how full it got, then unmount and remove it."""
    st = os.statvfs(path)
    use = ScratchUse(
        used_bytes=(st.f_blocks - st.f_bfree) * st.f_frsize,
        full=st.f_bavail == 0 or st.f_favail == 0,
    )
    umount(path)
    os.rmdir(path)
    return use


def _mounts_under(*roots: str) -> list[str]:
    """Mount points at or below any of `roots`, deepest first (so each can be detached)."""
    points = []
    with open("/proc/self/mountinfo") as info:
        for line in info:
            point = line.split()[4].replace("\\040", " ")
            if any(point == root or point.startswith(root + "/") for root in roots):
                points.append(point)
    return sorted(set(points), key=lambda p: -p.count("/"))


def leftover_scratch() -> list[str]:
    with contextlib.suppress(FileNotFoundError):
        return sorted(os.listdir(SCRATCH_ROOT))
    return []


# Mounts stacked on one point (cgroup v1 hierarchies, a re-mounted scratch) take one round each.
DETACH_ROUNDS = 8


def detach_all(*roots: str) -> None:
    """Detach every mount at or below `roots` from this (new) mount namespace, stacked ones too
    (a point can hold several mounts: each round detaches the top one).

    A neighbour's scratch can vanish between reading mountinfo and detaching it: its job ended and
    the pool removed the folder, which the kernel also detaches from every namespace holding a copy
    of it. That is the state wanted, not a failure of this job's setup (it was one, once in a few
    hundred runs beside hostile jobs that end at once: "FileNotFoundError: [Errno 2] umount …").
    """
    for _ in range(DETACH_ROUNDS):
        points = _mounts_under(*roots)
        if not points:
            return
        for point in points:
            try:
                umount(point)
            except OSError as exc:
                if exc.errno not in (errno.ENOENT, errno.EINVAL):  # gone, or no longer a mount point
                    raise


def enter(scratch: str) -> None:
    """Child side: new namespaces, then the job's view of the filesystem."""
    os.unshare(_UNSHARE)
    mount("none", "/", None, MS_REC | MS_PRIVATE)
    mount(scratch, JOB_TMP, None, MS_BIND | MS_REC)
    # Detach, not just cover: a covered mount still shows in /proc/self/mountinfo, with the other
    # jobs' scratch names and the host's cgroup paths.
    detach_all(SCRATCH_ROOT, "/sys/fs/cgroup")
    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "hidepid=2")
    for hidden in ("/sys/fs/cgroup", os.path.dirname(SCRATCH_ROOT)):
        if os.path.isdir(hidden):
            mount("hidden", hidden, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k")
    os.chdir(JOB_TMP)
    _libc.sethostname(b"sandbox", 7)
