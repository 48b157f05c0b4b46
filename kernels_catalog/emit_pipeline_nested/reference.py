"""Reference for `emit_pipeline_nested`: a two-layer MLP, relu(x @ w1) @ w2, in plain jnp.

The hidden activation is rounded to the input dtype before the second matmul, as the kernel keeps it
in VMEM in that dtype; both matmuls accumulate in f32.
"""

import jax
import jax.numpy as jnp


def make_inputs(case):
    key_x, key_w1, key_w2 = jax.random.split(jax.random.key(case.seed), 3)
    dtype = jnp.dtype(case.dtype)
    x = jax.random.normal(key_x, (case.m, case.d), jnp.float32)
    # Scaled so that the hidden and output values stay of order one.
    w1 = jax.random.normal(key_w1, (case.d, case.hidden), jnp.float32) / case.d**0.5
    w2 = jax.random.normal(key_w2, (case.hidden, case.n), jnp.float32) / case.hidden**0.5
    return x.astype(dtype), w1.astype(dtype), w2.astype(dtype)


def reference(x, w1, w2):
    h = jnp.maximum(jnp.dot(x, w1, preferred_element_type=jnp.float32), 0).astype(x.dtype)
    return jnp.dot(h, w2, preferred_element_type=jnp.float32).astype(x.dtype)
