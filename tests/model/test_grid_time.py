"""A grid's copies where the chip's DMA lanes were measured (`grid_time`), by hand: rates that read off
in microseconds, as `test_cost.py`'s."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from sandbox.harness.model.grid_time import grid_steps
from tests.model.test_cost import RATES, US, grid

# Reads alone at 0.5 GB/s, writes alone at 0.25 GB/s where a step has no dot; the peak (1 GB/s) and
# `write` (0.8 GB/s) where it has one.
LANES = dataclasses.replace(RATES, write=0.8e9, dma_read=0.5e9, dma_write=0.25e9, dma_pair=0.5)


def test_a_dotless_step_moves_its_copies_at_the_lanes_rates_and_pays_for_both_at_once():
    """The v5e's rule (part 22: `chips_v5e.V5E_DMA_PAIR_SHARE`): a block copied for a step without MXU
    work, or written back from one, moves at the DMA lanes' rate alone; for a step with a dot at the
    peak and `write`. The engine moves the next step's block in and the last one's out one after the
    other, and in a dotless step side by side adds `dma_pair` of the shorter."""
    g = grid([100, 100, 100, 100], [50, 50, 50, 50], [0, 0, 1e6, 0])
    g.vector = np.array([1e3, 1e3, 0.0, 1e3])
    steps = grid_steps(g, LANES)
    # Beside step 0: step 1's 100 B in at 0.5 GB/s, 0.2 us.
    # Beside step 1: step 2's block in at the peak, 0.1 us; step 0's 50 B out at 0.25 GB/s, 0.2 us; + 0.5 x 0.1.
    # Beside step 2 (a dot, no pair share): step 3's block in 0.2 us, step 1's out 0.2 us.
    # Beside step 3: step 2's 50 B out at 0.8 GB/s, 0.0625 us.
    assert steps.copy == pytest.approx([0.2 * US, 0.35 * US, 0.4 * US, 0.0625 * US])
    assert steps.fill == pytest.approx(0.2 * US) and steps.drain == pytest.approx(0.2 * US)


def test_a_dotless_step_hides_its_fixed_cost_only_under_copies_beyond_the_unhidden_part():
    """The v5e's rule (`chips_v5e.V5E_DOTLESS_STEP_UNHIDDEN_CYCLES`): the share of the copies' seconds a
    dotless step's fixed cost hides under counts only what lasts beyond `dotless_unhidden`."""
    rates = dataclasses.replace(
        RATES, dotless_step=0.5 * US, dotless_hidden=0.25, dotless_unhidden=0.4 * US, dotless_floor=0.1 * US
    )
    g = grid([400, 400, 1200, 2400, 400], [0] * 5, [0] * 5)
    g.vector = np.full(5, 1e3)
    steps = grid_steps(g, rates)
    # Copies beside steps 0-4: 0.4, 1.2, 2.4, 0.4 us, none: 0.5 - 0.25 x (0, 0.8, 2.0, 0, 0) us, floor 0.1.
    assert steps.overhead == pytest.approx([0.5 * US, 0.3 * US, 0.1 * US, 0.5 * US, 0.5 * US])


def test_chips_without_measured_lanes_keep_the_peak_and_the_write_rate():
    plain = dataclasses.replace(RATES, write=0.5e9)
    g = grid([100, 100], [100, 100], [0, 0])
    g.vector = np.full(2, 1e3)
    assert grid_steps(g, plain).copy == pytest.approx([0.1 * US, 0.2 * US])
