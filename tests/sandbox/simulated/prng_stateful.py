"""Dropout with the core's PRNG: the seed decides the mask (JAX's interpreter returned all-zero bits)."""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def make_inputs(seed):
    return (jnp.ones((8, 128), jnp.float32),)


def reference(x):
    return jnp.ones((3,), jnp.float32)


def dropout_kernel(x_ref, o_ref):
    pltpu.prng_seed(7)
    bits = pltpu.prng_random_bits(x_ref.shape)
    keep = (bits & 1) == 0  # half the elements, by the low bit
    o_ref[...] = jnp.where(keep, x_ref[...] * 2.0, 0.0)


def kernel(x):
    drop = pl.pallas_call(dropout_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))
    a, b = drop(x), drop(x)
    kept = jnp.mean(a > 0)
    return jnp.stack([jnp.all(a == b), (kept > 0.4) & (kept < 0.6), jnp.abs(jnp.mean(a) - 1.0) < 0.2]).astype(
        jnp.float32
    )
