"""Two hand-written DMA streams side by side for Tune on the chip: reads of x (m, n) f32 in `blocks`
blocks into `depth` VMEM slots, and, independent of them, writes of o (w, n) in as many blocks from
`depth` slots filled once with x's first 8 rows tiled. Iteration i starts block i of each stream, once
the blocks that last used its slots (i - depth) have landed: `depth` reads and `depth` writes in flight,
one of each started per iteration (the read first, or with `write_first=1` the write), so the streams
move read and write bytes in the ratio m : w all the way. The reads are not used (a sink), and `like` (w, n) only gives o its shape (it is never read):
nothing but the two streams moves.

What it is for: what reads and writes cost while both are in flight, at ratios and block sizes no copy
has (a copy writes what it read, 1 : 1): `dma_read.py` timed reads alone, `dma_write.py` writes alone,
`dma_stream.py` the copy (`bench/tpu/README.md`).

make_inputs' defaults are the check size; `--size m=…,w=…,n=…` the target.
"""

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def make_inputs(seed, m=256, w=256, n=128):
    return jax.random.normal(jax.random.key(seed), (m, n), jnp.float32), jnp.zeros((w, n), jnp.float32)


def reference(x, like):
    return jnp.tile(x[:8], (like.shape[0] // 8, 1))


def xla_baseline(x, like):
    """What a user would call instead: XLA's tile of x's first rows beside a sum of x (a read of it
    all; the sum times 0 keeps it from being dropped)."""
    return jnp.tile(x[:8], (like.shape[0] // 8, 1)) + jnp.sum(x) * 0.0


def _streams(x_hbm, _like, o_hbm, head, sink, slots, first, reads, writes, *, blocks, depth, write_first):
    br, bw = x_hbm.shape[0] // blocks, o_hbm.shape[0] // blocks
    load = pltpu.make_async_copy(x_hbm.at[pl.ds(0, 8)], head, first.at[0])
    load.start()
    load.wait()
    for slot in range(depth):
        slots[slot] = jnp.tile(head[...], (bw // 8, 1))

    def read(i, slot):
        return pltpu.make_async_copy(x_hbm.at[pl.ds(i * br, br)], sink.at[slot], reads.at[slot])

    def write(i, slot):
        return pltpu.make_async_copy(slots.at[slot], o_hbm.at[pl.ds(i * bw, bw)], writes.at[slot])

    @pl.loop(0, blocks)
    def _(i):
        slot = i % depth

        @pl.when(i >= depth)
        def _():
            read(i - depth, slot).wait()  # the slots' last blocks have landed
            write(i - depth, slot).wait()

        if write_first:
            write(i, slot).start()
            read(i, slot).start()
        else:
            read(i, slot).start()
            write(i, slot).start()

    for i in range(max(blocks - depth, 0), blocks):  # the blocks still in flight
        read(i, i % depth).wait()
        write(i, i % depth).wait()


@functools.partial(jax.jit, static_argnames=("blocks", "depth", "write_first"))
def kernel(x, like, *, blocks=4, depth=2, write_first=0):
    (m, n), w = x.shape, like.shape[0]
    if m % (8 * blocks) or w % (8 * blocks) or depth < 1:
        raise ValueError(
            f"both streams must split into `blocks` whole groups of 8 rows, depth be at least 1: "
            f"{x.shape=} {like.shape=} {blocks=} {depth=}"
        )
    br, bw = m // blocks, w // blocks
    return pl.pallas_call(
        functools.partial(_streams, blocks=blocks, depth=depth, write_first=bool(write_first)),
        out_shape=jax.ShapeDtypeStruct(like.shape, x.dtype),
        in_specs=[pl.BlockSpec(memory_space=pl.ANY), pl.BlockSpec(memory_space=pl.ANY)],
        out_specs=pl.BlockSpec(memory_space=pl.ANY),
        scratch_shapes=[
            pltpu.VMEM((8, n), x.dtype),
            pltpu.VMEM((depth, br, n), x.dtype),
            pltpu.VMEM((depth, bw, n), x.dtype),
            pltpu.SemaphoreType.DMA((1,)),
            pltpu.SemaphoreType.DMA((depth,)),
            pltpu.SemaphoreType.DMA((depth,)),
        ],
    )(x, like)
