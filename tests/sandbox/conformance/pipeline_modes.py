"""Inputs buffered once or twice (`pipeline_mode=pl.Buffered(n)`), and an output accumulated across
non-consecutive revisits (`pl.Buffered(1, revisit=pl.RevisitMode.ANY)`) (`tpu_pallas_test.py`:
`test_two_input_vadd`, `test_block_reduction_with_non_immediate_revisit`; the first's VMEM figure is the
compiler's, not checked here)."""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

BLOCK = 1024


def make_inputs(seed):
    return (
        jnp.arange(8 * BLOCK, dtype=jnp.float32) + seed,
        jnp.arange(24 * 384, dtype=jnp.float32).reshape(24, 384),
    )


def reference(x, grid_x):
    return x + x, x + x, x + x, grid_x.reshape(3, 8, -1).sum(axis=0)


def vadd(x, y, x_mode, y_mode):
    def body(x_ref, y_ref, o_ref):
        o_ref[:] = x_ref[:] + y_ref[:]

    x = pltpu.with_memory_space_constraint(x, pltpu.HBM)
    y = pltpu.with_memory_space_constraint(y, pltpu.HBM)
    in_specs = [pl.BlockSpec((BLOCK,), lambda i: i, pipeline_mode=mode) for mode in (x_mode, y_mode)]
    return pl.pallas_call(
        body,
        out_shape=jax.ShapeDtypeStruct.like(x),
        in_specs=in_specs,
        out_specs=pl.BlockSpec((BLOCK,), lambda i: i),
        grid=x.shape[0] // BLOCK,
    )(x, y)


def revisited_sum(x):
    def body(x_ref, o_ref):
        @pl.when(pl.program_id(0) == 0)
        def _():
            o_ref[...] = jnp.zeros_like(o_ref)

        o_ref[:] = o_ref[:] + x_ref[:]

    return pl.pallas_call(
        body,
        out_shape=jax.ShapeDtypeStruct((8, 384), jnp.float32),
        in_specs=[pl.BlockSpec((8, 128), lambda i, j: (i, j))],
        out_specs=pl.BlockSpec(
            (8, 128), lambda i, j: (0, j), pipeline_mode=pl.Buffered(1, revisit=pl.RevisitMode.ANY)
        ),
        grid=(3, 3),
    )(x)


def kernel(x, grid_x):
    one, two = pl.Buffered(1), pl.Buffered(2)
    return vadd(x, x, two, two), vadd(x, x, two, one), vadd(x, x, one, one), revisited_sum(grid_x)
