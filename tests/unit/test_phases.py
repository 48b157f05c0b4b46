"""The phases each kind of job runs, in order (`sandbox.harness.phases`): the three kinds shared them
by copy once and drifted; a kind that skips a phase, reorders them, or handles a failure its own way
fails here.

Each job runs in this process on a stand-in target (native, so nothing of the simulator is
installed) up to its first call of `make_inputs`, which raises: what is pinned is every phase it
entered and every event it sent on the way.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from sandbox.harness import phases
from sandbox.harness.phases import JobSession
from sandbox.harness.reference import ReferenceSession
from sandbox.harness.session import Session
from sandbox.harness.sweep import SweepSession
from sandbox.harness.target import Target
from sandbox.jobs.build import make_job
from sandbox.protocol import Case, EntrySpec, InterpretOptions, Job, SweepSpec
from sandbox.verdict.tolerances import scratch_tolerances

SCRATCH = """
def make_inputs(seed, m=8):
    raise RuntimeError("make_inputs stops here")

def reference(x):
    return x

def kernel(x, *, block=8):
    return x
"""
REFERENCE = """
def make_inputs(case):
    raise RuntimeError("make_inputs stops here")

def reference(x):
    return x
"""
ENTRY = EntrySpec(
    slug="copy",
    entry_point="copy",
    reference_source=REFERENCE,
    cases=(Case(name="small", dtype="float32", seed=0, dims={"m": 8}),),
    tolerances={},
)
SWEEP = SweepSpec(params={"block": (8,)}, size={"m": 16})

LOAD_SCRATCH = ["import", "import", "import", "import"]  # the module, kernel, make_inputs, TOLERANCE
FAILS = ["make_inputs", "event log", "event error"]
ORDER = {
    ("run", "scratch"): ["target", "event versions", *LOAD_SCRATCH, "event imported", *FAILS],
    ("run", "catalog"): [
        "target",
        "event versions",
        "reference import",
        "import",
        "import",
        "event imported",
        *FAILS,
    ],
    # The reference's job loads the user's file only for its make_inputs, reference and TOLERANCE.
    ("reference", "scratch"): ["target", "import", "import", "import", *FAILS],
    ("reference", "catalog"): ["target", "reference import", *FAILS],
    # A sweep loaded its own way (user's file first, one phase for all, no TOLERANCE); now as a run,
    # plus the plan's check size and inputs at any size (the last `import`).
    ("sweep", "scratch"): ["target", "event versions", *LOAD_SCRATCH, "import", "event imported", *FAILS],
    ("sweep", "catalog"): [
        "target",
        "event versions",
        "reference import",
        "import",
        "import",
        "import",
        "event imported",
        *FAILS,
    ],
    # A sweep's reference: one case per check size.
    ("sweep reference", "scratch"): ["target", "import", "import", "import", *FAILS],
}
KINDS = {
    "run": Session,
    "reference": ReferenceSession,
    "sweep": SweepSession,
    "sweep reference": ReferenceSession,
}


class Trail:
    """The phases entered and the events sent, in order."""

    def __init__(self) -> None:
        self.steps: list[str] = []
        self.modes: list[str] = []  # the modes the target was configured for
        self.events: list[tuple[str, dict[str, Any]]] = []

    def emit(self, kind: str, **data: Any) -> None:
        self.steps.append(f"event {kind}")
        self.events.append((kind, data))


def run(kind: type[JobSession], job: Job, monkeypatch: pytest.MonkeyPatch, target: Target) -> Trail:
    trail = Trail()
    monkeypatch.setattr(phases, "configure", lambda chip, mode, *rest: trail.modes.append(mode) or target)
    entered = JobSession._phase

    def phase(self: JobSession, name: str, *args: Any, **kwargs: Any) -> Any:
        trail.steps.append(name)
        return entered(self, name, *args, **kwargs)

    monkeypatch.setattr(JobSession, "_phase", phase)
    kind(job, trail).run()  # type: ignore[arg-type]
    return trail


def native() -> Target:
    return Target(chip="v5e", interpret=False, options=InterpretOptions())


def job_for(mode: str, kind: str = "run", **changes: Any) -> Job:
    source = SCRATCH if mode == "scratch" else SCRATCH.replace("def kernel", "def copy")
    job = replace(make_job(source, chip="v5e", mode="interpret"), **changes)
    job = job if mode == "scratch" else replace(job, entry=ENTRY)
    return replace(job, sweep=SWEEP) if kind.startswith("sweep") else job


@pytest.mark.parametrize(("kind", "mode"), sorted(ORDER))
def test_phases_run_in_the_pinned_order(kind, mode, monkeypatch):
    trail = run(KINDS[kind], job_for(mode, kind), monkeypatch, native())
    assert trail.steps == ORDER[kind, mode]
    # The reference runs where the host put it, whatever the kernel's mode.
    assert trail.modes == ["auto" if kind.endswith("reference") else "interpret"]
    error = trail.events[-1][1]["error"]
    assert error.phase == "make_inputs" and "make_inputs stops here" in error.message


@pytest.mark.parametrize("kind", ["run", "sweep"])
def test_phases_report_a_missing_function_in_the_users_terms(kind, monkeypatch):
    job = replace(job_for("scratch", kind), source=SCRATCH.replace("def kernel", "def kernal"))
    trail = run(KINDS[kind], job, monkeypatch, native())
    # A sweep said "the file must define a function `kernel`", and for a catalog entry too.
    assert trail.events[-1][1]["error"].message == "a scratch file must define a function `kernel`"
    assert trail.steps == ["target", "event versions", "import", "import", "event log", "event error"]


@pytest.mark.parametrize("kind", ["run", "sweep"])
def test_phases_mark_a_memory_error(kind, monkeypatch):
    source = SCRATCH.replace('RuntimeError("make_inputs stops here")', "MemoryError()")
    trail = run(KINDS[kind], replace(job_for("scratch", kind), source=source), monkeypatch, native())
    # A sweep's was a plain `error`, not the memory limit the classifier makes of this flag.
    assert trail.events[-1] == ("error", {"error": trail.events[-1][1]["error"], "memory": True})


@pytest.mark.parametrize("kind", ["run", "sweep"])
def test_phases_say_which_jax_has_a_missing_name(kind, monkeypatch):
    source = "from jax.experimental.pallas import tpu as pltpu\nMESH = pltpu.NotYetAMesh\n" + SCRATCH
    job = job_for("scratch", kind, source=source, elsewhere={"pltpu.NotYetAMesh": "0.13 and later"})
    trail = run(KINDS[kind], job, monkeypatch, native())
    # A sweep's errors were translated without the job's `elsewhere`: "has no `NotYetAMesh`".
    assert "it is in 0.13 and later" in trail.events[-1][1]["error"].message


def test_phases_give_a_sweep_the_files_tolerance(monkeypatch):
    """The sweep's own comparison (its hint: which interpreter's outputs to send, whether to time
    a config on a TPU) used the default tolerances where the checker used the file's."""
    source = SCRATCH + 'TOLERANCE = {"float32": {"rtol": 0.1, "atol": 0.1}}\n'
    job = job_for("scratch", "sweep", source=source)
    plan = SweepSession(job, Trail())._load()  # type: ignore[arg-type]
    assert plan.tolerances == scratch_tolerances({"float32": {"rtol": 0.1, "atol": 0.1}})


def test_phases_import_the_users_module_in_the_chips_context(monkeypatch):
    """Code at the top of a file may ask for the chip (a block size from VMEM), as on a TPU."""
    source = (
        "from jax.experimental.pallas import tpu as pltpu\nVMEM = pltpu.get_tpu_info().vmem_capacity_bytes\n"
    )
    simulated = Target(chip="v5e", interpret=True, options=InterpretOptions())
    monkeypatch.setattr(Session, "_watch", lambda self, target: None)  # the monitor patches JAX for good
    trail = run(Session, make_job(source + SCRATCH, chip="v5e"), monkeypatch, simulated)
    assert trail.steps[:7] == ["target", "event versions", *LOAD_SCRATCH, "event imported"]
