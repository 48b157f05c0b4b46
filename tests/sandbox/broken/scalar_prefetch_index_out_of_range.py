"""A gather by a prefetched row table whose last entry points past the table."""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

ROWS = (3, 0, 2, 4)


def make_inputs(seed):
    table = jax.random.normal(jax.random.key(seed), (4 * 8, 128))
    return jnp.array(ROWS, jnp.int32), table


def reference(rows, table):
    return jnp.concatenate([table[8 * r : 8 * r + 8] for r in ROWS])


def gather_kernel(rows_ref, t_ref, o_ref):
    o_ref[...] = t_ref[...]


def kernel(rows, table):
    return pl.pallas_call(
        gather_kernel,
        out_shape=jax.ShapeDtypeStruct((4 * 8, 128), table.dtype),
        grid_spec=pltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=1,
            grid=(4,),
            in_specs=[pl.BlockSpec((8, 128), lambda i, rows_ref: (rows_ref[i], 0))],  # MARK
            out_specs=pl.BlockSpec((8, 128), lambda i, rows_ref: (i, 0)),
        ),
    )(rows, table)
