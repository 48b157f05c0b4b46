"""The events a job child writes on its event descriptor (one JSON object per line) and the writer
that writes them.

The child's stdout belongs to the user, so the harness reports only here; `started` comes before
any user code is imported. But the child runs user code in the same process, which can write
anything on that descriptor: so every line is decoded against the schema of its kind, within caps
(`sandbox.protocol.reading`), and whatever does not fit ends the run as an unreadable report,
never as an exception in the server.
"""

from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Literal

from sandbox.protocol.arrays import ArrayBytes
from sandbox.protocol.codec import from_json_dict, to_json_dict
from sandbox.protocol.estimate import Estimate
from sandbox.protocol.job import Case, Tolerance
from sandbox.protocol.result import (
    CaseResult,
    ErrorInfo,
    LoweringCheck,
    MemoryUse,
    OutputSummary,
    Race,
    Timing,
    Versions,
)
from sandbox.protocol.sweep import ConfigResult
from sandbox.protocol.trace import Trace

EventKind = Literal[
    "started",  # harness alive, before user code is imported
    "imported",  # user module imported
    "compiled",  # first case compiled and ran once
    "case",  # one case checked (by the checker, outside the kernel's process)
    "case_outputs",  # a kernel's process: what the kernel returned for one case (to the checker only)
    "expected",  # a reference's process: one case's expected outputs (to the checker only)
    "timing",  # timing measured
    "memory",  # memory accounting done
    "outputs",  # scratch-mode outputs summarised
    "lowering",  # TPU lowering check and static chip checks done
    "versions",  # versions and device kind
    "trace",  # kernel trace of the first call (big: folded into the result, not forwarded as progress)
    "estimate",  # the TPU time model's estimate for the first case
    "config",  # a sweep config judged (by the checker, outside the kernel's process)
    "config_outputs",  # a sweep's kernel process: one config's account and outputs (to the checker only)
    "error",  # user code (or the harness) raised
    "progress",  # how far the kernel got (grid steps, DMAs), every second or so while it runs
    "log",  # full internal text for the server log (raw tracebacks); never shown to users
    "done",  # harness finished normally
    "exported",  # a class run's kernel process on a chip: the timed case's program (to the host only)
    "rerun",  # a rerun job's process: the exported program checked and timed (to the host only)
]


# The one list of what a run's followers see, in the order a run goes through them. The queue adds
# `queued` and `running`; the harness's events of FORWARDED_KINDS are passed on (`sandbox.backends.
# execute`); the queue's own `done` carries the whole RunResult. Not forwarded: `trace` and `estimate`
# (big: folded into the result), `log` (internal text for the host's log). The server's stream, the
# page's `api.js` and the API docs are checked against these by `tests/unit/test_event_lists.py`.
QUEUE_KINDS: tuple[str, ...] = ("queued", "running")
FORWARDED_KINDS: frozenset[str] = frozenset(
    {
        "started",
        "versions",
        "imported",
        "compiled",
        "case",
        "outputs",
        "timing",
        "memory",
        "error",
        "lowering",
        "progress",  # live step counts of the kernel running now
        "config",  # a sweep config judged (the model's `estimate` is big: it waits for the result)
    }
)
# What a follower of one run (`/api/runs/{id}/events`) or one sweep (`/api/sweeps/{id}/events`) gets.
RUN_STREAM_KINDS: tuple[str, ...] = (
    *QUEUE_KINDS,
    "started",
    "versions",
    "imported",
    "progress",
    "compiled",
    "case",
    "outputs",
    "timing",
    "memory",
    "lowering",
    "error",
    "done",
)
SWEEP_STREAM_KINDS: tuple[str, ...] = (*QUEUE_KINDS, "config", "error", "done")


@dataclass(frozen=True)
class Event:
    kind: EventKind
    data: dict[str, Any] = field(default_factory=dict)
    t: float = 0.0


@dataclass(frozen=True)
class Started:
    pid: int


@dataclass(frozen=True)
class VersionsFound:
    versions: Versions
    interpret: bool


@dataclass(frozen=True)
class Nothing:
    """A milestone without data (`imported`)."""


@dataclass(frozen=True)
class Compiled:
    first_call_seconds: float


@dataclass(frozen=True)
class CaseChecked:
    index: int
    of: int
    result: CaseResult


@dataclass(frozen=True)
class CaseRan:
    """What a kernel's process tells the checker about one case: its outputs, and what it saw run.

    Everything here is the kernel process's word: the outputs are compared by the checker, the
    rest (time, races, kernels counted) is shown as reported by that process.
    """

    index: int
    case: str
    seconds: float
    inputs_digest: str  # of the inputs the kernel was given, before the call (`sandbox.verdict.arrays`)
    outputs: tuple[ArrayBytes, ...]
    kernels: int  # Pallas kernels (pallas_call, pl.kernel / core_map) in the traced program
    raced: bool = False
    race_count: int = 0
    races: tuple[Race, ...] = ()
    notes: tuple[str, ...] = ()
    # Said with the verdict only if the case mismatches: why a mismatch may have the size it has (the
    # MXU's bf16 pass of f32 dots at the default precision).
    mismatch_hint: str = ""
    # A simulated run: the chip's measured error band of each transcendental the program computes.
    chip_bands: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True)
class CaseExpected:
    """What a reference's process computed for one case: the inputs' digest and the expected outputs."""

    index: int
    of: int
    case: Case
    inputs_digest: str
    input_shapes: tuple[tuple[int, ...], ...]
    outputs: tuple[ArrayBytes, ...]
    # A scratch file's own TOLERANCE, read in the reference's process ({} for a catalog entry: the
    # checker uses the entry's declared tolerances, which never pass through a job's process).
    tolerances: dict[str, Tolerance] = field(default_factory=dict)
    # A sweep's reference: the configs (indices into the full product) whose check size this is.
    configs: tuple[int, ...] = ()
    # A catalog case's inputs themselves (when each is a plain array), kept by the host with the
    # expected outputs and given to every later kernel's job of the entry (`Job.inputs`).
    inputs: tuple[ArrayBytes, ...] = ()
    # What a scratch file's `make_inputs` printed while making them (capped), given with them.
    printed: str = ""


@dataclass(frozen=True)
class OutputsSummarised:
    outputs: tuple[OutputSummary, ...]


@dataclass(frozen=True)
class TimingMeasured:
    timing: Timing


@dataclass(frozen=True)
class MemoryCounted:
    memory: MemoryUse


@dataclass(frozen=True)
class LoweringChecked:
    check: LoweringCheck
    warnings: tuple[str, ...] = ()
    checks: tuple[LoweringCheck, ...] = ()


@dataclass(frozen=True)
class TraceRecorded:
    trace: Trace


@dataclass(frozen=True)
class Estimated:
    estimate: Estimate


@dataclass(frozen=True)
class ConfigJudged:
    result: ConfigResult
    done: int  # configs this job has finished, this one included
    of: int  # configs this job runs


@dataclass(frozen=True)
class ConfigRan:
    """What a sweep's kernel process tells the checker about one config: its own account (trace,
    VMEM, estimate, lowering, a measured time, or why it stopped) and, when the config ran at its
    check size, the outputs. Only the checker makes the config's `ok` or `wrong`: `result.status`,
    `correct` and `reason` as sent here are the process's word, kept only for a config ruled out
    before its check (an error, VMEM, the compiler)."""

    result: ConfigResult
    done: int
    of: int
    ran: bool = False  # the config ran at its check size: `outputs` are what it returned
    how: str = ""  # which interpreter ran it ("generic interpreter", "TPU interpret mode", "on the TPU")
    note: str = ""  # the process's reason before the check (e.g. "no estimate: …")
    inputs_digest: str = ""  # of the inputs at the check size, before the call
    outputs: tuple[ArrayBytes, ...] = ()
    kernels: int = -1  # Pallas kernels in the config's program (-1: not counted)


@dataclass(frozen=True)
class ProgramExported:
    """What a class run's kernel process on a chip sends the host: the program of the case it timed,
    serialized by `jax.export` (base64), for the host to check and time again (`sandbox.backends.rerun`);
    or why it could not be exported."""

    case: str
    program: str = ""
    error: str = ""


@dataclass(frozen=True)
class ProgramRerun:
    """A rerun job's report (`sandbox.harness.rerun`): the exported program's outputs on the seed's
    inputs against the reference's, and its time on the chip; or why it was not run or timed."""

    case: str
    seed: int
    passed: bool
    reason: str = ""
    device_seconds: float | None = None
    wall_median_seconds: float | None = None
    runs: int = 0


@dataclass(frozen=True)
class Failed:
    error: ErrorInfo
    # "chip_busy": the job's chips are held by another program (libtpu's lockfile): nothing ran, and
    # the host may run the job again once they are free (`sandbox.backends.chip_wait`).
    fault: Literal["", "request", "harness", "chip_busy"] = ""
    memory: bool = False


@dataclass(frozen=True)
class Finished:
    peak_rss_bytes: int


@dataclass(frozen=True)
class ProgressReported:
    """How far user code got in a phase: seconds in it and the interpreter's counts since it began."""

    phase: str
    case: str
    seconds: float
    grid_steps: int = 0
    block_copies: int = 0
    dmas: int = 0
    ref_ops: int = 0
    semaphore_ops: int = 0


@dataclass(frozen=True)
class Logged:
    """Raw text for the server's log (full tracebacks); never part of a RunResult."""

    text: str


# The schema of each kind's data: the harness writes exactly these, the reader accepts nothing else.
PAYLOADS: dict[str, type] = {
    "started": Started,
    "versions": VersionsFound,
    "imported": Nothing,
    "compiled": Compiled,
    "case": CaseChecked,
    "case_outputs": CaseRan,
    "expected": CaseExpected,
    "outputs": OutputsSummarised,
    "timing": TimingMeasured,
    "memory": MemoryCounted,
    "lowering": LoweringChecked,
    "trace": TraceRecorded,
    "estimate": Estimated,
    "config": ConfigJudged,
    "config_outputs": ConfigRan,
    "error": Failed,
    "done": Finished,
    "progress": ProgressReported,
    "log": Logged,
    "exported": ProgramExported,
    "rerun": ProgramRerun,
}


def new_event(kind: EventKind, t: float = 0.0, **data: Any) -> Event:
    """An event whose data fits its kind's schema (`DecodeError` if not): the writer's side of the check."""
    encoded = to_json_dict(data)
    return with_payload(Event(kind=kind, data=encoded, t=t), from_json_dict(PAYLOADS[kind], encoded))


# Where an event keeps its decoded payload: an attribute, not a field (never compared, never on the
# wire, gone from a `dataclasses.replace` copy whose data may differ), so the host decodes a line once.
_PAYLOAD = "_payload"


def payload(event: Event) -> Any:
    """The typed data of an event whose data fits its kind's schema: the one its reader decoded, else
    decoded now (`DecodeError` if it does not fit)."""
    kept = event.__dict__.get(_PAYLOAD)
    return kept if kept is not None else from_json_dict(PAYLOADS[event.kind], event.data)


def with_payload(event: Event, typed: Any) -> Event:
    """`event`, keeping `typed`: its data decoded against its kind's schema (by its reader or maker)."""
    object.__setattr__(event, _PAYLOAD, typed)
    return event


class EventWriter:
    """Writes protocol events to the event fd; thread-safe, unbuffered, one line per event."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._lock = threading.Lock()
        self._t0 = time.monotonic()

    def emit(self, kind: EventKind, **data: Any) -> None:
        event = new_event(kind, round(time.monotonic() - self._t0, 6), **data)
        line = (json.dumps(to_json_dict(event), allow_nan=False) + "\n").encode()
        with self._lock:
            view = memoryview(line)
            while view:
                view = view[os.write(self._fd, view) :]
