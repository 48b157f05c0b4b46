"""Named defaults for every per-job limit, in one place (each limit hit is reported by name)."""

from __future__ import annotations

import dataclasses

from sandbox.protocol import Job, Limits

KIB = 1024
MIB = 1024 * KIB
GIB = 1024 * MIB

WALL_SECONDS = 60.0
CPU_SECONDS = 120
# CPU time past `cpu_seconds` before a job is killed: its main process gets SIGXCPU at the limit and
# SIGKILL this much later (RLIMIT_CPU's hard limit), and the pool kills a job whose processes together
# used this much more (RLIMIT_CPU counts one process: children that each stay under it add up).
CPU_GRACE_SECONDS = 5
# Address space, not RSS: CPU JAX maps about 1.2 GiB before computing anything.
MEMORY_BYTES = 6 * GIB
PROCESSES = 256
# What is kept of stdout and of stderr each; past OUTPUT_KILL_BYTES the job is stopped as a flood.
OUTPUT_BYTES = 64 * KIB
OUTPUT_KILL_BYTES = 8 * MIB
SOURCE_BYTES = 64 * KIB
SCRATCH_BYTES = 64 * MIB
# A sweep job checks many configs in one child: its wall and CPU limits grow with its configs.
SWEEP_WALL_SECONDS_PER_CONFIG = 10.0
SWEEP_CPU_SECONDS_PER_CONFIG = 20
# On a chip a config also compiles natively, at its check size and at the target size, and is timed
# there. Measured on the lent v5e (2026-12-06): 2.5 s a config for a BlockSpec matmul, about 20 s for
# megablox's gmm, 30-45 s for JAX's paged attention (the model's walk of its 16k-step grid included);
# at 10 s a config a 6-config paged-attention sweep was stopped before its first config was judged.
SWEEP_CHIP_WALL_SECONDS_PER_CONFIG = 30.0
# A class run's rerun on a chip (`sandbox.backends.rerun`) starts JAX on the chip, makes the inputs and
# the reference's outputs on the CPU, compiles the program and times it: measured on the lent v5e
# (2026-12-06), 12 s to the first step, then 33 s to compile a program that draws 16 Mi normal numbers.
RERUN_WALL_SECONDS = 120.0
RERUN_CPU_SECONDS = 240
# The hardened backend's CPU quota per job (a cgroup quota, in cores), beside the CPU-time limit:
# None is every core of the host. A job alone may then use an idle machine (XLA's compile and the
# interpreter's callbacks run on threads of their own: a first call takes 1.4 s of CPU on 1.0 s of
# its main thread, measured for tiled_matmul), jobs running together share the cores by equal
# weights, and the CPU-time limit bounds what one job can take in all, however many cores it uses.
CPU_CORES: float | None = None
# Threads a job on a chip slot may have: libtpu and the TPU compiler size their pools by the CPUs
# they may use (a slot's share of the host's, e.g. 28 of a v5e-8 host's 224).
TPU_PROCESSES = 4096
# Jobs run at this nice value (lower CPU weight), so the web server and the queue stay responsive
# while every core runs jobs.
JOB_NICE = 10
NICE = "/usr/bin/nice"  # coreutils: runs a command at a nice value (it execs, so the pid stays)


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


def for_tpu(limits: Limits) -> Limits:
    """`limits` for a job that owns chips: room for libtpu's threads; everything else unchanged."""
    return dataclasses.replace(limits, processes=max(limits.processes, TPU_PROCESSES))


def for_rerun(limits: Limits) -> Limits:
    """The kernel's job's `limits`, with at least the room a rerun takes (`RERUN_WALL_SECONDS`)."""
    return dataclasses.replace(
        limits,
        wall_seconds=max(limits.wall_seconds, RERUN_WALL_SECONDS),
        cpu_seconds=max(limits.cpu_seconds, RERUN_CPU_SECONDS),
    )


def on_chip(job: Job) -> Job:
    """`job` as it runs on a chip slot: `for_tpu`'s room for libtpu, and a sweep's wall-clock allowance
    per config raised to what configs take on a chip."""
    limits = for_tpu(job.limits)
    if job.sweep is not None:
        configs = len(job.sweep.only) if job.sweep.only else job.sweep.total
        more = (SWEEP_CHIP_WALL_SECONDS_PER_CONFIG - SWEEP_WALL_SECONDS_PER_CONFIG) * configs
        limits = dataclasses.replace(limits, wall_seconds=limits.wall_seconds + more)
    return dataclasses.replace(job, limits=limits)


def sweep_limits(base: Limits, configs: int) -> Limits:
    """`base` with room for `configs` configs checked one after another in one job."""
    return dataclasses.replace(
        base,
        wall_seconds=base.wall_seconds + SWEEP_WALL_SECONDS_PER_CONFIG * configs,
        cpu_seconds=base.cpu_seconds + SWEEP_CPU_SECONDS_PER_CONFIG * configs,
    )
