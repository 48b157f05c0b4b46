"""Dots inside kernels: f32 at each precision, bf16, int8, dot_general forms, a fused epilogue.

On a TPU the MXU takes bf16 (and int8) operands: an f32 dot at default precision is one bf16 pass
(operands rounded to bf16, products summed in f32), HIGHEST is f32-accurate. The f32 cases check at
the f32 tolerance a kernel author would write, so the chip is expected to fail the default-precision
ones; the cases that round to bf16 on purpose compare with a reference that rounds the same way.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from corpus_case import BF16, BF16_OUT, EXACT, F32, Case, Tolerance, int8s, normal
from jax import lax
from jax.experimental import pallas as pl

HIGHEST = lax.Precision.HIGHEST
NT = (((1,), (1,)), ((), ()))  # contract the last dims of both: x @ y.T
# An f32 dot at the default precision: the chip runs one bf16 MXU pass (0.1-0.3 from exact f32 at
# K = 256..1024, over the f32 tolerance), and so does the simulator (the `mxu_precision` fix). The two
# differ only in the order the f32 accumulations are summed: measured within 9.2e-5 at K = 1024.
BF16_PASS_AGREEMENT = Tolerance(rtol=1e-5, atol=2e-4)


def whole(kernel, out_shape, *args):
    """A gridless pallas_call: every operand and the output whole in VMEM."""
    return pl.pallas_call(kernel, out_shape=out_shape)(*args)


def out(shape, dtype):
    return jax.ShapeDtypeStruct(shape, dtype)


def dot_kernel(x_ref, y_ref, o_ref, *, precision, preferred):
    o_ref[...] = jnp.dot(
        x_ref[...], y_ref[...], precision=precision, preferred_element_type=preferred
    ).astype(o_ref.dtype)


@functools.partial(jax.jit, static_argnames=["precision", "preferred", "out_dtype"])
def dot(x, y, *, precision=None, preferred=None, out_dtype=None):
    kernel = functools.partial(dot_kernel, precision=precision, preferred=preferred)
    return whole(kernel, out((x.shape[0], y.shape[1]), out_dtype or x.dtype), x, y)


def nt_kernel(x_ref, y_ref, o_ref, *, precision):
    o_ref[...] = lax.dot_general(
        x_ref[...], y_ref[...], NT, precision=precision, preferred_element_type=jnp.float32
    )


@functools.partial(jax.jit, static_argnames=["precision"])
def dot_nt(x, y, *, precision=None):
    return whole(
        functools.partial(nt_kernel, precision=precision), out((x.shape[0], y.shape[0]), jnp.float32), x, y
    )


def batched_kernel(q_ref, k_ref, o_ref):
    o_ref[...] = jnp.einsum("bqd,bkd->bqk", q_ref[...], k_ref[...], preferred_element_type=jnp.float32)


@jax.jit
def batched_scores(q, k):
    return whole(batched_kernel, out((q.shape[0], q.shape[1], k.shape[1]), jnp.float32), q, k)


def cast_kernel(x_ref, y_ref, o_ref):
    x, y = x_ref[...].astype(jnp.bfloat16), y_ref[...].astype(jnp.bfloat16)
    o_ref[...] = jnp.dot(x, y, preferred_element_type=jnp.float32)


@jax.jit
def dot_via_bf16(x, y):
    return whole(cast_kernel, out((x.shape[0], y.shape[1]), jnp.float32), x, y)


def epilogue_kernel(x_ref, w_ref, b_ref, o_ref):
    acc = jnp.dot(x_ref[...], w_ref[...], preferred_element_type=jnp.float32) + b_ref[...]
    o_ref[...] = jnp.maximum(acc, 0.0).astype(o_ref.dtype)


@jax.jit
def linear_relu(x, w, b):
    return whole(epilogue_kernel, out((x.shape[0], w.shape[1]), x.dtype), x, w, b)


def matmul_ref(x, y):
    return x @ y


def pair(m, k, n, dtype=np.float32):
    return lambda rng: (normal(rng, (m, k), dtype), normal(rng, (k, n), dtype))


def bf16_round(x):
    return x.astype(np.float32).astype(BF16).astype(np.float64)


CASES = [
    Case(
        "dot_f32_default_k256",
        dot,
        pair(128, 256, 128),
        matmul_ref,
        **F32,
        chip_tolerance=BF16_PASS_AGREEMENT,
        interpret_status="mismatch",
    ),
    Case(
        "dot_f32_default_k1024",
        dot,
        pair(128, 1024, 256),
        matmul_ref,
        **F32,
        chip_tolerance=BF16_PASS_AGREEMENT,
        interpret_status="mismatch",
    ),
    Case(
        "dot_f32_preferred_f32_default",
        functools.partial(dot, preferred=jnp.float32),
        pair(256, 512, 128),
        matmul_ref,
        **F32,
        chip_tolerance=BF16_PASS_AGREEMENT,
        interpret_status="mismatch",
    ),
    Case(
        "dot_f32_highest_k256",
        functools.partial(dot, precision=HIGHEST),
        pair(128, 256, 128),
        matmul_ref,
        **F32,
    ),
    Case(
        "dot_f32_highest_k1024",
        functools.partial(dot, precision=HIGHEST),
        pair(128, 1024, 256),
        matmul_ref,
        **F32,
    ),
    Case(
        "dot_f32_high_k512",
        functools.partial(dot, precision=lax.Precision.HIGH),
        pair(128, 512, 128),
        matmul_ref,
        **F32,
        interpret_status="mismatch",  # three passes over a truncated split: 1.2e-3 from exact, as the chip
    ),
    Case(
        "dot_bf16_in_f32_out",
        functools.partial(dot, preferred=jnp.float32, out_dtype=jnp.float32),
        pair(128, 512, 256, BF16),
        matmul_ref,
        **F32,
    ),
    Case(
        "dot_bf16_in_bf16_out",
        functools.partial(dot, preferred=jnp.float32),
        pair(128, 256, 128, BF16),
        matmul_ref,
        **BF16_OUT,
    ),
    Case(
        "dot_int8_int32",
        functools.partial(dot, preferred=jnp.int32, out_dtype=jnp.int32),
        lambda rng: (int8s(rng, (128, 512)), int8s(rng, (512, 256))),
        matmul_ref,
        **EXACT,
    ),
    Case(
        "dot_general_nt_f32_highest",
        functools.partial(dot_nt, precision=HIGHEST),
        pair(128, 256, 256),
        lambda x, y: x @ y.T,
        **F32,
    ),
    Case("dot_general_nt_bf16", dot_nt, pair(256, 128, 128, BF16), lambda x, y: x @ y.T, **F32),
    Case(
        "dot_batched_bf16_scores",
        batched_scores,
        lambda rng: (normal(rng, (4, 128, 128), BF16), normal(rng, (4, 128, 128), BF16)),
        lambda q, k: np.einsum("bqd,bkd->bqk", q, k),
        **F32,
    ),
    Case(
        "dot_f32_cast_to_bf16",
        dot_via_bf16,
        pair(128, 256, 128),
        lambda x, y: bf16_round(x) @ bf16_round(y),
        **F32,
    ),
    Case(
        "linear_bias_relu_bf16",
        linear_relu,
        lambda rng: (normal(rng, (128, 256), BF16), normal(rng, (256, 128), BF16), normal(rng, (1, 128))),
        lambda x, w, b: np.maximum(x @ w + b, 0.0),
        **BF16_OUT,
    ),
]
