"""JAX's flash attention forward pass (`ops/tpu/flash_attention.py`), unmodified, causal."""

import jax
from jax.experimental.pallas.ops.tpu import flash_attention as fa

SHAPE = (1, 1, 128, 128)  # batch, heads, sequence, head dim
BLOCKS = fa.BlockSizes(block_q=128, block_k_major=128, block_k=128, block_b=1)


def make_inputs(seed):
    kq, kk, kv = jax.random.split(jax.random.key(seed), 3)
    return tuple(jax.random.normal(key, SHAPE) for key in (kq, kk, kv))


def reference(q, k, v):
    return fa.mha_reference(q, k, v, None, None, causal=True, sm_scale=0.125)


def kernel(q, k, v):
    return fa.flash_attention(q, k, v, causal=True, sm_scale=0.125, block_sizes=BLOCKS)
