"""Split-K matmul on both TensorCores of a megacore: partial products, a core barrier, a combine.

When M x N is too small to give two cores whole output tiles (a decode-time matmul), split K
instead: `emit_pipeline` with `core_axis_name="core"` hands each core one index of the PARALLEL
leading axis, so core c multiplies its half of K into an f32 partial of its own. A core barrier
then makes both partials visible, and a second pipeline, split over output tiles, adds them.
Docs: https://docs.jax.dev/en/latest/pallas/tpu/core_map.html#pipelining-with-core-map
"""

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

NUM_CORES = 2  # the two TensorCores of a v5p megacore


def _precision(ref):
    """f32 operands at HIGHEST, as in the worked solution (the bug here is elsewhere)."""
    return jax.lax.Precision.HIGHEST if ref.dtype == jnp.float32 else None


def matmul_kernel(x_hbm, y_hbm, o_hbm, partial_hbm, barrier_sem, *, bm, bn, bk):
    (m, k), n = x_hbm.shape, y_hbm.shape[1]
    nk = k // bk // NUM_CORES  # K steps per core

    def partial_step(x_ref, y_ref, p_ref):
        @pl.when(pl.program_id(3) == 0)
        def _():
            p_ref[...] = jnp.zeros_like(p_ref)

        p_ref[...] += jnp.dot(
            x_ref[...], y_ref[...], preferred_element_type=jnp.float32, precision=_precision(x_ref)
        )

    pltpu.emit_pipeline(
        partial_step,
        grid=(NUM_CORES, m // bm, n // bn, nk),
        in_specs=[
            pl.BlockSpec((bm, bk), lambda c, i, j, kk: (i, kk)),
            pl.BlockSpec((bk, bn), lambda c, i, j, kk: (kk, j)),
        ],
        out_specs=pl.BlockSpec((pl.Squeezed(), bm, bn), lambda c, i, j, kk: (c, i, j)),
        core_axis_name="core",
        dimension_semantics=(pltpu.PARALLEL, pltpu.ARBITRARY, pltpu.ARBITRARY, pltpu.ARBITRARY),
    )(x_hbm, y_hbm, partial_hbm)

    # Both partials must be in HBM before either core reads the other's.
    pltpu.core_barrier(barrier_sem, core_axis_name="core")

    def combine_step(p_ref, o_ref):
        o_ref[...] = (p_ref[0] + p_ref[1]).astype(o_ref.dtype)

    pltpu.emit_pipeline(
        combine_step,
        grid=(m // bm, n // bn),
        in_specs=[pl.BlockSpec((NUM_CORES, bm, bn), lambda i, j: (0, i, j))],
        out_specs=pl.BlockSpec((bm, bn), lambda i, j: (i, j)),
        core_axis_name="core",
        dimension_semantics=(pltpu.PARALLEL, pltpu.PARALLEL),
    )(partial_hbm, o_hbm)


@functools.partial(jax.jit, static_argnames=["bm", "bn", "bk"])
def matmul(x, y, *, bm=128, bn=128, bk=128):
    m, k = x.shape
    k2, n = y.shape
    if k != k2:
        raise ValueError(f"inner dimensions differ: {x.shape=} {y.shape=}")
    if m % bm or n % bn or k % (bk * NUM_CORES):
        raise ValueError(f"shapes must divide into blocks (K into {NUM_CORES} x bk): {x.shape=} {y.shape=}")
    out, _ = pl.kernel(
        functools.partial(matmul_kernel, bm=bm, bn=bn, bk=bk),
        out_type=(
            jax.ShapeDtypeStruct((m, n), x.dtype),
            jax.ShapeDtypeStruct((NUM_CORES, m, n), jnp.float32),  # the per-core partials, in HBM
        ),
        mesh=pltpu.TensorCoreMesh(axis_name="core", num_cores=NUM_CORES),
        scratch_types=[pltpu.SemaphoreType.REGULAR],
    )(x, y)
    return out
