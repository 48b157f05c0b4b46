"""The chip table: the one place that names the TPU generations a run can target, and their numbers.

Values are per TensorCore, as `pltpu.get_tpu_info()` reports them under the chip's abstract device
in jax 0.12.0.1 (a test re-derives every number from JAX, so the table cannot drift silently).
The TPU time model (`sandbox.harness.model`) adds rates JAX does not report; each cites its source
below, and docs/tpu-time-model.md says which published measurements check them.
Everything else derives its chip list from here: `CHIPS`, the wire schema, the CLI choices and the
page (through `GET /api/chips`). The server reads this table without importing JAX; the child uses
`device_kind` to build the abstract device that makes TPU-only helpers work off-TPU.
"""

from __future__ import annotations

import typing
from dataclasses import dataclass
from typing import Literal

Chip = Literal["v5e", "v5p", "v6e", "tpu7x", "tpu8i", "tpu8t"]
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
    # -- the time model's rates (per TensorCore), sources at the table --------------------------
    int8_ops: float = 0.0  # MXU int8 ops per second (get_tpu_info); 0: not supported
    fp8_ops: float = 0.0  # MXU fp8 ops per second (get_tpu_info); 0: not supported
    vector_ops: float = 0.0  # VPU element operations per second (8 x 128 lanes x 2 ALUs x clock)
    step_seconds: float = 0.0  # fixed cost of one pipeline (grid) step
    launch_seconds: float = 0.0  # fixed cost of one kernel launch on the device

    def roofline_seconds(self, flops: float, bytes_accessed: float, cores: int = 1) -> float:
        """Lower bound on run time: the slower of compute at peak and HBM traffic at full bandwidth."""
        return max(flops / (self.bf16_flops * cores), bytes_accessed / (self.hbm_bandwidth * cores))

    def mxu_rate(self, kind: str) -> float:
        """MXU ops per second for a dot of `kind`: "bf16", "f32" (6 bf16 passes), "f32_3pass", "int8", "fp8".

        f32 operands: Mosaic's default contract precision for f32 is fp32, which the MXU runs as 6
        bf16 passes (`jax.lax.Precision.HIGHEST`'s doc: "performs float32 computations in 6 bfloat16
        [passes]"); `Precision.HIGH` is 3 passes. A chip without an int8/fp8 rate runs those as bf16.
        """
        if kind == "f32":
            return self.bf16_flops / 6
        if kind == "f32_3pass":
            return self.bf16_flops / 3
        if kind == "int8" and self.int8_ops:
            return self.int8_ops
        if kind == "fp8" and self.fp8_ops:
            return self.fp8_ops
        return self.bf16_flops


# Sources of the time model's rates:
# - int8_ops / fp8_ops: `pltpu.get_tpu_info()` in jax 0.12.0.1, like the fields above.
# - vector_ops: the VPU is an (8, 128) array with 2 ALUs per (sublane, lane) (scaling-book, "How to
#   Scale Your Model", tpus.md Appendix C, jax-ml/scaling-book@0819a7d), i.e. 2048 element ops per
#   cycle, times the clock: 1.5 GHz on v5e (same source, "5e13 bf16 FLOPs/s per MXU at 1.5GHz"),
#   1.75 GHz on v5p (= its bf16 peak / (4 MXUs x 128 x 128 MACs x 2)). v6e and TPU7x clocks are not
#   published: 1.75 GHz is assumed. Vector work rarely bounds a matmul step; see docs/tpu-time-model.md.
# - step_seconds: fitted to ONE published point, the JAX Pallas TPU matmul guide's 4096^3 bf16
#   pallas_call matmul with 128x128x128 blocks on a TPU v5e (11.77 ms for 32768 grid steps, less the
#   0.1085 ms host dispatch of its timing loop): what is left per step after the step's copies and
#   MXU work. Its other 19 points validate it (tests/data/published_tpu_timings.toml). Other chips:
#   not measured, the v5e value is assumed.
# - launch_seconds: the device-side cost of one kernel launch; not separable from host dispatch in
#   the published timings (their 1024^3 points agree within their +-5 us spread with 0-2 us). 1 us,
#   assumed for every chip; it matters only for kernels of a few microseconds.
# - TPU8i and TPU8t: every number JAX reports is from `pltpu.get_tpu_info_for_chip(ChipVersion.TPU_8I
#   | TPU_8T, 1)` in jax 0.12.0.1 (jax/_src/tpu_info.py; its table gives 8i two TensorCores per chip
#   without megacore, like TPU7x, and 8t one). Not published by Google beyond that file: no clock,
#   so vector_ops assumes 1.75 GHz like v6e and TPU7x, over 8i's 8 sublanes and 8t's 16
#   (`num_sublanes`); step and launch costs are the v5e values, assumed.
STEP_SECONDS = 0.2747e-6
LAUNCH_SECONDS = 1e-6

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
        int8_ops=394e12,
        vector_ops=2048 * 1.5e9,
        step_seconds=STEP_SECONDS,
        launch_seconds=LAUNCH_SECONDS,
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
        int8_ops=459e12,
        vector_ops=2048 * 1.75e9,
        step_seconds=STEP_SECONDS,
        launch_seconds=LAUNCH_SECONDS,
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
        int8_ops=1840e12,
        fp8_ops=920e12,
        vector_ops=2048 * 1.75e9,
        step_seconds=STEP_SECONDS,
        launch_seconds=LAUNCH_SECONDS,
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
        fp8_ops=2300e12,
        vector_ops=2048 * 1.75e9,
        step_seconds=STEP_SECONDS,
        launch_seconds=LAUNCH_SECONDS,
    ),
    ChipInfo(
        name="tpu8i",
        device_kind="TPU8i",
        title="TPU8i",
        tensor_cores=2,
        vmem_bytes=192 << 20,
        smem_bytes=1 << 20,
        hbm_bytes=154_500_000_000,
        hbm_bandwidth=4300e9,
        bf16_flops=550.5e12,
        sparse_core=SparseCore(cores=1, subcores=4, lanes=16, vmem_bytes=512 << 10),
        fp8_ops=4404e12,
        vector_ops=2048 * 1.75e9,
        step_seconds=STEP_SECONDS,
        launch_seconds=LAUNCH_SECONDS,
    ),
    ChipInfo(
        name="tpu8t",
        device_kind="TPU8t",
        title="TPU8t",
        tensor_cores=1,
        vmem_bytes=128 << 20,
        smem_bytes=1 << 20,
        hbm_bytes=231_000_000_000,
        hbm_bandwidth=6400e9,
        bf16_flops=996.1e12,
        sparse_core=SparseCore(cores=2, subcores=16, lanes=16, vmem_bytes=256 << 10),
        int8_ops=996.1e12,
        fp8_ops=5976.9e12,
        vector_ops=4096 * 1.75e9,
        step_seconds=STEP_SECONDS,
        launch_seconds=LAUNCH_SECONDS,
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
    "tpu8i": ("TPU8i",),
    "tpu8t": ("TPU8t",),
}


def chip_of_device_kind(kind: str) -> Chip | None:
    """The chip a real device of this kind is; None for a kind this playground does not offer."""
    return next((chip for chip, kinds in NATIVE_DEVICE_KINDS.items() if kind in kinds), None)
