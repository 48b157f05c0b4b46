"""An f32 result is stored into a bf16 output ref without a cast."""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def make_inputs(seed):
    return (jax.random.normal(jax.random.key(seed), (128, 128), jnp.bfloat16),)


def reference(x):
    return (x.astype(jnp.float32) * 2).astype(jnp.bfloat16)


def double_kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...].astype(jnp.float32) * 2  # MARK


def kernel(x):
    return pl.pallas_call(double_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)
