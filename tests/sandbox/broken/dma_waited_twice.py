"""One DMA, two waits: the second wait expects bytes that no copy will ever deliver."""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def make_inputs(seed):
    return (jax.random.normal(jax.random.key(seed), (8, 128)),)


def reference(x):
    return x


def copy_kernel(x_hbm, o_hbm, buf, sem):
    copy = pltpu.make_async_copy(x_hbm, buf, sem)
    copy.start()
    copy.wait()
    copy.wait()  # MARK
    pltpu.sync_copy(buf, o_hbm)


def kernel(x):
    return pl.pallas_call(
        copy_kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
        out_specs=pl.BlockSpec(memory_space=pl.ANY),
        scratch_shapes=[pltpu.VMEM((8, 128), jnp.float32), pltpu.SemaphoreType.DMA],
    )(x)
