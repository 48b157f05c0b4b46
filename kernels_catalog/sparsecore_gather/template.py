"""Exercise: embedding lookup on the SparseCores: out[i] = table[ids[i]], one row DMA per id.

Fill in the holes marked `# TODO`. Each `todo(...)` stops the run with a message
naming what is missing; replace it with code. "Show solution" has the worked kernel.

A SparseCore's scalar subcore does scalar work and issues DMAs, which is all a gather needs. The
kernel runs once per SparseCore (`plsc.ScalarSubcoreMesh`); each core takes its share of the ids,
copies a window of them into SMEM, starts one HBM-to-HBM row copy per id on a shared DMA semaphore,
then waits for all of them before the next window.
Docs: https://docs.jax.dev/en/latest/pallas/tpu/sparsecore.html#gather-and-scatter
"""

import functools
import inspect

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import tpu_sc as plsc


def todo(what, *uses):
    """A hole in this exercise: replace the call with your code (`uses`: values it will need)."""
    line = inspect.currentframe().f_back.f_lineno
    raise NotImplementedError(f"TODO at line {line}: {what}")


def gather_kernel(table_hbm, ids_hbm, out_hbm, ids_smem, sem, *, per_core, window):
    # TODO(1): each SparseCore gathers its own run of per_core ids: where does this core's start?
    first = todo("the first id index of this SparseCore (from jax.lax.axis_index('core'))")

    @pl.loop(0, per_core, step=window)
    def _(start):
        base = first + start
        pltpu.sync_copy(ids_hbm.at[pl.ds(base, window)], ids_smem)

        @pl.loop(0, window)
        def _(r):
            # TODO(2): copy table row ids_smem[r] into output row base + r (start it; the waits follow).
            todo("start a DMA of table row ids_smem[r] into out_hbm row base + r, on sem")

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
        # The SparseCores' own HBM tiling (the TensorCore's makes the compiler refuse row DMAs at
        # unaligned offsets).
        compiler_params=pltpu.CompilerParams(use_tc_tiling_on_sc=False),
    )(table, ids)
