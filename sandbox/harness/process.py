"""The job child's own process: kernel-enforced limits, its peak memory, and a detached stdin."""

from __future__ import annotations

import os
import resource
from collections.abc import Mapping

from sandbox.protocol import Limits


def apply_limits(limits: Limits, *, on_chip: bool = False) -> None:
    """Kernel-enforced per-process limits, set before any user code (or JAX) is loaded.

    `on_chip`: no address-space limit. libtpu maps the chip's memory and reserves its own far past any
    RSS budget, so a cap on address space stops the chip from starting; a job on a chip is bounded by
    its wall clock here (the hardened backend bounds its resident memory with a cgroup).
    """
    if not on_chip:
        resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))
    # Soft < hard: SIGXCPU first, which the parent reports as the CPU limit.
    resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds + 5))
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits.scratch_bytes, limits.scratch_bytes))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def on_chip(environ: Mapping[str, str]) -> bool:
    """Whether the host gave this job chips: `sandbox.host.jobenv` names the TPU platform first then."""
    return environ.get("JAX_PLATFORMS", "").startswith("tpu")


def peak_rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def detach_stdin() -> None:
    """Point fd 0 at /dev/null once the job has been read, so user code cannot read the job again."""
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
