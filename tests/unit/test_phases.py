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
from sandbox.harness.target import Target
from sandbox.jobs.build import make_job
from sandbox.protocol import Case, EntrySpec, InterpretOptions, Job, SweepSpec

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


def job_for(mode: str) -> Job:
    if mode == "scratch":
        return make_job(SCRATCH, chip="v5e", mode="interpret")
    return replace(
        make_job(SCRATCH.replace("def kernel", "def copy"), chip="v5e", mode="interpret"), entry=ENTRY
    )


@pytest.mark.parametrize(("kind", "mode"), sorted(ORDER))
def test_phases_run_in_the_pinned_order(kind, mode, monkeypatch):
    session = {"run": Session, "reference": ReferenceSession}[kind]
    trail = run(session, job_for(mode), monkeypatch, native())
    assert trail.steps == ORDER[kind, mode]
    # The reference runs where the host put it, whatever the kernel's mode.
    assert trail.modes == ["auto" if kind == "reference" else "interpret"]
    error = trail.events[-1][1]["error"]
    assert error.phase == "make_inputs" and "make_inputs stops here" in error.message


def test_phases_report_a_missing_function_in_the_users_terms(monkeypatch):
    job = make_job(SCRATCH.replace("def kernel", "def kernal"), chip="v5e")
    trail = run(Session, job, monkeypatch, native())
    assert trail.steps == ["target", "event versions", "import", "import", "event log", "event error"]
    assert trail.events[-1][1]["error"].message == "a scratch file must define a function `kernel`"


def test_phases_mark_a_memory_error(monkeypatch):
    job = make_job(SCRATCH.replace('RuntimeError("make_inputs stops here")', "MemoryError()"), chip="v5e")
    trail = run(Session, job, monkeypatch, native())
    assert trail.events[-1] == ("error", {"error": trail.events[-1][1]["error"], "memory": True})


def test_phases_import_the_users_module_in_the_chips_context(monkeypatch):
    """Code at the top of a file may ask for the chip (a block size from VMEM), as on a TPU."""
    source = (
        "from jax.experimental.pallas import tpu as pltpu\nVMEM = pltpu.get_tpu_info().vmem_capacity_bytes\n"
    )
    simulated = Target(chip="v5e", interpret=True, options=InterpretOptions())
    monkeypatch.setattr(Session, "_watch", lambda self, target: None)  # the monitor patches JAX for good
    trail = run(Session, make_job(source + SCRATCH, chip="v5e"), monkeypatch, simulated)
    assert trail.steps[:7] == ["target", "event versions", *LOAD_SCRATCH, "event imported"]
