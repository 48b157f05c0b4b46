"""jnp.cumsum inside a TensorCore kernel: the simulator runs it, Mosaic has no lowering for it."""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def make_inputs(seed):
    return (jax.random.normal(jax.random.key(seed), (8, 128), jnp.float32),)


def reference(x):
    return jnp.cumsum(x, axis=1)


def cumsum_kernel(x_ref, o_ref):
    o_ref[...] = jnp.cumsum(x_ref[...], axis=1)  # MARK


def kernel(x):
    return pl.pallas_call(cumsum_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)
