"""The TPU time model's answer: how long a kernel would take on a chip, why, and step by step.

`sandbox.harness.model` computes it from the traced kernel (never by running it); the run result
carries it for the case that ran (`RunResult.estimate`), and a sweep for each config at the target
size. Times are seconds on the estimated TPU clock; every assumption behind them is listed in
`Estimate.assumptions`, and what the model could not know about this kernel in `Estimate.notes`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Bound = Literal["memory", "compute", "step_overhead"]


@dataclass(frozen=True)
class StepClass:
    """Steps that cost the same (same copies, same work), counted: the per-step breakdown."""

    kernel: str
    count: int
    first_step: int  # the first such step, in execution order on its core
    example: str  # e.g. "grid point (0, 0, 1)"
    copy_in_bytes: int  # HBM → VMEM bytes that must arrive for the step
    copy_out_bytes: int  # VMEM → HBM bytes it writes back
    mxu_flops: int
    vector_ops: int
    compute_seconds: float  # MXU and vector work (they overlap: the larger counts)
    copy_seconds: float  # the DMA traffic that overlaps the step
    overhead_seconds: float  # the fixed per-step cost
    seconds: float  # one such step
    bound: Bound


@dataclass(frozen=True)
class StepTime:
    """One step on the estimated TPU clock (the trace's timeline draws these)."""

    index: int
    kernel: str
    core: int
    start: float
    seconds: float
    copy_seconds: float
    compute_seconds: float
    bound: Bound
    grid_point: tuple[int, ...] | None = None


@dataclass(frozen=True)
class KernelEstimate:
    name: str
    kind: str  # "pallas_call" or "pl.kernel"
    cores: int
    steps: int
    seconds: float
    fill_seconds: float  # copies before the first step can start
    drain_seconds: float  # write-backs after the last step
    flops: int
    hbm_bytes: int  # bytes the DMAs move, re-fetches included


@dataclass(frozen=True)
class Estimate:
    chip: str
    seconds: float
    bound: Bound
    roofline_seconds: float  # the chip's bound for this work: max(flops / peak, distinct bytes / bandwidth)
    roofline_fraction: float  # roofline_seconds / seconds
    flops: int
    hbm_bytes: int
    min_hbm_bytes: int  # every distinct block once (what a perfect kernel would move; a program's HBM refs
    # once each, or the bytes its copies move where fewer)
    compute_seconds: float  # the estimate split by what each part of it waited for
    memory_seconds: float
    overhead_seconds: float
    launch_seconds: float
    kernels: tuple[KernelEstimate, ...] = ()
    classes: tuple[StepClass, ...] = ()
    timeline: tuple[StepTime, ...] = ()
    timeline_truncated: bool = False
    assumptions: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    model_seconds: float = 0.0  # what the model itself took (trace + arithmetic), host time
    # How far to trust it (`sandbox.harness.model.families`): the kernels' family, the model's error
    # band on published kernels of that family on this chip ("±4.5 % on 17 published kernels of this
    # family on TPU v5e (…)", or "not validated for … on …"), and the real time that band allows
    # (None where nothing is validated).
    family: str = ""
    validation: str = ""
    low_seconds: float | None = None
    high_seconds: float | None = None
    # One call's host dispatch on this chip when a kernel is timed from the host around
    # `block_until_ready` (chip table; None where not published). Never part of `seconds`.
    host_dispatch_seconds: float | None = None
    # XLA's own op as the baseline: the entry's plain-jnp reference at the same size, costed by the
    # model's XLA costing on the same chip (None without a reference, or where it cannot be costed).
    xla_seconds: float | None = None
    # How far that costing held for XLA ops of its kind on this chip, where timed there (`runs.xla_validation`).
    xla_validation: str = ""
    # XLA's ops outside the kernels (transposes, casts, reductions, dots around them), costed as fused
    # loops at the chip's HBM bandwidth (`sandbox.harness.model.outside`): part of `seconds` and of
    # `memory_seconds`, and of `hbm_bytes` and `flops`, reported apart here.
    outside_seconds: float = 0.0
    outside_bytes: int = 0
