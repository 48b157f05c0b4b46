"""Remote async copies over 4 simulated devices, their send and receive semaphores returned as futures
(`tpu_pallas_async_test.py`: `test_basic_remote_copy`, `test_multi_remote_copy`,
`test_basic_collective_permute_loop`)."""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

DEVICES = 4
ANY, SEM = pl.BlockSpec(memory_space=pl.ANY), pl.BlockSpec(memory_space=pltpu.SEMAPHORE)
P = jax.sharding.PartitionSpec


def make_inputs(seed):
    return (jax.random.normal(jax.random.key(seed), (DEVICES, 8, 128), jnp.float32),)


def reference(x):
    return jnp.roll(x, 1, axis=0), jnp.roll(x, 1, axis=0), jnp.roll(x, -1, axis=0), jnp.roll(x, -1, axis=0)


def copy_start(x, step):
    def start_kernel(x_ref, aliased_x_ref, o_ref, send_sem, recv_sem):
        size = jax.lax.axis_size("x")
        me = jax.lax.axis_index("x")
        source, target = jax.lax.rem(me - step + size, size), jax.lax.rem(me + step + size, size)
        barrier = pltpu.get_barrier_semaphore()
        pl.semaphore_signal(barrier, device_id=source)
        pl.semaphore_wait(barrier, 1)
        pltpu.make_async_remote_copy(x_ref, o_ref, send_sem, recv_sem, device_id=target).start()

    return pl.pallas_call(
        start_kernel,
        out_shape=(
            jax.ShapeDtypeStruct.like(x),
            jax.ShapeDtypeStruct.like(x),
            pltpu.SemaphoreType.DMA(()),
            pltpu.SemaphoreType.DMA(()),
        ),
        in_specs=[ANY],
        out_specs=(ANY, ANY, SEM, SEM),
        input_output_aliases={0: 0},
        compiler_params=pltpu.CompilerParams(collective_id=0, has_side_effects=True),
    )(x)


def send_done(x, send_sem):
    def done_kernel(x_ref, sem, aliased_x_ref):
        pltpu.make_async_copy(x_ref, x_ref, sem).wait()

    return pl.pallas_call(
        done_kernel,
        out_shape=jax.ShapeDtypeStruct.like(x),
        in_specs=[ANY, SEM],
        out_specs=ANY,
        input_output_aliases={0: 0},
    )(x, send_sem)


def recv_done(x, out, recv_sem):
    def done_kernel(x_ref, o_ref, sem, aliased_o_ref):
        pltpu.make_async_copy(x_ref, o_ref, sem).wait()

    return pl.pallas_call(
        done_kernel,
        out_shape=jax.ShapeDtypeStruct.like(x),
        in_specs=[ANY, ANY, SEM],
        out_specs=ANY,
        input_output_aliases={1: 0},
    )(x, out, recv_sem)


def shift(x, step):
    x, out, send_sem, recv_sem = copy_start(x, step)
    return recv_done(send_done(x, send_sem), out, recv_sem)


def per_device(x):
    basic = shift(x, 1)
    x1, out1, send1, recv1 = copy_start(x, 1)
    x2, out2, send2, recv2 = copy_start(x1, -1)
    x2 = send_done(send_done(x2, send1), send2)
    right, left = recv_done(x2, out1, recv1), recv_done(x2, out2, recv2)
    around = jax.lax.fori_loop(0, DEVICES - 1, lambda _, y: shift(y, 1), x)
    return basic, right, left, around


def kernel(x):
    return jax.shard_map(per_device, in_specs=P("x"), out_specs=P("x"), check_vma=False)(x)
