"""Masked loads and stores (`pltpu.load` / `pltpu.store` with `mask=`): the model costs them as the
loads and stores of their vregs they are (the v5e's `vst.msk` in the compiler's listing), not as vector
arithmetic on the value."""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

from sandbox.harness.model.estimate import chip_context, kernels, known_values, trace
from sandbox.protocol.chips import chip_info

V5E = chip_info("v5e")
SHAPE = (256, 512)
VREGS = SHAPE[0] * SHAPE[1] // 1024


def _units(masked: bool) -> dict[str, float]:
    def body(x_ref, o_ref):
        rows = jax.lax.broadcasted_iota(jnp.int32, SHAPE, 0) < 100
        if masked:  # into one slice of the output: the ref's transforms come before the value
            pltpu.store(o_ref.at[1], pltpu.load(x_ref, mask=rows), mask=rows)
        else:
            o_ref[1] = x_ref[...]

    x = jax.ShapeDtypeStruct(SHAPE, jnp.float32)
    fn = pl.pallas_call(body, out_shape=jax.ShapeDtypeStruct((2, *SHAPE), jnp.float32))
    (grid,) = kernels(trace(fn, (x,), chip_context(V5E)), known_values((x,)), V5E)
    return {unit: float(ops[0]) / 1024 for unit, ops in grid.units.items()}


def test_a_masked_store_and_load_cost_their_vregs_in_the_memory_units():
    plain, masked = _units(masked=False), _units(masked=True)
    assert plain["load"] == masked["load"] == VREGS
    assert plain["store"] == masked["store"] == VREGS
    # Only the mask's row iota and its compare, one vreg per row group each (`replication`): nothing
    # per vreg of the values loaded and stored.
    assert masked.get("alu", 0.0) == 2 * SHAPE[0] // 8
