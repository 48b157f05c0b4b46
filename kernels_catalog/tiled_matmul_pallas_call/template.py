"""Exercise: tiled matmul with the legacy `pl.pallas_call` API: a grid, BlockSpecs and an automatic pipeline.

Fill in the holes marked `# TODO`. Each `todo(...)` stops the run with a message
naming what is missing; replace it with code. "Show solution" has the worked kernel.

`pallas_call` runs the kernel body once per point of a (M/bm, N/bn, K/bk) grid. The BlockSpecs tell
it which tile of each operand a grid point needs; it copies those tiles HBM→VMEM (double-buffered,
so step s+1's copy overlaps step s's compute) and writes the output tile back when its block index
changes. K is the last, "arbitrary" axis, so a tile's K steps run back to back into an f32 scratch.
Docs: https://docs.jax.dev/en/latest/pallas/tpu/matmul.html
"""

import functools
import inspect

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def _precision(ref):
    """f32 operands at HIGHEST: at the default precision the MXU rounds them to bf16 (one pass), and
    the f32 cases would miss their 1e-4 tolerance on a real TPU (measured on a v5e: off by 0.1-0.3)."""
    return jax.lax.Precision.HIGHEST if ref.dtype == jnp.float32 else None


def todo(what, *uses):
    """A hole in this exercise: replace the call with your code (`uses`: values it will need)."""
    line = inspect.currentframe().f_back.f_lineno
    raise NotImplementedError(f"TODO at line {line}: {what}")


def matmul_kernel(x_ref, y_ref, o_ref, acc_ref):
    k = pl.program_id(2)

    # TODO(2): acc_ref carries the sum from K step to K step: zero it when a new output tile starts.
    todo("zero the accumulator acc_ref on the first K step (k == 0)")

    acc_ref[...] += jnp.dot(
        x_ref[...], y_ref[...], preferred_element_type=jnp.float32, precision=_precision(x_ref)
    )

    @pl.when(k == pl.num_programs(2) - 1)
    def _():
        o_ref[...] = acc_ref[...].astype(o_ref.dtype)


@functools.partial(jax.jit, static_argnames=["bm", "bn", "bk"])
def matmul(x, y, *, bm=128, bn=128, bk=128):
    m, k = x.shape
    k2, n = y.shape
    if k != k2:
        raise ValueError(f"inner dimensions differ: {x.shape=} {y.shape=}")
    if m % bm or n % bn or k % bk:
        raise ValueError(f"shapes must divide into blocks: {x.shape=} {y.shape=} {bm=} {bn=} {bk=}")
    return pl.pallas_call(
        matmul_kernel,
        out_shape=jax.ShapeDtypeStruct((m, n), x.dtype),
        grid=(m // bm, n // bn, k // bk),
        in_specs=[
            # TODO(1): which block of A does output tile (i, j) read at K step k?
            pl.BlockSpec((bm, bk), lambda i, j, k: todo("A's index map: the block of x for step (i, j, k)")),
            pl.BlockSpec((bk, bn), lambda i, j, k: (k, j)),
        ],
        out_specs=pl.BlockSpec((bm, bn), lambda i, j, k: (i, j)),
        scratch_shapes=[pltpu.VMEM((bm, bn), jnp.float32)],
        # Output tiles are independent ("parallel": megacore chips may split them across
        # TensorCores); the K axis carries the accumulator from step to step ("arbitrary").
        compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel", "parallel", "arbitrary")),
    )(x, y)
