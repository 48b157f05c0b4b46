"""Row sums are kept in a (4, 128) scratch, one row per grid step, but the grid has 8 steps."""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def make_inputs(seed):
    return (jax.random.normal(jax.random.key(seed), (64, 128)),)


def reference(x):
    return x - x.reshape(8, 8, 128).sum(axis=1).repeat(8, axis=0)


def centre_kernel(x_ref, o_ref, sums_ref):
    i = pl.program_id(0)
    sums_ref[pl.ds(i, 1), :] = jnp.sum(x_ref[...], axis=0, keepdims=True)  # MARK
    o_ref[...] = x_ref[...] - sums_ref[pl.ds(i, 1), :]


def kernel(x):
    return pl.pallas_call(
        centre_kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        grid=(8,),
        in_specs=[pl.BlockSpec((8, 128), lambda i: (i, 0))],
        out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)),
        scratch_shapes=[pltpu.VMEM((4, 128), jnp.float32)],
    )(x)
