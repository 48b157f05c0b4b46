"""A core-level all-reduce: the two TensorCores of a megacore swap halves with a remote DMA.

`jax.shard_map` gives each device its shard and `psum` adds them; inside a chip, `pl.kernel` over
a `TensorCoreMesh` does the same for cores. Core c loads its slice x[c] into VMEM, a core barrier
makes sure the other core is ready to receive, and `make_async_remote_copy` with
`device_id={"core": other}` sends the slice into the other core's VMEM. Each core then adds what it
received to its own slice, so both hold x[0] + x[1].
Docs: https://docs.jax.dev/en/latest/pallas/tpu/core_map.html#a-simple-per-core-kernel
"""

import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

NUM_CORES = 2  # the two TensorCores of a v5p megacore


def all_reduce_kernel(x_hbm, o_hbm, mine, theirs, send_sem, recv_sem, barrier_sem):
    core = jax.lax.axis_index("core")
    pltpu.sync_copy(x_hbm.at[core], mine)

    # Signal the other core and wait for its signal: past this line both have their buffers.
    pltpu.core_barrier(barrier_sem, core_axis_name="core")

    exchange = pltpu.make_async_remote_copy(mine, theirs, send_sem, recv_sem, device_id={"core": core})
    exchange.start()
    exchange.wait_send()  # our slice has left `mine`
    exchange.wait_recv()  # the other core's slice has arrived in `theirs`

    mine[...] += theirs[...]
    pltpu.sync_copy(mine, o_hbm.at[core])


@jax.jit
def core_all_reduce(x):
    cores, m, n = x.shape
    if cores != NUM_CORES:
        raise ValueError(f"one slice per core: {x.shape=} but {NUM_CORES=}")
    return pl.kernel(
        all_reduce_kernel,
        out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
        mesh=pltpu.TensorCoreMesh(axis_name="core", num_cores=NUM_CORES),
        scratch_types=[
            pltpu.VMEM((m, n), x.dtype),
            pltpu.VMEM((m, n), x.dtype),
            pltpu.SemaphoreType.DMA,
            pltpu.SemaphoreType.DMA,
            pltpu.SemaphoreType.REGULAR,
        ],
    )(x)
