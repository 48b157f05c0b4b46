"""The chip table against JAX's own `tpu_info` (jax 0.12.0.1): every number it reports, per chip."""

from __future__ import annotations

import pytest
from jax._src import tpu_info
from jax.experimental.pallas import tpu as pltpu

from sandbox.protocol.chips import CHIPS, chip_info


@pytest.mark.parametrize("chip", CHIPS)
def test_chip_table_matches_jax_tpu_info(chip):
    ours = chip_info(chip)
    jax_info = pltpu.get_tpu_info_for_chip(tpu_info.chip_version_from_device_kind(ours.device_kind), 1)
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
    # the VPU: 2 ALUs per (sublane, lane), at the clock the table assumes or cites
    assert ours.vector_ops / (2 * jax_info.num_sublanes * jax_info.num_lanes) in (1.5e9, 1.75e9)


def test_tpu8_chips_are_offered():
    assert {"tpu8i", "tpu8t"} <= set(CHIPS)
    assert chip_info("tpu8i").tensor_cores == 2 and chip_info("tpu8t").tensor_cores == 1
