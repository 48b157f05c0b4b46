"""Reference for `hbm_manual_dma`: a plain jnp matmul with f32 accumulation."""

import jax
import jax.numpy as jnp


def make_inputs(case):
    key_x, key_w = jax.random.split(jax.random.key(case.seed))
    dtype = jnp.dtype(case.dtype)
    x = jax.random.normal(key_x, (case.m, case.k), jnp.float32).astype(dtype)
    w = jax.random.normal(key_w, (case.k, case.n), jnp.float32).astype(dtype)
    return x, w


def reference(x, w):
    return jnp.dot(x, w, preferred_element_type=jnp.float32).astype(x.dtype)
