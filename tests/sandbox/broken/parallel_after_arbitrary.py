"""dimension_semantics puts a "parallel" axis after an "arbitrary" one."""

import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def make_inputs(seed):
    return (jax.random.normal(jax.random.key(seed), (256, 256)),)


def reference(x):
    return x * 2


def double_kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...] * 2


def kernel(x):
    return pl.pallas_call(
        double_kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        grid=(2, 2),
        in_specs=[pl.BlockSpec((128, 128), lambda i, j: (i, j))],
        out_specs=pl.BlockSpec((128, 128), lambda i, j: (i, j)),
        compiler_params=pltpu.CompilerParams(dimension_semantics=("arbitrary", "parallel")),  # MARK
    )(x)
