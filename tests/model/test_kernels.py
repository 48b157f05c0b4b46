"""The model on four catalog kernels, checked against step costs worked out by hand.

Each test traces the entry's own `kernel.py` abstractly (nothing runs) and compares the estimate
with arithmetic written out below from the chip table: block bytes / HBM bandwidth for copies,
2·M·N·K / peak for dots, padded vreg elements / vector rate for VMEM loads, stores and element-wise
ops (a 128x128 f32 tile is 16 vregs, a bf16 one 8: packed two deep), `step_seconds` per step and
`launch_seconds` per kernel. The by-hand tests set the per-DMA and per-scalar-op costs to zero;
`test_dma_issues_and_scalar_work_add_per_step` checks those two terms on their own.
"""

from __future__ import annotations

import dataclasses
import importlib.util
from pathlib import Path
from types import ModuleType

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

from sandbox.harness.model.estimate import estimate
from sandbox.protocol.chips import chip_info

CATALOG = Path(__file__).resolve().parents[2] / "kernels_catalog"
BF16 = jnp.bfloat16


def _without_issue_costs(name: str):
    """The chip without DMA-issue and scalar costs, its vector work added up at one rate (the v5e's
    per-unit rates, chain, dotless step, DMA latencies, loop step and shared DMA engine are checked by hand in
    test_cost.py)."""
    chip = chip_info(name)  # type: ignore[arg-type]
    return dataclasses.replace(
        chip,
        dma_issue_seconds=0.0,
        scalar_seconds=0.0,
        vector_units=(),
        dotless_step_cycles=0.0,
        dma_latency_cycles=0.0,
        dma_write_latency_cycles=None,
        loop_step_cycles=None,
        dma_read_share=0.0,
        dma_write_share=0.0,
        dma_read_tail_cycles=0.0,
    )


V5E, V5P = _without_issue_costs("v5e"), _without_issue_costs("v5p")
TILE = 128 * 128 * 2  # one 128x128 bf16 block, bytes
VEC = 128 * 128  # vector element ops of one pass over a 128x128 f32 block (16 vregs)


def kernel(slug: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"catalog_{slug}", CATALOG / slug / "kernel.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def abstract(*shape: int) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(shape, BF16)


def test_tiled_matmul_step_costs_by_hand():
    """256x512x256 bf16 in 128 blocks: a (2, 2, 4) grid, both input blocks copied every step."""
    e = estimate(kernel("tiled_matmul_pallas_call").matmul, (abstract(256, 512), abstract(512, 256)), V5E)
    bw, h = V5E.hbm_bandwidth, V5E.step_seconds
    # Reads at the HBM peak, writes at the v5e's measured share of it (`hbm_write_efficiency`).
    copy_in, copy_out = 2 * TILE / bw, TILE / (bw * V5E.hbm_write_efficiency)  # 79.9 ns, 61.5 ns
    # The body per step: load acc (1), x and y (bf16: 1/2 each); add; store acc = 4 passes; k == 0
    # adds zeros + store (2), k == 3 adds load acc, convert to bf16 and store it (packed: 1/2 each),
    # 2 in all. Its dot (21.3 ns) is hidden under that vector work.
    last_compute = (4 + 2) * VEC / V5E.vector_ops  # the last step has nothing to overlap
    # What each step waits for, the larger of its compute and the copies overlapping it: the next
    # step's blocks, plus the previous tile's write-back after each k == 3 step.
    waits = 12 * copy_in + 3 * (copy_in + copy_out) + last_compute
    expected = V5E.launch_seconds + copy_in + waits + 16 * h + copy_out
    assert e.seconds == pytest.approx(expected, rel=1e-9)
    assert e.seconds == pytest.approx(6.7681e-6, rel=1e-4)  # the same, on paper (394.9-cycle steps)
    assert e.hbm_bytes == 16 * 2 * TILE + 4 * TILE
    assert e.flops == 16 * 2 * 128**3
    assert e.bound == "step_overhead"
    assert sum(c.count for c in e.classes) == 16
    assert [s.grid_point for s in e.timeline[:5]] == [(0, 0, 0), (0, 0, 1), (0, 0, 2), (0, 0, 3), (0, 1, 0)]


def test_block_sparse_skips_zero_tiles_and_revisits():
    """A has 6 non-zero 128-tiles of 16; B's tile is not copied again when a column repeats."""
    rows = np.array([0, 0, 1, 2, 3, 3], np.int32)
    cols = np.array([0, 2, 2, 3, 0, 3], np.int32)  # steps 1 and 2 both need B's tile row 2
    fn = kernel("block_sparse_matmul").block_sparse_matmul
    e = estimate(fn, (rows, cols, abstract(512, 512), abstract(512, 256)), V5E)
    bw, h, vec = V5E.hbm_bandwidth, V5E.step_seconds, V5E.vector_ops
    wbw = bw * V5E.hbm_write_efficiency  # writes to HBM
    # Grid (N/bn = 2, nnz = 6). Per column block: A's tile every step, B's 5 times of 6, the output
    # tile when its row ends (after steps 1, 2, 3 and 5); the two tables go to SMEM once.
    assert e.hbm_bytes == 2 * (6 + 5) * TILE + 2 * 4 * TILE + rows.nbytes + cols.nbytes
    skipped = [c for c in e.classes if c.copy_in_bytes == TILE]
    assert sum(c.count for c in skipped) == 2
    # Distinct tiles a perfect kernel reads and writes: A 6, B (cols {0,2,3} x 2), out 4 x 2.
    assert e.min_hbm_bytes == (6 + 6 + 8) * TILE
    # Per step, the larger of compute and overlapping copies (the next step's tiles read, plus the
    # previous step's write-back): 2 steps read 2 tiles, 7 read 2 and write 1, 2 read A's tile
    # alone (B's is reused: 40 ns, above the 34 ns of their 4 + 2 vector passes), and the grid's
    # last step is compute-bound (4 + 2 passes, nothing left to copy).
    waits = 2 * (2 * TILE) / bw + 7 * (2 * TILE / bw + TILE / wbw) + 2 * TILE / bw + 6 * VEC / vec
    fill = (2 * TILE + rows.nbytes + cols.nbytes) / bw  # the first tiles, and the tables into SMEM
    expected = V5E.launch_seconds + fill + waits + 12 * h + TILE / wbw
    assert e.seconds == pytest.approx(expected, rel=1e-9)
    assert e.flops == 12 * 2 * 128**3
    assert not e.notes


def test_block_sparse_without_tables_assumes_every_step_copies():
    abstract_tables = (jax.ShapeDtypeStruct((6,), jnp.int32),) * 2
    fn = kernel("block_sparse_matmul").block_sparse_matmul
    e = estimate(fn, (*abstract_tables, abstract(512, 512), abstract(512, 256)), V5E)
    assert e.hbm_bytes == 12 * 2 * TILE + 12 * TILE
    assert any("scalar-prefetch values are unknown" in n for n in e.notes)


def test_inplace_chunked_matmul_pipeline_by_hand():
    """x (512, 384) <- x @ w in 4 chunks of 128 rows through emit_pipeline, w resident in VMEM."""
    module = kernel("inplace_chunked_matmul")

    def run(x, w):
        ref = jax.new_ref(x)
        module.inplace_matmul(ref, w)
        return ref[...]

    e = estimate(run, (abstract(512, 384), abstract(384, 384)), V5E)
    bw, h = V5E.hbm_bandwidth, V5E.step_seconds
    w_copy, chunk = 384 * 384 * 2 / bw, 128 * 384 * 2 / bw
    dot = 2 * 128 * 384 * 384 / V5E.bf16_flops  # 191.6 ns, above the 96 ns of loads and stores
    # w is copied once before the loop; each step prefetches the next chunk and writes its own back
    # while the next computes, all hidden under step cost + dot; the last write-back is exposed, at
    # the v5e's write share of the HBM peak.
    last = chunk / V5E.hbm_write_efficiency
    assert e.seconds == pytest.approx(V5E.launch_seconds + w_copy + 4 * (h + dot) + last, rel=1e-9)
    (k,) = e.kernels
    assert (k.kind, k.cores, k.steps) == ("pl.kernel", 1, 4)
    assert k.fill_seconds == pytest.approx(w_copy)
    assert e.hbm_bytes == 384 * 384 * 2 + 2 * 512 * 384 * 2  # w once, x read and written once
    assert e.min_hbm_bytes == 384 * 384 * 2 + 512 * 384 * 2  # x is input and output: one buffer


def test_megacore_matmul_runs_on_two_cores_by_hand():
    """Split-K on a v5p: each core 4 partial steps, a barrier, then 1 combine step; cores in parallel."""
    e = estimate(kernel("megacore_matmul").matmul, (abstract(256, 512), abstract(512, 128)), V5P)
    bw, h, vec = V5P.hbm_bandwidth, V5P.step_seconds, V5P.vector_ops
    (k,) = e.kernels
    assert (k.cores, k.steps) == (2, 10)
    per_core = {c: [s for s in e.timeline if s.core == c] for c in (0, 1)}
    assert [len(v) for v in per_core.values()] == [5, 5]
    assert [s.start for s in per_core[0]] == pytest.approx([s.start for s in per_core[1]])
    # Per core: 5 step costs; partial steps compute 5 + 1/16 or 4 vector passes (k == 0 zeroes the
    # f32 partial first: one splat vreg, stored to all 16; bf16 loads are half a pass), the combine
    # step 4 (two f32 loads, add, a convert to bf16 and its store, packed: 1/2 each); the last
    # partial write-back (f32 128x128) and the output write-back (bf16 128x128) are exposed; every
    # other copy hides under a step's fixed cost. A partial step of 4 passes is MXU-bound instead
    # (its dot, 18.3 ns, outlasts them since the one-rate rule's rate counts XLA's relayout copies in
    # its fit).
    mxu = 2 * 128**3 / (V5P.mxu_rate("bf16") * V5P.mxu_efficiency)
    compute = 2 * (5 + 1 / 16) * VEC / vec + 2 * max(4 * VEC / vec, mxu) + 4 * VEC / vec
    exposed = 128 * 128 * 4 / bw + TILE / bw
    assert e.seconds == pytest.approx(V5P.launch_seconds + 5 * h + compute + exposed, rel=1e-9)
    one_core = V5P.launch_seconds + 9 * h  # the same ten steps on one core could not be faster
    assert e.seconds < one_core
    assert e.flops == 8 * 2 * 128**3


def test_dma_issues_and_scalar_work_add_per_step():
    """The (2, 2, 4) grid of the first test starts 34 DMAs (both inputs' next blocks in 15 steps,
    4 write-backs) and runs its body's 4 scalar ops (k == 0, k == 3, each made a branch index) every step;
    each DMA costs `dma_issue_seconds` and each scalar op `scalar_seconds`, on top of the step."""
    args = (abstract(256, 512), abstract(512, 256))
    matmul = kernel("tiled_matmul_pallas_call").matmul
    base = estimate(matmul, args, V5E).seconds
    real = chip_info("v5e")
    with_dmas = dataclasses.replace(V5E, dma_issue_seconds=real.dma_issue_seconds)
    assert estimate(matmul, args, with_dmas).seconds - base == pytest.approx(34 * real.dma_issue_seconds)
    with_scalar = dataclasses.replace(V5E, scalar_seconds=real.scalar_seconds)
    ops = (estimate(matmul, args, with_scalar).seconds - base) / real.scalar_seconds
    assert ops == pytest.approx(16 * 4, abs=1e-6)  # per step: k == 0, k == 3 and their branch indices


def test_vmapped_kernel_body_sees_its_own_grid_axes():
    """`jax.vmap` of a pallas_call prepends a grid axis, but the body's `program_id(0)` is still
    its own first axis (Mosaic skips `vmapped_dims`): the dot runs at the last of each batch's 2
    steps, 3 dots in all, not at every step of batch element 1 (2 dots)."""
    from jax.experimental import pallas as pl

    def body(x_ref, y_ref, o_ref):
        @pl.when(pl.program_id(0) == pl.num_programs(0) - 1)
        def _():
            o_ref[...] = jnp.dot(x_ref[...], y_ref[...], preferred_element_type=jnp.float32)

    def one(x, y):
        return pl.pallas_call(
            body,
            grid=(2,),
            in_specs=[pl.BlockSpec((128, 128), lambda i: (0, 0))] * 2,
            out_specs=pl.BlockSpec((128, 128), lambda i: (0, 0)),
            out_shape=jax.ShapeDtypeStruct((128, 128), jnp.float32),
        )(x, y)

    x = jax.ShapeDtypeStruct((3, 128, 128), BF16)
    e = estimate(jax.vmap(one), (x, x), V5E, timeline=False)
    assert e.flops == 3 * 2 * 128**3


def _copy(x, semantics):
    def body(x_ref, o_ref):
        o_ref[...] = x_ref[...] * 2

    spec = pl.BlockSpec((8, 128), lambda i, j: (i, j))
    params = pltpu.CompilerParams(dimension_semantics=semantics)
    grid = (x.shape[0] // 8, x.shape[1] // 128)
    call = pl.pallas_call(
        body, grid=grid, in_specs=[spec], out_specs=spec, out_shape=x, compiler_params=params
    )
    return call(x)


@pytest.mark.parametrize(
    ("chip", "semantics", "cores", "steps_per_core"),
    [
        ("v5p", ("parallel", "arbitrary"), 2, [4, 4]),  # megacore: the parallel axis, in halves
        ("v5p", ("parallel", "parallel"), 2, [4, 4]),  # the leading parallel subgrid, flattened
        ("v5p", ("arbitrary", "parallel"), 1, [8]),  # a parallel axis after an arbitrary one: no
        ("v5e", ("parallel", "arbitrary"), 1, [8]),  # one TensorCore
        ("tpu7x", ("parallel", "arbitrary"), 1, [8]),  # two TensorCores, but not one device
    ],
)
def test_parallel_grid_is_split_only_on_a_megacore_chip(chip, semantics, cores, steps_per_core):
    x = jax.ShapeDtypeStruct((32, 256), jnp.float32)
    e = estimate(lambda x: _copy(x, semantics), (x,), _without_issue_costs(chip))
    (k,) = e.kernels
    assert k.cores == cores
    assert [sum(s.core == c for s in e.timeline) for c in range(cores)] == steps_per_core


def test_vmapped_axis_is_parallel_and_splits_on_v5p():
    x = jax.ShapeDtypeStruct((2, 8, 256), jnp.float32)
    e = estimate(jax.vmap(lambda x: _copy(x, ("arbitrary", "arbitrary"))), (x,), V5P)
    (k,) = e.kernels
    assert k.cores == 2
    assert [s.grid_point[0] for s in e.timeline if s.core == 1] == [1, 1]  # the second batch row


def test_a_program_s_family_follows_what_its_body_does():
    """A band measured on a fused cross-entropy program reaches programs that do the same kind of work:
    `tiled_matmul` (pl.kernel + emit_pipeline around a dot) and a copy kernel are families of their own."""
    from jax.experimental.pallas import tpu as pltpu

    from sandbox.harness.model import families
    from sandbox.protocol.chips import chip_info

    tpu7x = chip_info("tpu7x")
    x = abstract(512, 512)
    matmul = estimate(kernel("tiled_matmul").matmul, (x, x), tpu7x, timeline=False)
    assert matmul.family == families.PROGRAM_MATMUL
    assert matmul.validation.startswith(f"not validated for {families.PROGRAM_MATMUL} on TPU7x")

    def copy(x):
        def body(x_hbm, o_hbm):
            pltpu.sync_copy(x_hbm, o_hbm)

        mesh = pltpu.TensorCoreMesh(axis_name="core", num_cores=1)
        return pl.kernel(body, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype), mesh=mesh)(x)

    copied = estimate(copy, (x,), tpu7x, timeline=False)
    assert copied.family == families.PROGRAM and copied.validation.startswith("not validated")
