"""JAX's ragged paged attention (mixed prefill and decode), unmodified: it picks its block sizes by
asking `jax.devices()[0].device_kind` for the TPU generation."""

import jax
import jax.numpy as jnp
from jax.experimental.pallas.ops.tpu.ragged_paged_attention import kernel as rpa

Q_HEADS, KV_HEADS, HEAD_DIM = 2, 1, 128
PAGES, PAGE_SIZE, PAGES_PER_SEQUENCE = 8, 16, 4
Q_LENS, KV_LENS = (8, 1), (24, 40)


def make_inputs(seed):
    kq, kkv = jax.random.split(jax.random.key(seed))
    q = jax.random.normal(kq, (16, Q_HEADS, HEAD_DIM))
    kv_pages = jax.random.normal(kkv, (PAGES, PAGE_SIZE, 2 * KV_HEADS, HEAD_DIM))
    kv_lens = jnp.array(KV_LENS, jnp.int32)
    page_indices = jnp.arange(2 * PAGES_PER_SEQUENCE, dtype=jnp.int32).reshape(2, PAGES_PER_SEQUENCE)
    cu_q_lens = jnp.array([0, Q_LENS[0], sum(Q_LENS)], jnp.int32)
    return q, kv_pages, kv_lens, page_indices, cu_q_lens, jnp.array([2], jnp.int32)


def reference(*inputs):
    out = rpa.ref_ragged_paged_attention(*inputs, sm_scale=HEAD_DIM**-0.5)
    return out[: sum(Q_LENS)]


def kernel(*inputs):
    return rpa.ragged_paged_attention(*inputs, sm_scale=HEAD_DIM**-0.5)[: sum(Q_LENS)]
