"""JAX's flash attention backward pass (the dq and dk/dv kernels), unmodified, through jax.grad."""

import jax
import jax.numpy as jnp
from jax.experimental.pallas.ops.tpu import flash_attention as fa

SHAPE = (1, 1, 128, 128)  # batch, heads, sequence, head dim
BLOCKS = fa.BlockSizes(
    block_q=128,
    block_k_major=128,
    block_k=128,
    block_b=1,
    block_q_major_dkv=128,
    block_k_major_dkv=128,
    block_k_dkv=128,
    block_q_dkv=128,
    block_k_major_dq=128,
    block_k_dq=128,
    block_q_dq=128,
)
# The backward kernels accumulate in a different order than XLA's autodiff of the reference.
TOLERANCE = {"rtol": 2e-3, "atol": 2e-3}


def make_inputs(seed):
    kq, kk, kv, kd = jax.random.split(jax.random.key(seed), 4)
    return tuple(jax.random.normal(key, SHAPE) for key in (kq, kk, kv, kd))


def _grads(attention, q, k, v, do):
    def loss(q, k, v):
        return jnp.sum(attention(q, k, v) * do)

    return jax.grad(loss, argnums=(0, 1, 2))(q, k, v)


def reference(q, k, v, do):
    return _grads(lambda q, k, v: fa.mha_reference(q, k, v, None, None, causal=True), q, k, v, do)


def kernel(q, k, v, do):
    return _grads(lambda q, k, v: fa.flash_attention(q, k, v, causal=True, block_sizes=BLOCKS), q, k, v, do)
