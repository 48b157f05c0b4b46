"""Accumulating indexed copies (`add=True`): a gather-add and a scatter-add with repeated ids, through
views of one ids ref (`ids.at[0]`, `ids.at[1]`)."""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import tpu_sc as plsc


def make_inputs(seed):
    table = jax.random.normal(jax.random.key(seed), (32, 16), jnp.float32)
    ids = jnp.array([[3, 9, 3, 30, 0, 1, 2, 5], [7, 7, 7, 7, 8, 8, 8, 8]], jnp.int32)
    return (table, ids)


def reference(table, ids):
    return table[:8] + table[ids[0]], table[:16].at[ids[1]].add(table[:8])


def add_kernel(table_hbm, ids_hbm, gathered_hbm, scattered_hbm, ids, rows, acc):
    pltpu.sync_copy(ids_hbm, ids)
    pltpu.sync_copy(table_hbm.at[pl.ds(0, 8)], rows)
    pltpu.sync_copy(table_hbm.at[ids.at[0]], rows, add=True)
    pltpu.sync_copy(rows, gathered_hbm)
    pltpu.sync_copy(table_hbm.at[pl.ds(0, 16)], acc)
    pltpu.sync_copy(table_hbm.at[pl.ds(0, 8)], rows)
    pltpu.sync_copy(rows, acc.at[ids.at[1]], add=True)
    pltpu.sync_copy(acc, scattered_hbm)


def kernel(table, ids):
    mesh = plsc.VectorSubcoreMesh(
        core_axis_name="core", subcore_axis_name="subcore", num_cores=1, num_subcores=1
    )
    return pl.kernel(
        add_kernel,
        out_type=(jax.ShapeDtypeStruct((8, 16), table.dtype), jax.ShapeDtypeStruct((16, 16), table.dtype)),
        mesh=mesh,
        compiler_params=pltpu.CompilerParams(
            use_tc_tiling_on_sc=False
        ),  # as JAX's SparseCore tests compile it
        scratch_types=[
            pltpu.VMEM((2, 8), jnp.int32),
            pltpu.VMEM((8, 16), table.dtype),
            pltpu.VMEM_SHARED((16, 16), table.dtype),
        ],
    )(table, ids)
