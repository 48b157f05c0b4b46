"""Solve the time model's fitted constants from their two named published points, and print them.

`python -m tests.model.fit` prints STEP_CYCLES and VECTOR_VREGS_PER_CYCLE for `sandbox/protocol/
chips.py`: the step cost that puts the matmul guide's 4096^3 128-block matmul on a v5e at its
published 11.77 ms (less host dispatch), and the one-rate rule's vector rate that puts JAX's
flash_attention forward at (32, 8, 512, 64) on a v5e at its published 2.36 ms (jax-ml/jax#24633);
and the v5e's own step cost (`solve_v5e`). Every other published point (tests/data/) validates them,
the v5e's flash points too: the v5e's model costs vector work per unit, not at the one-rate rule. Each
constant is the unique root of a monotone function of one variable when the other is fixed; they are
solved alternately until both settle.
"""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
from jax.experimental.pallas.ops.tpu import flash_attention

from sandbox.harness.model.estimate import estimate
from sandbox.protocol import chips
from tests.model import published_kernels

MATMUL_SECONDS = 0.011771515250438824 - chips.V5E_HOST_DISPATCH  # matmul guide, 4096^3, 128 blocks
FLASH_SECONDS = 2.36e-3  # jax-ml/jax#24633, (32, 8, 512, 64) bf16, block sizes 128, v5e


def _chip(step_cycles: float, vregs_per_cycle: float, *, one_rate: bool = False) -> chips.ChipInfo:
    """The v5e at these constants; `one_rate`: its vector work added up at one rate, as on chips
    without per-unit rates (what VECTOR_VREGS_PER_CYCLE is the rate of)."""
    v5e = chips.chip_info("v5e")
    return dataclasses.replace(
        v5e,
        step_seconds=step_cycles / v5e.clock_hz,
        dma_issue_seconds=chips.DMA_ISSUE_CYCLES / v5e.clock_hz,  # the chips' assumed figure, not v5e's own
        vector_ops=vregs_per_cycle * 1024 * v5e.clock_hz,
        vector_units=() if one_rate else v5e.vector_units,
    )


def _matmul(chip: chips.ChipInfo) -> float:
    x = jax.ShapeDtypeStruct((4096, 4096), jnp.bfloat16)
    fn = functools.partial(published_kernels.matmul, bm=128, bk=128, bn=128)
    return estimate(fn, (x, x), chip, timeline=False).seconds


def _flash(chip: chips.ChipInfo) -> float:
    q = jax.ShapeDtypeStruct((32, 8, 512, 64), jnp.bfloat16)
    fn = functools.partial(flash_attention.flash_attention, sm_scale=1.0)
    return estimate(fn, (q, q, q), chip, timeline=False).seconds


def _matmul_at(step: float, *, rate: float) -> float:
    return _matmul(_chip(step, rate, one_rate=True))


def _flash_at(inverse_rate: float, *, step: float) -> float:
    return _flash(_chip(step, 1 / inverse_rate, one_rate=True))


def _root(f, lo: float, hi: float, target: float, rounds: int = 40) -> float:
    for _ in range(rounds):  # bisection: f is monotone (increasing) in its argument
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if f(mid) < target else (lo, mid)
    return (lo + hi) / 2


def solve() -> tuple[float, float]:
    step, rate = 400.0, chips.VECTOR_VREGS_PER_CYCLE
    for _ in range(6):
        step = _root(functools.partial(_matmul_at, rate=rate), 0.0, 2000.0, MATMUL_SECONDS, 24)
        rate = 1 / _root(functools.partial(_flash_at, step=step), 1 / 8, 16.0, FLASH_SECONDS, 24)
    return step, rate


def _v5e(step_cycles: float) -> chips.ChipInfo:
    v5e = chips.chip_info("v5e")
    return dataclasses.replace(v5e, step_seconds=step_cycles / v5e.clock_hz)


def _v5e_matmul_at(step: float) -> float:
    return _matmul(_v5e(step))


def solve_v5e() -> float:
    """The v5e's own step cost (`chips_v5e.V5E_STEP_CYCLES`), given its measured DMA issue cost and
    vector units: the step that puts the same matmul point at its published time. (The v5e's reduction
    chain, solved here on the flash point until 2026-12-06, is fitted on the v5e sweeps' fit half:
    `chips_v5e.V5E_REDUCTION_CHAIN_CYCLES`; the matmul has no reduction, so the two are apart.)"""
    return _root(_v5e_matmul_at, 0.0, 2000.0, MATMUL_SECONDS, 24)


# -- a chip's own vector rate and MXU efficiency, fitted on half of its published points ---------
#
# `python -m tests.model.fit tpu7x` fits two constants of one chip on the published points of that
# chip marked `calibration` in the data file (its 1st, 3rd, 5th...; the others validate them): the VPU rate
# (vregs per cycle) and the fraction of the MXU's peak a step reaches. It minimises the mean
# |log(estimate / published)| over the fit half (robust to the half's few outliers), by a grid
# search over the costed plans (each point's kernels are planned once; only the arithmetic is
# redone per candidate). It prints the fit half's mean and worst error too.


def _plans(points: list) -> list:
    from sandbox.harness.model.estimate import chip_context, kernels, known_values, trace
    from sandbox.harness.model.outside import outside_work
    from tests.model import published as pub

    found = []
    for m in points:
        fn, args = pub.call(m)
        chip = chips.chip_info(m.chip)
        closed = trace(fn, args, chip_context(chip))
        # XLA's own ops around the kernels (relayout copies, metadata) are in the published time too.
        found.append((m, kernels(closed, known_values(args), chip), outside_work(closed, chip).seconds))
    return found


def _seconds(plans: list, chip: chips.ChipInfo, vregs: float, efficiency: float) -> float:
    from sandbox.harness.model.cost import Grid, Rates
    from sandbox.harness.model.grid_time import grid_steps
    from sandbox.harness.model.simulate import program_steps

    rates = Rates.of(dataclasses.replace(chip, mxu_efficiency=1.0))  # the candidate's own, not the table's
    rates = dataclasses.replace(
        rates,
        vector=vregs * chip.sublanes * 128 * chip.clock_hz,
        mxu={k: v * efficiency for k, v in rates.mxu.items()},
    )
    return sum(
        (grid_steps(p, rates) if isinstance(p, Grid) else program_steps(p, rates)).total for p in plans
    )


def solve_chip(name: str) -> tuple[float, float, float, float]:
    import math

    from tests.model.published import load

    points = load()
    fit_half = _plans([m for m in points if m.chip == name and m.calibration])
    chip = chips.chip_info(name)  # type: ignore[arg-type]
    best = (math.inf, 0.0, 0.0, 0.0)
    for vregs in [0.5 * 1.15**i for i in range(30)]:
        for efficiency in [0.5 + 0.01 * i for i in range(51)]:
            errors = [
                abs(math.log((_seconds(plans, chip, vregs, efficiency) + outside) / m.seconds))
                for m, plans, outside in fit_half
            ]
            best = min(best, (sum(errors) / len(errors), max(errors), vregs, efficiency))
    return best


if __name__ == "__main__":
    import sys

    if len(sys.argv) > 1:
        mean, worst, vregs, efficiency = solve_chip(sys.argv[1])
        print(f"{sys.argv[1]}: vector {vregs:.4f} vregs/cycle, MXU efficiency {efficiency:.2f}")
        print(f"fit half: mean |log error| {mean:.3f}, worst {worst:.3f}")
    else:
        step, rate = solve()
        print(f"STEP_CYCLES = {step:.1f}\nVECTOR_VREGS_PER_CYCLE = {rate:.4f}")
        print(f"V5E_STEP_CYCLES = {solve_v5e():.1f}")
