"""A hand-written DMA stream for Tune on the chip: x (m, n) f32 in HBM copied to o in HBM through
`depth + lag` VMEM slots of (br, n) rows, with nothing computed. Block i is read into slot i % (depth +
lag); once it has landed its write-back starts from the same slot, and block i + depth's read starts once
the write-back that last used its slot (block i - lag's) is done. So `depth` is how many reads are in
flight at once: at depth 1 and lag 0 every read and write waits for the one before it (a DMA's whole
latency, step after step); deeper, the latency of one copy overlaps the transfers of the others; with a
lag, each write has that many blocks' time to land while the next reads move, so reads and writes are in
flight together.

What it is for: whether the cost a small block pays beyond its bytes is a latency that copies in
flight hide, or a cost per copy that the DMA engine pays one after another (`bench/tpu/README.md`).

make_inputs' defaults are the check size; `--size m=…,n=…` the target; `--bind br=m`.
"""

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def make_inputs(seed, m=256, n=128):
    return (jax.random.normal(jax.random.key(seed), (m, n), jnp.float32),)


def reference(x):
    return x


def xla_baseline(x):
    """What a user would call instead: XLA's copy into a new buffer."""
    return jnp.copy(x)


def _stream(x_hbm, o_hbm, slots, reads, writes, *, br, depth, lag):
    blocks = x_hbm.shape[0] // br
    count = depth + lag

    def read(i, slot):
        return pltpu.make_async_copy(x_hbm.at[pl.ds(i * br, br)], slots.at[slot], reads.at[slot])

    def write(i, slot):
        return pltpu.make_async_copy(slots.at[slot], o_hbm.at[pl.ds(i * br, br)], writes.at[slot])

    for i in range(min(depth, blocks)):  # the first `depth` reads, one per slot
        read(i, i).start()

    @pl.loop(0, blocks)
    def _(i):
        slot = i % count
        read(i, slot).wait()
        write(i, slot).start()

        @pl.when(i + depth < blocks)
        def _():
            if not lag:
                write(i, slot).wait()  # the slot is free once its block has left
                read(i + depth, slot).start()
                return

            @pl.when(i >= lag)
            def _():
                write(i - lag, (i - lag) % count).wait()  # the block that last held the next read's slot

            read(i + depth, (i + depth) % count).start()

    for i in range(max(blocks - depth - lag, 0), blocks):  # the writes not waited in the loop
        write(i, i % count).wait()


@functools.partial(jax.jit, static_argnames=("br", "depth", "lag"))
def kernel(x, *, br=64, depth=2, lag=0):
    m, n = x.shape
    if m % br or depth < 1 or lag < 0:
        raise ValueError(
            f"blocks must divide the rows, depth be at least 1: {x.shape=} {br=} {depth=} {lag=}"
        )
    return pl.pallas_call(
        functools.partial(_stream, br=br, depth=depth, lag=lag),
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
        out_specs=pl.BlockSpec(memory_space=pl.ANY),
        scratch_shapes=[
            pltpu.VMEM((depth + lag, br, n), x.dtype),
            pltpu.SemaphoreType.DMA((depth + lag,)),
            pltpu.SemaphoreType.DMA((depth + lag,)),
        ],
    )(x)
