"""SparseCore kernels get estimates: one program per subcore, each with its SparseCore's share of the
DMA bandwidth and its lanes' vector rate (assumed rates: only TPU7x has published SparseCore points,
and on its gather the model is 3x fast, which the band every TPU7x SparseCore estimate shows says)."""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import pytest
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import tpu_sc as plsc

from sandbox.harness.model import families
from sandbox.harness.model.estimate import estimate
from sandbox.protocol.chips import chip_info

ROWS, COLS = 1024, 16


def _add_one(x_hbm, o_hbm, buf, sem):
    """Each of the 2 x 16 vector subcores copies its 32 rows in, adds one, copies them back."""
    core, sub = jax.lax.axis_index("c"), jax.lax.axis_index("s")
    rows = x_hbm.shape[0] // 32
    start = (core * 16 + sub) * rows
    pltpu.async_copy(x_hbm.at[pl.ds(start, rows)], buf, sem).wait()
    buf[...] = buf[...] + 1.0
    pltpu.async_copy(buf, o_hbm.at[pl.ds(start, rows)], sem).wait()


def _kernel(x):
    mesh = plsc.VectorSubcoreMesh(core_axis_name="c", subcore_axis_name="s", num_cores=2)
    scratch = [pltpu.VMEM((x.shape[0] // 32, x.shape[1]), x.dtype), pltpu.SemaphoreType.DMA]
    return pl.kernel(
        _add_one, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype), mesh=mesh, scratch_types=scratch
    )(x)


def test_vector_subcore_programs_by_hand():
    chip = dataclasses.replace(chip_info("tpu7x"), scalar_seconds=0.0)
    e = estimate(_kernel, (jax.ShapeDtypeStruct((ROWS, COLS), jnp.float32),), chip, timeline=False)
    (k,) = e.kernels
    assert k.cores == 32 and e.family == families.SPARSE_CORE
    assert e.validation.startswith("±67.2 % on 2 published kernels of this family on TPU7x (Ironwood)")
    v5p = estimate(
        _kernel, (jax.ShapeDtypeStruct((ROWS, COLS), jnp.float32),), chip_info("v5p"), timeline=False
    )
    assert v5p.validation == f"not validated for {families.SPARSE_CORE} on TPU v5p"
    sc = chip.sparse_core
    share = chip.hbm_bandwidth * chip.tensor_cores / sc.cores / sc.subcores  # one subcore's DMA share
    block = 32 * COLS * 4
    vector = 3 * 32 * COLS / (sc.lanes * chip.clock_hz)  # load, add, store of 32 rows of 16 lanes
    expected = chip.launch_seconds + 2 * chip.dma_issue_seconds + 2 * block / share + vector
    assert e.seconds == pytest.approx(expected, rel=1e-9)


def test_a_chip_without_sparsecores_is_refused_by_jax_before_the_model():
    with pytest.raises(RuntimeError, match="does not have SparseCores"):
        estimate(
            _kernel, (jax.ShapeDtypeStruct((ROWS, COLS), jnp.float32),), chip_info("v5e"), timeline=False
        )
