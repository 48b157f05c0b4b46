"""SparseCore kernels get estimates: one program per subcore, each with its SparseCore's share of the
device's DMA bandwidth and its lanes' vector rate (assumed rates: only TPU7x has published SparseCore
points, and on its gather the model is 38 % fast, which the band every TPU7x SparseCore estimate shows
says)."""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import pytest
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import tpu_sc as plsc

from sandbox.harness.model import families
from sandbox.harness.model.cost import Rates
from sandbox.harness.model.estimate import estimate
from sandbox.protocol.chips import CHIPS, chip_info

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
    assert e.validation.startswith("±38.5 % on 2 published kernels of this family on TPU7x (Ironwood)")
    v5p = estimate(
        _kernel, (jax.ShapeDtypeStruct((ROWS, COLS), jnp.float32),), chip_info("v5p"), timeline=False
    )
    assert v5p.validation == f"not validated for {families.SPARSE_CORE} on TPU v5p"
    sc = chip.sparse_core
    share = 3.7e12 / sc.cores / sc.subcores  # one subcore's share of one TPU7x device's 3.7 TB/s
    block = 32 * COLS * 4
    vector = 3 * 32 * COLS / (sc.lanes * chip.clock_hz)  # load, add, store of 32 rows of 16 lanes
    expected = chip.launch_seconds + 2 * chip.dma_issue_seconds + 2 * block / share + vector
    assert e.seconds == pytest.approx(expected, rel=1e-9)


# One JAX device's HBM bandwidth, from jax/_src/tpu_info.py (jax 0.12.0.1): the chip's figure on a
# megacore v5p (one device spans both TensorCores) and single-TensorCore v6e and TPU8t; half of it on
# TPU7x and TPU8i, whose two TensorCores per chip are two devices.
DEVICE_HBM_BANDWIDTH = {
    "v5p": 2.46e12,
    "v6e": 1.64e12,
    "tpu7x": 7.4e12 / 2,
    "tpu8i": 8.6e12 / 2,
    "tpu8t": 6.4e12,
}


@pytest.mark.parametrize("chip", [c for c in CHIPS if chip_info(c).sparse_core is not None])
def test_sparsecores_of_a_device_share_exactly_its_hbm_bandwidth(chip):
    info = chip_info(chip)
    cores, subcores = info.sparse_core.cores, info.sparse_core.subcores
    assert Rates.of_sparse_core(info, 1).bandwidth * cores == pytest.approx(DEVICE_HBM_BANDWIDTH[chip])
    one_program = Rates.of_sparse_core(info, subcores).bandwidth
    assert one_program * cores * subcores == pytest.approx(DEVICE_HBM_BANDWIDTH[chip])
    assert set(DEVICE_HBM_BANDWIDTH) == {c for c in CHIPS if chip_info(c).sparse_core is not None}


def test_a_chip_without_sparsecores_is_refused_by_jax_before_the_model():
    with pytest.raises(RuntimeError, match="does not have SparseCores"):
        estimate(
            _kernel, (jax.ShapeDtypeStruct((ROWS, COLS), jnp.float32),), chip_info("v5e"), timeline=False
        )
