"""Reference for `megacore_matmul`: a plain jnp matmul with f32 accumulation."""

import jax
import jax.numpy as jnp


def make_inputs(case):
    key_x, key_y = jax.random.split(jax.random.key(case.seed))
    dtype = jnp.dtype(case.dtype)
    x = jax.random.normal(key_x, (case.m, case.k), jnp.float32).astype(dtype)
    y = jax.random.normal(key_y, (case.k, case.n), jnp.float32).astype(dtype)
    return x, y


def reference(x, y):
    return jnp.dot(x, y, preferred_element_type=jnp.float32).astype(x.dtype)
