"""The sandbox package as the pool sees it: a copy at a neutral host path, not the server's checkout.

Bind mounts show their source in a job's /proc/self/mountinfo, so mounting the checkout's
`sandbox/` would tell every job where the server lives on the host. The backend copies the
package (without caches) to `STAGE_ROOT/app-<content hash>/sandbox` on the host's /run tmpfs and
mounts that: what a job can read there is the package it already runs, and the path says nothing.

Several servers may share the host: each holds a shared flock on the copy it uses, and a copy is
removed only when nobody holds it (all under one lock on the root, so staging and pruning never
interleave).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

STAGE_ROOT = Path("/run/pallas-playground")


@dataclass
class Staged:
    path: Path  # the `sandbox` directory to mount
    fd: int  # a shared flock on its parent, held while in use

    def release(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.fd)


def stage(package: Path, root: Path = STAGE_ROOT) -> Staged:
    """A read-only copy of `package` whose path depends only on its content (reused if present)."""
    files = sorted(p for p in package.rglob("*.py") if "__pycache__" not in p.parts)
    digest = hashlib.sha256()
    for path in files:
        digest.update(str(path.relative_to(package)).encode() + b"\0" + path.read_bytes() + b"\0")
    home = root / f"app-{digest.hexdigest()[:16]}"
    root.mkdir(mode=0o755, parents=True, exist_ok=True)
    with _locked(root):
        _prune(root, keep=home.name)
        if not home.is_dir():
            _copy(package, files, home)
        fd = os.open(home, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        fcntl.flock(fd, fcntl.LOCK_SH)
    return Staged(home / "sandbox", fd)


def _copy(package: Path, files: list[Path], home: Path) -> None:
    work = Path(tempfile.mkdtemp(prefix=".staging-", dir=home.parent))
    for path in files:
        copy = work / "sandbox" / path.relative_to(package)
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, copy)
    for directory, _, names in os.walk(work):
        os.chmod(directory, 0o755)
        for name in names:
            os.chmod(os.path.join(directory, name), 0o644)
    os.rename(work, home)


def _prune(root: Path, keep: str) -> None:
    """Remove copies no live backend holds (and half-made ones of a crashed stager)."""
    for old in root.glob(".staging-*"):
        shutil.rmtree(old, ignore_errors=True)
    for old in root.glob("app-*"):
        if old.name == keep:
            continue
        fd = os.open(old, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            continue  # in use by a live backend
        finally:
            os.close(fd)
        shutil.rmtree(old, ignore_errors=True)


@contextlib.contextmanager
def _locked(root: Path) -> Iterator[None]:
    fd = os.open(root / ".lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)
