"""What a run returns: the status, per-case comparisons, timing, memory, lowering and the trace."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from sandbox.protocol.chips import Chip
from sandbox.protocol.estimate import Estimate
from sandbox.protocol.job import InterpretOptions, Tolerance
from sandbox.protocol.sweep import SweepResult
from sandbox.protocol.trace import Trace


class RunStatus(enum.StrEnum):
    PASSED = "passed"
    MISMATCH = "mismatch"
    ERROR = "error"
    TIMEOUT = "timeout"
    RESOURCE_LIMIT = "resource_limit"
    RAN = "ran"
    CANCELLED = "cancelled"
    # Correct in the simulator, but the TPU compiler (the lowering check for the job's chip) rejects it.
    REJECTED = "rejected"
    # The outputs match the reference, but no Pallas kernel ran: an exercise that asks for one is not solved.
    NO_KERNEL = "no_kernel"
    # The simulator cannot run a construct of the kernel (a limitation of JAX's TPU interpret mode, not
    # the user's mistake); the summary says whether the TPU compiler accepts the kernel.
    UNSUPPORTED = "unsupported"

    @property
    def failing(self) -> bool:
        """A verdict against the kernel: a red cell on a class grid, a headline among the room's common
        mistakes. Not `passed` or `ran`, nor `cancelled` (nobody's mistake) or `unsupported` (the
        simulator's limit, not the user's)."""
        return self not in (RunStatus.PASSED, RunStatus.RAN, RunStatus.CANCELLED, RunStatus.UNSUPPORTED)

    @property
    def words(self) -> str:
        """How a run's results name this status."""
        return STATUS_WORDS[self][0]

    @property
    def cell_words(self) -> str:
        """How a class grid's narrow cell names it."""
        return STATUS_WORDS[self][1]


# The one list of the page's words for each status (frontend/static/js/vocab.js is generated from it
# by scripts/vocab.py): in a run's results, and in a class grid's cell.
STATUS_WORDS: dict[RunStatus, tuple[str, str]] = {
    RunStatus.PASSED: ("passed", "passed"),
    RunStatus.MISMATCH: ("mismatch", "mismatch"),
    RunStatus.ERROR: ("error", "error"),
    RunStatus.TIMEOUT: ("timeout", "timeout"),
    RunStatus.RESOURCE_LIMIT: ("resource limit", "over a limit"),
    RunStatus.RAN: ("ran", "ran"),
    RunStatus.CANCELLED: ("cancelled", "cancelled"),
    RunStatus.REJECTED: ("rejected by the TPU compiler", "rejected"),
    RunStatus.NO_KERNEL: ("no Pallas kernel ran", "no kernel"),
    RunStatus.UNSUPPORTED: ("unsupported by the simulator", "unsupported"),
}


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
    # Elements where exactly one side is NaN or ±Inf, or both are infinite with different signs
    # (counted in mismatch_count; never in max_abs_error, which is over finite pairs only).
    nonfinite_mismatches: int = 0
    nonfinite_where: str = ""  # e.g. "NaN in rows 192–255 (all columns)"
    tolerance: Tolerance | None = None  # the tolerance this output was checked with


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
    # Pallas kernels in the program the case ran, as the kernel's process counted them (None: not counted).
    kernels: int | None = None


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
    # On a TPU (not in the simulator): the kernel's median device time per call from profiler
    # traces, and the host dispatch around it (`sandbox.harness.devicetime`); None elsewhere.
    device_seconds: float | None = None
    host_dispatch_seconds: float | None = None
    # On a TPU: the plain-XLA reference's device time on the same inputs (XLA's own op as the baseline).
    reference_device_seconds: float | None = None


@dataclass(frozen=True)
class HostTiming:
    """A class run's time as the host measured it (`sandbox.backends.rerun`): the program the kernel's
    job exported, checked again against the lesson's reference on inputs of a seed that job never saw
    and timed on the chip by a process that runs no user code. `seconds` is None when there is no such
    time, and `note` says why (the run did not pass, the program could not be exported, was refused or
    wrong). A simulated run has none."""

    seconds: float | None  # the device time per call, else the wall-clock median
    note: str
    chip: str = ""
    case: str = ""
    device_seconds: float | None = None
    wall_median_seconds: float | None = None
    runs: int = 0


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
    # True when the failure is a known limitation of JAX's TPU interpret mode, not the user's mistake.
    limitation: bool = False


@dataclass(frozen=True)
class Unavailable:
    """A feature this run went without, because the JAX it ran on lacks it (see `sandbox.harness.compat`)."""

    feature: str  # e.g. "kernel trace", "interpret option detect_races"
    reason: str  # e.g. "not available on jax 0.10.2 (…)"


@dataclass(frozen=True)
class Versions:
    python: str
    jax: str
    jaxlib: str
    libtpu: str | None
    device_kind: str
    # Fixes the harness applied to this JAX version's interpret mode (see `sandbox.harness.jaxapi.interpret_fixes`).
    interpret_fixes: tuple[str, ...] = ()
    # Features of the playground this run went without on this JAX version (older runtimes).
    unavailable: tuple[Unavailable, ...] = ()


@dataclass(frozen=True)
class IrText:
    """One IR as text, capped; `source_lines` maps IR lines to lines of the user's kernel.py (1-based)."""

    text: str
    truncated: bool
    total_chars: int
    source_lines: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True)
class LoweringCheck:
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
    # libtpu's own compile for the chip, run on a host without one (`jaxapi.offline`): True compiled,
    # False refused (`error` is its message, `lowers` False), None not compiled (no libtpu, a chip it
    # does not know, a multi-device function: `note` says which; the VMEM verdict is then the count's).
    compiled: bool | None = None
    compiler: str = (
        ""  # who compiled it, for which chip, where, how long: "libtpu 0.0.50.1, for a TPU v5e, ..."
    )


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
class Phases:
    """Where a run's time went, phase by phase, in seconds measured on the host that ran it.

    Each field is how long that phase took after the one before, in the order a run goes through
    them (`sandbox.backends.phases` measures them as the job's events arrive); None when the run
    never got there (an error before it) or nobody measured it (`queued` on a Redis worker, which
    `/metrics` counts as the queue wait). `first_verdict_after` adds up everything before the first
    case's verdict, from the moment the queue took the run (or, with `queued`, from submission).
    """

    queued: float | None = None  # submitted → a slot took it
    reference: float = 0.0  # the reference's job (0 when the entry's expected outputs were kept)
    started: float | None = None  # → the kernel's job process started (forked from the warm pool)
    imported: float | None = None  # → the target set up and the user's code imported
    compiled: float | None = None  # → the first case's first call returned (inputs, compile, run)
    first_verdict: float | None = None  # → the first case judged and sent (its outputs to the checker)
    done: float | None = None  # → the whole result (the other cases, lowering, timing, memory, trace)
    first_verdict_after: float | None = None


PHASE_NAMES = ("queued", "reference", "started", "imported", "compiled", "first_verdict", "done")


@dataclass(frozen=True)
class CaseDiff:
    """One case both runs checked: each simulated output compared with the chip's, at the run's tolerance."""

    name: str
    outputs: tuple[OutputCheck, ...]  # got: the simulator's; expected: the chip's


@dataclass(frozen=True)
class SideBySide:
    """A run natively and in the simulator at once (mode `both`): the two verdicts, how far apart the
    two runs' outputs are, and the simulator's estimate beside the chip's measured time."""

    chip_status: RunStatus
    chip_summary: str
    simulated_status: RunStatus
    simulated_summary: str
    agree: bool  # the same status
    cases: tuple[CaseDiff, ...]  # the cases both runs reached
    largest: str  # where the outputs differ most, in words ("" when no case reached both)
    largest_abs_difference: float | None
    estimated_seconds: float | None  # the time model's, for the chip, of the case the chip timed
    measured_seconds: float | None  # the chip's device time (the native run's timing)
    simulated_wall_seconds: float = 0.0
    timed_case: str = ""  # the case both times are of


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
    lowering: LoweringCheck | None = None
    lowerings: tuple[LoweringCheck, ...] = ()
    chip_warnings: tuple[str, ...] = ()
    # The kernel trace of the first call of the first case (None when the job asked for none).
    trace: Trace | None = None
    # The TPU time model's estimate for the first case (`sandbox.harness.model`), and a sweep's configs.
    estimate: Estimate | None = None
    sweep: SweepResult | None = None
    # Who made the verdict (`sandbox.verdict`): "" when nothing was checked; else what the outputs were
    # compared with, always outside the kernel's process. Timings, memory, the trace and the estimate
    # are the kernel process's own report and are shown as such.
    checked_by: str = ""
    # The host's word, not the job's (`Execution.on_chip`): the kernel's job ran on a TPU chip slot.
    ran_on_chip: bool = False
    # A class run's time as the host measured it (`HostTiming`): the only time the class board believes
    # as measured. None for a run that did not ask for it.
    host_timing: HostTiming | None = None
    # Where the run's time went (`Phases`); None for a result from the cache or one that never ran.
    phases: Phases | None = None
    # Mode `both`: this result is the chip's, and this the simulator's verdict beside it.
    both: SideBySide | None = None
