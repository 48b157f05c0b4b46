"""A tiled matmul with f32 operands at HIGHEST precision for Tune on the chip: the MXU takes them in
several bf16 passes, so the dot runs far below the bf16 peak. Blocks (bm, bk, bn) over an f32
accumulator.

make_inputs' defaults are the check size; `--size m=…,k=…,n=…` the target; `--bind bm=m,bk=k,bn=n`.
"""

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def make_inputs(seed, m=256, k=256, n=256):
    kx, ky = jax.random.split(jax.random.key(seed))
    return jax.random.normal(kx, (m, k), jnp.float32), jax.random.normal(ky, (k, n), jnp.float32)


def reference(x, y):
    return jnp.dot(x, y, precision=jax.lax.Precision.HIGHEST)


def _body(x_ref, y_ref, o_ref, acc_ref):
    @pl.when(pl.program_id(2) == 0)
    def _():
        acc_ref[...] = jnp.zeros_like(acc_ref)

    acc_ref[...] += jnp.dot(x_ref[...], y_ref[...], precision=jax.lax.Precision.HIGHEST)

    @pl.when(pl.program_id(2) == pl.num_programs(2) - 1)
    def _():
        o_ref[...] = acc_ref[...]


@functools.partial(jax.jit, static_argnames=("bm", "bk", "bn"))
def kernel(x, y, *, bm=128, bk=128, bn=128):
    (m, k), n = x.shape, y.shape[1]
    if m % bm or k % bk or n % bn:
        raise ValueError(f"blocks must divide the matrices: {x.shape=} {y.shape=} {bm=} {bk=} {bn=}")
    return pl.pallas_call(
        _body,
        grid=(m // bm, n // bn, k // bk),
        in_specs=[
            pl.BlockSpec((bm, bk), lambda i, j, kk: (i, kk)),
            pl.BlockSpec((bk, bn), lambda i, j, kk: (kk, j)),
        ],
        out_specs=pl.BlockSpec((bm, bn), lambda i, j, kk: (i, j)),
        out_shape=jax.ShapeDtypeStruct((m, n), jnp.float32),
        scratch_shapes=[pltpu.VMEM((bm, bn), jnp.float32)],
        compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel", "parallel", "arbitrary")),
    )(x, y)
