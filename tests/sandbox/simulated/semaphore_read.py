"""pl.semaphore_read sees the count a signal left (3), before the wait takes it back."""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def make_inputs(seed):
    return (jax.random.normal(jax.random.key(seed), (8, 128), jnp.float32),)


def reference(x):
    return x + 3.0


def count_kernel(x_hbm, o_ref, buf, dma_sem, sem):
    pl.semaphore_signal(sem, 3)
    seen = pl.semaphore_read(sem)
    pl.semaphore_wait(sem, 3)
    pltpu.async_copy(x_hbm, buf, dma_sem).wait()
    o_ref[...] = buf[...] + seen.astype(jnp.float32)


def kernel(x):
    return pl.pallas_call(
        count_kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
        scratch_shapes=[
            pltpu.VMEM(x.shape, x.dtype),
            pltpu.SemaphoreType.DMA,
            pltpu.SemaphoreType.REGULAR,
        ],
    )(x)
