"""Kernels about where data lives and when steps run: manual DMAs and semaphores, scalar prefetch,
SMEM operands, dynamic grids, pl.when, a tiled matmul with a VMEM accumulator, two catalog kernels.

The DMA cases wait for every copy they start: on a TPU an unwaited DMA halts the core and every
later kernel in the process fails, so run.py runs this module's cases last.
"""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
from corpus_case import BF16, BF16_OUT, EXACT, F32, F32_ELEMENTWISE, Case, normal
from corpus_dots import BF16_PASS_AGREEMENT, out
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

ROOT = Path(__file__).resolve().parents[3]


@functools.cache
def catalog_kernel(slug: str):
    spec = importlib.util.spec_from_file_location(
        f"catalog_{slug}", ROOT / "kernels_catalog" / slug / "kernel.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def dma_scale_kernel(x_hbm, o_hbm, buf, sem):
    """HBM -> VMEM, scale in VMEM, VMEM -> HBM: two copies, each started and waited on one semaphore."""
    pltpu.make_async_copy(x_hbm, buf, sem).start()
    pltpu.make_async_copy(x_hbm, buf, sem).wait()
    buf[...] = buf[...] * 2.0 + 1.0
    copy_out = pltpu.make_async_copy(buf, o_hbm, sem)
    copy_out.start()
    copy_out.wait()


@jax.jit
def dma_scale(x):
    return pl.pallas_call(
        dma_scale_kernel,
        out_shape=out(x.shape, x.dtype),
        in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
        out_specs=pl.BlockSpec(memory_space=pl.ANY),
        scratch_shapes=[pltpu.VMEM(x.shape, x.dtype), pltpu.SemaphoreType.DMA],
    )(x)


def dma_reverse_kernel(x_hbm, o_hbm, sems, *, rows):
    """HBM -> HBM copies of row blocks into reversed positions, all in flight at once, then all waited."""
    n = x_hbm.shape[0] // rows
    copies = [
        pltpu.make_async_copy(
            x_hbm.at[pl.ds(i * rows, rows)], o_hbm.at[pl.ds((n - 1 - i) * rows, rows)], sems.at[i]
        )
        for i in range(n)
    ]
    for c in copies:
        c.start()
    for c in copies:
        c.wait()


@jax.jit
def dma_reverse_blocks(x):
    rows = 8
    return pl.pallas_call(
        functools.partial(dma_reverse_kernel, rows=rows),
        out_shape=out(x.shape, x.dtype),
        in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
        out_specs=pl.BlockSpec(memory_space=pl.ANY),
        scratch_shapes=[pltpu.SemaphoreType.DMA((x.shape[0] // rows,))],
    )(x)


def gather_kernel(idx_ref, x_ref, o_ref):
    o_ref[...] = x_ref[...] * (pl.program_id(0) + 1).astype(jnp.float32)


@jax.jit
def gather_rows(idx, x):
    """Scalar prefetch: the index table sits in SMEM and picks which row block each grid step loads."""
    n = x.shape[1]
    return pl.pallas_call(
        gather_kernel,
        out_shape=out((idx.shape[0] * 8, n), x.dtype),
        grid_spec=pltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=1,
            grid=(idx.shape[0],),
            in_specs=[pl.BlockSpec((8, n), lambda i, idx: (idx[i], 0))],
            out_specs=pl.BlockSpec((8, n), lambda i, idx: (i, 0)),
        ),
    )(idx, x)


def gather_ref(idx, x):
    blocks = [x[8 * j : 8 * j + 8] * (i + 1) for i, j in enumerate(idx)]
    return np.concatenate(blocks)


def smem_scale_kernel(coef_ref, x_ref, o_ref):
    o_ref[...] = x_ref[...] * coef_ref[0] + coef_ref[1]


@jax.jit
def smem_affine(coef, x):
    return pl.pallas_call(
        smem_scale_kernel,
        out_shape=out(x.shape, x.dtype),
        in_specs=[pl.BlockSpec(memory_space=pltpu.SMEM), pl.BlockSpec(memory_space=pltpu.VMEM)],
    )(coef, x)


def count_kernel(x_ref, o_ref):
    i = pl.program_id(0)

    @pl.when(i == 0)
    def _():
        o_ref[...] = jnp.zeros_like(o_ref)

    o_ref[...] += x_ref[...] * (i + 1).astype(jnp.float32)


@jax.jit
def dynamic_grid(steps, x):
    """The grid's size is a traced value: one compiled kernel serves every `steps`."""
    return pl.pallas_call(
        count_kernel,
        out_shape=out(x.shape, x.dtype),
        grid=(steps[0],),
        in_specs=[pl.BlockSpec(x.shape, lambda i: (0, 0))],
        out_specs=pl.BlockSpec(x.shape, lambda i: (0, 0)),
    )(x)


def masked_kernel(x_ref, o_ref):
    i = pl.program_id(0)

    @pl.when(i % 2 == 0)
    def _():
        o_ref[...] = x_ref[...] + 1.0

    @pl.when(i % 2 == 1)
    def _():
        o_ref[...] = -x_ref[...]


@jax.jit
def alternate_blocks(x):
    m, n = x.shape
    spec = pl.BlockSpec((8, n), lambda i: (i, 0))
    return pl.pallas_call(
        masked_kernel, out_shape=out(x.shape, x.dtype), grid=(m // 8,), in_specs=[spec], out_specs=spec
    )(x)


def alternate_ref(x):
    blocks = x.reshape(-1, 8, x.shape[1]).copy()
    blocks[0::2] += 1.0
    blocks[1::2] *= -1.0
    return blocks.reshape(x.shape)


def iota_kernel(o_ref):
    i, j = pl.program_id(0), pl.program_id(1)
    rows = lax.broadcasted_iota(jnp.int32, o_ref.shape, 0)
    cols = lax.broadcasted_iota(jnp.int32, o_ref.shape, 1)
    o_ref[...] = (i * 1000 + j * 100) + rows * 7 + cols


@jax.jit
def iota_grid(x):
    spec = pl.BlockSpec((8, 128), lambda i, j: (i, j))
    return pl.pallas_call(
        iota_kernel,
        out_shape=out(x.shape, jnp.int32),
        grid=(x.shape[0] // 8, x.shape[1] // 128),
        out_specs=spec,
    )()


def iota_ref(x):
    r, c = np.indices(x.shape)
    return (r // 8) * 1000 + (c // 128) * 100 + (r % 8) * 7 + (c % 128)


def scoped_kernel(x_ref, o_ref):
    def body(tmp):
        tmp[...] = x_ref[...] * x_ref[...]
        o_ref[...] = tmp[...] - x_ref[...]

    pl.run_scoped(body, pltpu.VMEM(x_ref.shape, jnp.float32))


def roll_kernel(x_ref, o_ref):
    o_ref[...] = pltpu.roll(x_ref[...], shift=3, axis=1) + pltpu.roll(x_ref[...], shift=5, axis=0)


def plain(kernel):
    return jax.jit(lambda x: pl.pallas_call(kernel, out_shape=out(x.shape, x.dtype))(x))


def acc_matmul_kernel(x_ref, y_ref, o_ref, acc_ref):
    @pl.when(pl.program_id(2) == 0)
    def _():
        acc_ref[...] = jnp.zeros_like(acc_ref)

    acc_ref[...] += jnp.dot(x_ref[...], y_ref[...], preferred_element_type=jnp.float32)

    @pl.when(pl.program_id(2) == pl.num_programs(2) - 1)
    def _():
        o_ref[...] = acc_ref[...].astype(o_ref.dtype)


@functools.partial(jax.jit, static_argnames=["block"])
def tiled_matmul(x, y, *, block=128):
    (m, k), n = x.shape, y.shape[1]
    return pl.pallas_call(
        acc_matmul_kernel,
        out_shape=out((m, n), x.dtype),
        grid=(m // block, n // block, k // block),
        in_specs=[
            pl.BlockSpec((block, block), lambda i, j, kk: (i, kk)),
            pl.BlockSpec((block, block), lambda i, j, kk: (kk, j)),
        ],
        out_specs=pl.BlockSpec((block, block), lambda i, j, kk: (i, j)),
        scratch_shapes=[pltpu.VMEM((block, block), jnp.float32)],
        compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel", "parallel", "arbitrary")),
    )(x, y)


def pair(m, k, n, dtype=np.float32):
    return lambda rng: (normal(rng, (m, k), dtype), normal(rng, (k, n), dtype))


def catalog_case(name, slug, entry, dims, dtype, tol, **note):
    def run(x, y):
        return getattr(catalog_kernel(slug), entry)(x, y)

    m, k, n = dims
    return Case(name, run, pair(m, k, n, dtype), lambda x, y: x @ y, **tol, **note)


# A one-bf16-pass dot: the simulator (the `mxu_precision` fix) mismatches its f32 check as the chip does.
ONE_PASS = {"chip_tolerance": BF16_PASS_AGREEMENT, "interpret_status": "mismatch"}
# The catalog's kernels ask for Precision.HIGHEST with f32 operands: f32 accuracy on both.
CASES = [
    Case("tiled_matmul_acc_bf16", tiled_matmul, pair(256, 512, 256, BF16), lambda x, y: x @ y, **BF16_OUT),
    Case("tiled_matmul_acc_f32", tiled_matmul, pair(256, 256, 256), lambda x, y: x @ y, **F32, **ONE_PASS),
    catalog_case(
        "catalog_tiled_matmul_pallas_call_f32",
        "tiled_matmul_pallas_call",
        "matmul",
        (256, 256, 256),
        np.float32,
        F32,
    ),
    catalog_case(
        "catalog_tiled_matmul_pallas_call_bf16",
        "tiled_matmul_pallas_call",
        "matmul",
        (256, 512, 384),
        BF16,
        BF16_OUT,
    ),
    Case(
        "scalar_prefetch_gather_rows",
        gather_rows,
        lambda rng: (rng.permutation(16)[:8].astype(np.int32), normal(rng, (128, 256))),
        gather_ref,
        **F32_ELEMENTWISE,
    ),
    Case(
        "smem_scalars_affine",
        smem_affine,
        lambda rng: (np.array([1.5, -0.25], np.float32), normal(rng, (64, 128))),
        lambda c, x: x * c[0] + c[1],
        **F32_ELEMENTWISE,
    ),
    Case(
        "dynamic_grid_steps",
        dynamic_grid,
        lambda rng: (np.array([5], np.int32), normal(rng, (16, 128))),
        lambda s, x: x * (s[0] * (s[0] + 1) // 2),
        **F32_ELEMENTWISE,
    ),
    Case(
        "pl_when_alternate_blocks",
        alternate_blocks,
        lambda rng: (normal(rng, (64, 128)),),
        alternate_ref,
        **F32_ELEMENTWISE,
    ),
    Case("program_id_iota_int32", iota_grid, lambda rng: (np.zeros((32, 256), np.int32),), iota_ref, **EXACT),
    Case(
        "run_scoped_vmem",
        plain(scoped_kernel),
        lambda rng: (normal(rng, (64, 128)),),
        lambda x: x * x - x,
        **F32_ELEMENTWISE,
    ),
    Case(
        "roll_lanes_sublanes",
        plain(roll_kernel),
        lambda rng: (normal(rng, (16, 256)),),
        lambda x: np.roll(x, 3, axis=1) + np.roll(x, 5, axis=0),
        **F32_ELEMENTWISE,
    ),
    Case(
        "dma_hbm_vmem_scale",
        dma_scale,
        lambda rng: (normal(rng, (64, 256)),),
        lambda x: x * 2 + 1,
        **F32_ELEMENTWISE,
    ),
    Case(
        "dma_reverse_blocks_sems",
        dma_reverse_blocks,
        lambda rng: (normal(rng, (64, 128)),),
        lambda x: x.reshape(-1, 8, 128)[::-1].reshape(x.shape),
        **EXACT,
    ),
    catalog_case(
        "catalog_hbm_manual_dma_bf16", "hbm_manual_dma", "streamed_matmul", (512, 384, 256), BF16, BF16_OUT
    ),
    catalog_case(
        "catalog_hbm_manual_dma_f32",
        "hbm_manual_dma",
        "streamed_matmul",
        (1024, 256, 256),
        np.float32,
        F32,
    ),
]
