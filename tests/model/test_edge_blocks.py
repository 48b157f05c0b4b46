"""`emit_pipeline`'s edge blocks: a block that overhangs its array copies only what is left of the
dimension, rounded up to its tiling (`_create_blocked_slice` and `_create_bounded_slice` in
jax/_src/pallas/mosaic/pipeline.py), so its DMA's size is computed per step; the model reads it per step.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

import sandbox.harness.model.control as control
from sandbox.harness.model.estimate import chip_context, estimate, kernels, trace
from sandbox.protocol.chips import chip_info

ROWS, COLS, BLOCK = 256, 600, (128, 256)  # columns 512..600 are the edge: 88, copied as 128


def _add_one(x, *, bounded):
    def spec():
        if not bounded:
            return pl.BlockSpec(BLOCK, lambda i, j: (i, j))

        def index(i, j):
            start = j * BLOCK[1]
            return i, pl.ds(start, jnp.minimum(BLOCK[1], COLS - start))

        return pl.BlockSpec((BLOCK[0], pl.BoundedSlice(BLOCK[1])), index)

    def body(x_ref, o_ref):
        o_ref[...] = x_ref[...] + 1.0

    def kernel(x_hbm, o_hbm):
        pltpu.emit_pipeline(
            body, grid=(ROWS // BLOCK[0], pl.cdiv(COLS, BLOCK[1])), in_specs=[spec()], out_specs=[spec()]
        )(x_hbm, o_hbm)

    return pl.kernel(kernel, out_type=x, mesh=pltpu.TensorCoreMesh(axis_name="core", num_cores=1))(x)


@pytest.mark.parametrize("bounded", [False, True], ids=["blocked", "bounded_slice"])
def test_an_edge_block_copies_what_is_left_rounded_to_its_tiling(bounded):
    x = jax.ShapeDtypeStruct((ROWS, COLS), jnp.float32)
    e = estimate(lambda a: _add_one(a, bounded=bounded), (x,), chip_info("tpu7x"), timeline=False)
    (k,) = e.kernels
    copied = ROWS * (2 * BLOCK[1] + 128) * 4  # two whole blocks and the edge's 88 columns as 128, per row
    assert k.hbm_bytes == 2 * copied  # in and out
    assert not any("whole buffer" in n for n in e.notes)


def test_iteration_classes_tell_the_edge_blocks_steps_apart(monkeypatch):
    """Walked once per iteration class, the loop gives the events walking every step gives."""
    chip = chip_info("tpu7x")
    x = jax.ShapeDtypeStruct((ROWS, COLS), jnp.float32)
    closed = trace(lambda a: _add_one(a, bounded=True), (x,), chip_context(chip))
    monkeypatch.setattr(control, "MIN_ITERATIONS", 2)
    (by_class,) = kernels(closed, [None], chip)
    monkeypatch.setattr(control, "MIN_ITERATIONS", 1 << 30)
    (by_step,) = kernels(closed, [None], chip)
    plain = [[e[:2] if e[0] == "step" else e for e in core] for core in by_class.events]
    assert plain == by_step.events
    assert sorted({e[1] for e in by_step.events[0] if e[0] == "dma"}) == [128 * 128 * 4, 128 * 256 * 4]


def test_multiple_of_costs_no_scalar_cycle():
    """`pl.multiple_of` (in every edge block's size) is a hint to the compiler, not an instruction."""

    def shifted(x, *, hint):
        def body(x_ref, o_ref):
            start = pl.program_id(0) * 8
            o_ref[...] = x_ref[...] + (pl.multiple_of(start, 8) if hint else start).astype(jnp.float32)

        spec = pl.BlockSpec((8, 128), lambda i: (i, 0))
        return pl.pallas_call(body, grid=(4,), in_specs=[spec], out_specs=spec, out_shape=x)(x)

    x = jax.ShapeDtypeStruct((32, 128), jnp.float32)
    with_hint, without = (
        estimate(lambda a, h=h: shifted(a, hint=h), (x,), chip_info("v5e"), timeline=False)
        for h in (True, False)
    )
    assert chip_info("v5e").scalar_seconds > 0
    assert with_hint.seconds == without.seconds
