"""Reference for `inplace_chunked_matmul`: the functional `x @ w` (f32 accumulation), which the
harness compares with the contents of `x` after the in-place kernel ran."""

import jax
import jax.numpy as jnp


def make_inputs(case):
    key_x, key_w = jax.random.split(jax.random.key(case.seed))
    dtype = jnp.dtype(case.dtype)
    x = jax.random.normal(key_x, (case.m, case.k), jnp.float32).astype(dtype)
    # Scaled so that repeated updates x <- x @ w keep their magnitude.
    w = (jax.random.normal(key_w, (case.k, case.k), jnp.float32) / case.k**0.5).astype(dtype)
    return x, w


def reference(x, w):
    return jnp.dot(x, w, preferred_element_type=jnp.float32).astype(x.dtype)
