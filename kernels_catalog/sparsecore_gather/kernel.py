"""Embedding lookup on the SparseCores: out[i] = table[ids[i]], one row DMA per id.

A SparseCore's scalar subcore does scalar work and issues DMAs, which is all a gather needs. The
kernel runs once per SparseCore (`plsc.ScalarSubcoreMesh`); each core takes its share of the ids,
copies a window of them into SMEM, starts one HBM-to-HBM row copy per id on a shared DMA semaphore,
then waits for all of them before the next window.
Docs: https://docs.jax.dev/en/latest/pallas/tpu/sparsecore.html#gather-and-scatter
"""

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import tpu_sc as plsc


def gather_kernel(table_hbm, ids_hbm, out_hbm, ids_smem, sem, *, per_core, window):
    first = jax.lax.axis_index("core") * per_core

    @pl.loop(0, per_core, step=window)
    def _(start):
        base = first + start
        pltpu.sync_copy(ids_hbm.at[pl.ds(base, window)], ids_smem)

        @pl.loop(0, window)
        def _(r):
            row = table_hbm.at[pl.ds(ids_smem[r], 1)]
            pltpu.make_async_copy(row, out_hbm.at[pl.ds(base + r, 1)], sem).start()

        # Every row copy signals `sem` with one row's bytes; a row-sized descriptor waits for one.
        one_row = pltpu.make_async_copy(table_hbm.at[pl.ds(0, 1)], out_hbm.at[pl.ds(base, 1)], sem)

        @pl.loop(0, window)
        def _(r):
            one_row.wait()


@functools.partial(jax.jit, static_argnames=["window"])
def embedding_lookup(table, ids, *, window=8):
    cores = plsc.get_sparse_core_info().num_cores
    (count,) = ids.shape
    if count % (cores * window):
        raise ValueError(f"ids must split into {cores} SparseCores x whole windows: {ids.shape=} {window=}")
    return pl.kernel(
        functools.partial(gather_kernel, per_core=count // cores, window=window),
        out_type=jax.ShapeDtypeStruct((count, table.shape[1]), table.dtype),
        mesh=plsc.ScalarSubcoreMesh(axis_name="core", num_cores=cores),
        scratch_types=[pltpu.SMEM((window,), jnp.int32), pltpu.SemaphoreType.DMA],
        # The SparseCores' own HBM tiling, not the TensorCore's: with the TensorCore's, the compiler
        # refuses row DMAs at unaligned offsets ("Offsets along tiled dimensions must be aligned to
        # tiles"), as libtpu 0.0.50.1 does for a v5p at 100,000 rows; JAX's SparseCore tests set it too.
        compiler_params=pltpu.CompilerParams(use_tc_tiling_on_sc=False),
    )(table, ids)
