"""Reference for `sc_all_gather_overlap`: a per-device matmul, and an all-gather of the next weights."""

import jax
import jax.numpy as jnp


def make_inputs(case):
    key_x, key_w, key_next = jax.random.split(jax.random.key(case.seed), 3)
    dtype = jnp.dtype(case.dtype)
    x = jax.random.normal(key_x, (case.shards, case.m, case.k), jnp.float32).astype(dtype)
    w = jax.random.normal(key_w, (case.k, case.n), jnp.float32).astype(dtype)
    w_next = jax.random.normal(key_next, (case.shards, case.rows, case.n), jnp.float32).astype(dtype)
    return x, w, w_next


def reference(x, w, w_next):
    y = jnp.einsum("dmk,kn->dmn", x, w, preferred_element_type=jnp.float32).astype(x.dtype)
    gathered = jnp.broadcast_to(w_next, (w_next.shape[0], *w_next.shape))
    return y, gathered
