"""pl.kernel hands the body HBM refs; reading one like a VMEM ref is not allowed."""

import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def make_inputs(seed):
    return (jax.random.normal(jax.random.key(seed), (8, 128)),)


def reference(x):
    return x * 2


def double_kernel(x_hbm, o_hbm):
    o_hbm[...] = x_hbm[...] * 2  # MARK


def kernel(x):
    return pl.kernel(
        double_kernel,
        out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
        mesh=pltpu.TensorCoreMesh(axis_name="core", num_cores=1),
    )(x)
