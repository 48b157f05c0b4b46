"""An async copy split over two kernels, its semaphore passed as an output (a future)."""

import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def make_inputs(seed):
    return (jax.random.normal(jax.random.key(seed), (8, 128)),)


def reference(x):
    return x


def start_kernel(x_hbm, o_hbm, sem):
    pltpu.make_async_copy(x_hbm, o_hbm, sem).start()


def wait_kernel(x_hbm, o_hbm, sem, aliased_o_hbm):
    pltpu.make_async_copy(x_hbm, o_hbm, sem).wait()


def kernel(x):
    any_space = pl.BlockSpec(memory_space=pl.ANY)
    out, sem = pl.pallas_call(
        start_kernel,
        out_shape=(jax.ShapeDtypeStruct(x.shape, x.dtype), pltpu.SemaphoreType.DMA(())),
        in_specs=[any_space],
        out_specs=(any_space, pl.BlockSpec(memory_space=pltpu.SEMAPHORE)),
    )(x)
    return pl.pallas_call(
        wait_kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        in_specs=[any_space, any_space, pl.BlockSpec(memory_space=pltpu.SEMAPHORE)],
        out_specs=any_space,
        input_output_aliases={1: 0},
    )(x, out, sem)
