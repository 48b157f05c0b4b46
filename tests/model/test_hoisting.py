"""Loop-invariant work (`sandbox.harness.model.hoisting`): what a kernel's loop builds the same way every
iteration (iotas, masks, jnp's jitted floor division) Mosaic computes once before the loop; the model
costs it once, and a value read from VMEM inside the loop (a store of the loop may change it) every
time."""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

from sandbox.harness.model.estimate import estimate
from sandbox.protocol.chips import chip_info

V5E = chip_info("v5e")
ROWS, LANES, TRIPS = 256, 512, 64


def _kernel(mask_where: str):
    def body(x_ref, o_ref):
        outside = jax.lax.broadcasted_iota(jnp.int32, (ROWS, LANES), 1) // 3 < 100

        def step(i, acc):
            if mask_where == "loop":  # the same in every iteration: hoisted
                mask = jax.lax.broadcasted_iota(jnp.int32, (ROWS, LANES), 1) // 3 < 100
            elif mask_where == "loaded":  # read from VMEM in the loop: not hoisted
                mask = x_ref[...] // 3 < 100
            else:
                mask = outside
            return acc + jnp.where(mask, acc, 1)

        o_ref[...] = jax.lax.fori_loop(0, TRIPS, step, jnp.zeros((ROWS, LANES), jnp.int32))

    def fn(x):
        return pl.pallas_call(body, out_shape=jax.ShapeDtypeStruct((ROWS, LANES), jnp.int32))(x)

    return fn


def _vector_ops(mask_where: str) -> int:
    x = jax.ShapeDtypeStruct((ROWS, LANES), jnp.int32)
    found = estimate(_kernel(mask_where), (x,), V5E, timeline=False)
    return sum(c.vector_ops * c.count for c in found.classes)


def test_work_the_same_in_every_iteration_is_costed_once():
    before, inside = _vector_ops("outside"), _vector_ops("loop")
    # Once, plus a reload of the hoisted mask in each later iteration (32 vregs of bool): walked every
    # iteration, the iota, division and compare made it 6x.
    assert before < inside <= before + (TRIPS - 1) * 32 * 1024


def test_work_on_values_loaded_in_the_loop_is_costed_every_iteration():
    once, loaded = _vector_ops("outside"), _vector_ops("loaded")
    vregs = ROWS * LANES // 1024
    # The iota, floor division and compare, every iteration: several vector ops a vreg, 63 more times.
    assert loaded - once > (TRIPS - 1) * 3 * vregs * 1024
