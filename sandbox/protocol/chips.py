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
from typing import Any, Literal

from sandbox.protocol.chips_v5e import (
    V5E_DMA_ISSUE_CYCLES,
    V5E_DOT_OPERAND_COPIES,
    V5E_DOT_OPERAND_ROW_BYTES,
    V5E_HBM_WRITE_EFFICIENCY,
    V5E_PER_UNIT_RULES,
    V5E_PROGRAM_RATES,
    V5E_STEP_CYCLES,
    V5E_TRANSCENDENTALS,
)

Chip = Literal["v5e", "v5p", "v6e", "tpu7x", "tpu8i", "tpu8t"]
CHIPS: tuple[Chip, ...] = typing.get_args(Chip)


@dataclass(frozen=True)
class SparseCore:
    cores: int
    subcores: int
    lanes: int
    vmem_bytes: int
    dma_granule_bytes: int = 32  # get_tpu_info's SparseCore DMA granule


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
    sparse_core: SparseCore | None  # per JAX device, as get_tpu_info reports it
    # -- the time model's rates (per TensorCore), sources at the table --------------------------
    int8_ops: float = 0.0  # MXU int8 ops per second (get_tpu_info); 0: not supported
    fp8_ops: float = 0.0  # MXU fp8 ops per second (get_tpu_info); 0: not supported
    vector_ops: float = 0.0  # VPU element operations per second (8 x 128 lanes x 2 ALUs x clock)
    step_seconds: float = 0.0  # fixed cost of one pipeline (grid) step (STEP_CYCLES / clock)
    launch_seconds: float = 0.0  # fixed cost of one kernel launch on the device
    clock_hz: float = 0.0  # TensorCore clock (cited or assumed per chip, below)
    mxu_size: int = 128  # MXU columns (get_tpu_info's mxu_column_size): dots pad K and N to it
    sublanes: int = 8  # vreg sublanes (get_tpu_info's num_sublanes); lanes are 128 on every chip
    dma_issue_seconds: float = 0.0  # the scalar core's cost to start one DMA and wait for it
    # A DMA's latency in cycles (measured where set): from its start until the DMA engine moves its bytes,
    # while the engine moves others (`dma_engine`); a write's (VMEM -> HBM) where it differs (None: the same); a program's own loop iteration without MXU
    # work, beside its scalar work and DMA starts (None: a grid step's, `dotless_step_cycles`)
    dma_latency_cycles: float = 0.0
    dma_write_latency_cycles: float | None = None
    loop_step_cycles: float | None = None
    scalar_seconds: float = 0.0  # one scalar operation (index maps, SMEM lookups, branches)
    ici_bandwidth: float = 0.0  # bytes per second, one ICI link, one way (remote DMAs)
    ici_hop_seconds: float = 0.0  # latency of one ICI hop
    host_dispatch_seconds: float | None = None  # one call's host dispatch, when timed from the host
    mxu_efficiency: float = 1.0  # the share of the MXU's peak a pipelined dot reaches (fitted where known)
    hbm_write_efficiency: float = 1.0  # the HBM peak's share writes reach, reads at the peak (measured)
    # A simulated program's DMA engine where its reads and writes were measured moving side by side: the
    # HBM peak's share reads and writes each reach alone, the share of that each keeps while both move
    # (0: not measured; one queue at the peak and `hbm_write_efficiency`, as a grid's copies), the cycles
    # of its own moving a copy pays that starts beside the other direction's, and the cycles of a read's
    # latency after its last byte (the engine takes it that much sooner: `simulate._tail`)
    dma_read_efficiency: float = 1.0
    dma_write_efficiency: float = 1.0
    dma_read_share: float = 0.0
    dma_write_share: float = 0.0
    dma_switch_cycles: float = 0.0
    dma_read_tail_cycles: float = 0.0
    # The vector units' issue rates in vregs per cycle, per unit of the model's counts ("alu", "eup",
    # "xlu", "load", "store"): a step's vector work then lasts as long as its busiest unit's, not all
    # units' work added up at `vector_ops` (empty: added up). With them, a step with a dot and a lane
    # reduction lasts at least `reduction_chain_cycles`, its fixed step cost included, and its MXU and
    # vector work overlap but for `reduction_serial_share` of the shorter. (Measured where set.)
    vector_units: tuple[tuple[str, float], ...] = ()
    reduction_chain_cycles: float = 0.0
    reduction_serial_share: float = 0.0
    reduction_serial_growth: float = 0.0
    reduction_serial_pivot: float = 1.0
    # A pipeline step's fixed cost without MXU work, in cycles (0: `step_seconds`, as with a dot), plus
    # `dotless_xlu_cycles` where it uses the cross-lane unit (a lane reduction, a transpose); it hides
    # `dotless_step_hidden` of the seconds its copies keep the DMA engine busy, down to the floor
    dotless_step_cycles: float = 0.0
    dotless_xlu_cycles: float = 0.0
    dotless_step_hidden: float = 0.0
    dotless_step_unhidden_cycles: float = 0.0
    dma_pair_share: float = 0.0
    dotless_step_floor_cycles: float = 0.0
    megacore: bool = False  # its TensorCores are one device: "parallel" grid dims are split across them
    # VMEM a kernel may use without pltpu.CompilerParams(vmem_limit_bytes=...): the TPU compiler's
    # default scoped VMEM limit (sources at the table; None where not published)
    scoped_vmem_bytes: int | None = None
    # The largest relative error of the chip's own transcendentals in a kernel, f32 (measured on the chip:
    # bench/tpu/v5e/corpus, checked by tests/unit/test_chip_bands.py); empty where not measured. The
    # simulator computes them exactly and states these beside a check that is tighter.
    transcendental_bands: tuple[tuple[str, float], ...] = ()
    # VMEM the TPU compiler keeps for itself per dot, in copies of the dot's left-operand block, by operand
    # kind ("bf16", "f32_highest"): measured from the compiler's E1001 sizes on the chip
    # (bench/tpu/v5e/vmem.jsonl, `sandbox.harness.checks.compiler_scratch`); empty where not measured.
    dot_operand_copies: tuple[tuple[str, float], ...] = ()
    # Besides those copies, bytes per row of the left operand, by kind ("f32_highest": one 128-lane f32
    # column), measured the same way; empty where not measured.
    dot_operand_row_bytes: tuple[tuple[str, float], ...] = ()

    def roofline_seconds(self, flops: float, bytes_accessed: float, cores: int = 1) -> float:
        """Lower bound on run time: the slower of compute at peak and HBM traffic at full bandwidth."""
        return max(flops / (self.bf16_flops * cores), bytes_accessed / (self.hbm_bandwidth * cores))

    def mxu_rate(self, kind: str) -> float:
        """MXU ops per second for a dot of `kind`: "bf16", "f32" (6 bf16 passes), "f32_3pass", "int8", "fp8".

        f32 operands at `Precision.HIGHEST` (Mosaic's fp32 contract precision) take 6 bf16 passes
        (`jax.lax.Precision.HIGHEST`'s doc: "performs float32 computations in 6 bfloat16 [passes]"),
        at `Precision.HIGH` (bf16x3) 3. At the default precision they are rounded to bf16 and run
        as a "bf16" dot (`ops.dot_kind`; JAX's Pallas TPU guide, details.rst "Precision control").
        A chip without an int8/fp8 rate runs those as bf16.
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

    @property
    def device_tensor_cores(self) -> int:
        """TensorCores one JAX device spans: all of a megacore chip's, else one."""
        return self.tensor_cores if self.megacore else 1

    @property
    def dma_lanes_measured(self) -> bool:
        """Whether a program's reads and writes were measured moving side by side (two DMA lanes)."""
        return bool(self.dma_read_share and self.dma_write_share)

    @property
    def device_hbm_bandwidth(self) -> float:
        """Bytes per second of HBM one JAX device has: what its SparseCores share among them."""
        return self.hbm_bandwidth * self.device_tensor_cores


# Sources of the time model's rates (docs/tpu-time-model.md says which published points check them):
# - device_tensor_cores, and what a JAX device's SparseCores share: jax/_src/tpu_info.py in jax
#   0.12.0.1. Its ChipVersion table gives v4 and v5p megacore (one device spans both TensorCores, as
#   the playground targets v5p) and TPU7x and TPU8i "2" TensorCores per chip but no megacore, so a
#   device there is one TensorCore (`get_tpu_info_for_chip` refuses any other count for them); v5e,
#   v6e and TPU8t have one per chip. `sparse_core` is per device (TPU7x: 2 of the chip's 4, JAX's
#   SparseCore guide's table "2 (4 physical cores)"), so a device's SparseCores share that device's
#   HBM bandwidth: `device_hbm_bandwidth`, the per-TensorCore figure x device_tensor_cores.
#   tests/model/test_chip_table.py checks `megacore` against `supports_megacore`.
# - int8_ops / fp8_ops, mxu_size (mxu_column_size), sublanes (num_sublanes): `pltpu.get_tpu_info()`
#   in jax 0.12.0.1, like the fields above (tests/model/test_chip_table.py re-derives them).
# - megacore: `ChipVersion.supports_megacore` in jax 0.12.0.1 (v4 and v5p; TPU7x and TPU8i have two
#   TensorCores without it); JAX's Pallas TPU pipelining guide: on a megacore chip a pallas_call's
#   "parallel" grid dimensions run "simultaneously on each TensorCore", elsewhere they are a no-op.
# - clock_hz: v5e 1.5 GHz (scaling-book, "How to Scale Your Model", tpus.md: "5e13 bf16 FLOPs/s per
#   MXU at 1.5GHz", jax-ml/scaling-book@0819a7d); v5p 1.75 GHz (= its bf16 peak / (4 MXUs x 128 x 128
#   MACs x 2), both from get_tpu_info). v6e, TPU7x, TPU8i, TPU8t: not published; 1.75 GHz ASSUMED.
# - vector_ops: VALU issue rate in element ops per second, VECTOR_VREGS_PER_CYCLE x 1024 x clock.
#   The VPU is (8, 128) lanes with 2 ALUs (scaling-book, Appendix C: 2 vregs per cycle at most);
#   the achieved rate on a kernel's dependent chains (max, exp, sum, rescale) is lower, so the
#   rate is FITTED to one published point: JAX's flash_attention forward, (32, 8, 512, 64) bf16,
#   128-blocks, on a v5e (2.36 ms; jax-ml/jax#24633), given the step cost below and XLA's four
#   relayout copies around that kernel (`model.layouts`; 1.77 before they were counted). Vector work is
#   counted in padded vregs with EUP and cross-lane weights (sandbox/harness/model/ops.py).
# - step_seconds: STEP_CYCLES / clock, the fixed cost of one pipeline step (the step's sync, the
#   MXU's fill and drain between dependent steps), FITTED to one published point: the JAX Pallas
#   TPU matmul guide's 4096^3 bf16 matmul with 128-blocks on a v5e (11.77 ms for 32768 steps, less
#   the 108.5 us host dispatch of its timing loop), after that step's copies, MXU work, DMA issues
#   and scalar work. The two fits are solved together (tests/model/fit.py prints them).
# - dma_issue_seconds: DMA_ISSUE_CYCLES / clock per DMA a step starts (descriptor, semaphore wait);
#   scalar_seconds: 1 cycle per scalar op (index maps, SMEM lookups, branches): ASSUMED from the
#   scalar unit's one-op-per-bundle issue; not separable from STEP_CYCLES in published timings.
#   The v5e's own DMA cost and step cost were measured on its sweeps (chips_v5e.py: 6 and 394.9
#   cycles); STEP_CYCLES stays the other chips' figure, solved at the assumed DMA cost.
# - dma_latency_cycles (a write's 300, dma_write_latency_cycles) and loop_step_cycles (30), in a simulated
#   program: v5e 550, FITTED on its sweeps (chips_v5e.py); elsewhere not measured (0, a grid step's).
# - ici_bandwidth: one ICI link, one way: v5e 4.5e10 B/s, v5p and v6e 9e10 B/s (scaling-book,
#   tpus.md, "TPU Networking" table and worked problem 5), which the published ppermute sweep on
#   v5p-8 and v6e-8 matches (86.3 and 86.8 GB/s for large payloads, marin-community/marin#6736,
#   2026-06-28). TPU7x and TPU8: not published, 9e10 ASSUMED. ici_hop_seconds: 1 us (scaling-book,
#   worked problem 5: "the 1us latency" per hop).
# - host_dispatch_seconds: what one call costs on the host when a kernel is timed around
#   `block_until_ready` (reported beside the estimate, never added to it). v5e: 108.53 us, from the
#   matmul guide's own XLA 1024^3 matmul (119.43 us printed, 10.90 us roofline). TPU7x: 111.87 us,
#   from JAX's SparseCore guide's XLA x + 1 on int32[4096, 128] (113 us printed, 1.13 us roofline at
#   one device's 3.7 TB/s; the same cell hints a SparseCore call costs more). Elsewhere unknown.
# - launch_seconds: the device-side cost of one kernel launch; not separable from host dispatch in
#   the published timings. 1 us, ASSUMED for every chip; it matters only for kernels of a few us.
# - TPU8i and TPU8t: every number JAX reports is from `pltpu.get_tpu_info_for_chip(ChipVersion.TPU_8I
#   | TPU_8T, 1)` in jax 0.12.0.1 (jax/_src/tpu_info.py; its table gives 8i two TensorCores per chip
#   without megacore, like TPU7x, and 8t one). Not published by Google beyond that file.
# - v6e's and TPU7x's own vector rate and MXU efficiency: FITTED to half of tokamax's published
#   grouped-matmul winners on that chip (its 1st, 3rd, 5th... in tests/data/published_tpu_timings.toml,
#   marked `calibration`; the other half validates them): `python -m tests.model.fit v6e|tpu7x`
#   (mean |log error| on the fit half, XLA's relayout copies around the kernel counted since 2026-12-06
#   (`model.layouts`): v6e 3.0 %, TPU7x 7.0 %; the rates did not move). The vector rates (v6e 3.54, TPU7x 6.19
#   vregs per cycle at the assumed clock; the one-rate rule's 2.05) absorb both the newer VPUs (bf16 VALUs on v6e and
#   later; widths and clocks not published) and how tokamax's kernel differs in vector work from the
#   megablox gmm the model costs in its place; 0.80 and 0.75 of the MXU peak are what their
#   compute-bound points reach. They were 6.19 and 10.82 (and v5e's 1.83) while the model counted
#   megablox's row masks and zero splats at one op per vreg of the tile (`replication.py`).
# - scoped_vmem_bytes: the TPU compiler's default scoped VMEM limit, what a kernel without
#   `vmem_limit_bytes` may allocate (Pallas's CompilerParams doc: `vmem_limit_bytes` "Overrides the
#   default VMEM limit for a kernel", together with `--xla_tpu_scoped_vmem_limit_kib`). v5e 16 MiB:
#   "Scoped allocation with size 31.07M and limit 16.00M exceeded scoped vmem limit" on a
#   v5litepod-8 (pytorch/xla#6611, 2024-02-24). v6e and TPU7x 32 MiB: a Pallas flash-attention kernel
#   "past the default 32MiB scoped-vmem limit" on both tpu6e and tpu7x, "Scoped allocation with
#   size 37.22M and limit 32.00M" (vllm-project/tpu-inference#3407, 2026-08-17), and "33.56M vs
#   32.00M limit" on a tpu7x-8 (vllm-project/tpu-inference#3194, 2026-07-15). v5p, TPU8i, TPU8t:
#   not found in any public source; no default is checked there.
# Per-cycle costs are otherwise the same on every chip (ASSUMED: only v5e timings fix them); each
# chip's clock turns them into seconds.
STEP_CYCLES = 342.1
VECTOR_VREGS_PER_CYCLE = 2.0536
DMA_ISSUE_CYCLES = 32.0
SCALAR_CYCLES = 1.0
LAUNCH_SECONDS = 1e-6
ICI_HOP_SECONDS = 1e-6
V5E_HOST_DISPATCH = 108.53e-6
TPU7X_HOST_DISPATCH = 111.87e-6
V6E_VECTOR_VREGS = 3.5379
V6E_MXU_EFFICIENCY = 0.80
TPU7X_VECTOR_VREGS = 6.1877
TPU7X_MXU_EFFICIENCY = 0.75


def _model_rates(
    clock: float,
    ici: float,
    mxu: int = 128,
    sublanes: int = 8,
    vregs_per_cycle: float = VECTOR_VREGS_PER_CYCLE,
    mxu_efficiency: float = 1.0,
    step_cycles: float = STEP_CYCLES,
    dma_cycles: float = DMA_ISSUE_CYCLES,
) -> dict[str, Any]:
    """The time model's per-chip rates from the chip's clock (sources above)."""
    return {
        "clock_hz": clock,
        "mxu_size": mxu,
        "sublanes": sublanes,
        "mxu_efficiency": mxu_efficiency,
        "vector_ops": vregs_per_cycle * sublanes * 128 * clock,
        "step_seconds": step_cycles / clock,
        "launch_seconds": LAUNCH_SECONDS,
        "dma_issue_seconds": dma_cycles / clock,
        "scalar_seconds": SCALAR_CYCLES / clock,
        "ici_bandwidth": ici,
        "ici_hop_seconds": ICI_HOP_SECONDS,
    }


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
        **_model_rates(1.5e9, 4.5e10, step_cycles=V5E_STEP_CYCLES, dma_cycles=V5E_DMA_ISSUE_CYCLES),
        host_dispatch_seconds=V5E_HOST_DISPATCH,
        scoped_vmem_bytes=16 << 20,
        transcendental_bands=V5E_TRANSCENDENTALS,
        dot_operand_copies=V5E_DOT_OPERAND_COPIES,
        dot_operand_row_bytes=V5E_DOT_OPERAND_ROW_BYTES,
        hbm_write_efficiency=V5E_HBM_WRITE_EFFICIENCY,
        **V5E_PER_UNIT_RULES,
        **V5E_PROGRAM_RATES,
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
        **_model_rates(1.75e9, 9e10, mxu=128, sublanes=8),
        megacore=True,
        # The v5e's measured per-unit issue (VLIW slots side by side), not the one-rate rule: libtpu
        # schedules the same kernels for a v5p's TensorCore in 1.00-1.14x the v5e's bundles
        # (bench/tpu/same_core.py, v5e/same-core.jsonl; an element-wise body 1.44x). With it the four
        # published v5p splash points went +80 ... +109 % -> +10 ... +17 % (docs/tpu-time-model.md).
        **V5E_PER_UNIT_RULES,
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
        **_model_rates(
            1.75e9,
            9e10,
            mxu=256,
            sublanes=8,
            vregs_per_cycle=V6E_VECTOR_VREGS,
            mxu_efficiency=V6E_MXU_EFFICIENCY,
        ),
        scoped_vmem_bytes=32 << 20,
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
        **_model_rates(
            1.75e9,
            9e10,
            mxu=256,
            sublanes=8,
            vregs_per_cycle=TPU7X_VECTOR_VREGS,
            mxu_efficiency=TPU7X_MXU_EFFICIENCY,
        ),
        scoped_vmem_bytes=32 << 20,
        host_dispatch_seconds=TPU7X_HOST_DISPATCH,
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
        sparse_core=SparseCore(cores=1, subcores=4, lanes=16, vmem_bytes=512 << 10, dma_granule_bytes=64),
        fp8_ops=4404e12,
        **_model_rates(1.75e9, 9e10, mxu=256, sublanes=8),
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
        sparse_core=SparseCore(cores=2, subcores=16, lanes=16, vmem_bytes=256 << 10, dma_granule_bytes=64),
        int8_ops=996.1e12,
        fp8_ops=5976.9e12,
        **_model_rates(1.75e9, 9e10, mxu=256, sublanes=16),
    ),
)
CHIP_TABLE: dict[Chip, ChipInfo] = {info.name: info for info in _TABLE}
assert tuple(CHIP_TABLE) == CHIPS, "the chip table and the Chip literal must name the same chips, in order"


def chip_info(name: Chip) -> ChipInfo:
    return CHIP_TABLE[name]
