"""The chip's VMEM grid script (`bench/tpu/vmem_grid.py`): its E1001 parser on a message recorded from
the compiler, and its config list (about 40 configs around v5e's 16 MiB, each lowerable for a v5e)."""

from __future__ import annotations

import sys
from pathlib import Path

import jax
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench" / "tpu"))

import vmem_grid

RECORDED = (
    "JaxRuntimeError: RESOURCE_EXHAUSTED: E1001: CompileTimeScopedVmemOom:\n"
    "Ran out of memory in memory space vmem while allocating on stack for %tpu_custom_call.1 = ... "
    "Scoped allocation with size 80.00M and limit 16.00M exceeded scoped vmem limit by 64.00M. "
    "It should not be possible to run out of scoped vmem - \n"
    "See https://openxla.org/xla/errors/error_1001 for more details."
)


def test_parse_e1001_reads_the_recorded_message():
    assert vmem_grid.parse_e1001(RECORDED) == {"size_m": 80.0, "limit_m": 16.0, "over_m": 64.0}


def test_parse_e1001_reads_fractions_and_units():
    text = "Scoped allocation with size 18.36M and limit 16.00M exceeded scoped vmem limit by 2.36M"
    assert vmem_grid.parse_e1001(text) == {"size_m": 18.36, "limit_m": 16.0, "over_m": 2.36}
    small = vmem_grid.parse_e1001(
        "Scoped allocation with size 512.00K and limit 1.00G exceeded scoped vmem limit by 3K"
    )
    assert small == {"size_m": 0.5, "limit_m": 1024.0, "over_m": 3 / 1024}


def test_parse_e1001_is_none_for_other_errors():
    assert vmem_grid.parse_e1001("ValueError: Only interpret mode is supported on CPU backend.") is None


def test_config_list_surrounds_the_limit():
    configs = vmem_grid.all_configs()
    assert 36 <= len(configs) <= 44
    keys = [(c.kernel, c.shape, c.dtype, tuple(sorted(c.params.items()))) for c in configs]
    assert len(set(keys)) == len(keys)
    assert {c.kernel for c in configs} == {
        "tiled_matmul_pallas_call",
        "hbm_manual_dma",
        "add_blocks",
        "row_sum_blocks",
    }
    counted = [c.counted_mib for c in configs]
    assert min(counted) < 16 < max(counted)


def test_config_list_holds_the_issues_measured_configs():
    """Counted at exactly 16 MiB: E1001 at 8192³ and for the DMA matmul, compiled at 16384x1024x4096."""
    by_key = {(c.kernel, c.shape, c.dtype, tuple(c.params.values())): c for c in vmem_grid.all_configs()}
    for key in [
        ("tiled_matmul_pallas_call", (8192, 8192, 8192), "bfloat16", (1024, 1024, 1024)),
        ("tiled_matmul_pallas_call", (16384, 1024, 4096), "bfloat16", (1024, 1024, 1024)),
        ("hbm_manual_dma", (8192, 2048, 2048), "bfloat16", (512,)),
    ]:
        assert by_key[key].counted_mib == 16.0


@pytest.mark.parametrize(
    "config", vmem_grid.all_configs(), ids=lambda c: f"{c.kernel}-{c.shape}-{c.dtype}-{c.params}"
)
def test_config_lowers_for_a_v5e(config):
    fn, specs = vmem_grid.build(config)
    lowered = jax.jit(fn).trace(*specs).lower(lowering_platforms=("tpu",))
    assert "tpu_custom_call" in lowered.as_text()
