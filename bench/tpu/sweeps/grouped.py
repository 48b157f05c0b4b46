"""JAX's own megablox grouped matmul (gmm, bf16 in, f32 out) for Tune on the chip: tiling (tm, tk, tn)
over groups of uneven sizes drawn from the seed.

make_inputs' defaults are the check size; `--size m=…,k=…,n=…,g=…` the target; `--bind tk=k,tn=n`.
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental.pallas.ops.tpu.megablox import gmm


def group_sizes(seed, m, g):
    """`g` uneven group sizes summing to `m` (each at least 1), fixed by the seed."""
    weights = np.random.default_rng(seed).uniform(0.5, 1.5, g)
    sizes = np.maximum(np.floor(weights / weights.sum() * m).astype(np.int32), 1)
    sizes[-1] = m - sizes[:-1].sum()
    return jnp.asarray(sizes, jnp.int32)


def make_inputs(seed, m=512, k=256, n=256, g=4):
    kl, kr = jax.random.split(jax.random.key(seed))
    lhs = jax.random.normal(kl, (m, k), jnp.float32).astype(jnp.bfloat16)
    rhs = jax.random.normal(kr, (g, k, n), jnp.float32).astype(jnp.bfloat16)
    return lhs, rhs, group_sizes(seed, m, g)


def reference(lhs, rhs, sizes):
    ends = jnp.cumsum(sizes)
    group = jnp.searchsorted(ends, jnp.arange(lhs.shape[0]), side="right")
    out = jnp.zeros((lhs.shape[0], rhs.shape[2]), jnp.float32)
    for i in range(rhs.shape[0]):
        part = jnp.dot(lhs, rhs[i], preferred_element_type=jnp.float32, precision=jax.lax.Precision.HIGHEST)
        out = jnp.where((group == i)[:, None], part, out)
    return out


def xla_baseline(lhs, rhs, sizes):
    """What a user would call instead: XLA's own grouped matmul."""
    return jax.lax.ragged_dot(lhs, rhs, sizes, preferred_element_type=jnp.float32)


@functools.partial(jax.jit, static_argnames=("tm", "tk", "tn"))
def kernel(lhs, rhs, sizes, *, tm=128, tk=128, tn=128):
    return gmm(lhs, rhs, sizes, preferred_element_type=jnp.float32, tiling=(tm, tk, tn))
