"""Exercise: race-free streaming on two TensorCores: each core owns its rows and reads a buffer after its wait.

Fill in the holes marked `# TODO`. Each `todo(...)` stops the run with a message
naming what is missing; replace it with code. "Show solution" has the worked kernel.

Two data races are easy to write once a kernel moves its own data: two cores writing the same
output rows, and computing on a VMEM buffer that a DMA is still filling. Here each core streams
only its own half of the rows, double-buffered: the copy of chunk c+1 lands in the other slot while
chunk c is scaled, and chunk c is read only after `.wait()` on its own copy.
Docs: https://docs.jax.dev/en/latest/pallas/tpu/distributed.html#run-ahead-and-race-conditions
"""

import functools
import inspect

import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def todo(what, *uses):
    """A hole in this exercise: replace the call with your code (`uses`: values it will need)."""
    line = inspect.currentframe().f_back.f_lineno
    raise NotImplementedError(f"TODO at line {line}: {what}")


NUM_CORES = 2  # the two TensorCores of a v5p megacore


def scale_kernel(x_hbm, o_hbm, in_buf, out_buf, in_sems, out_sem, *, chunk, chunks_per_core):
    core = jax.lax.axis_index("core")

    def rows(c):
        return pl.ds((core * chunks_per_core + c) * chunk, chunk)

    def fetch(c, slot):
        return pltpu.make_async_copy(x_hbm.at[rows(c)], in_buf.at[slot], in_sems.at[slot])

    fetch(0, 0).start()

    @pl.loop(0, chunks_per_core)
    def _(c):
        slot = c % 2

        # TODO(1): prefetch the next chunk, into the slot this step does not read.
        todo("start fetch(c + 1, ...) into the other slot when there is a next chunk")
        # TODO(2): in_buf[slot] may be read only after its fetch has completed.
        todo("wait for fetch(c, slot)")
        out_buf[...] = in_buf[slot] * 2
        write_back = pltpu.make_async_copy(out_buf, o_hbm.at[rows(c)], out_sem)
        write_back.start()
        write_back.wait()


@functools.partial(jax.jit, static_argnames=["chunk"])
def scale(x, *, chunk=16):
    m, n = x.shape
    if m % (NUM_CORES * chunk):
        raise ValueError(f"rows must split into {NUM_CORES} cores x whole chunks: {x.shape=} {chunk=}")
    return pl.kernel(
        functools.partial(scale_kernel, chunk=chunk, chunks_per_core=m // chunk // NUM_CORES),
        out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
        mesh=pltpu.TensorCoreMesh(axis_name="core", num_cores=NUM_CORES),
        scratch_types=[
            pltpu.VMEM((2, chunk, n), x.dtype),
            pltpu.VMEM((chunk, n), x.dtype),
            pltpu.SemaphoreType.DMA((2,)),
            pltpu.SemaphoreType.DMA,
        ],
    )(x)
