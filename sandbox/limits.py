"""Named defaults for every per-job limit, in one place (each limit hit is reported by name)."""

from __future__ import annotations

from sandbox.protocol import Limits

KIB = 1024
MIB = 1024 * KIB
GIB = 1024 * MIB

WALL_SECONDS = 60.0
CPU_SECONDS = 120
# Address space, not RSS: CPU JAX maps about 1.2 GiB before computing anything.
MEMORY_BYTES = 6 * GIB
PROCESSES = 256
# What is kept of stdout and of stderr each; past OUTPUT_KILL_BYTES the job is stopped as a flood.
OUTPUT_BYTES = 64 * KIB
OUTPUT_KILL_BYTES = 8 * MIB
SOURCE_BYTES = 64 * KIB
SCRATCH_BYTES = 64 * MIB
# The hardened backend's CPU share per job (a cgroup quota, in cores), beside the CPU-time limit.
CPU_CORES = 1.0


def default_limits(**overrides: float | int) -> Limits:
    values: dict[str, float | int] = {
        "wall_seconds": WALL_SECONDS,
        "cpu_seconds": CPU_SECONDS,
        "memory_bytes": MEMORY_BYTES,
        "processes": PROCESSES,
        "output_bytes": OUTPUT_BYTES,
        "output_kill_bytes": OUTPUT_KILL_BYTES,
        "source_bytes": SOURCE_BYTES,
        "scratch_bytes": SCRATCH_BYTES,
    }
    values.update(overrides)
    return Limits(**values)  # type: ignore[arg-type]


# Jobs run at this nice value (lower CPU weight), so the web server and the queue stay responsive
# while every core runs jobs.
JOB_NICE = 10
NICE = "/usr/bin/nice"  # coreutils: runs a command at a nice value (it execs, so the pid stays)
