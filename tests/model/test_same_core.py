"""A v5p's TensorCore is costed per unit as a v5e's (`chips.py`, v5p): libtpu's schedules for the two
chips, compiled off the chip by `bench/tpu/same_core.py`, are about as long for the same kernels."""

from __future__ import annotations

import json
from pathlib import Path

from sandbox.protocol.chips import chip_info

RECORD = Path(__file__).resolve().parents[2] / "bench" / "tpu" / "v5e" / "same-core.jsonl"


def test_libtpu_schedules_the_same_kernels_for_both_cores_in_about_as_many_bundles():
    rows = [json.loads(line) for line in RECORD.read_text().splitlines() if line.strip()]
    assert len(rows) >= 9
    ratios = {r["kernel"]: r["v5p"]["in_loops"] / r["v5e"]["in_loops"] for r in rows}
    assert all(r["v5e"]["program"] == r["v5p"]["program"] for r in rows)
    assert all(0.95 <= x <= 1.5 for x in ratios.values()), ratios
    assert sum(1.0 <= x <= 1.15 for x in ratios.values()) >= len(rows) - 1, (
        ratios
    )  # one element-wise body 1.44x


def test_the_v5p_takes_the_v5es_per_unit_issue_and_keeps_its_own_memory():
    v5e, v5p = chip_info("v5e"), chip_info("v5p")
    assert v5p.vector_units == v5e.vector_units
    assert (v5p.reduction_chain_cycles, v5p.reduction_serial_share) == (
        v5e.reduction_chain_cycles,
        v5e.reduction_serial_share,
    )
    assert v5p.dotless_step_cycles == v5e.dotless_step_cycles
    assert v5p.hbm_write_efficiency == 1.0 and v5p.dma_latency_cycles == 0.0
