"""JAX's ragged paged attention (mixed prefill and decode, bf16) for Tune on the chip: half the
sequences decode one token, half prefill a chunk of `q` tokens, each against its own KV length (drawn
from the seed) in a paged cache. The kernel walks the sequences in a loop whose trip counts are data:
kv pages per block (ppb) and queries per block (qpb) are the tuning knobs.

make_inputs' defaults are the check size; `--size s=…,q=…,kv=…,page=…,h=…,kvh=…,d=…` the target.
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental.pallas.ops.tpu.ragged_paged_attention import ragged_paged_attention


def make_inputs(seed, s=4, q=16, kv=128, page=16, h=4, kvh=2, d=128):
    """Queries [tokens, h, d], the paged cache [pages, page, 2*kvh, d] (keys and values interleaved by
    head), then kv_lens, page_indices, cu_q_lens and num_seqs as the kernel takes them."""
    rng = np.random.default_rng(seed)
    q_lens = np.where(np.arange(s) < s // 2, 1, q).astype(np.int32)
    kv_lens = np.maximum(rng.integers(kv // 2, kv + 1, s), q_lens).astype(np.int32)
    pages_per_seq = -(-kv // page)
    page_indices = rng.permutation(s * pages_per_seq).reshape(s, pages_per_seq).astype(np.int32)
    cu_q_lens = np.concatenate([[0], np.cumsum(q_lens)]).astype(np.int32)
    kq, kc = jax.random.split(jax.random.key(seed))
    queries = jax.random.normal(kq, (int(cu_q_lens[-1]), h, d), jnp.float32).astype(jnp.bfloat16)
    cache = jax.random.normal(kc, (s * pages_per_seq, page, 2 * kvh, d), jnp.float32).astype(jnp.bfloat16)
    as_array = functools.partial(jnp.asarray, dtype=jnp.int32)
    return queries, cache, as_array(kv_lens), as_array(page_indices), as_array(cu_q_lens), as_array([s])


def _attention(queries, cache, kv_lens, page_indices, cu_q_lens, num_seqs, *, precise):
    """Every sequence's causal attention over its own pages, one sequence at a time (lax.map), at the
    longest query length; each token then takes its row."""
    del num_seqs  # every sequence is live
    tokens, h, d = queries.shape
    s = kv_lens.shape[0]
    kvh = cache.shape[2] // 2
    q_lens = cu_q_lens[1:] - cu_q_lens[:-1]
    longest = tokens  # a static bound on any sequence's query length
    padded = jnp.concatenate([queries, jnp.zeros((longest, h, d), queries.dtype)])
    precision = jax.lax.Precision.HIGHEST if precise else None
    compute = jnp.float32 if precise else queries.dtype

    def one(i):
        qs = jax.lax.dynamic_slice(padded, (cu_q_lens[i], 0, 0), (longest, h, d)).astype(compute)
        kv = cache[page_indices[i]].reshape(-1, 2 * kvh, d).astype(compute)
        k = jnp.repeat(kv[:, 0::2], h // kvh, axis=1)
        v = jnp.repeat(kv[:, 1::2], h // kvh, axis=1)
        logits = jnp.einsum("qhd,khd->hqk", qs, k, precision=precision, preferred_element_type=jnp.float32)
        row = jax.lax.broadcasted_iota(jnp.int32, logits.shape, 1)
        col = jax.lax.broadcasted_iota(jnp.int32, logits.shape, 2)
        visible = (col < kv_lens[i]) & (col <= kv_lens[i] - q_lens[i] + row)
        weights = jax.nn.softmax(jnp.where(visible, logits * d**-0.5, -jnp.inf), axis=-1)
        return jnp.einsum("hqk,khd->qhd", weights.astype(compute), v, precision=precision)

    per_sequence = jax.lax.map(one, jnp.arange(s))
    token = jnp.arange(tokens)
    seq = jnp.searchsorted(cu_q_lens[1:], token, side="right")
    return per_sequence[seq, token - cu_q_lens[seq]].astype(queries.dtype)


def reference(*inputs):
    return _attention(*inputs, precise=True)


def xla_baseline(*inputs):
    """What a user would write instead in plain JAX: gather each sequence's pages, then attention."""
    return _attention(*inputs, precise=False)


@functools.partial(jax.jit, static_argnames=("ppb", "qpb"))
def kernel(queries, cache, kv_lens, page_indices, cu_q_lens, num_seqs, *, ppb=4, qpb=16):
    return ragged_paged_attention(
        queries,
        cache,
        kv_lens,
        page_indices,
        cu_q_lens,
        num_seqs,
        sm_scale=queries.shape[-1] ** -0.5,
        num_kv_pages_per_block=ppb,
        num_queries_per_block=qpb,
    )
