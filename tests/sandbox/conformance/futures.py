"""Async copies split over two kernels, the semaphore returned as a future: whole arrays, two at once,
a static and a dynamic slice, and futures started and waited in `fori_loop`s, staggered across
iterations (`tpu_pallas_async_test.py`: `test_basic_async_copy`, `test_multiple_async_copy`,
`test_async_slice`, `test_async_dynamic_slice`, `test_multi_async_dynamic_slice`, `test_copy_in_a_loop`,
`test_staggered_copy_in_a_loop`, `test_full_copy_in_a_loop`, `test_staggered_full_copy_in_a_loop`)."""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

ANY, SEM = pl.BlockSpec(memory_space=pl.ANY), pl.BlockSpec(memory_space=pltpu.SEMAPHORE)


def make_inputs(seed):
    return (jax.random.normal(jax.random.key(seed), (4, 8, 128), jnp.float32), jnp.int32(2))


def reference(x, i):
    return x, x, x[2], x[2], x[3], x, x, x, x


def copy_start(x, index=None):
    def start_kernel(x_ref, aliased_x_ref, o_ref, sem):
        pltpu.make_async_copy(x_ref if index is None else x_ref.at[index], o_ref, sem).start()

    shape = x.shape if index is None else x.shape[1:]
    return pl.pallas_call(
        start_kernel,
        out_shape=(
            jax.ShapeDtypeStruct(x.shape, x.dtype),
            jax.ShapeDtypeStruct(shape, x.dtype),
            pltpu.SemaphoreType.DMA(()),
        ),
        in_specs=[ANY],
        out_specs=(ANY, ANY, SEM),
        input_output_aliases={0: 0},
    )(x)


def copy_done(x, out, sem, index=None):
    def done_kernel(x_ref, o_ref, sem, aliased_o_ref):
        pltpu.make_async_copy(x_ref if index is None else x_ref.at[index], o_ref, sem).wait()

    return pl.pallas_call(
        done_kernel,
        out_shape=jax.ShapeDtypeStruct(out.shape, x.dtype),
        in_specs=[ANY, ANY, SEM],
        out_specs=ANY,
        input_output_aliases={1: 0},
    )(x, out, sem)


def dynamic_start(x, index):
    def start_kernel(index_ref, x_ref, aliased_x_ref, o_ref, sem):
        pltpu.make_async_copy(x_ref.at[index_ref[0]], o_ref, sem).start()

    return pl.pallas_call(
        start_kernel,
        out_shape=(
            jax.ShapeDtypeStruct(x.shape, x.dtype),
            jax.ShapeDtypeStruct(x.shape[1:], x.dtype),
            pltpu.SemaphoreType.DMA(()),
        ),
        grid_spec=pltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=1, in_specs=[ANY], out_specs=(ANY, ANY, SEM)
        ),
        input_output_aliases={1: 0},
    )(jnp.asarray(index, jnp.int32)[None], x)


def in_loops(x):
    def loop(_, carry):
        return copy_done(*copy_start(carry))

    looped = jax.lax.fori_loop(0, x.shape[0], loop, x)

    def staggered(_, carry):
        return copy_start(copy_done(*carry))

    staged = copy_done(*jax.lax.fori_loop(0, x.shape[0] - 1, staggered, copy_start(x), unroll=2))

    def full(i, carry):
        x, ys = carry
        x, out, sem = dynamic_start(x, i)
        return x, ys.at[i].set(copy_done(x, out, sem, 0))

    _, gathered = jax.lax.fori_loop(0, x.shape[0], full, (x, jnp.zeros_like(x)))

    def staggered_full(i, carry):
        x, out, sem, ys = carry
        ys = ys.at[i].set(copy_done(x, out, sem, 0))
        return (*dynamic_start(x, i + 1), ys)

    carry = (*dynamic_start(x, 0), jnp.zeros_like(x))
    x1, out, sem, ys = jax.lax.fori_loop(0, x.shape[0] - 1, staggered_full, carry)
    return looped, staged, gathered, ys.at[x.shape[0] - 1].set(copy_done(x1, out, sem, 0))


def kernel(x, i):
    x, out, sem = copy_start(x)
    x2, out2, sem2 = copy_start(x)
    y, y2 = copy_done(x, out, sem), copy_done(x2, out2, sem2)
    x3, out3, sem3 = copy_start(x, 2)
    sliced = copy_done(x3, out3, sem3, 2)
    x4, out4, sem4 = dynamic_start(x, i)
    x5, out5, sem5 = dynamic_start(x4, i + 1)
    return y, y2, sliced, copy_done(x4, out4, sem4, 0), copy_done(x5, out5, sem5, 0), *in_loops(x)
