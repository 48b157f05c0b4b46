"""Tiled matmul with the legacy `pl.pallas_call` API: a grid, BlockSpecs and an automatic pipeline.

`pallas_call` runs the kernel body once per point of a (M/bm, N/bn, K/bk) grid. The BlockSpecs tell
it which tile of each operand a grid point needs; it copies those tiles HBM→VMEM (double-buffered,
so step s+1's copy overlaps step s's compute) and writes the output tile back when its block index
changes. K is the last, "arbitrary" axis, so a tile's K steps run back to back into an f32 scratch.
Docs: https://docs.jax.dev/en/latest/pallas/tpu/matmul.html
"""

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def _precision(ref):
    """f32 operands at HIGHEST, as in the worked solution (the bug here is elsewhere)."""
    return jax.lax.Precision.HIGHEST if ref.dtype == jnp.float32 else None


def matmul_kernel(x_ref, y_ref, o_ref, acc_ref):
    k = pl.program_id(0)

    @pl.when(k == 0)
    def _():
        acc_ref[...] = jnp.zeros_like(acc_ref)

    acc_ref[...] += jnp.dot(
        x_ref[...], y_ref[...], preferred_element_type=jnp.float32, precision=_precision(x_ref)
    )

    @pl.when(k == pl.num_programs(0) - 1)
    def _():
        o_ref[...] = acc_ref[...].astype(o_ref.dtype)


@functools.partial(jax.jit, static_argnames=["bm", "bn", "bk"])
def matmul(x, y, *, bm=128, bn=128, bk=128):
    m, k = x.shape
    k2, n = y.shape
    if k != k2:
        raise ValueError(f"inner dimensions differ: {x.shape=} {y.shape=}")
    if m % bm or n % bn or k % bk:
        raise ValueError(f"shapes must divide into blocks: {x.shape=} {y.shape=} {bm=} {bn=} {bk=}")
    return pl.pallas_call(
        matmul_kernel,
        out_shape=jax.ShapeDtypeStruct((m, n), x.dtype),
        grid=(k // bk, m // bm, n // bn),
        in_specs=[
            pl.BlockSpec((bm, bk), lambda k, i, j: (i, k)),
            pl.BlockSpec((bk, bn), lambda k, i, j: (k, j)),
        ],
        out_specs=pl.BlockSpec((bm, bn), lambda k, i, j: (i, j)),
        scratch_shapes=[pltpu.VMEM((bm, bn), jnp.float32)],
        compiler_params=pltpu.CompilerParams(dimension_semantics=("arbitrary", "arbitrary", "arbitrary")),
    )(x, y)
