"""The index map returns one block index for a 2-D block."""

import jax
from jax.experimental import pallas as pl


def make_inputs(seed):
    return (jax.random.normal(jax.random.key(seed), (256, 128)),)


def reference(x):
    return 2 * x


def double_kernel(x_ref, o_ref):
    o_ref[...] = 2 * x_ref[...]


def kernel(x):
    return pl.pallas_call(
        double_kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        grid=(2,),
        in_specs=[pl.BlockSpec((128, 128), lambda i: (i,))],  # MARK
        out_specs=pl.BlockSpec((128, 128), lambda i: (i, 0)),
    )(x)
