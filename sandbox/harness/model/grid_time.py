"""The time of a `pallas_call` pipeline (`cost.Grid`) in closed form, per core:

      fill  = copy_in[0] / read
      step  = max(compute[i], copies[i]) + overhead[i]
      copies[i] = copy_in[i+1] / read + copy_out[i-1] / write (+ `Rates.dma_pair` of the shorter)
      drain = copy_out[-1] / write
      time  = launch + max over cores (fill + sum(step) + drain)

with compute = max(MXU time, vector time): the MXU and the VPU issue from the same VLIW bundles,
so within a step the larger of the two is what the step waits for; but work that waits for a
reduction across a dot's result (a row max of the logits) cannot start before that dot ends
(`barriers`), so the step also lasts at least the MXU work issued up to that dot's end plus the
vector work that waits for it (`Rates.compute`). overhead = the fixed step cost + the DMAs the step
starts x dma + its scalar operations x scalar (`step_overhead`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sandbox.harness.model.cost import Grid, Rates, Steps, crosses_lanes
from sandbox.harness.model.ops import PADDING


def grid_steps(grid: Grid, rates: Rates) -> Steps:
    """The closed form above, vectorised over the steps of each core."""
    n = len(grid.core)
    start, seconds = np.zeros(n), np.zeros(n)
    copy, stall = np.zeros(n), np.zeros(n)
    compute = rates.compute(grid.mxu, grid.vector.astype(float), grid.after, grid.units, grid.reduced)
    by_core = [
        np.nonzero(grid.core == c)[0] if grid.cores > 1 else np.arange(n)
        for c in range(int(grid.core.max()) + 1 if n else 0)
    ]
    engine = [_copy_seconds(grid, rates, idx) for idx in by_core]  # per core: in, out, pair share
    for idx, (cin, cout, pair) in zip(by_core, engine, strict=True):  # what the engine runs during a step
        ahead, behind = np.concatenate([cin[1:], [0.0]]), np.concatenate([[0.0], cout[:-1]])
        copy[idx] = ahead + behind + pair * np.minimum(ahead, behind)
    overhead = step_overhead(grid, rates, copy)
    core_end, fills, drains = {}, {}, {}
    for c, (idx, (cin, cout, _)) in enumerate(zip(by_core, engine, strict=True)):
        if not len(idx):
            continue
        during = copy[idx]
        step = np.maximum(compute[idx], during) + overhead[idx]
        fill = cin[0] + grid.prologue_bytes / rates.bandwidth
        start[idx] = rates.launch + fill + np.concatenate([[0.0], np.cumsum(step)[:-1]])
        seconds[idx] = step
        stall[idx] = np.maximum(during - compute[idx], 0.0)
        fills[c], drains[c] = fill, float(cout[-1])
        core_end[c] = fill + float(step.sum()) + float(cout[-1])
    critical = max(core_end, key=lambda c: core_end[c])
    flops = sum((grid.mxu[k] for k in grid.mxu if not k.endswith(PADDING)), start=np.zeros(n))
    return Steps(
        kernel=grid.kernel,
        kind="pallas_call",
        family=grid.family,
        cores=grid.cores,
        core=grid.core,
        start=start,
        seconds=seconds,
        compute=compute,
        copy=copy,
        stall=stall,
        overhead=overhead,
        copy_in=grid.copy_in,
        copy_out=grid.copy_out,
        flops=flops,
        vector=grid.vector,
        labels=[],
        points=[tuple(int(v) for v in p) for p in grid.points] if n <= 4096 else [],
        total=rates.launch + core_end[critical],
        fill=fills[critical],
        drain=drains[critical],
        critical=critical,
        mxu_flops={k: float(v.sum()) for k, v in grid.mxu.items()},
        min_bytes=grid.min_bytes,
        hbm_bytes=float(grid.copy_in.sum() + grid.copy_out.sum() + grid.prologue_bytes),
        notes=list(grid.notes),
    )


def _copy_seconds(grid: Grid, rates: Rates, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Seconds the DMA engine spends on each step's copies in and write-backs out, and the share of the
    shorter of the two that moving side by side adds: in a step without MXU work at the DMA lanes'
    rates alone and `Rates.dma_pair` where the chip has them, else at the peak and `Rates.write`."""
    read: Any = rates.bandwidth
    write: Any = rates.write or rates.bandwidth
    pair = np.zeros(len(idx))
    if rates.dma_read:
        dotless = _mxu_flops(grid)[idx] == 0
        read, write = np.where(dotless, rates.dma_read, read), np.where(dotless, rates.dma_write, write)
        pair = np.where(dotless, rates.dma_pair, 0.0)
    return grid.copy_in[idx] / read, grid.copy_out[idx] / write, pair


def step_overhead(grid: Grid, rates: Rates, copies: np.ndarray | None = None) -> np.ndarray:
    """Per step: the fixed pipeline cost (less in a step without MXU work where the chip says so:
    no MXU to fill and drain, more where such a step uses the cross-lane unit, `Rates.dotless_xlu`;
    none in a step with nothing to do, `idle_steps`), the DMAs it starts and waits for, its scalar
    work. A step without MXU work hides part of its fixed cost under the copies the engine runs
    meanwhile (`copies`, seconds per step; `Rates.dotless_hidden`)."""
    n = len(grid.core)
    dmas = grid.dmas if grid.dmas is not None else np.zeros(n)
    scalar = grid.scalar if grid.scalar is not None else np.zeros(n)
    fixed: Any = rates.step
    if rates.dotless_step is not None:
        dots = _mxu_flops(grid) > 0
        dotless: Any = rates.dotless_step + np.where(
            crosses_lanes(grid.units, np.zeros(n)), rates.dotless_xlu, 0.0
        )
        if rates.dotless_hidden and copies is not None:
            dotless = np.maximum(
                min(rates.dotless_floor, rates.dotless_step),
                dotless - rates.dotless_hidden * np.maximum(copies - rates.dotless_unhidden, 0.0),
            )
        fixed = np.where(dots, rates.step, np.where(idle_steps(grid, dmas), 0.0, dotless))
    return fixed + dmas * rates.dma + scalar * rates.scalar


def idle_steps(grid: Grid, dmas: np.ndarray) -> np.ndarray:
    """Steps with nothing to do but their scalar work: no MXU or vector work, no block copied in for
    them or written back, no DMA started (a causal mask's skipped block: its index maps repeat the last
    block's, its body is `pl.when`'d off). Where the chip has a dotless step cost (the v5e), such a step
    pays no fixed cost: that cost is the pipeline's wait for its blocks and its body's start and drain.
    On the v5e's splash sweeps (`bench/tpu/calibration.py`'s fit half, 11 configs) the mean
    |log(estimate / measured)| grows with what an idle step is charged: 0.090 at 0 cycles, 0.099 at 60,
    0.108 at 120, 0.122 at the dotless step's 210."""
    moved = grid.copy_in + grid.copy_out
    return (_mxu_flops(grid) == 0) & (grid.vector == 0) & (moved == 0) & (dmas == 0)


def _mxu_flops(grid: Grid) -> np.ndarray:
    """Per step: its MXU flops, every dot kind (padding included)."""
    return sum((flops for flops in grid.mxu.values()), start=np.zeros(len(grid.core)))
