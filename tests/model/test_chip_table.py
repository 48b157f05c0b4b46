"""The chip table against JAX's own `tpu_info` (jax 0.12.0.1): every number it reports, per chip."""

from __future__ import annotations

import pytest
from jax._src import tpu_info
from jax.experimental.pallas import tpu as pltpu

from sandbox.protocol import chips, chips_v5e
from sandbox.protocol.chips import CHIPS, chip_info


@pytest.mark.parametrize("chip", CHIPS)
def test_chip_table_matches_jax_tpu_info(chip):
    ours = chip_info(chip)
    version = tpu_info.chip_version_from_device_kind(ours.device_kind)
    jax_info = pltpu.get_tpu_info_for_chip(version, 1)
    assert ours.megacore == version.supports_megacore
    assert ours.vmem_bytes == jax_info.vmem_capacity_bytes
    assert ours.smem_bytes == jax_info.smem_capacity_bytes
    assert ours.hbm_bytes == jax_info.hbm_capacity_bytes
    assert ours.hbm_bandwidth == jax_info.mem_bw_bytes_per_second
    assert ours.bf16_flops == jax_info.bf16_ops_per_second
    assert ours.int8_ops == jax_info.int8_ops_per_second
    assert ours.fp8_ops == jax_info.fp8_ops_per_second
    sc = jax_info.sparse_core
    if ours.sparse_core is None:
        assert sc is None or not sc.num_cores
    else:
        assert (ours.sparse_core.cores, ours.sparse_core.subcores, ours.sparse_core.lanes) == (
            sc.num_cores,
            sc.num_subcores,
            sc.num_lanes,
        )
        assert ours.sparse_core.vmem_bytes == sc.vmem_capacity_bytes
    # a megacore device spans the chip's TensorCores; elsewhere a device is one TensorCore
    version = tpu_info.chip_version_from_device_kind(ours.device_kind)
    assert ours.device_tensor_cores == (ours.tensor_cores if version.supports_megacore else 1)
    # JAX accepts that count for the chip and reports the same SparseCores for one such device
    assert pltpu.get_tpu_info_for_chip(version, ours.device_tensor_cores).sparse_core == sc
    assert ours.mxu_size == jax_info.mxu_column_size and ours.sublanes == jax_info.num_sublanes
    if sc is not None and sc.num_cores:
        assert ours.sparse_core is not None
        assert ours.sparse_core.dma_granule_bytes == sc.dma_granule_size_bytes
    # the model's per-cycle rates, at the clock the table cites or assumes
    assert ours.clock_hz in (1.5e9, 1.75e9)
    vregs = ours.vector_ops / (jax_info.num_sublanes * jax_info.num_lanes * ours.clock_hz)
    own = {"v6e": chips.V6E_VECTOR_VREGS, "tpu7x": chips.TPU7X_VECTOR_VREGS}  # fitted to their own points
    assert vregs == pytest.approx(own.get(chip, chips.VECTOR_VREGS_PER_CYCLE))
    steps = {"v5e": chips_v5e.V5E_STEP_CYCLES}  # the v5e's own, with its measured DMA issue cost
    assert ours.step_seconds * ours.clock_hz == pytest.approx(steps.get(chip, chips.STEP_CYCLES))
    dmas = {"v5e": chips_v5e.V5E_DMA_ISSUE_CYCLES}
    assert ours.dma_issue_seconds * ours.clock_hz == pytest.approx(dmas.get(chip, chips.DMA_ISSUE_CYCLES))


def test_tpu8_chips_are_offered():
    assert {"tpu8i", "tpu8t"} <= set(CHIPS)
    assert chip_info("tpu8i").tensor_cores == 2 and chip_info("tpu8t").tensor_cores == 1
