"""JAX's megablox grouped matmul (`gmm`), unmodified: ragged groups (one empty), a dynamic grid."""

import jax
import jax.numpy as jnp
from jax.experimental.pallas.ops.tpu import megablox

GROUP_SIZES = (96, 32, 0, 128)


def make_inputs(seed):
    k1, k2 = jax.random.split(jax.random.key(seed))
    lhs = jax.random.normal(k1, (256, 128), jnp.float32)
    rhs = jax.random.normal(k2, (4, 128, 128), jnp.float32)
    return lhs, rhs, jnp.array(GROUP_SIZES, jnp.int32)


def reference(lhs, rhs, group_sizes):
    outs, start = [], 0
    for g, size in enumerate(GROUP_SIZES):
        outs.append(lhs[start : start + size] @ rhs[g])
        start += size
    return jnp.concatenate(outs)


def kernel(lhs, rhs, group_sizes):
    return megablox.gmm(lhs, rhs, group_sizes, tiling=(128, 128, 128))
