"""Scoped allocations, semaphores and DMAs between HBM and VMEM, and a DMA semaphore returned by one kernel
and waited on in the next (`tpu_pallas_test.py`: `test_empty_ref_allocation`,
`test_run_scoped_can_return_scalar_values`, `test_run_scoped_can_return_vector_values`,
`test_run_scoped_can_return_padded_vector_values`, `test_nested_scoped_allocation`, `test_can_wait_on_semaphore`,
`test_can_wait_on_semaphore_array`, `test_can_read_semaphore`, `test_output_dma_semaphore_ref`,
`test_hbm_hbm_grid_dma`, `test_hbm_vmem_dma`, `test_vmem_hbm_dma`, `test_vmem_hbm_vmem_dma`, `test_set_dma_priority`)."""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

ANY, SMEM, VMEM = (pl.BlockSpec(memory_space=s) for s in (pl.ANY, pltpu.SMEM, pltpu.VMEM))
F32 = jax.ShapeDtypeStruct((8, 128), jnp.float32)


def make_inputs(seed):
    return (jnp.arange(8 * 128.0).reshape(8, 128) + seed,)


def reference(x):
    return (
        jnp.full((8, 128), 4.0),
        jnp.array([3, 1], jnp.int32),
        jnp.full((16, 128), 2, jnp.int32),
        jnp.full((17, 128), 2, jnp.int32),
        jnp.full((8, 128), 4.0),
        jnp.arange(6, dtype=jnp.int32).reshape(2, 3),
        x,
        jnp.stack([x, x + 1]),
        x,
        x,
        x,
        x,
        x + 1,
    )


def empty_ref_allocation():
    def body(y_ref):
        x_ref = jax.empty_ref(jax.ShapeDtypeStruct(y_ref.shape, y_ref.dtype), memory_space=pltpu.VMEM)
        x_ref[...] = jnp.ones_like(x_ref)
        y_ref[...] = 4 * x_ref[...]

    return pl.pallas_call(body, out_shape=F32)()


def scoped_scalars():
    def body(y_ref):
        def scope(x_ref):
            x_ref[0] = 0
            x_ref[0] += 1
            return x_ref[0] + 2, x_ref[0]

        y_ref[0], y_ref[1] = pl.run_scoped(scope, pltpu.SMEM((1,), jnp.int32))

    return pl.pallas_call(body, out_specs=SMEM, out_shape=jax.ShapeDtypeStruct((2,), jnp.int32))()


def scoped_vectors(rows):
    def body(y_ref):
        def scope(x_ref):
            x_ref[...] = jnp.ones_like(x_ref)
            return x_ref[...] + 1

        y_ref[...] = pl.run_scoped(scope, pltpu.VMEM((rows, 128), jnp.int32))

    return pl.pallas_call(body, out_specs=VMEM, out_shape=jax.ShapeDtypeStruct((rows, 128), jnp.int32))()


def nested_scopes():
    def body(y_ref):
        def outer(x_ref):
            x_ref[...] = jnp.zeros_like(x_ref)

            def inner(z_ref):
                z_ref[...] = jnp.ones_like(z_ref)
                x_ref[...] = z_ref[...]

            pl.run_scoped(inner, pltpu.VMEM((8, 128), jnp.float32))
            y_ref[...] = 4 * x_ref[...]

        pl.run_scoped(outer, pltpu.VMEM((8, 128), jnp.float32))

    return pl.pallas_call(body, out_shape=F32)()


def semaphores():
    def body(y_ref):
        def one(sem):
            pl.semaphore_signal(sem, 2)
            pl.semaphore_wait(sem)
            pl.semaphore_wait(sem)

        pl.run_scoped(one, pltpu.SemaphoreType.REGULAR)

        def array(sems):
            for i in range(3):
                for _ in range(i + 1):
                    pl.semaphore_signal(sems.at[i])
                for _ in range(i + 1):
                    pl.semaphore_wait(sems.at[i])

        pl.run_scoped(array, pltpu.SemaphoreType.REGULAR((3,)))

        def read(sems):
            for r in range(2):
                for c in range(3):
                    pl.semaphore_signal(sems.at[r, c], r * 3 + c)
                    y_ref[r, c] = pl.semaphore_read(sems.at[r, c])
                    pl.semaphore_wait(sems.at[r, c], r * 3 + c)

        pl.run_scoped(read, pltpu.SemaphoreType.REGULAR((2, 3)))

    return pl.pallas_call(body, out_specs=SMEM, out_shape=jax.ShapeDtypeStruct((2, 3), jnp.int32))()


def semaphore_between_kernels(x):
    def start(x_hbm_ref, y_hbm_ref, sem_out):
        pltpu.make_async_copy(x_hbm_ref.at[pl.ds(8), :], y_hbm_ref.at[:, pl.ds(128)], sem_out).start()

    def finish(x_hbm_ref, y_hbm_ref, sem_in, y_hbm_out):
        pltpu.make_async_copy(x_hbm_ref.at[pl.ds(8), :], y_hbm_ref.at[:, pl.ds(128)], sem_in).wait()

    y, sem = pl.pallas_call(
        start,
        in_specs=[ANY],
        out_specs=[ANY, pl.BlockSpec(memory_space=pltpu.SEMAPHORE)],
        out_shape=[F32, pltpu.SemaphoreType.DMA],
    )(x)
    return pl.pallas_call(
        finish,
        in_specs=[ANY, ANY, pl.BlockSpec(memory_space=pltpu.SEMAPHORE)],
        out_specs=ANY,
        out_shape=F32,
        input_output_aliases={1: 0},
    )(x, y, sem)


def grid_dma(x2):
    def body(x_hbm_ref, y_hbm_ref):
        i = pl.program_id(0)
        pl.run_scoped(
            lambda sem: pltpu.async_copy(x_hbm_ref.at[pl.ds(i, 1)], y_hbm_ref.at[pl.ds(i, 1)], sem).wait(),
            pltpu.SemaphoreType.DMA,
        )

    return pl.pallas_call(
        body, in_specs=[ANY], out_specs=ANY, out_shape=jax.ShapeDtypeStruct(x2.shape, x2.dtype), grid=(2,)
    )(x2)


def hbm_vmem(x):
    def to_vmem(x_hbm_ref, y_ref):
        def scope(x_ref, sem):
            pltpu.async_copy(x_hbm_ref.at[pl.ds(8), :], x_ref.at[:, pl.ds(128)], sem).wait()
            y_ref[...] = x_ref[...]

        pl.run_scoped(scope, pltpu.VMEM((8, 128), jnp.float32), pltpu.SemaphoreType.DMA)

    def to_hbm(x_ref, y_hbm_ref):
        def scope(y_ref, sem):
            y_ref[...] = x_ref[...]
            pltpu.async_copy(y_ref, y_hbm_ref, sem).wait()

        pl.run_scoped(scope, pltpu.VMEM((8, 128), jnp.float32), pltpu.SemaphoreType.DMA)

    def round_trip(x_hbm_ref, y_hbm_ref):
        def scope(x_ref, y_ref, sem):
            pltpu.async_copy(x_hbm_ref, x_ref, sem).wait()
            y_ref[...] = x_ref[...]
            pltpu.async_copy(y_ref, y_hbm_ref, sem).wait()

        pl.run_scoped(
            scope,
            pltpu.VMEM((8, 128), jnp.float32),
            pltpu.VMEM((8, 128), jnp.float32),
            pltpu.SemaphoreType.DMA,
        )

    return (
        pl.pallas_call(to_vmem, in_specs=[ANY], out_shape=F32)(x),
        pl.pallas_call(to_hbm, out_specs=ANY, out_shape=F32)(x),
        pl.pallas_call(round_trip, in_specs=[ANY], out_specs=ANY, out_shape=F32)(x),
    )


def priorities(x1, x2):
    def body(x1, x2, y1, y2, scratch1, scratch2, sem1, sem2):
        copy1 = pltpu.async_copy(x1, scratch1, sem1, priority=1)
        copy2 = pltpu.async_copy(x2, scratch2, sem2, priority=0)
        copy1.wait()
        copy2.wait()
        copy1 = pltpu.async_copy(scratch1, y1, sem1, priority=0)
        copy2 = pltpu.async_copy(scratch2, y2, sem2, priority=1)
        copy1.wait()
        copy2.wait()

    return pl.pallas_call(
        body,
        in_specs=[ANY] * 2,
        out_specs=[ANY] * 2,
        out_shape=[F32] * 2,
        scratch_shapes=[pltpu.VMEM((8, 128), jnp.float32)] * 2 + [pltpu.SemaphoreType.DMA] * 2,
    )(x1, x2)


def kernel(x):
    return (
        empty_ref_allocation(),
        scoped_scalars(),
        scoped_vectors(16),
        scoped_vectors(17),
        nested_scopes(),
        semaphores(),
        semaphore_between_kernels(x),
        grid_dma(jnp.stack([x, x + 1])),
        *hbm_vmem(x),
        *priorities(x, x + 1),
    )
