"""JAX's own paged attention (decode, bf16) for Tune on the chip: how many KV pages one grid step
computes on (ppcb, pages_per_compute_block). Every sequence has its own length and its own pages,
scattered over the shared KV cache by a page table (scalar-prefetched), as a serving stack keeps them.

make_inputs' defaults are the check size; `--size b=…,h=…,kvh=…,s=…,page=…,d=…` the target (s: the
longest sequence, a whole number of pages). The model has no paged family: its band says so.
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental.pallas.ops.tpu.paged_attention import paged_attention


def _pages(seed, b, s, page):
    """Each sequence's length (at least half of `s`) and its page table: a permutation of all pages."""
    rng = np.random.default_rng(seed)
    per_seq = s // page
    lengths = rng.integers(s // 2, s + 1, b).astype(np.int32)
    table = rng.permutation(b * per_seq).astype(np.int32).reshape(b, per_seq)
    return jnp.asarray(lengths), jnp.asarray(table)


def make_inputs(seed, b=2, h=4, kvh=2, s=256, page=16, d=128):
    kq, kk, kv = jax.random.split(jax.random.key(seed), 3)
    pages = b * (s // page)
    q = jax.random.normal(kq, (b, h, d), jnp.float32).astype(jnp.bfloat16)
    k = jax.random.normal(kk, (kvh, pages, page, d), jnp.float32).astype(jnp.bfloat16)
    v = jax.random.normal(kv, (kvh, pages, page, d), jnp.float32).astype(jnp.bfloat16)
    lengths, table = _pages(seed, b, s, page)
    return q, k, v, lengths, table


def _dense(pages, table):
    """(kv heads, batch, s, d): each sequence's pages gathered in order."""
    kvh, _, page, d = pages.shape
    b, per_seq = table.shape
    return pages[:, table].reshape(kvh, b, per_seq * page, d)


def reference(q, k, v, lengths, table):
    hi = jax.lax.Precision.HIGHEST
    b, h, d = q.shape
    kvh = k.shape[0]
    keys, values = _dense(k, table).astype(jnp.float32), _dense(v, table).astype(jnp.float32)
    grouped = q.astype(jnp.float32).reshape(b, kvh, h // kvh, d)
    logits = jnp.einsum("bgqd,gbkd->bgqk", grouped, keys, precision=hi)
    valid = jnp.arange(keys.shape[2])[None, None, None, :] < lengths[:, None, None, None]
    weights = jax.nn.softmax(jnp.where(valid, logits, -jnp.inf), axis=-1)
    out = jnp.einsum("bgqk,gbkd->bgqd", weights, values, precision=hi)
    return out.reshape(b, h, d).astype(q.dtype)


def xla_baseline(q, k, v, lengths, table):
    """What a user would write without the kernel: gather every page, then XLA's attention (bf16)."""
    keys, values = _dense(k, table), _dense(v, table)  # (kvh, b, s, d)
    mask = jnp.arange(keys.shape[2])[None, :] < lengths[:, None]  # (b, s)
    out = jax.nn.dot_product_attention(
        q[:, None],  # (b, 1, h, d)
        keys.transpose(1, 2, 0, 3),
        values.transpose(1, 2, 0, 3),
        mask=mask[:, None, None, :],
        scale=1.0,
    )
    return out[:, 0]


@functools.partial(jax.jit, static_argnames=("ppcb",))
def kernel(q, k, v, lengths, table, *, ppcb=4):
    return paged_attention(q, k, v, lengths, table, pages_per_compute_block=ppcb)
