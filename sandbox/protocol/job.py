"""What a job is: the request the child runs, with its limits, options and (in catalog mode) the entry."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from sandbox.protocol.arrays import ArrayBytes
from sandbox.protocol.chips import Chip
from sandbox.protocol.sweep import SweepSpec

# "both" (a TPU host only): the kernel's job natively and simulated as the host's chip, one result
# with both verdicts and how far apart their outputs are (`sandbox.backends.both`); never a job's
# process's mode (each of the two jobs is "tpu" or "interpret").
Mode = Literal["auto", "interpret", "tpu", "both"]
# A run is two jobs (`sandbox.backends.checking`): the "reference" job makes inputs and expected outputs
# and never loads the user's kernel code (catalog mode) or never calls it (scratch mode); the "kernel"
# job runs the kernel and reports its outputs. The comparison happens outside both. A class run's
# "rerun" job (`sandbox.backends.rerun`) runs no user code: on the chip, it checks and times the program
# the kernel's job exported, on inputs of a seed that job never saw, for the class board.
Role = Literal["kernel", "reference", "rerun"]


@dataclass(frozen=True)
class InterpretOptions:
    """The interpret-mode switches a user may toggle (fields of `pltpu.InterpretParams`)."""

    detect_races: bool = False
    uninitialized_memory: Literal["nan", "zero"] = "nan"
    dma_execution_mode: Literal["on_wait", "eager"] = "on_wait"
    random_seed: int | None = None
    # Edge-tile checks: "uninitialized" makes a read past a buffer return the fill (NaN) instead of
    # raising; "padded" lets reads and writes reach into the (8, 128) tile padding a TPU allocates.
    out_of_bounds_reads: Literal["raise", "uninitialized"] = "raise"
    buffer_bounds: Literal["logical", "padded"] = "logical"


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


# A scratch file's one case (it has no catalog cases): the harness's `SCRATCH_CASE`, the host's name for it.
SCRATCH_CASE_NAME = "scratch"


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
    # An exercise solved only by a Pallas kernel: outputs that match without one are `no_kernel`.
    expects_kernel: bool = True

    def cases_for(self, mode: str) -> tuple[Case, ...]:
        """The cases a job in `mode` runs: the TPU-size ones only in mode `tpu`."""
        return tuple(c for c in self.cases if not (c.tpu_only and mode != "tpu"))


@dataclass(frozen=True)
class CaseInputs:
    """A case's inputs as the reference's job made them, given to the kernel's job by the host, so it
    does not compute them again (`sandbox.backends.references`): the arrays in argument order."""

    index: int
    arrays: tuple[ArrayBytes, ...]
    # What a scratch file's `make_inputs` printed making them: the kernel's job prints it where it
    # would have called `make_inputs`, so the run's output reads as if it had.
    printed: str = ""


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
    # "Check on all chips": also lower the kernel for these chips (see `sandbox.harness.lowering.check`).
    lower_chips: tuple[Chip, ...] = ()
    # Record a kernel trace during the first call of the first case (interpret mode; `sandbox.harness.trace.capture`).
    trace: bool = True
    # The JAX runtime to run on, by its jax version ("": the backend's default, the newest; `sandbox.host.runtimes`).
    runtime: str = ""
    # Pallas names this runtime lacks and where the installed runtimes have them ("pltpu.TensorCoreMesh" ->
    # "0.11.2 and later"), filled in by the backend, so an AttributeError can say where a name exists.
    elsewhere: dict[str, str] = field(default_factory=dict)
    # A sweep ("Tune", `sandbox.protocol.sweep`): check, lower and estimate each config instead of one run.
    sweep: SweepSpec | None = None
    role: Role = "kernel"
    # The kernel's job of a catalog entry: each case's inputs, when the host has them (else, or for a
    # case not listed, the job makes them with the entry's `make_inputs`, as the reference's job did).
    inputs: tuple[CaseInputs, ...] = ()
    # A class run on a scratch step (set by the server, never from a request): the lesson step's file,
    # whose `make_inputs`, `reference` and `TOLERANCE` check this kernel instead of the file's own.
    reference_source: str | None = None
    # A class run (set by the server, never from a request): on a chip, its kernel's job exports the
    # timed case's program, and the host checks and times it again in a "rerun" job of its own.
    rerun: bool = False
    # A class run on a scratch step whose file writes a Pallas kernel (set by the server, never from a
    # request): outputs that match without a kernel are `no_kernel`, as a catalog exercise's are.
    expects_kernel: bool = False
    # A "rerun" job's: the exported program (`jax.export`, base64), the name of the case it was exported
    # for, and the seed of the inputs it is checked and timed on.
    program: str = ""
    rerun_case: str = ""
    rerun_seed: int = 0
