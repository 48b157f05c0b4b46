"""The kernel declares a bf16 output, the reference is f32."""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def make_inputs(seed):
    return (jax.random.normal(jax.random.key(seed), (8, 128)),)


def reference(x):
    return x * 2


def double_kernel(x_ref, o_ref):
    o_ref[...] = (x_ref[...] * 2).astype(o_ref.dtype)


def kernel(x):
    return pl.pallas_call(double_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, jnp.bfloat16))(x)
