"""An operand resident in VMEM, aliased to the output, updated in place through the input's ref."""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def make_inputs(seed):
    return (jax.random.normal(jax.random.key(seed), (8, 128), jnp.float32),)


def reference(x):
    return x * 2 + 1


def in_place_kernel(x_ref, aliased_o_ref):
    x_ref[...] = x_ref[...] * 2 + 1  # the output is the same VMEM buffer on a TPU


def kernel(x):
    vmem = pl.BlockSpec(memory_space=pltpu.VMEM)
    return pl.pallas_call(
        in_place_kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        in_specs=[vmem],
        out_specs=vmem,
        input_output_aliases={0: 0},
    )(x)
