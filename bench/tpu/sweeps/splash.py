"""JAX's own splash attention (forward, causal, bf16) for Tune on the chip: the query block (bq) and
the key/value block (bkv, computed whole). Causal masking makes it block-sparse: the kernel visits only
the blocks on or below the diagonal, which its scalar-prefetched block mask lists.

make_inputs' defaults are the check size; `--size h=…,s=…,d=…` the target; `--bind bq=s,bkv=s`.
"""

import functools

import jax
import jax.numpy as jnp
from jax.experimental.pallas.ops.tpu.splash_attention import splash_attention_kernel as splash
from jax.experimental.pallas.ops.tpu.splash_attention import splash_attention_mask as masks


def make_inputs(seed, h=2, s=256, d=128):
    kq, kk, kv = jax.random.split(jax.random.key(seed), 3)
    shape = (h, s, d)
    return tuple(jax.random.normal(key, shape, jnp.float32).astype(jnp.bfloat16) for key in (kq, kk, kv))


def reference(q, k, v):
    hi = jax.lax.Precision.HIGHEST
    s = q.shape[1]
    logits = jnp.einsum("hqd,hkd->hqk", q.astype(jnp.float32), k.astype(jnp.float32), precision=hi)
    logits = logits * q.shape[-1] ** -0.5
    causal = jnp.tril(jnp.ones((s, s), bool))
    weights = jax.nn.softmax(jnp.where(causal, logits, -jnp.inf), axis=-1)
    return jnp.einsum("hqk,hkd->hqd", weights, v.astype(jnp.float32), precision=hi).astype(q.dtype)


def xla_baseline(q, k, v):
    """What a user would call instead: XLA's causal attention in bf16 (layout batch, seq, heads, dim)."""
    swap = (1, 0, 2)
    out = jax.nn.dot_product_attention(
        q.transpose(swap)[None], k.transpose(swap)[None], v.transpose(swap)[None], is_causal=True
    )
    return out[0].transpose(swap)


@functools.partial(jax.jit, static_argnames=("bq", "bkv"))
def kernel(q, k, v, *, bq=128, bkv=128):
    h, s, _ = q.shape
    mask = masks.MultiHeadMask([masks.CausalMask((s, s)) for _ in range(h)])
    sizes = splash.BlockSizes(block_q=bq, block_kv=bkv, block_kv_compute=bkv)
    attend = splash.make_splash_mha(mask, block_sizes=sizes, head_shards=1, q_seq_shards=1)
    scaled = (q.astype(jnp.float32) * q.shape[-1] ** -0.5).astype(q.dtype)
    return attend(scaled, k, v)
