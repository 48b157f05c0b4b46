"""The same kernel without RevisitMode.ANY: the revisits lose the partial sums (the kernel's mistake)."""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def make_inputs(seed):
    return (jax.random.normal(jax.random.key(seed), (16, 256), jnp.float32),)


def reference(x):
    return x.reshape(2, 8, 256).sum(0)


def sum_rows_kernel(x_ref, o_ref):
    @pl.when(pl.program_id(0) == 0)
    def _():
        o_ref[...] = jnp.zeros_like(o_ref)

    o_ref[...] += x_ref[...]


def kernel(x):
    return pl.pallas_call(
        sum_rows_kernel,
        out_shape=jax.ShapeDtypeStruct((8, 256), jnp.float32),
        grid=(2, 2),
        in_specs=[pl.BlockSpec((8, 128), lambda i, j: (i, j))],
        out_specs=pl.BlockSpec((8, 128), lambda i, j: (0, j)),
    )(x)
