"""JAX's own Pallas TPU flash attention (forward, bf16) for Tune on the chip: block_q (bq) and the
key block (bk, major and minor alike).

make_inputs' defaults are the check size; `--size b=…,h=…,s=…,d=…` the target; `--bind bq=s,bk=s`.
"""

import functools

import jax
import jax.numpy as jnp
from jax.experimental.pallas.ops.tpu import flash_attention as fa


def make_inputs(seed, b=1, h=2, s=256, d=128):
    kq, kk, kv = jax.random.split(jax.random.key(seed), 3)
    shape = (b, h, s, d)
    return tuple(jax.random.normal(key, shape, jnp.float32).astype(jnp.bfloat16) for key in (kq, kk, kv))


def reference(q, k, v):
    scale = q.shape[-1] ** -0.5
    hi = jax.lax.Precision.HIGHEST
    logits = jnp.einsum("bhqd,bhkd->bhqk", q.astype(jnp.float32), k.astype(jnp.float32), precision=hi)
    weights = jax.nn.softmax(logits * scale, axis=-1)
    return jnp.einsum("bhqk,bhkd->bhqd", weights, v.astype(jnp.float32), precision=hi).astype(q.dtype)


def xla_baseline(q, k, v):
    """What a user would call instead: XLA's attention in bf16 (its layout is batch, seq, heads, dim)."""
    swap = (0, 2, 1, 3)
    out = jax.nn.dot_product_attention(q.transpose(swap), k.transpose(swap), v.transpose(swap))
    return out.transpose(swap)


@functools.partial(jax.jit, static_argnames=("bq", "bk"))
def kernel(q, k, v, *, bq=128, bk=128):
    sizes = fa.BlockSizes(block_q=bq, block_k_major=bk, block_k=bk, block_b=1)
    return fa.flash_attention(q, k, v, sm_scale=q.shape[-1] ** -0.5, block_sizes=sizes)
