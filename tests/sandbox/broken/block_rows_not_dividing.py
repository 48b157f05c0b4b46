"""Blocks of 96 rows over 256 rows: grid = 256 // 96 = 2 covers rows 0..191, the rest is never written."""

import jax
from jax.experimental import pallas as pl


def make_inputs(seed):
    return (jax.random.normal(jax.random.key(seed), (256, 128)),)


def reference(x):
    return 2 * x


def double_kernel(x_ref, o_ref):
    o_ref[...] = 2 * x_ref[...]


def kernel(x):
    bm = 96
    return pl.pallas_call(
        double_kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        grid=(x.shape[0] // bm,),
        in_specs=[pl.BlockSpec((bm, 128), lambda i: (i, 0))],
        out_specs=pl.BlockSpec((bm, 128), lambda i: (i, 0)),
    )(x)
