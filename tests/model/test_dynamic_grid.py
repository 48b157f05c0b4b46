"""Grids sized at run time from the inputs (megablox `gmm` style): the model computes the sizes and
the scalar-prefetch tables from the known small inputs (the group sizes), then costs the kernel."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

from sandbox.harness.model.estimate import ModelLimitError, estimate
from sandbox.protocol.chips import chip_info

BM, K, N, GROUPS = 128, 256, 256, 4
V5E = chip_info("v5e")


def _group_kernel(tile_group_ref, x_ref, w_ref, o_ref):
    o_ref[...] = jnp.dot(x_ref[...], w_ref[...], preferred_element_type=jnp.float32).astype(o_ref.dtype)


@functools.partial(jax.jit, static_argnames=["max_tiles"])
def grouped_matmul(x, w, group_sizes, *, max_tiles):
    """Rows of `x` in groups; each 128-row tile times its group's weights. The grid is the number of
    tiles the group sizes need (traced), and the tile → group table is scalar-prefetched."""
    tiles = (group_sizes + BM - 1) // BM
    tile_group = jnp.repeat(jnp.arange(GROUPS, dtype=jnp.int32), tiles, total_repeat_length=max_tiles)
    spec = pltpu.PrefetchScalarGridSpec(
        num_scalar_prefetch=1,
        grid=(jnp.sum(tiles),),
        in_specs=[
            pl.BlockSpec((BM, K), lambda t, g: (t, 0)),
            pl.BlockSpec((None, K, N), lambda t, g: (g[t], 0, 0)),
        ],
        out_specs=pl.BlockSpec((BM, N), lambda t, g: (t, 0)),
    )
    out = jax.ShapeDtypeStruct((x.shape[0], N), x.dtype)
    return pl.pallas_call(_group_kernel, grid_spec=spec, out_shape=out)(tile_group, x, w)


def _args(sizes):
    rows = 128 * 8
    return (
        jax.ShapeDtypeStruct((rows, K), jnp.bfloat16),
        jax.ShapeDtypeStruct((GROUPS, K, N), jnp.bfloat16),
        np.asarray(sizes, np.int32),
    )


def test_a_grid_sized_by_group_sizes_gets_an_estimate():
    # 6 tiles: groups of 256, 128, 0 and 384 rows → tile groups 0 0 1 3 3 3
    e = estimate(functools.partial(grouped_matmul, max_tiles=8), _args([256, 128, 0, 384]), V5E)
    (k,) = e.kernels
    assert k.steps == 6
    x_tile, w_block, o_tile = BM * K * 2, K * N * 2, BM * N * 2
    # x and the output: a tile per step; the weights only when the group changes (3 times).
    # + the table, once; + XLA's ops computing it from the group sizes (16 bytes in; the 8-entry
    # table, 32 bytes, and the grid size, 4, out).
    assert e.hbm_bytes == 6 * x_tile + 3 * w_block + 6 * o_tile + 8 * 4 + e.outside_bytes
    written = 36 / (V5E.hbm_bandwidth * V5E.hbm_write_efficiency)  # writes at the v5e's measured share
    assert e.outside_bytes == 52 and e.outside_seconds == pytest.approx(16 / V5E.hbm_bandwidth + written)
    assert e.flops == 6 * 2 * BM * K * N
    assert any("sized by values computed from the inputs" in n for n in e.notes)


def test_the_grid_follows_the_group_sizes():
    few = estimate(functools.partial(grouped_matmul, max_tiles=8), _args([128, 0, 0, 0]), V5E)
    many = estimate(functools.partial(grouped_matmul, max_tiles=8), _args([256, 256, 256, 256]), V5E)
    assert [k.steps for k in few.kernels] == [1] and [k.steps for k in many.kernels] == [8]
    assert many.seconds > few.seconds


def test_unknown_group_sizes_are_refused_with_what_to_give():
    abstract = (*_args([1])[:2], jax.ShapeDtypeStruct((GROUPS,), jnp.int32))
    with pytest.raises(ModelLimitError, match="give the inputs it depends on"):
        estimate(functools.partial(grouped_matmul, max_tiles=8), abstract, V5E)


def test_megablox_gmm_as_jax_ships_it_gets_an_estimate():
    from jax.experimental.pallas.ops.tpu.megablox import gmm

    m, k, n, groups = 1024, 512, 512, 4
    sizes = np.asarray([256, 384, 0, 384], np.int32)
    args = (
        jax.ShapeDtypeStruct((m, k), jnp.bfloat16),
        jax.ShapeDtypeStruct((groups, k, n), jnp.bfloat16),
        sizes,
    )
    e = estimate(lambda x, w, s: gmm(x, w, s, tiling=(128, 128, 128)), args, V5E)
    (kernel,) = e.kernels
    # grid (n/128, tiles over the groups' rows, k/128): 4 x 8 x 4 (no group straddles a tile)
    assert kernel.steps == 4 * 8 * 4
    assert e.flops == 2 * m * k * n
