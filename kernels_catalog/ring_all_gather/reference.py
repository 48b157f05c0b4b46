"""Reference for `ring_all_gather`: every device ends up with all shards, in order."""

import jax
import jax.numpy as jnp


def make_inputs(case):
    x = jax.random.normal(jax.random.key(case.seed), (case.shards, case.m, case.n), jnp.float32)
    return (x.astype(jnp.dtype(case.dtype)),)


def reference(x):
    return jnp.broadcast_to(x, (x.shape[0], *x.shape))
