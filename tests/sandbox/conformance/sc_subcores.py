"""A SparseCore's 16 vector subcores: each adds gathered rows into its own (gather-add); all add their rows
into shared VMEM between two `plsc.subcore_barrier()`s (scatter-add); shared VMEM scratch; each adds to its
neighbour's SMEM with `plsc.fetch_and_add` between barriers (`tpu_sparsecore_pallas_test.py`:
`test_gather_add`, `test_scatter_add`, `test_shared_scratch`, `test_fetch_and_add`).

Not rebuilt: `test_barrier`, whose subcores read a neighbour's HBM row after the barrier while that
neighbour overwrites it (a race the TPU's timing happens to win; the simulator's threads may not)."""

import math

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import tpu_sc as plsc

LANES = 16


def make_inputs(seed):
    shape = (16, 64, 32)
    x = jnp.arange(math.prod(shape), dtype=jnp.float32).reshape(shape)
    y = jnp.arange(16 * 32, dtype=jnp.float32).reshape(16, 32)
    return x, jnp.arange(LANES, dtype=jnp.int32) * (64 // LANES), y, 31 - jnp.arange(32, dtype=jnp.int32)


def reference(x, gather_ids, y, scatter_ids):
    neighbours = jnp.broadcast_to(((jnp.arange(16) + 1) % 16)[:, None], (16, LANES)).astype(jnp.int32)
    added = jnp.broadcast_to((jnp.arange(16) + 10)[:, None], (16, LANES)).astype(jnp.int32)
    return x[:, :LANES] + x[:, gather_ids], y[0] + y.sum(0)[::-1], x[0, :8, :LANES], neighbours, added


def gather_add_kernel(x_ref, indices_ref, o_ref, indices_vmem, scratch_ref):
    subcore_id = lax.axis_index("subcore")
    pltpu.sync_copy(indices_ref, indices_vmem)
    pltpu.sync_copy(x_ref.at[subcore_id, pl.ds(0, LANES)], scratch_ref)
    pltpu.sync_copy(x_ref.at[subcore_id].at[indices_vmem], scratch_ref, add=True)
    pltpu.sync_copy(scratch_ref, o_ref.at[subcore_id])


def gather_add(x, indices):
    mesh = plsc.VectorSubcoreMesh(core_axis_name="core", subcore_axis_name="subcore", num_cores=1)
    return pl.kernel(
        gather_add_kernel,
        out_type=jax.ShapeDtypeStruct((x.shape[0], LANES, 32), x.dtype),
        mesh=mesh,
        compiler_params=pltpu.CompilerParams(
            use_tc_tiling_on_sc=False
        ),  # as JAX's SparseCore tests compile it
        scratch_types=[pltpu.VMEM((LANES,), jnp.int32), pltpu.VMEM((LANES, 32), x.dtype)],
    )(x, indices)


def scatter_add_kernel(x_hbm, indices_hbm, o_ref, shared, scratch, indices):
    subcore_id = lax.axis_index("subcore")
    pltpu.sync_copy((indices_hbm, x_hbm.at[subcore_id]), (indices, scratch))

    @pl.when(subcore_id == 0)
    def _():
        pltpu.sync_copy(scratch, shared)

    plsc.subcore_barrier()
    pltpu.sync_copy(scratch, shared.at[indices], add=True)
    plsc.subcore_barrier()

    @pl.when(subcore_id == 0)
    def _():
        pltpu.sync_copy(shared, scratch)
        pltpu.sync_copy(scratch, o_ref)


def scatter_add(x, indices):
    mesh = plsc.VectorSubcoreMesh(core_axis_name="core", subcore_axis_name="subcore", num_cores=1)
    return pl.kernel(
        scatter_add_kernel,
        out_type=jax.ShapeDtypeStruct((32,), x.dtype),
        mesh=mesh,
        compiler_params=pltpu.CompilerParams(
            use_tc_tiling_on_sc=False
        ),  # as JAX's SparseCore tests compile it
        scratch_types=[
            pltpu.VMEM_SHARED((32,), x.dtype),
            pltpu.VMEM((32,), x.dtype),
            pltpu.VMEM((32,), jnp.int32),
        ],
    )(x, indices)


def shared_scratch_kernel(x_ref, o_ref, shared, shared2):
    subcore_id = lax.axis_index("subcore")

    @pl.when(subcore_id == 0)
    def _():
        pltpu.sync_copy(x_ref.at[subcore_id], shared2.at[subcore_id])
        pltpu.sync_copy(x_ref.at[subcore_id], shared)
        pltpu.sync_copy(shared, o_ref.at[subcore_id])


def fetch_and_add_kernel(old_hbm, new_hbm, old_ref, new_ref, smem_ref):
    me = lax.axis_index("subcore")
    smem_ref[0] = me
    plsc.subcore_barrier()
    old = plsc.fetch_and_add(smem_ref.at[0], 10, subcore_id=(me + 1) % 16)
    plsc.subcore_barrier()
    old_ref[...] = lax.broadcast(old, old_ref.shape)
    new_ref[...] = lax.broadcast(smem_ref[0], new_ref.shape)
    pltpu.sync_copy((old_ref, new_ref), (old_hbm.at[me], new_hbm.at[me]))


def kernel(x, gather_ids, y, scatter_ids):
    mesh = plsc.VectorSubcoreMesh(core_axis_name="core", subcore_axis_name="subcore", num_cores=1)
    small = x[:, :8, :LANES].astype(jnp.int32)
    shared = pl.kernel(
        shared_scratch_kernel,
        out_type=jax.ShapeDtypeStruct(small.shape, small.dtype),
        mesh=mesh,
        compiler_params=pltpu.CompilerParams(
            use_tc_tiling_on_sc=False
        ),  # as JAX's SparseCore tests compile it
        scratch_types=(
            pltpu.VMEM_SHARED(small.shape[1:], jnp.int32),
            pltpu.VMEM_SHARED(small.shape, jnp.int32),
        ),
    )(small)
    old, new = pl.kernel(
        fetch_and_add_kernel,
        out_type=(jax.ShapeDtypeStruct((16, LANES), jnp.int32),) * 2,
        mesh=mesh,
        compiler_params=pltpu.CompilerParams(
            use_tc_tiling_on_sc=False
        ),  # as JAX's SparseCore tests compile it
        scratch_types=[
            pltpu.VMEM((LANES,), jnp.int32),
            pltpu.VMEM((LANES,), jnp.int32),
            pltpu.SMEM([1], jnp.int32),
        ],
    )()
    return gather_add(x, gather_ids), scatter_add(y, scatter_ids), shared[0].astype(x.dtype), old, new
