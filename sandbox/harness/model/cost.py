"""The arithmetic of the TPU time model: pure (numpy only, no JAX), so it is unit-tested by hand.

A kernel reaches it in one of two shapes, built from the traced kernel by `grid` and `program`:

- `Grid`: the automatic pipeline of a `pallas_call`. Per step: the bytes that must be in VMEM for
  it (copied during the previous step, or before the first), the bytes it writes back (during the
  next step), its MXU flops per dot kind and its vector element ops; timed in closed form by
  `grid_time.grid_steps`.
- `Program`: what `pl.kernel` bodies (and kernels that start their own DMAs) do, as a list of
  events per core (work, DMAs, waits, step markers, cross-core semaphores), simulated in order by
  `simulate.program_steps` (its docstring says how; the core's DMA engine is `dma_engine`).

Both give `Steps`, one row per step, which `summary.summarize` turns into an `Estimate`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from sandbox.harness.model.ops import PADDING
from sandbox.protocol.chips import ChipInfo

DOT_KINDS = ("bf16", "f32", "f32_3pass", "int8", "fp8")
ALL_KINDS = DOT_KINDS + tuple(kind + PADDING for kind in DOT_KINDS)
MAX_PASSES = 6  # re-simulations for cross-core semaphores; a barrier settles in two


@dataclass(frozen=True)
class Rates:
    """Per-TensorCore rates of one chip, in the units the model adds up."""

    bandwidth: float  # HBM bytes per second, read
    mxu: Mapping[str, float]  # ops per second, per dot kind
    vector: float  # element ops per second
    step: float  # seconds per pipeline step
    launch: float  # seconds per kernel launch
    cores: int  # TensorCores on the chip
    dma: float = 0.0  # seconds of scalar-core work to start one DMA and wait for it
    latency: float = 0.0  # seconds from a DMA's start to its landing, less its bytes' time (its waits see it)
    write_latency: float | None = None  # ... from a write's (VMEM -> HBM; None: `latency`)
    loop_step: float | None = None  # seconds per program loop step without MXU work (None: `dotless_step`)
    scalar: float = 0.0  # seconds per scalar operation
    ici: float = 0.0  # bytes per second over one ICI link (remote DMAs)
    hop: float = 0.0  # seconds of latency per remote DMA
    write: float = 0.0  # HBM bytes per second, written (0: `bandwidth`)
    # A simulated program's DMA engine (`dma_engine`; `ChipInfo`'s fields of the same names): reads and
    # writes alone in bytes per second (0: `bandwidth`, `write`), the shares of those while both move (0:
    # one queue, `Engine`), a copy's switch and a read's tail in seconds
    dma_read: float = 0.0
    dma_write: float = 0.0
    dma_read_share: float = 0.0
    dma_write_share: float = 0.0
    dma_switch: float = 0.0
    dma_read_tail: float = 0.0
    # Per vector unit (`ops.UNITS`), element ops per second: a step's vector work lasts as long as its
    # busiest unit's (empty: every unit's work weighted and added up at `vector`; the chip table says where).
    units: Mapping[str, float] = field(default_factory=dict)
    # With `units`: least seconds of a step with a dot and a lane reduction, its fixed cost included
    chain: float = 0.0
    serial: float = 0.0  # with `units`: share of the shorter of MXU and vector time not overlapped
    serial_growth: float = 0.0  # ... more per doubling of the largest value reduced (`serial_share`)
    serial_pivot: float = 1.0  # elements of that value at which the share is `serial`
    dotless_step: float | None = None  # seconds per pipeline step without MXU work (None: `step`)
    # A grid step without MXU work hides this share of its copies' seconds beyond `dotless_unhidden`
    # under its fixed cost, leaving at least `dotless_floor` of it (`grid_time.step_overhead`)
    dotless_hidden: float = 0.0
    dotless_unhidden: float = 0.0
    dma_pair: float = 0.0  # ... its copy in and write-back side by side add this share of the shorter
    dotless_floor: float = 0.0
    # Seconds a step without MXU work adds to its fixed cost where it uses the cross-lane unit (a lane
    # reduction, a transpose): the unit's latency before the results its stores and write-back wait for
    dotless_xlu: float = 0.0

    @classmethod
    def of(cls, chip: ChipInfo) -> Rates:
        return cls(
            bandwidth=chip.hbm_bandwidth,
            mxu={kind: chip.mxu_rate(kind.removesuffix(PADDING)) * chip.mxu_efficiency for kind in ALL_KINDS},
            vector=chip.vector_ops,
            step=chip.step_seconds,
            launch=chip.launch_seconds,
            cores=chip.device_tensor_cores,  # a JAX device's: the roofline's and a split grid's
            dma=chip.dma_issue_seconds,
            latency=chip.dma_latency_cycles / chip.clock_hz if chip.clock_hz else 0.0,
            write_latency=_cycles(chip.dma_write_latency_cycles, chip.clock_hz),
            loop_step=_cycles(chip.loop_step_cycles, chip.clock_hz),
            scalar=chip.scalar_seconds,
            ici=chip.ici_bandwidth,
            hop=chip.ici_hop_seconds,
            write=chip.hbm_bandwidth * chip.hbm_write_efficiency,
            dma_read=chip.hbm_bandwidth * chip.dma_read_efficiency if chip.dma_lanes_measured else 0.0,
            dma_write=chip.hbm_bandwidth * chip.dma_write_efficiency if chip.dma_lanes_measured else 0.0,
            dma_read_share=chip.dma_read_share if chip.dma_lanes_measured else 0.0,
            dma_write_share=chip.dma_write_share if chip.dma_lanes_measured else 0.0,
            dma_switch=_cycles(chip.dma_switch_cycles, chip.clock_hz) or 0.0,
            dma_read_tail=_cycles(chip.dma_read_tail_cycles, chip.clock_hz) or 0.0,
            units={unit: rate * chip.sublanes * 128 * chip.clock_hz for unit, rate in chip.vector_units},
            chain=chip.reduction_chain_cycles / chip.clock_hz,
            serial=chip.reduction_serial_share,
            serial_growth=chip.reduction_serial_growth,
            serial_pivot=chip.reduction_serial_pivot,
            dotless_step=chip.dotless_step_cycles / chip.clock_hz if chip.dotless_step_cycles else None,
            dotless_hidden=chip.dotless_step_hidden,
            dma_pair=chip.dma_pair_share,
            dotless_unhidden=chip.dotless_step_unhidden_cycles / chip.clock_hz if chip.clock_hz else 0.0,
            dotless_floor=chip.dotless_step_floor_cycles / chip.clock_hz if chip.clock_hz else 0.0,
            dotless_xlu=chip.dotless_xlu_cycles / chip.clock_hz if chip.clock_hz else 0.0,
        )

    @classmethod
    def of_sparse_core(cls, chip: ChipInfo, programs_per_core: int) -> Rates:
        """One SparseCore program's rates: the JAX device's HBM bandwidth (its SparseCores are per
        device, and a TPU7x or TPU8i device is one of the chip's two TensorCores: the chip table's
        sources) shared equally by its SparseCores, and by the programs on one SparseCore. ASSUMED:
        the equal split at streaming speed (JAX's published gather on TPU7x took 1.65x the time it
        gives), vector work one row of the subcore's lanes per cycle, and the TensorCore's per-cycle
        step, DMA-issue and scalar costs at the same clock."""
        sc = chip.sparse_core
        assert sc is not None
        tc = cls.of(chip)
        share = chip.device_hbm_bandwidth / sc.cores / max(programs_per_core, 1)
        return dataclasses.replace(
            tc, bandwidth=share, write=share, vector=sc.lanes * chip.clock_hz, cores=sc.cores
        )

    def compute(
        self,
        mxu: Mapping[str, Any],
        vector: Any,
        after: Sequence[Wait] = (),
        units: Mapping[str, Any] | None = None,
        reduced: Any = None,
    ) -> Any:
        """Seconds of MXU work and of vector work overlap: the larger counts (arrays or floats).
        `after`: per dot that some of the vector work waits for (`barriers`), the MXU work issued
        up to the dot's end and the vector work that waits for it: the step lasts at least the two
        one after the other. (MXU work waiting for the dot needs no term of its own: it follows
        the dot on the MXU, within the step's MXU time.) With the vector work per unit (`units`)
        and the chip's per-unit rates: `_by_unit`."""
        if units is not None and self.units:
            return self._by_unit(mxu, vector, after, units, reduced)
        seconds = np.maximum(self._mxu_seconds(mxu, vector), vector / self.vector)
        for prefix, waiting in after:
            seconds = np.maximum(seconds, self._mxu_seconds(prefix, waiting) + waiting / self.vector)
        return seconds

    def _by_unit(
        self,
        mxu: Mapping[str, Any],
        vector: Any,
        after: Sequence[Wait],
        units: Mapping[str, Any],
        reduced: Any = None,
    ) -> Any:
        """The units of the VLIW bundle issue side by side: vector work lasts as long as its busiest
        unit's. A step with a dot and a lane reduction (attention's row max and sum of its logits) also
        lasts at least the dependent chain through it (`chain`, the step's fixed cost `step` counted
        inside it), and its MXU and vector work overlap only in part (`serial`: the dot, the statistics
        and the second dot wait on each other); a step without a dot pays its cross-lane latency in its
        fixed cost instead (`dotless_xlu`, `step_overhead`). Work waiting for a dot (`after`) takes its
        share of the vector time."""
        mxu_seconds = self._mxu_seconds(mxu, vector)
        busiest = 0.0 * vector
        for unit, ops in units.items():
            busiest = np.maximum(busiest, ops / self.units[unit])
        reduces = crosses_lanes(units, vector)
        seconds = np.maximum(mxu_seconds, busiest)
        seconds = seconds + np.where(
            reduces, self.serial_share(reduced) * np.minimum(mxu_seconds, busiest), 0.0
        )
        per_op = np.divide(busiest, vector, out=np.zeros_like(busiest, dtype=float), where=vector > 0)
        for prefix, waiting in after:
            seconds = np.maximum(seconds, self._mxu_seconds(prefix, waiting) + waiting * per_op)
        return np.where(reduces & (mxu_seconds > 0), np.maximum(seconds, self.chain - self.step), seconds)

    def serial_share(self, reduced: Any) -> Any:
        """The share of a reducing step's shorter side not overlapped: `serial` where the largest
        value it reduces over lanes is `serial_pivot` elements (or unknown: a program's work), growing
        by `serial_growth` per doubling of it."""
        if reduced is None or not self.serial_growth:
            return self.serial
        doublings = np.log2(np.maximum(reduced, 1.0) / self.serial_pivot)
        return np.clip(self.serial + self.serial_growth * doublings, 0.0, 1.0)

    def _mxu_seconds(self, mxu: Mapping[str, Any], like: Any) -> Any:
        return sum((flops / self.mxu[kind] for kind, flops in mxu.items()), start=0.0 * like)


def _cycles(cycles: float | None, clock_hz: float) -> float | None:
    return cycles / clock_hz if cycles is not None and clock_hz else None


# A dot's MXU flops up to its end and the vector ops that wait for it (`barriers`), per step
# (arrays) or of one event (floats).
Wait = tuple[Mapping[str, Any], Any]


@dataclass
class Steps:
    """One kernel's steps on the estimated clock (arrays, one entry per step) and its totals."""

    kernel: str
    kind: str
    cores: int
    core: np.ndarray
    start: np.ndarray
    seconds: np.ndarray
    compute: np.ndarray  # compute seconds of the step
    copy: np.ndarray  # DMA seconds that overlap the step
    stall: np.ndarray  # seconds the step waited for DMAs beyond its compute
    overhead: np.ndarray
    copy_in: np.ndarray  # bytes
    copy_out: np.ndarray
    flops: np.ndarray
    vector: np.ndarray
    labels: list[str]
    points: list[tuple[int, ...] | None]
    total: float  # launch + the slowest core
    fill: float  # on the slowest core: copies before its first step
    drain: float  # on the slowest core: write-backs after its last step
    critical: int  # the slowest core
    mxu_flops: dict[str, float] = field(default_factory=dict)  # whole kernel, per dot kind
    family: str = ""
    min_bytes: float = 0.0
    hbm_bytes: float = 0.0  # every byte the DMAs move, including copies outside any step
    notes: list[str] = field(default_factory=list)
    overlaps: bool = False  # a SparseCore kernel that runs beside the TensorCore kernels
    unit: str = "tensor_core"


@dataclass
class Grid:
    """A pallas_call pipeline: per step (in execution order within each core) what it moves and does."""

    kernel: str
    core: np.ndarray
    points: np.ndarray  # (steps, grid rank): each step's grid coordinates
    copy_in: np.ndarray
    copy_out: np.ndarray
    mxu: dict[str, np.ndarray]
    vector: np.ndarray
    min_bytes: float
    prologue_bytes: float = 0.0  # e.g. scalar-prefetch tables, copied before the grid starts
    scalar: np.ndarray | None = None  # per step: scalar operations (body and index maps)
    dmas: np.ndarray | None = None  # per step: DMAs it starts (next blocks, write-backs)
    cores: int = 1
    notes: list[str] = field(default_factory=list)
    family: str = ""  # `families`: what kind of kernel, for how far its estimate is validated
    after: tuple[Wait, ...] = ()  # per step, per dot that work waits for: `Rates.compute`
    units: dict[str, np.ndarray] | None = None  # per step, vector element ops per unit (`ops.UNITS`)
    reduced: np.ndarray | None = None  # per step, the largest value reduced over lanes (`ops.Acc`)


def crosses_lanes(units: Mapping[str, Any] | None, like: Any) -> Any:
    """Where work uses the cross-lane unit (a lane reduction, a transpose): per step (arrays shaped like
    `like`) or for one program event (a float `like`)."""
    return np.asarray(units.get("xlu", 0.0 * like) if units else 0.0 * like) > 0


# -- programs: events per core, simulated ------------------------------------------------------
#
# Events are tuples, first item the kind:
#   ("step", label)                     a pipeline step begins (costs rates.step)
#   ("work", {kind: flops}, vector_ops, scalar_ops[, after[, units, reduced]]) compute between two
#                                       synchronisation points; `after`: per dot that some of its
#                                       vector work waits for, `units`: its vector ops per unit,
#                                       `reduced`: the largest value it reduces over lanes, as
#                                       `Rates.compute` takes them
#   ("dma", bytes, semaphore, way)      a DMA starts; way "in" (HBM→VMEM), "out" (VMEM→HBM), "hbm"
#                                       (HBM→HBM), or "" (on-chip: assumed free)
#   ("wait", semaphore, bytes)          wait until `bytes` of DMAs on `semaphore` have landed
#   ("signal", core, semaphore, inc)    add `inc` to `semaphore` on another core (e.g. a barrier)
#   ("sem_wait", semaphore, value)      wait until `value` has arrived on this core's `semaphore`
Event = tuple[Any, ...]


@dataclass
class Program:
    kernel: str
    events: list[list[Event]]  # per core
    min_bytes: float = 0.0
    notes: list[str] = field(default_factory=list)
    family: str = ""
    unit: str = "tensor_core"  # or "sparse_core": simulated at `Rates.of_sparse_core`
    programs_per_core: int = 1  # SparseCore: programs (subcores) that share one SparseCore's DMAs
    overlaps: bool = False  # runs beside the TensorCore kernels (nothing of theirs needs its output)


# Simulating a Program: `sandbox.harness.model.simulate` (program_steps).
