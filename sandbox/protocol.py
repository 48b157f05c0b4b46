"""Domain and sandbox-protocol types: what a job is, what the child reports, what a run returns.

These are frozen dataclasses, deliberately independent of HTTP (the server converts its pydantic wire
types to and from them) and of JAX (the parent never imports JAX). `to_json_dict` / `from_json_dict`
convert any of them to plain JSON values and back, so the protocol between parent and child is just
these types as JSON lines on a dedicated file descriptor.
"""

from __future__ import annotations

import dataclasses
import enum
import math
import types
import typing
from dataclasses import dataclass, field
from typing import Any, Literal

# The trace's types live in their own module; RunResult.trace needs the name here for decoding.
from sandbox.trace_types import Trace

Chip = Literal["v5e", "v5p", "v6e", "tpu7x"]
CHIPS: tuple[Chip, ...] = ("v5e", "v5p", "v6e", "tpu7x")
Mode = Literal["auto", "interpret", "tpu"]


class RunStatus(enum.StrEnum):
    PASSED = "passed"
    MISMATCH = "mismatch"
    ERROR = "error"
    TIMEOUT = "timeout"
    RESOURCE_LIMIT = "resource_limit"
    RAN = "ran"
    CANCELLED = "cancelled"


@dataclass(frozen=True)
class InterpretOptions:
    """The interpret-mode switches a user may toggle (fields of `pltpu.InterpretParams`)."""

    detect_races: bool = False
    uninitialized_memory: Literal["nan", "zero"] = "nan"
    dma_execution_mode: Literal["on_wait", "eager"] = "on_wait"
    random_seed: int | None = None


@dataclass(frozen=True)
class Limits:
    """Per-job resource limits. Defaults live in `sandbox.limits`."""

    wall_seconds: float
    cpu_seconds: int
    memory_bytes: int
    processes: int
    output_bytes: int
    output_kill_bytes: int
    source_bytes: int
    scratch_bytes: int


@dataclass(frozen=True)
class Tolerance:
    rtol: float
    atol: float


@dataclass(frozen=True)
class Case:
    """One input configuration: the harness builds inputs from (dims, dtype, seed) deterministically."""

    name: str
    dtype: str
    seed: int
    dims: dict[str, int] = field(default_factory=dict)
    tpu_only: bool = False

    def __getattr__(self, name: str) -> int:
        # Lets reference code write `case.m` for `case.dims["m"]`.
        dims = object.__getattribute__(self, "dims")
        if name in dims:
            return dims[name]
        raise AttributeError(name)


@dataclass(frozen=True)
class EntrySpec:
    """What the child needs of a catalog entry: the reference, the cases and how to check them."""

    slug: str
    entry_point: str
    reference_source: str
    cases: tuple[Case, ...]
    tolerances: dict[str, Tolerance]
    mutable_inputs: tuple[int, ...] = ()
    devices: int = 1
    flops: int | None = None
    bytes_accessed: int | None = None


@dataclass(frozen=True)
class Job:
    id: str
    source: str
    chip: Chip
    mode: Mode
    options: InterpretOptions
    limits: Limits
    entry: EntrySpec | None = None
    timing_budget_seconds: float = 1.5
    devices: int = 1
    # "Check on all chips": also lower the kernel for these chips (see `sandbox.lowering`).
    lower_chips: tuple[Chip, ...] = ()
    # Record a kernel trace during the first call of the first case (interpret mode; `sandbox.trace`).
    trace: bool = True


# ---------------------------------------------------------------------------------------------
# What a run returns.


@dataclass(frozen=True)
class Mismatch:
    index: tuple[int, ...]
    got: float
    expected: float


@dataclass(frozen=True)
class OutputCheck:
    """The comparison of one output array (a case can have several outputs)."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    expected_shape: tuple[int, ...]
    expected_dtype: str
    passed: bool
    max_abs_error: float | None
    max_rel_error: float | None
    mismatch_count: int
    total: int
    first_mismatches: tuple[Mismatch, ...]
    nan_parity: bool
    inf_parity: bool
    error_map: tuple[tuple[float, ...], ...] = ()
    note: str = ""


@dataclass(frozen=True)
class RaceAccess:
    """One side of a data race, as the interpret-mode race detector reported it."""

    kind: str  # "read" or "write"
    buffer: str  # e.g. "HBM buffer 101 on device 0"
    region: str  # the indexed region, e.g. "[0:8, 0:128]"
    by: str  # who accessed it: "device 0, core 1" or "a DMA (id 144)"
    file: str | None = None  # the user's source file, when the detector knew the line
    line: int | None = None
    function: str = ""


@dataclass(frozen=True)
class Race:
    """A pair of accesses to overlapping memory that no semaphore or barrier orders."""

    summary: str
    accesses: tuple[RaceAccess, ...]
    text: str  # the detector's own report, verbatim


@dataclass(frozen=True)
class CaseResult:
    name: str
    dtype: str
    dims: dict[str, int]
    input_shapes: tuple[tuple[int, ...], ...]
    tolerance: Tolerance | None
    passed: bool | None
    outputs: tuple[OutputCheck, ...]
    seconds: float
    note: str = ""
    # Filled only when race detection is on; a case with races fails even if its outputs match.
    races: tuple[Race, ...] = ()


@dataclass(frozen=True)
class Stats:
    n: int
    mean: float
    median: float
    min: float
    max: float
    std: float
    rse: float


@dataclass(frozen=True)
class Timing:
    first_call_seconds: float
    compile_seconds: float | None
    kernel: Stats | None
    reference: Stats | None
    ratio_to_reference: float | None
    simulated: bool
    roofline_seconds: float | None
    flops: int | None
    bytes_accessed: int | None
    case: str
    note: str = ""


@dataclass(frozen=True)
class MemoryUse:
    peak_rss_bytes: int
    hbm_input_bytes: int
    hbm_output_bytes: int
    vmem_bytes: int | None
    smem_bytes: int | None
    semaphores: int | None
    vmem_capacity_bytes: int
    smem_capacity_bytes: int
    hbm_capacity_bytes: int
    warnings: tuple[str, ...] = ()
    note: str = ""


@dataclass(frozen=True)
class ErrorInfo:
    type: str
    message: str
    traceback: str
    line: int | None = None
    phase: str = ""


@dataclass(frozen=True)
class Versions:
    python: str
    jax: str
    jaxlib: str
    libtpu: str | None
    device_kind: str
    # Fixes the harness applied to this JAX version's interpret mode (see `sandbox.interpret_fixes`).
    interpret_fixes: tuple[str, ...] = ()


@dataclass(frozen=True)
class IrText:
    """One IR as text, capped; `source_lines` maps IR lines to lines of the user's kernel.py (1-based)."""

    text: str
    truncated: bool
    total_chars: int
    source_lines: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True)
class LoweringReport:
    """Whether the kernel lowers for a real TPU of `chip` (interpret mode off), and the IR it lowers to.

    `lowers` is None when the check could not run (e.g. the kernel was built at import time, with the
    simulator's setting baked in). The texts are those of the last stage reached: a kernel rejected by
    the Mosaic lowering still has its jaxpr.
    """

    chip: Chip
    lowers: bool | None
    seconds: float
    error: ErrorInfo | None = None
    jaxpr: IrText | None = None
    mosaic: IrText | None = None
    stablehlo: IrText | None = None
    kernels: int = 0
    warnings: tuple[str, ...] = ()
    note: str = ""


@dataclass(frozen=True)
class OutputSummary:
    """For runs without a reference: what came out, summarised."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    min: float | None
    max: float | None
    mean: float | None
    nan_count: int
    inf_count: int
    preview: str


@dataclass(frozen=True)
class RunResult:
    status: RunStatus
    summary: str
    chip: str
    mode: str
    options: InterpretOptions
    cases: tuple[CaseResult, ...] = ()
    outputs: tuple[OutputSummary, ...] = ()
    error: ErrorInfo | None = None
    timing: Timing | None = None
    memory: MemoryUse | None = None
    stdout: str = ""
    stderr: str = ""
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    versions: Versions | None = None
    limit: str | None = None
    wall_seconds: float = 0.0
    # Set when the result is a cached copy of an identical earlier run (its timings are that run's).
    cached_from: str | None = None
    cached_at: float | None = None
    # The TPU lowering check (interpret mode only): the job's chip, and one report per `Job.lower_chips`.
    lowering: LoweringReport | None = None
    lowerings: tuple[LoweringReport, ...] = ()
    chip_warnings: tuple[str, ...] = ()
    # The kernel trace of the first call of the first case (None when the job asked for none).
    trace: Trace | None = None


# ---------------------------------------------------------------------------------------------
# Protocol: events the child writes (one JSON object per line) on its report fd.

EventKind = Literal[
    "started",  # harness alive, before user code is imported
    "imported",  # user module imported
    "compiled",  # first case compiled and ran once
    "case",  # one case checked
    "timing",  # timing measured
    "memory",  # memory accounting done
    "outputs",  # scratch-mode outputs summarised
    "lowering",  # TPU lowering check and static chip checks done
    "versions",  # versions and device kind
    "trace",  # kernel trace of the first call (big: folded into the result, not forwarded as progress)
    "error",  # user code (or the harness) raised
    "done",  # harness finished normally
]


@dataclass(frozen=True)
class Event:
    kind: EventKind
    data: dict[str, Any] = field(default_factory=dict)
    t: float = 0.0


@dataclass(frozen=True)
class Execution:
    """Raw facts about one child process, gathered by a backend; `classify` turns them into a RunResult."""

    events: tuple[Event, ...]
    exit_code: int | None
    signal: int | None
    timed_out: bool
    cancelled: bool
    wall_seconds: float
    stdout: str
    stderr: str
    stdout_truncated: bool
    stderr_truncated: bool
    output_limit_hit: bool = False
    memory_limit_hit: bool = False
    cpu_limit_hit: bool = False
    peak_rss_bytes: int = 0
    infra_error: str | None = None
    # Kernel-counted limit hits the hardened backend can see (the local backend leaves them False).
    pids_limit_hit: bool = False
    disk_limit_hit: bool = False


# ---------------------------------------------------------------------------------------------
# JSON conversion for all of the above.


def to_json_dict(value: Any) -> Any:
    """Dataclasses, enums, tuples and dicts to plain JSON values."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_json_dict(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (list, tuple)):
        return [to_json_dict(v) for v in value]
    if isinstance(value, dict):
        return {str(k): to_json_dict(v) for k, v in value.items()}
    if isinstance(value, float) and not math.isfinite(value):
        # JSON has no NaN or infinity; they travel as the strings "nan", "inf" and "-inf".
        return str(value)
    return value


def from_json_dict[T](cls: type[T], data: Any) -> T:
    """The inverse of `to_json_dict`, driven by the dataclass field annotations."""
    return typing.cast(T, _decode(cls, data))


def _decode(tp: Any, data: Any) -> Any:
    origin = typing.get_origin(tp)
    if tp is Any:
        return data
    if origin is typing.Union or isinstance(tp, types.UnionType):
        args = typing.get_args(tp)
        if data is None and type(None) in args:
            return None
        return _decode(next(a for a in args if a is not type(None)), data)
    if origin is Literal:
        if data not in typing.get_args(tp):
            raise ValueError(f"{data!r} is not one of {typing.get_args(tp)}")
        return data
    if origin is tuple:
        args = typing.get_args(tp)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_decode(args[0], v) for v in data)
        return tuple(_decode(a, v) for a, v in zip(args, data, strict=True))
    if origin is dict:
        _, value_type = typing.get_args(tp)
        return {k: _decode(value_type, v) for k, v in data.items()}
    if origin is list:
        return [_decode(typing.get_args(tp)[0], v) for v in data]
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return tp(data)
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        hints = typing.get_type_hints(tp)
        known = {f.name for f in dataclasses.fields(tp)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown fields for {tp.__name__}: {sorted(unknown)}")
        return tp(**{k: _decode(hints[k], v) for k, v in data.items()})
    if tp is float and isinstance(data, (int, str)):
        return float(data)
    return data
