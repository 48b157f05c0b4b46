"""Reference for `race_condition_demo`: scale by two."""

import jax
import jax.numpy as jnp


def make_inputs(case):
    x = jax.random.normal(jax.random.key(case.seed), (case.m, case.n), jnp.float32)
    return (x.astype(jnp.dtype(case.dtype)),)


def reference(x):
    return x * 2
