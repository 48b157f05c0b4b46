"""Can this machine run the hardened backend? A cheap probe (syscalls and file reads, no jobs)."""

from __future__ import annotations

import ctypes
import os
import resource
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from sandbox.host.tpuhost import TpuHostError, TpuSlot, host_slots
from sandbox.jail import cgroup_layout, landlock
from sandbox.jail.runtime import Runtime

# VFIO pins the host pages a chip reads and writes against RLIMIT_MEMLOCK; far below this, libtpu
# cannot map its transfer buffers (what it needs on a chip is unmeasured: the checklist in docs/tpu-vm.md).
TPU_MEMLOCK_BYTES = 1 << 30


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


def probe(runtime: Runtime | None = None, tpu_slots: Sequence[TpuSlot] | None = None) -> Capabilities:
    """`tpu_slots`: the chip slots the backend will run (default: one per chip this host has)."""
    runtime = runtime or Runtime()
    problems: list[str] = []
    features: list[str] = []
    if sys.platform != "linux":
        return Capabilities((f"needs Linux, this is {sys.platform}",), ())
    if tpu_slots is None:
        try:
            tpu_slots = host_slots()
        except TpuHostError as exc:
            problems.append(str(exc))
            tpu_slots = ()
    if tpu_slots:
        problems += _tpu_problems(tpu_slots)
        first = tpu_slots[0]
        features.append(
            f"{len(tpu_slots)} chip slots of {len(first.chips)} {first.chip} chip(s) ({first.accelerator_type})"
        )
    if os.geteuid() != 0:
        problems.append(f"not root (euid {os.geteuid()}): the pool needs root for namespaces, cgroups, uids")
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        problems.append("bubblewrap (bwrap) not installed")
    else:
        features.append(f"bubblewrap pool ({bwrap})")
    problem = runtime.problem(tpu=bool(tpu_slots))
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


def _tpu_problems(slots: Sequence[TpuSlot]) -> list[str]:
    problems = []
    memlock = resource.getrlimit(resource.RLIMIT_MEMLOCK)[1]
    if memlock != resource.RLIM_INFINITY and memlock < TPU_MEMLOCK_BYTES:
        problems.append(
            f"RLIMIT_MEMLOCK is {memlock} bytes: too little for VFIO to pin a TPU's buffers "
            "(start the runner with `--ulimit memlock=-1` or systemd `LimitMEMLOCK=infinity`)"
        )
    missing = sorted({n for s in slots for n in s.device_nodes if not os.path.exists(n)})
    if missing:
        problems.append(f"TPU device nodes missing here: {', '.join(missing)} (pass them to the runner)")
    return problems
