"""JAX's example tiled matmul (`ops/tpu/matmul.py`), unmodified."""

import jax
from jax.experimental.pallas.ops.tpu import matmul as ops


def make_inputs(seed):
    kx, ky = jax.random.split(jax.random.key(seed))
    return jax.random.normal(kx, (256, 256)), jax.random.normal(ky, (256, 128))


def reference(x, y):
    return x @ y


def kernel(x, y):
    return ops.matmul(x, y, block_shape=(128, 128), block_k=128)
