"""All-gather around a ring of devices with remote DMAs, under `jax.shard_map`.

Each device starts with one shard. In each of N-1 steps it forwards the shard it got last (its own
at first) to its right neighbour with `make_async_remote_copy`, into the same slot of the
neighbour's output, and receives the next one from its left. Every step has its own receive
semaphore, so a neighbour that runs a step ahead cannot satisfy the wrong wait.
Docs: https://docs.jax.dev/en/latest/pallas/tpu/distributed.html#example-all-gather-lax-all-gather
"""

import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.sharding import PartitionSpec as P

AXIS = "x"  # the device mesh the playground sets as the current mesh has this one axis


def all_gather_kernel(x_hbm, o_hbm, copy_sem, send_sem, recv_sems):
    me, n = jax.lax.axis_index(AXIS), jax.lax.axis_size(AXIS)
    right, left = jax.lax.rem(me + 1, n), jax.lax.rem(me + n - 1, n)
    own = pltpu.make_async_copy(x_hbm.at[0], o_hbm.at[0, me], copy_sem)
    own.start()

    # Both neighbours must be inside the kernel before we write into their output.
    barrier = pltpu.get_barrier_semaphore()
    pl.semaphore_signal(barrier, device_id={AXIS: left})
    pl.semaphore_signal(barrier, device_id={AXIS: right})
    pl.semaphore_wait(barrier, 2)
    own.wait()

    @pl.loop(0, n - 2)
    def _(step):
        slot = jax.lax.rem(me + n - step, n)  # the shard that arrived in the previous step
        hop = pltpu.make_async_remote_copy(
            o_hbm.at[0, slot], o_hbm.at[0, slot], send_sem, recv_sems.at[step], device_id={AXIS: right}
        )
        hop.start()
        hop.wait_send()
        hop.wait_recv()  # our left neighbour's shard for this step has landed


def _gather_shard(x):
    n = jax.lax.axis_size(AXIS)
    return pl.kernel(
        all_gather_kernel,
        out_type=jax.ShapeDtypeStruct((1, n, *x.shape[1:]), x.dtype),
        mesh=pltpu.TensorCoreMesh(axis_name="core", num_cores=1),
        scratch_types=[pltpu.SemaphoreType.DMA, pltpu.SemaphoreType.DMA, pltpu.SemaphoreType.DMA((n - 1,))],
        compiler_params=pltpu.CompilerParams(collective_id=0),
    )(x)


@jax.jit
def all_gather(x):
    """x[d] lives on device d; returns out with out[d] = device d's copy of the whole of x."""
    return jax.shard_map(_gather_shard, in_specs=P(AXIS), out_specs=P(AXIS), check_vma=False)(x)
