"""A kernel written for a megacore: `pltpu.TensorCoreMesh(axis_name="core")` takes the chip's TensorCore count,
and each core doubles its share of the rows (on a v5p, two cores and two halves)."""

import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def make_inputs(seed):
    return (jax.random.normal(jax.random.key(seed), (64, 128)),)


def reference(x):
    return x * 2


def double_kernel(x_hbm, o_hbm, buf):
    cores = jax.lax.axis_size("core")
    rows = x_hbm.shape[0] // cores
    mine = pl.ds(jax.lax.axis_index("core") * rows, rows)
    pltpu.sync_copy(x_hbm.at[mine], buf.at[pl.ds(0, rows)])
    buf[...] = buf[...] * 2
    pltpu.sync_copy(buf.at[pl.ds(0, rows)], o_hbm.at[mine])


def kernel(x):
    return pl.kernel(
        double_kernel,
        out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
        mesh=pltpu.TensorCoreMesh(axis_name="core"),
        scratch_types=[pltpu.VMEM(x.shape, x.dtype)],
    )(x)
