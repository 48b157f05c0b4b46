"""The same gather with ids up to 39 for a 32-row table: a real out-of-bounds read."""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import tpu_sc as plsc


def make_inputs(seed):
    table = jax.random.normal(jax.random.key(seed), (32, 128), jnp.float32)
    ids = jax.random.randint(jax.random.key(seed + 1), (8,), 24, 40, jnp.int32)
    return (table, ids)


def reference(table, ids):
    return table[ids]


def gather_kernel(table_hbm, ids_hbm, o_hbm, ids_vmem, rows_vmem):
    pltpu.sync_copy(ids_hbm, ids_vmem)
    pltpu.sync_copy(table_hbm.at[ids_vmem], rows_vmem)  # MARK
    pltpu.sync_copy(rows_vmem, o_hbm)


def kernel(table, ids):
    mesh = plsc.VectorSubcoreMesh(
        core_axis_name="core", subcore_axis_name="subcore", num_cores=1, num_subcores=1
    )
    return pl.kernel(
        gather_kernel,
        out_type=jax.ShapeDtypeStruct((8, 128), table.dtype),
        mesh=mesh,
        scratch_types=[pltpu.VMEM((8,), jnp.int32), pltpu.VMEM((8, 128), table.dtype)],
    )(table, ids)
