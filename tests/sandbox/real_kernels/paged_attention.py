"""JAX's paged attention (grouped-query decode over a paged KV cache), unmodified."""

import jax
import jax.numpy as jnp
from jax.experimental.pallas.ops.tpu.paged_attention import paged_attention

BATCH, Q_HEADS, KV_HEADS, HEAD_DIM = 2, 4, 2, 128
PAGES, PAGE_SIZE, PAGES_PER_SEQUENCE = 8, 16, 4
LENGTHS = (40, 64)
# The kernel loads K and V pages as bfloat16 (by design), so it is as close to an f32 reference as bf16 is.
TOLERANCE = {"rtol": 2e-2, "atol": 2e-2}


def make_inputs(seed):
    kq, kk, kv, kp = jax.random.split(jax.random.key(seed), 4)
    q = jax.random.normal(kq, (BATCH, Q_HEADS, HEAD_DIM))
    k_pages = jax.random.normal(kk, (KV_HEADS, PAGES, PAGE_SIZE, HEAD_DIM))
    v_pages = jax.random.normal(kv, (KV_HEADS, PAGES, PAGE_SIZE, HEAD_DIM))
    page_indices = jax.random.permutation(kp, PAGES).reshape(BATCH, PAGES_PER_SEQUENCE).astype(jnp.int32)
    return q, k_pages, v_pages, jnp.array(LENGTHS, jnp.int32), page_indices


def reference(q, k_pages, v_pages, lengths, page_indices):
    outs = []
    for b, length in enumerate(LENGTHS):
        k = k_pages[:, page_indices[b]].reshape(KV_HEADS, -1, HEAD_DIM)[:, :length]
        v = v_pages[:, page_indices[b]].reshape(KV_HEADS, -1, HEAD_DIM)[:, :length]
        qb = q[b].reshape(KV_HEADS, Q_HEADS // KV_HEADS, HEAD_DIM)
        weights = jax.nn.softmax(jnp.einsum("kgd,ksd->kgs", qb, k), axis=-1)
        outs.append(jnp.einsum("kgs,ksd->kgd", weights, v).reshape(Q_HEADS, HEAD_DIM))
    return jnp.stack(outs)


def kernel(q, k_pages, v_pages, lengths, page_indices):
    return paged_attention(q, k_pages, v_pages, lengths, page_indices, pages_per_compute_block=2)
