"""The chip table: capacities and peak rates of the TPU generations a run can target.

Values are per TensorCore, as `pltpu.get_tpu_info()` reports them under the chip's abstract device
in jax 0.12.0.1 (a test re-derives every number from JAX, so the table cannot drift silently).
The server reads this table without importing JAX; the child uses `device_kind` to build the
abstract device that makes TPU-only helpers work off-TPU.
"""

from __future__ import annotations

from dataclasses import dataclass

from sandbox.protocol import Chip


@dataclass(frozen=True)
class SparseCore:
    cores: int
    subcores: int
    lanes: int
    vmem_bytes: int


@dataclass(frozen=True)
class ChipInfo:
    name: Chip
    device_kind: str
    title: str
    tensor_cores: int
    vmem_bytes: int
    smem_bytes: int
    hbm_bytes: int
    hbm_bandwidth: float  # bytes per second, per TensorCore
    bf16_flops: float  # ops per second, per TensorCore
    sparse_core: SparseCore | None

    def roofline_seconds(self, flops: float, bytes_accessed: float, cores: int = 1) -> float:
        """Lower bound on run time: the slower of compute at peak and HBM traffic at full bandwidth."""
        return max(flops / (self.bf16_flops * cores), bytes_accessed / (self.hbm_bandwidth * cores))


CHIP_TABLE: dict[Chip, ChipInfo] = {
    "v5e": ChipInfo("v5e", "TPU v5e", "TPU v5e", 1, 128 << 20, 1 << 20, 17_200_000_000, 820e9, 197e12, None),
    "v5p": ChipInfo(
        "v5p",
        "TPU v5p",
        "TPU v5p",
        2,
        64 << 20,
        1 << 20,
        51_500_000_000,
        1230e9,
        229.5e12,
        SparseCore(4, 16, 8, 512 << 10),
    ),
    "v6e": ChipInfo(
        "v6e",
        "TPU v6e",
        "TPU v6e (Trillium)",
        1,
        128 << 20,
        1 << 20,
        34_400_000_000,
        1640e9,
        920e12,
        SparseCore(2, 16, 8, 256 << 10),
    ),
    "tpu7x": ChipInfo(
        "tpu7x",
        "TPU7x",
        "TPU7x (Ironwood)",
        2,
        64 << 20,
        1 << 20,
        103_000_000_000,
        3700e9,
        1155e12,
        SparseCore(2, 16, 16, 512 << 10),
    ),
}


def chip_info(name: Chip) -> ChipInfo:
    return CHIP_TABLE[name]
