"""Reads, writes and a DMA through reshaped and bitcast views of refs (`ref.reshape`, `ref.bitcast`)."""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def make_inputs(seed):
    return (jax.random.normal(jax.random.key(seed), (16, 128), jnp.float32),)


def reference(x):
    return x.reshape(2, 8, 128)[1] * 2, jax.lax.bitcast_convert_type(x, jnp.int32)


def views_kernel(x_hbm, x_ref, o_ref, bits_hbm, sem):
    o_ref.reshape(1, 8, 128)[0] = x_ref.reshape(2, 8, 128)[1] * 2
    pltpu.async_copy(x_hbm.bitcast(jnp.int32), bits_hbm, sem).wait()


def kernel(x):
    anywhere = pl.BlockSpec(memory_space=pl.ANY)
    return pl.pallas_call(
        views_kernel,
        out_shape=(jax.ShapeDtypeStruct((8, 128), x.dtype), jax.ShapeDtypeStruct(x.shape, jnp.int32)),
        in_specs=[anywhere, pl.BlockSpec(memory_space=pltpu.VMEM)],
        out_specs=(pl.BlockSpec(memory_space=pltpu.VMEM), anywhere),
        scratch_shapes=[pltpu.SemaphoreType.DMA],
    )(x, x)
