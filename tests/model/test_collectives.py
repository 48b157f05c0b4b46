"""The catalog's multi-device kernels get estimates: the ring all-gather (remote DMAs over ICI) and the
SparseCore all-gather beside a TensorCore matmul (SparseCore scalar subcore, SC/TC overlap). They
need 4 devices, so `collective_probe` runs in a child process with 4 CPU devices (~10 s)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sandbox.harness.model import families
from sandbox.protocol.chips import chip_info

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def estimates() -> dict[str, dict]:
    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=4", "JAX_PLATFORMS": "cpu"}
    out = subprocess.run(
        [sys.executable, "-m", "tests.model.collective_probe", "tpu7x"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=True,
    ).stdout  # fmt: skip
    return {r["entry"]: r for r in map(json.loads, out.splitlines())}


def test_ring_all_gather_is_costed_over_ici(estimates):
    """4 devices, 4096x4096 bf16 shards (32 MiB): its own shard copied locally, then 3 ring hops,
    each one ICI link at its one-way bandwidth plus a hop's latency."""
    e, chip = estimates["ring_all_gather"], chip_info("tpu7x")
    shard = 4096 * 4096 * 2
    hops = 3 * (chip.ici_hop_seconds + shard / chip.ici_bandwidth)
    assert e["family"] == families.COLLECTIVE and e["validation"].startswith("not validated for collective")
    assert hops < e["seconds"] < hops * 1.2  # plus the local copy and the DMAs' issue and sync costs


def test_sparsecore_gather_overlaps_the_tensorcore_matmul(estimates):
    e = estimates["sc_all_gather_overlap"]
    gather, matmul = e["kernels"]
    assert gather["name"] == "all_gather_kernel" and matmul["name"] == "matmul_kernel"
    assert any("overlaps the TensorCore kernels" in n for n in e["notes"])
    assert e["seconds"] == pytest.approx(max(gather["seconds"], matmul["seconds"]))
    assert e["validation"].startswith("not validated")
