"""Reference for `block_sparse_matmul`: the same block-sparse product, computed densely.

`make_inputs` builds, from the seed, a block mask for A (about `density_pct` % of its
`block`×`block` tiles are non-zero, and every block row has at least one), the dense A with the
masked-out tiles zeroed, a dense B, and the index tables of A's non-zero tiles in row-major order.
"""

import jax
import jax.numpy as jnp
import numpy as np


def make_inputs(case):
    key_mask, key_a, key_b = jax.random.split(jax.random.key(case.seed), 3)
    dtype = jnp.dtype(case.dtype)
    row_blocks, k_blocks = case.m // case.block, case.k // case.block
    mask = np.array(jax.random.uniform(key_mask, (row_blocks, k_blocks)) < case.density_pct / 100)
    # An empty block row would leave its output tiles unwritten; real sparse kernels guard the
    # same way (or emit one zero step per empty row).
    mask[np.arange(row_blocks), np.arange(row_blocks) % k_blocks] = True
    block_rows, block_cols = np.nonzero(mask)  # row-major: a row's tiles are consecutive
    dense_mask = np.kron(mask, np.ones((case.block, case.block), np.float32))
    a = jax.random.normal(key_a, (case.m, case.k), jnp.float32) * dense_mask
    b = jax.random.normal(key_b, (case.k, case.n), jnp.float32)
    return (
        jnp.asarray(block_rows, jnp.int32),
        jnp.asarray(block_cols, jnp.int32),
        a.astype(dtype),
        b.astype(dtype),
    )


def reference(block_rows, block_cols, a, b):
    del block_rows, block_cols  # the zero tiles are in `a` itself
    return jnp.dot(a, b, preferred_element_type=jnp.float32).astype(a.dtype)
