"""Block-sparse matmul: scalar-prefetched index tables drive data-dependent BlockSpecs.

`PrefetchScalarGridSpec` copies the tables of A's non-zero tiles (block row, block column) into SMEM
before the grid starts and passes them to every index map, so grid step `s` fetches exactly the
s-th non-zero tile of A and the matching tile row of B: zero tiles are never copied or multiplied.
The grid is (N/bn, nnz); a block row's tiles are consecutive steps that accumulate into one f32
VMEM tile, zeroed at the row's first tile and stored at its last.
Docs: https://docs.jax.dev/en/latest/pallas/tpu/sparse.html
"""

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def _precision(ref):
    """f32 operands at HIGHEST, as in the worked solution (the bug here is elsewhere)."""
    return jax.lax.Precision.HIGHEST if ref.dtype == jnp.float32 else None


def block_sparse_matmul_kernel(rows_ref, cols_ref, a_ref, b_ref, o_ref, acc_ref):
    del cols_ref  # only the index maps need it
    s, steps = pl.program_id(1), pl.num_programs(1)
    row = rows_ref[s]
    last = (s == steps - 1) | (rows_ref[jnp.minimum(s + 1, steps - 1)] != row)

    @pl.when(s == 0)
    def _():
        acc_ref[...] = jnp.zeros_like(acc_ref)

    acc_ref[...] += jnp.dot(
        a_ref[...], b_ref[...], preferred_element_type=jnp.float32, precision=_precision(a_ref)
    )

    @pl.when(last)
    def _():
        o_ref[...] = acc_ref[...].astype(o_ref.dtype)


@functools.partial(jax.jit, static_argnames=["block", "bn"])
def block_sparse_matmul(block_rows, block_cols, a, b, *, block=128, bn=128):
    """`a @ b` where `a`'s non-zero `block`×`block` tiles are listed, row-major, in the tables."""
    m, k = a.shape
    k2, n = b.shape
    if k != k2:
        raise ValueError(f"inner dimensions differ: {a.shape=} {b.shape=}")
    if m % block or k % block or n % bn:
        raise ValueError(f"shapes must divide into blocks: {a.shape=} {b.shape=} {block=} {bn=}")
    if block_rows.ndim != 1 or block_rows.shape != block_cols.shape:
        raise ValueError(f"tables must be 1-D and equal: {block_rows.shape=} {block_cols.shape=}")
    grid_spec = pltpu.PrefetchScalarGridSpec(
        num_scalar_prefetch=2,
        grid=(n // bn, block_rows.shape[0]),
        # Index maps get the grid indices, then the prefetched SMEM refs.
        in_specs=[
            pl.BlockSpec((block, block), lambda j, s, rows, cols: (rows[s], cols[s])),
            pl.BlockSpec((block, bn), lambda j, s, rows, cols: (cols[s], j)),
        ],
        out_specs=pl.BlockSpec((block, bn), lambda j, s, rows, cols: (rows[s], j)),
        scratch_shapes=[pltpu.VMEM((block, bn), jnp.float32)],
    )
    return pl.pallas_call(
        block_sparse_matmul_kernel,
        grid_spec=grid_spec,
        out_shape=jax.ShapeDtypeStruct((m, n), a.dtype),
        compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel", "arbitrary")),
    )(block_rows, block_cols, a, b)
