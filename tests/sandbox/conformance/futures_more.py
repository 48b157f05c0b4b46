"""Futures over refs of `run_state` (kernels that only start or only wait), and futures into
VMEM-resident outputs, with a kernel writing an aliased VMEM operand in place (`tpu_pallas_async_test.py`:
`test_basic_stateful_async_copy`, `test_multiple_stateful_async_copy`, `test_basic_stateful_async_slice`,
`test_basic_async_copy_into_vmem`, `test_multiple_async_copy_into_vmem`)."""

import jax
import jax.numpy as jnp
from jax._src.state import discharge as state_discharge
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

ANY, SEM, VMEM = (pl.BlockSpec(memory_space=s) for s in (pl.ANY, pltpu.SEMAPHORE, pltpu.VMEM))


def make_inputs(seed):
    return (jax.random.normal(jax.random.key(seed), (4, 8, 128), jnp.float32),)


def reference(x):
    return x, x[2], x[0], x[0], x[0]


def start(src, dst, i=None):
    def k(sem):
        pltpu.make_async_copy(src if i is None else src.at[i], dst, sem).start()

    return pl.pallas_call(
        k, out_shape=pltpu.SemaphoreType.DMA(()), out_specs=pl.BlockSpec(memory_space=pltpu.SEMAPHORE)
    )()


def done(src, dst, sem, i=None):
    def k(sem):
        pltpu.make_async_copy(src if i is None else src.at[i], dst, sem).wait()

    () = pl.pallas_call(k, out_shape=(), in_specs=[pl.BlockSpec(memory_space=pltpu.SEMAPHORE)])(sem)


def stateful(x):
    def body(refs):
        x_ref, y_ref, z_ref = refs
        f1 = start(x_ref, y_ref)
        f2 = start(x_ref, z_ref, 2)
        done(x_ref, y_ref, f1)
        done(x_ref, z_ref, f2, 2)

    _, y, z = state_discharge.run_state(body)((x, jnp.zeros_like(x), jnp.zeros_like(x[0])))
    return y, z


def copy_start(x):
    def start_kernel(x_ref, aliased_x_ref, o_ref, sem):
        pltpu.make_async_copy(x_ref, o_ref, sem).start()

    return pl.pallas_call(
        start_kernel,
        out_shape=(
            jax.ShapeDtypeStruct(x.shape, x.dtype),
            pltpu.VMEM(x.shape, x.dtype),
            pltpu.SemaphoreType.DMA(()),
        ),
        in_specs=[ANY],
        out_specs=(ANY, VMEM, SEM),
        input_output_aliases={0: 0},
    )(x)


def copy_done(x, out, sem):
    def done_kernel(x_ref, o_ref, sem, aliased_o_ref):
        pltpu.make_async_copy(x_ref, o_ref, sem).wait()

    return pl.pallas_call(
        done_kernel,
        out_shape=pltpu.VMEM(x.shape, x.dtype),
        in_specs=[ANY, VMEM, SEM],
        out_specs=VMEM,
        input_output_aliases={1: 0},
    )(x, out, sem)


def into_vmem(x):
    x1, out1, sem1 = copy_start(x)
    x2, out2, sem2 = copy_start(x1)
    y = copy_done(x1, out1, sem1)
    y2 = copy_done(x2, out2, sem2)

    def add_in_place(a_ref, aliased_o_ref):
        a_ref[...] = a_ref[...] * 2

    z = pl.pallas_call(
        add_in_place,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        in_specs=[VMEM],
        out_specs=VMEM,
        input_output_aliases={0: 0},
    )(x)
    return y, y2, z / 2


def kernel(x):
    return (*stateful(x), *into_vmem(x[0]))
