"""JAX's splash attention (block-sparse flash attention with a causal mask), unmodified."""

import jax
from jax.experimental.pallas.ops.tpu import splash_attention as splash

HEADS, SEQUENCE, HEAD_DIM = 2, 256, 128
MASK = splash.MultiHeadMask([splash.CausalMask((SEQUENCE, SEQUENCE)) for _ in range(HEADS)])
BLOCKS = splash.BlockSizes(block_q=128, block_kv=128, block_kv_compute=128)


def make_inputs(seed):
    kq, kk, kv = jax.random.split(jax.random.key(seed), 3)
    return tuple(jax.random.normal(key, (HEADS, SEQUENCE, HEAD_DIM)) for key in (kq, kk, kv))


def reference(q, k, v):
    return splash.make_masked_mha_reference(MASK)(q, k, v)


def kernel(q, k, v):
    return splash.make_splash_mha_single_device(MASK, block_sizes=BLOCKS)(q, k, v)
