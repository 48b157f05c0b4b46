"""A block of slot uids that no other pool on this host uses while this backend lives.

Job limits that count per uid (RLIMIT_NPROC counts every thread of a real uid, system-wide) and
the pool's "kill every process of the slot uid" backstop both assume a slot uid is one job's
alone. Two servers on one host would otherwise both run slot 0 as uid 21000. A lease is an flock on
`<dir>/<first uid>.lock`, held for the backend's life and released by the kernel when it dies, so a
crashed server's block is free again without any cleanup.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from dataclasses import dataclass
from pathlib import Path

LEASE_DIR = Path("/run/pallas-playground/uid-leases")
BLOCK = 100  # uids per block: a pool has at most this many slots
BLOCKS = 50  # blocks tried before giving up


class NoUidBlockError(RuntimeError):
    """Every uid block is leased by a live pool."""


@dataclass
class UidLease:
    first: int
    fd: int

    def release(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.fd)


def lease(preferred: int, slots: int, directory: Path = LEASE_DIR) -> UidLease:
    """The first free block of `BLOCK` uids from `preferred` on, held until `release()` (or death)."""
    if slots > BLOCK:
        raise ValueError(f"{slots} slots do not fit a block of {BLOCK} uids")
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    for index in range(BLOCKS):
        first = preferred + index * BLOCK
        fd = os.open(directory / f"{first}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        return UidLease(first, fd)
    raise NoUidBlockError(f"all {BLOCKS} blocks of {BLOCK} uids from {preferred} are in use by live pools")
