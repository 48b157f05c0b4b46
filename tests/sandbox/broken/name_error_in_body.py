"""A typo in the kernel body: `x_ref` spelled `x_rf`."""

import jax
from jax.experimental import pallas as pl


def make_inputs(seed):
    return (jax.random.normal(jax.random.key(seed), (8, 128)),)


def reference(x):
    return x * 2


def double_kernel(x_ref, o_ref):
    o_ref[...] = x_rf[...] * 2  # noqa: F821  # MARK


def kernel(x):
    return pl.pallas_call(double_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)
