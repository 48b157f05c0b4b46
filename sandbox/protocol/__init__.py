"""The sandbox protocol: types every process shares, and nothing else.

Imports nothing else of `sandbox/`, no JAX and no HTTP, so the server, the backends, the jail and
the job child can all speak it. A job travels to the child as JSON on stdin; the child answers with
protocol events (JSON lines) on its own descriptor; a backend gathers them into an `Execution`,
which `sandbox.results.classify` turns into a `RunResult`.

    job.py     Job, Case, EntrySpec, Limits, InterpretOptions, Tolerance
    result.py  RunResult and everything in it (cases, timing, memory, lowering checks, errors)
    trace.py   the kernel trace's types (RunResult.trace)
    estimate.py the TPU time model's Estimate (RunResult.estimate, a sweep config's estimate)
    sweep.py   SweepSpec (Job.sweep), ConfigResult, SweepResult (RunResult.sweep)
    events.py  Event, EventKind, EventWriter (the child's side)
    reading.py read_event: the host's side, within caps per line and per job
    execution.py  Execution (the backend's facts about one child), never_ran
    chips.py   the chip table (the one list of TPU generations)
    codec.py   to_json_dict / from_json_dict for all of the above
"""

from sandbox.protocol.chips import CHIP_TABLE, CHIPS, Chip, ChipInfo, SparseCore, chip_info
from sandbox.protocol.codec import from_json_dict, to_json_dict
from sandbox.protocol.estimate import Estimate
from sandbox.protocol.events import (
    FORWARDED_KINDS,
    QUEUE_KINDS,
    RUN_STREAM_KINDS,
    SWEEP_STREAM_KINDS,
    Event,
    EventKind,
    EventWriter,
    new_event,
)
from sandbox.protocol.execution import Execution, never_ran
from sandbox.protocol.job import Case, CaseInputs, EntrySpec, InterpretOptions, Job, Limits, Mode, Tolerance
from sandbox.protocol.result import (
    CaseDiff,
    CaseResult,
    ErrorInfo,
    HostTiming,
    IrText,
    LoweringCheck,
    MemoryUse,
    Mismatch,
    OutputCheck,
    OutputSummary,
    Phases,
    Race,
    RaceAccess,
    RunResult,
    RunStatus,
    SideBySide,
    Stats,
    Timing,
    Unavailable,
    Versions,
)
from sandbox.protocol.sweep import ConfigResult, LoweringVerdict, SweepResult, SweepSpec
from sandbox.protocol.trace import Trace

__all__ = [
    "CHIPS",
    "CHIP_TABLE",
    "FORWARDED_KINDS",
    "QUEUE_KINDS",
    "RUN_STREAM_KINDS",
    "SWEEP_STREAM_KINDS",
    "Case",
    "CaseDiff",
    "CaseInputs",
    "CaseResult",
    "Chip",
    "ChipInfo",
    "ConfigResult",
    "EntrySpec",
    "ErrorInfo",
    "Estimate",
    "Event",
    "EventKind",
    "EventWriter",
    "Execution",
    "HostTiming",
    "InterpretOptions",
    "IrText",
    "Job",
    "Limits",
    "LoweringCheck",
    "LoweringVerdict",
    "MemoryUse",
    "Mismatch",
    "Mode",
    "OutputCheck",
    "OutputSummary",
    "Phases",
    "Race",
    "RaceAccess",
    "RunResult",
    "RunStatus",
    "SideBySide",
    "SparseCore",
    "Stats",
    "SweepResult",
    "SweepSpec",
    "Timing",
    "Tolerance",
    "Trace",
    "Unavailable",
    "Versions",
    "chip_info",
    "from_json_dict",
    "never_ran",
    "new_event",
    "to_json_dict",
]
