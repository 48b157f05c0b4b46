"""A matmul with a fused epilogue for Tune on the chip: bf16 (m, k) @ (k, n) accumulated in an f32 VMEM
tile over the k blocks, then at the last k block the bias added and GELU (the tanh form, on the EUP)
applied before the bf16 store: an MLP's first layer.

make_inputs' defaults are the check size; `--size m=…,k=…,n=…` the target; `--bind bm=m,bk=k,bn=n`.
"""

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def make_inputs(seed, m=256, k=256, n=256):
    kx, kw, kb = jax.random.split(jax.random.key(seed), 3)
    x = jax.random.normal(kx, (m, k), jnp.float32).astype(jnp.bfloat16)
    w = (jax.random.normal(kw, (k, n), jnp.float32) * k**-0.5).astype(jnp.bfloat16)
    b = (0.1 * jax.random.normal(kb, (1, n), jnp.float32)).astype(jnp.bfloat16)
    return x, w, b


def reference(x, w, b):
    hi = jax.lax.Precision.HIGHEST
    y = jnp.dot(x.astype(jnp.float32), w.astype(jnp.float32), precision=hi) + b.astype(jnp.float32)
    return jax.nn.gelu(y, approximate=True).astype(x.dtype)


def xla_baseline(x, w, b):
    """What a user would call instead: XLA's dot with the bias and GELU fused after it."""
    y = jnp.dot(x, w, preferred_element_type=jnp.float32) + b.astype(jnp.float32)
    return jax.nn.gelu(y, approximate=True).astype(x.dtype)


def _body(x_ref, w_ref, b_ref, o_ref, acc_ref):
    k = pl.program_id(2)

    @pl.when(k == 0)
    def _():
        acc_ref[...] = jnp.zeros_like(acc_ref)

    acc_ref[...] += jnp.dot(x_ref[...], w_ref[...], preferred_element_type=jnp.float32)

    @pl.when(k == pl.num_programs(2) - 1)
    def _():
        y = acc_ref[...] + b_ref[...].astype(jnp.float32)
        o_ref[...] = jax.nn.gelu(y, approximate=True).astype(o_ref.dtype)


@functools.partial(jax.jit, static_argnames=("bm", "bk", "bn"))
def kernel(x, w, b, *, bm=128, bk=128, bn=128):
    m, k = x.shape
    _, n = w.shape
    if m % bm or k % bk or n % bn:
        raise ValueError(f"blocks must divide the operands: {x.shape=} {w.shape=} {bm=} {bk=} {bn=}")
    return pl.pallas_call(
        _body,
        grid=(m // bm, n // bn, k // bk),
        in_specs=[
            pl.BlockSpec((bm, bk), lambda i, j, kk: (i, kk)),
            pl.BlockSpec((bk, bn), lambda i, j, kk: (kk, j)),
            pl.BlockSpec((1, bn), lambda i, j, kk: (0, j)),
        ],
        out_specs=pl.BlockSpec((bm, bn), lambda i, j, kk: (i, j)),
        out_shape=jax.ShapeDtypeStruct((m, n), x.dtype),
        scratch_shapes=[pltpu.VMEM((bm, bn), jnp.float32)],
        compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel", "parallel", "arbitrary")),
    )(x, w, b)
