"""scratch_shapes adds a VMEM ref, but the kernel body does not take it."""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def make_inputs(seed):
    return (jax.random.normal(jax.random.key(seed), (128, 128)),)


def reference(x):
    return x * 2


def double_kernel(x_ref, o_ref):  # MARK
    o_ref[...] = x_ref[...] * 2


def kernel(x):
    return pl.pallas_call(
        double_kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        scratch_shapes=[pltpu.VMEM((128, 128), jnp.float32)],
    )(x)
