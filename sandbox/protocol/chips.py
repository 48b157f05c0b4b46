"""The chip table: the one place that names the TPU generations a run can target, and their numbers.

Values are per TensorCore, as `pltpu.get_tpu_info()` reports them under the chip's abstract device
in jax 0.12.0.1 (a test re-derives every number from JAX, so the table cannot drift silently).
Everything else derives its chip list from here: `CHIPS`, the wire schema, the CLI choices and the
page (through `GET /api/chips`). The server reads this table without importing JAX; the child uses
`device_kind` to build the abstract device that makes TPU-only helpers work off-TPU.
"""

from __future__ import annotations

import typing
from dataclasses import dataclass
from typing import Literal

Chip = Literal["v5e", "v5p", "v6e", "tpu7x"]
CHIPS: tuple[Chip, ...] = typing.get_args(Chip)


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


_TABLE = (
    ChipInfo(
        name="v5e",
        device_kind="TPU v5e",
        title="TPU v5e",
        tensor_cores=1,
        vmem_bytes=128 << 20,
        smem_bytes=1 << 20,
        hbm_bytes=17_200_000_000,
        hbm_bandwidth=820e9,
        bf16_flops=197e12,
        sparse_core=None,
    ),
    ChipInfo(
        name="v5p",
        device_kind="TPU v5p",
        title="TPU v5p",
        tensor_cores=2,
        vmem_bytes=64 << 20,
        smem_bytes=1 << 20,
        hbm_bytes=51_500_000_000,
        hbm_bandwidth=1230e9,
        bf16_flops=229.5e12,
        sparse_core=SparseCore(cores=4, subcores=16, lanes=8, vmem_bytes=512 << 10),
    ),
    ChipInfo(
        name="v6e",
        device_kind="TPU v6e",
        title="TPU v6e (Trillium)",
        tensor_cores=1,
        vmem_bytes=128 << 20,
        smem_bytes=1 << 20,
        hbm_bytes=34_400_000_000,
        hbm_bandwidth=1640e9,
        bf16_flops=920e12,
        sparse_core=SparseCore(cores=2, subcores=16, lanes=8, vmem_bytes=256 << 10),
    ),
    ChipInfo(
        name="tpu7x",
        device_kind="TPU7x",
        title="TPU7x (Ironwood)",
        tensor_cores=2,
        vmem_bytes=64 << 20,
        smem_bytes=1 << 20,
        hbm_bytes=103_000_000_000,
        hbm_bandwidth=3700e9,
        bf16_flops=1155e12,
        sparse_core=SparseCore(cores=2, subcores=16, lanes=16, vmem_bytes=512 << 10),
    ),
)
CHIP_TABLE: dict[Chip, ChipInfo] = {info.name: info for info in _TABLE}
assert tuple(CHIP_TABLE) == CHIPS, "the chip table and the Chip literal must name the same chips, in order"


def chip_info(name: Chip) -> ChipInfo:
    return CHIP_TABLE[name]


# What `jax.devices()[0].device_kind` says on real hardware, per chip (jax/_src/tpu_info.py accepts
# both spellings; hardware reports the first): how a native run knows which chip it really got.
NATIVE_DEVICE_KINDS: dict[Chip, tuple[str, ...]] = {
    "v5e": ("TPU v5 lite", "TPU v5e"),
    "v5p": ("TPU v5", "TPU v5p"),
    "v6e": ("TPU v6 lite", "TPU v6e"),
    "tpu7x": ("TPU7x",),
}


def chip_of_device_kind(kind: str) -> Chip | None:
    """The chip a real device of this kind is; None for a kind this playground does not offer."""
    return next((chip for chip, kinds in NATIVE_DEVICE_KINDS.items() if kind in kinds), None)
