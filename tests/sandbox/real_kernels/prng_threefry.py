"""JAX's Pallas Threefry-2x32 random bits (`ops/tpu/random/threefry.py`), unmodified."""

import jax.numpy as jnp
from jax._src.random import threefry2x32
from jax.experimental.pallas.ops.tpu.random import threefry

SHAPE = (256, 512)


def make_inputs(seed):
    return (jnp.array([0, seed + 7], jnp.uint32),)


def reference(key):
    return threefry2x32.threefry_random_bits(key, 32, SHAPE)


def kernel(key):
    return threefry.plthreefry_random_bits(key, 32, SHAPE)
