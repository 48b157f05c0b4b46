"""Can this machine run the hardened backend? A cheap probe (syscalls and file reads, no jobs)."""

from __future__ import annotations

import ctypes
import os
import shutil
import sys
from dataclasses import dataclass

from sandbox.jail import cgroup_layout, landlock
from sandbox.jail.runtime import Runtime


@dataclass(frozen=True)
class Capabilities:
    problems: tuple[str, ...]
    features: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.problems

    def report(self) -> str:
        """One line for /api/version: what the hardened backend would use, or why it cannot run."""
        if self.ok:
            return "hardened: " + "; ".join(self.features)
        return "local (hardened unavailable: " + "; ".join(self.problems) + ")"


def probe(runtime: Runtime | None = None) -> Capabilities:
    runtime = runtime or Runtime()
    problems: list[str] = []
    features: list[str] = []
    if sys.platform != "linux":
        return Capabilities((f"needs Linux, this is {sys.platform}",), ())
    if os.geteuid() != 0:
        problems.append(f"not root (euid {os.geteuid()}): the pool needs root for namespaces, cgroups, uids")
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        problems.append("bubblewrap (bwrap) not installed")
    else:
        features.append(f"bubblewrap pool ({bwrap})")
    problem = runtime.problem()
    if problem:
        problems.append(problem)
    abi = landlock.abi()
    if abi < 1:
        problems.append("Landlock unavailable (kernel without it, or not in the LSM list)")
    else:
        features.append(f"Landlock ABI {abi}" + ("" if abi >= 6 else " (no signal/socket scoping)"))
    try:
        ctypes.CDLL("libseccomp.so.2")
        features.append("seccomp (libseccomp)")
    except OSError:
        problems.append("libseccomp.so.2 not installed")
    try:
        layout = cgroup_layout.detect()
    except (OSError, ValueError, KeyError, StopIteration) as exc:
        problems.append(f"cgroups unreadable: {exc}")
    else:
        if layout.problem():
            problems.append(str(layout.problem()))
        features.append(layout.describe())
    return Capabilities(tuple(problems), tuple(features))
