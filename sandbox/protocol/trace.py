"""The kernel trace's types: part of the sandbox protocol (`RunResult.trace`).

`sandbox.harness.trace` records and shapes it; the page draws it (timeline.js,
gridview.js). Converted to and from JSON by `sandbox.protocol.to_json_dict` / `from_json_dict`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal


@dataclass(frozen=True)
class TraceEvent:
    """One interpreter callback. Buffers are named by kernel operand ("in0", "out") or "vmem#104"."""

    t: float  # host seconds since the traced call began (CPU simulation time, not TPU time)
    kind: (
        str  # kernel_start grid_step block_read block_write dma_start dma_wait sem_signal sem_wait load store
    )
    device: int | None
    core: int | None
    dur: float = 0.0  # host seconds inside the callback (how long a wait blocked)
    step: int | None = None  # index into `Trace.steps`
    phase: str = (
        ""  # the emit_pipeline phase that issued it: prologue copy_in wait_in body copy_out wait_out epilogue
    )
    bytes: int | None = None
    src: str = ""
    src_space: str = ""  # hbm vmem smem ...
    src_region: str = ""  # e.g. "[0:128, 128:256]"; "[...]" when not known
    dst: str = ""
    dst_space: str = ""
    dst_region: str = ""
    dst_device: int | None = None  # DMA destination / semaphore target
    dst_core: int | None = None
    semaphore: int | None = None
    value: int | None = None  # semaphore increment or awaited value
    dma: tuple[int, ...] = ()  # dma_start: its id; dma_wait: the ids of the DMAs it waited for
    grid_point: tuple[int, ...] | None = None
    block: tuple[int, ...] | None = None
    label: str = ""  # kernel_start: the kernel's name
    core_kind: str = ""  # "tensor_core" or "sparse_core" (kernel_start: of the kernel it starts)


@dataclass(frozen=True)
class TraceStep:
    """A pallas_call grid point ("grid") or an emit_pipeline loop step ("pipeline") on one core."""

    index: int
    kind: Literal["grid", "pipeline"]
    device: int | None
    core: int | None
    number: int  # 0-based, in execution order on this core (per launch; per pipeline for "pipeline")
    t: float
    t_end: float
    grid_point: tuple[int, ...] | None = None
    pipeline: int | None = None  # which emit_pipeline on this core (0, 1, ...), for "pipeline" steps
    parent: int | None = None  # the grid step a pipeline step runs inside
    kernel: str = ""
    core_kind: str = ""  # "tensor_core" or "sparse_core"


@dataclass(frozen=True)
class TraceLane:
    """Event counts of one simulated core (per kind, before any cap)."""

    device: int | None
    core: int | None
    counts: dict[str, int] = field(default_factory=dict)
    core_kind: str = ""  # "tensor_core" or "sparse_core"; "" for records of no core


@dataclass(frozen=True)
class BlockVisit:
    """One block of an HBM operand that the kernel moved: read into VMEM or written back."""

    access: Literal["read", "write"]
    region: str
    t: float
    device: int | None
    core: int | None
    step: int | None = None  # index into `Trace.steps`
    grid_point: tuple[int, ...] | None = None
    block: tuple[int, ...] | None = None
    revisit: bool = False  # the same region was moved the same way before


@dataclass(frozen=True)
class OperandBlocks:
    """The blocks of one HBM operand of one kernel launch, in the order they moved."""

    name: str  # "in0", "in1", ...; "out" or "out[0]", "out[1]", ...
    role: str  # "input", "output", or "input and output" (aliased)
    kernel: str
    launch: int  # 0-based launch of this kernel on its device
    device: int
    shape: tuple[int, ...]
    dtype: str
    param: str = ""  # the kernel's parameter name for it, e.g. "x_ref"
    visits: tuple[BlockVisit, ...] = ()
    revisits: int = 0


@dataclass(frozen=True)
class GridView:
    operands: tuple[OperandBlocks, ...] = ()
    note: str = ""  # what a step means here


@dataclass(frozen=True)
class Trace:
    """The kernel trace of one run; `available` is False (with `reason`) when it could not be taken."""

    available: bool
    reason: str = ""
    case: str = ""
    seconds: float = 0.0  # host duration of the traced call
    hbm_bandwidth: float = (
        0.0  # bytes/s per TensorCore of the chip: an "estimated TPU" DMA lasts bytes / this
    )
    events: tuple[TraceEvent, ...] = ()
    counts: dict[str, int] = field(default_factory=dict)  # per kind, everything seen
    lanes: tuple[TraceLane, ...] = ()
    steps: tuple[TraceStep, ...] = ()
    grid: GridView | None = None
    truncated: bool = False
    note: str = ""
