"""pl.program_id(1) on a one-axis grid."""

import jax
from jax.experimental import pallas as pl


def make_inputs(seed):
    return (jax.random.normal(jax.random.key(seed), (256, 128)),)


def reference(x):
    return x * 2


def double_kernel(x_ref, o_ref):
    scale = 2 + pl.program_id(1)  # MARK
    o_ref[...] = x_ref[...] * scale


def kernel(x):
    return pl.pallas_call(
        double_kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        grid=(2,),
        in_specs=[pl.BlockSpec((128, 128), lambda i: (i, 0))],
        out_specs=pl.BlockSpec((128, 128), lambda i: (i, 0)),
    )(x)
