"""From the steps of each kernel (`cost.Steps`) to the protocol's `Estimate` (pure, numpy only).

Kernels in one function run one after another, so their times add. Within a kernel the slowest
core decides; its time splits into what it waited for: compute (MXU or vector work), memory (the
fill before the first step, stalls for copies a step could not hide, the drain after the last) and
overhead (the launch and the fixed cost of every step). The largest part is the bound.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from sandbox.harness.model import families
from sandbox.harness.model.cost import Rates, Steps
from sandbox.harness.model.ops import PADDING
from sandbox.harness.model.outside import Outside
from sandbox.protocol.chips import CHIP_TABLE
from sandbox.protocol.estimate import Bound, Estimate, KernelEstimate, StepClass, StepTime

MAX_CLASSES = 12
MAX_TIMELINE = 2000

ASSUMPTIONS = (
    "Time comes from the traced kernel, never from running it: grid, block copies, DMAs and the "
    "dots and vector ops of each step.",
    "A pallas_call pipeline copies an operand's block only when its block index differs from the "
    "previous step's on that core (revisits skip the copy), prefetches the next step's blocks "
    "during the current step, and writes an output block back when its index is about to change.",
    "Copies run at the chip's HBM bandwidth per TensorCore (writes to HBM at the share of it measured "
    "on the chip, 0.65 on a v5e), one after another on the core's DMA engine; on-chip (VMEM to VMEM) copies are free; partial edge blocks count as whole blocks. "
    "A remote DMA runs over one ICI link at its one-way bandwidth plus a hop's latency.",
    "Dots run at the MXU's peak for their operand type (f32 operands are rounded to bf16, one "
    "pass, unless Precision.HIGH asks for 3 passes or HIGHEST for 6), their contraction and output "
    "columns padded to the MXU's width; vector work (element ops, "
    "VMEM loads and stores) is counted in whole (sublanes, 128) vregs, transcendentals at twice a "
    "VALU op (the EUP), lane reductions and transposes at 7 (the cross-lane unit), at a vector "
    "rate fitted to a published flash-attention point; within a step the MXU and the vector unit "
    "overlap, so the larger counts, except that a reduction across a dot's columns (a row max of "
    "logits) and what is computed from it wait for that dot to end (Mosaic finishes a dot one "
    "column group at a time): the step lasts at least the MXU work up to that dot's end plus the "
    "work that waits for it.",
    "Every pipeline step costs a fixed step cost (fitted to a published v5e matmul), plus each DMA "
    "it starts (32 cycles, assumed) and each scalar operation of its body and index maps (1 cycle); "
    "a loop iteration counts as a step when it starts or waits for a DMA. A kernel launch costs "
    "launch_seconds. Host dispatch is not in the estimate; where it is known it is reported apart.",
    "A kernel runs on one JAX device, whose TensorCores are both of a megacore v5p's and one "
    "elsewhere (a TPU7x chip's two TensorCores are two devices). A grid runs on one TensorCore "
    "unless a dimension is CORE_PARALLEL (the outermost such dimension is split across the "
    "device's TensorCores in contiguous parts) or the chip is a megacore (v5p), where the grid's leading 'parallel' dimensions (vmapped axes included) are "
    "split in contiguous parts, as JAX's Pallas guide and its TPU interpret mode divide them; "
    "pltpu.emit_pipeline splits only with a core_axis. Each core has its own share "
    "of HBM bandwidth; a pl.kernel core mesh runs one program per core.",
    "A branch runs the cost of the branch its predicate selects at that step; when the predicate "
    "depends on data the model cannot see, the costlier branch is assumed (noted per kernel).",
    "XLA's ops outside the kernels (transposes, casts, reductions around them) run before or after "
    "them: each connected run of them is one fusion that reads what enters it and writes what "
    "leaves it once, at the device's HBM bandwidth (a dot outside a kernel at the MXU's peak); pure "
    "reshapes are free; collectives outside kernels are not costed.",
)


def summarize(
    chip: str,
    rates: Rates,
    kernels: Sequence[Steps],
    model_seconds: float = 0.0,
    *,
    timeline: bool = True,
    outside: Outside | None = None,
) -> Estimate:
    """The estimate of `kernels` run one after another, with XLA's work around them (`outside`)
    before or after them; `timeline=False` leaves out the per-step rows."""
    outside = outside or Outside()
    if not kernels:
        return Estimate(
            chip=chip,
            seconds=0.0,
            bound="compute",
            roofline_seconds=0.0,
            roofline_fraction=0.0,
            flops=0,
            hbm_bytes=0,
            min_hbm_bytes=0,
            compute_seconds=0.0,
            memory_seconds=0.0,
            overhead_seconds=0.0,
            launch_seconds=0.0,
            assumptions=ASSUMPTIONS,
            notes=("no Pallas kernel in the traced function: nothing to estimate",),
            model_seconds=model_seconds,
        )
    parts = np.zeros(3)  # compute, memory, overhead
    for steps in kernels:
        if not steps.overlaps:
            parts += _split(steps, rates)
    serial = sum(s.total for s in kernels if not s.overlaps) + outside.seconds
    parts[1] += outside.seconds  # XLA's fusions wait on HBM
    beside = sum(s.total for s in kernels if s.overlaps)  # SparseCore kernels beside the TensorCore
    seconds = max(serial, beside)
    if beside > serial:  # the SparseCore side is the longer one: its excess is waiting on its DMAs
        parts[1] += beside - serial
    mxu_time = sum(
        flops * _efficiency(chip) / (rates.mxu[kind] * rates.cores)  # at the MXU's peak
        for s in kernels
        for kind, flops in s.mxu_flops.items()
        if not kind.endswith(PADDING)  # the roofline counts useful work only
    ) + outside.flops * _efficiency(chip) / (rates.mxu["bf16"] * rates.cores)  # XLA's dots, as bf16
    min_bytes = sum(s.min_bytes for s in kernels) + outside.bytes
    roofline = max(mxu_time, min_bytes / (rates.bandwidth * rates.cores))
    bound: Bound = ("compute", "memory", "step_overhead")[int(np.argmax(parts))]  # type: ignore[assignment]
    notes = tuple(dict.fromkeys([*(f"{s.kernel}: {n}" for s in kernels for n in s.notes), *outside.notes]))
    trust = families.validation((s.family for s in kernels), chip, _title(chip))
    low, high = families.seconds_range(float(seconds), trust.band)
    return Estimate(
        chip=chip,
        seconds=float(seconds),
        bound=bound,
        roofline_seconds=float(roofline),
        roofline_fraction=float(roofline / seconds) if seconds > 0 else 0.0,
        flops=int(sum(float(s.flops.sum()) for s in kernels) + outside.flops),
        hbm_bytes=int(sum(s.hbm_bytes for s in kernels) + outside.bytes),
        min_hbm_bytes=int(min_bytes),
        compute_seconds=float(parts[0]),
        memory_seconds=float(parts[1]),
        overhead_seconds=float(parts[2]),
        launch_seconds=rates.launch * len(kernels),
        kernels=tuple(_kernel(s) for s in kernels),
        classes=_classes(kernels),
        timeline=_timeline(kernels) if timeline else (),
        timeline_truncated=timeline and sum(len(s.start) for s in kernels) > MAX_TIMELINE,
        assumptions=ASSUMPTIONS,
        notes=notes,
        model_seconds=model_seconds,
        family=trust.family,
        validation=trust.text,
        low_seconds=low,
        high_seconds=high,
        host_dispatch_seconds=_host_dispatch(chip),
        outside_seconds=float(outside.seconds),
        outside_bytes=int(outside.bytes),
    )


def _efficiency(chip: str) -> float:
    return next((c.mxu_efficiency for c in CHIP_TABLE.values() if c.name == chip), 1.0)


def _host_dispatch(chip: str) -> float | None:
    return next((c.host_dispatch_seconds for c in CHIP_TABLE.values() if c.name == chip), None)


def _title(chip: str) -> str:
    return next((c.title for c in CHIP_TABLE.values() if c.name == chip), chip)


def _split(steps: Steps, rates: Rates) -> np.ndarray:
    """Compute, memory and overhead seconds of the kernel's slowest core (they add up to its time)."""
    mine = steps.core == steps.critical
    compute = float(steps.compute[mine].sum())
    overhead = rates.launch + float(steps.overhead[mine].sum())
    memory = steps.total - compute - overhead  # fill, stalls, drain: everything left
    return np.array([compute, max(memory, 0.0), overhead])


def _kernel(steps: Steps) -> KernelEstimate:
    return KernelEstimate(
        name=steps.kernel,
        kind=steps.kind,
        cores=steps.cores,
        steps=len(steps.start),
        seconds=float(steps.total),
        fill_seconds=float(steps.fill),
        drain_seconds=float(steps.drain),
        flops=int(steps.flops.sum()),
        hbm_bytes=int(steps.hbm_bytes),
    )


def _bound(compute: float, copy: float, overhead: float) -> Bound:
    """What a step waits for most: its fixed cost, its copies (when they outlast its compute), or compute."""
    if overhead >= compute and overhead >= copy:
        return "step_overhead"
    return "memory" if copy > compute else "compute"


def _classes(kernels: Sequence[Steps]) -> tuple[StepClass, ...]:
    found: list[tuple[float, StepClass]] = []
    for steps in kernels:
        if not len(steps.start):
            continue
        key = np.zeros(len(steps.start), dtype=np.int64)
        for column in (
            steps.copy_in,
            steps.copy_out,
            steps.flops,
            steps.vector,
            np.round(steps.seconds * 1e12),
        ):
            values, codes = np.unique(column, return_inverse=True)
            key = key * len(values) + codes  # mixed radix: a class is a distinct tuple of the five
        _, first, counts = np.unique(key, return_index=True, return_counts=True)
        for i, count in zip(first, counts, strict=True):
            seconds = float(steps.seconds[i])
            example = _where(steps, int(i))
            found.append(
                (
                    seconds * int(count),
                    StepClass(
                        kernel=steps.kernel,
                        count=int(count),
                        first_step=int(i),
                        example=example,
                        copy_in_bytes=int(steps.copy_in[i]),
                        copy_out_bytes=int(steps.copy_out[i]),
                        mxu_flops=int(steps.flops[i]),
                        vector_ops=int(steps.vector[i]),
                        compute_seconds=float(steps.compute[i]),
                        copy_seconds=float(steps.copy[i]),
                        overhead_seconds=float(steps.overhead[i]),
                        seconds=seconds,
                        bound=_bound(float(steps.compute[i]), float(steps.copy[i]), float(steps.overhead[i])),
                    ),
                )
            )
    found.sort(key=lambda item: -item[0])
    return tuple(c for _, c in found[:MAX_CLASSES])


def _where(steps: Steps, i: int) -> str:
    if i < len(steps.points) and steps.points[i] is not None:
        return f"grid point {steps.points[i]}, core {int(steps.core[i])}"
    if i < len(steps.labels) and steps.labels[i]:
        return f"{steps.labels[i]}, core {int(steps.core[i])}"
    return f"step {i}, core {int(steps.core[i])}"


def _timeline(kernels: Sequence[Steps]) -> tuple[StepTime, ...]:
    rows: list[StepTime] = []
    offset = 0.0
    for steps in kernels:
        room = MAX_TIMELINE - len(rows)
        order = np.arange(min(room, len(steps.start))) if steps.cores == 1 else np.argsort(steps.start)[:room]
        columns = zip(
            order.tolist(),
            steps.core[order].tolist(),
            (steps.start[order] + offset).tolist(),
            steps.seconds[order].tolist(),
            steps.copy[order].tolist(),
            steps.compute[order].tolist(),
            steps.overhead[order].tolist(),
            strict=True,
        )
        points = steps.points
        for i, core, start, seconds, copy, compute, overhead in columns:
            rows.append(
                StepTime(
                    index=i,
                    kernel=steps.kernel,
                    core=core,
                    start=start,
                    seconds=seconds,
                    copy_seconds=copy,
                    compute_seconds=compute,
                    bound=_bound(compute, copy, overhead),
                    grid_point=points[i] if i < len(points) else None,
                )
            )
        offset += steps.total
        if len(rows) >= MAX_TIMELINE:
            break
    return tuple(rows)
