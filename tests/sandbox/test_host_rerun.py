"""A class run's time for the board, made by the host (issue 41): the kernel's exported program,
checked and timed again in a rerun job that runs no user code (`sandbox.backends.rerun`,
`sandbox.harness.rerun`, `sandbox.harness.jaxapi.exported`).

Off a chip this checks what needs no chip: what a program must be to be loaded at all (exported here
for the TPU, as a kernel's job on a chip exports it), the rerun job the host builds (the lesson's
code, never the student's; a fresh seed), when the host does not rerun and what it says instead, and
that a kernel's process cannot write the host's report. Running and timing the program is the chip
tier's (`tests/tpu/test_web_on_chip.py`)."""

from __future__ import annotations

import base64
import dataclasses
import importlib.util
import json
import os
import threading
from pathlib import Path

import jax
import jax.numpy as jnp
import pytest
from jax.experimental import pallas as pl

from sandbox.backends import checking, rerun
from sandbox.backends.reported import bounded
from sandbox.backends.service import MAX_JOB_BYTES
from sandbox.catalog.entries import load_catalog
from sandbox.harness import calls
from sandbox.harness.jaxapi.exported import PROGRAM_BYTES, ProgramRefused, export_for_tpu, load_program
from sandbox.harness.model.estimate import chip_context
from sandbox.harness.rerun import RerunSession
from sandbox.jobs.build import make_job
from sandbox.protocol import (
    CaseResult,
    Event,
    EventWriter,
    Execution,
    Job,
    chip_info,
    new_event,
    to_json_dict,
)
from sandbox.protocol.events import ProgramRerun, payload
from sandbox.results.classify import classify
from tests.executions import finished

pytestmark = pytest.mark.usefixtures("cpu_only")

X = jnp.ones((256, 128), jnp.float32)
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def cpu_only(monkeypatch):
    monkeypatch.setenv("JAX_PLATFORMS", "cpu")


def add(x, y):
    def body(x_ref, y_ref, o_ref):
        o_ref[...] = x_ref[...] + y_ref[...]

    spec = pl.BlockSpec((128, 128), lambda i: (i, 0))
    return pl.pallas_call(
        body,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        grid=(2,),
        in_specs=[spec, spec],
        out_specs=spec,
    )(x, y)


def exported(fn, *args, checks=()) -> str:
    """`fn` exported for the TPU as an attacker may: with jax.export's own checks off."""
    program = jax.export.export(jax.jit(fn), platforms=("tpu",), disabled_checks=list(checks))(*args)
    return base64.b64encode(program.serialize()).decode()


def refusal(text: str, inputs) -> str:
    with pytest.raises(ProgramRefused) as refused:
        load_program(text, inputs)
    return str(refused.value)


def test_a_pallas_program_exported_off_the_chip_loads_for_its_own_inputs_only():
    text = export_for_tpu(add, (X, X))
    assert callable(load_program(text, (X, X)))
    assert "other arguments" in refusal(text, (X,))
    assert "bfloat16[256, 128]" in refusal(text, (X, X.astype(jnp.bfloat16)))
    assert "not base64" in refusal("not a program!", (X, X))
    assert "limit" in refusal(base64.b64encode(b"\0" * (PROGRAM_BYTES + 1)).decode(), (X, X))
    assert "could not be read" in refusal(base64.b64encode(b"garbage").decode(), (X, X))


def test_a_program_that_calls_anything_but_a_pallas_kernel_is_refused():
    callback = "xla_ffi_python_cpu_callback"  # a native function that calls back into Python

    def escape(x):
        return jax.ffi.ffi_call(callback, jax.ShapeDtypeStruct(x.shape, x.dtype))(x)

    checks = [jax.export.DisabledSafetyCheck.custom_call(callback)]
    assert f"custom call '{callback}'" in refusal(exported(escape, X, checks=checks), (X,))
    assert "no Pallas kernel" in refusal(exported(lambda x: x @ x.T, X), (X,))  # XLA's op, no kernel
    cpu = base64.b64encode(jax.export.export(jax.jit(lambda x: x + 1))(X).serialize()).decode()
    assert "not for one TPU" in refusal(cpu, (X,))


def test_an_in_place_kernel_is_exported_as_a_function_of_arrays():
    """A kernel that writes a mutable ref (`jax.new_ref`): jax.export takes no refs, so the program
    makes them itself and returns the written inputs first, as the checker orders a kernel's outputs."""
    entry = load_catalog().get("inplace_chunked_matmul")
    assert entry is not None and entry.mutable_inputs == (0,)
    spec = importlib.util.spec_from_file_location(
        "inplace", ROOT / "kernels_catalog" / entry.slug / "kernel.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    x, w = jnp.ones((1024, 512), jnp.float32), jnp.ones((512, 512), jnp.float32)
    call = calls.prepare(getattr(module, entry.entry_point), (x, w), entry.mutable_inputs)
    with chip_context(chip_info("v5e")):
        text = export_for_tpu(*call.of_arrays())
    program = jax.export.deserialize(bytearray(base64.b64decode(text)))
    assert [a.shape for a in program.out_avals] == [(1024, 512)]  # x after x <- x @ w
    assert callable(load_program(text, (x, w)))


def test_a_kernel_that_cannot_be_exported_says_why():
    def with_callback(x):
        return jax.pure_callback(lambda a: a, jax.ShapeDtypeStruct(x.shape, x.dtype), x)

    with pytest.raises(ProgramRefused, match=r"jax\.export could not export it"):
        export_for_tpu(with_callback, (X,))


ENTRY = load_catalog().get("tiled_matmul")
assert ENTRY is not None
PROGRAM = "cHJvZ3JhbQ=="  # what the kernel's process sent (never run here: the fake backend answers)


def class_job(**fields) -> Job:
    job = make_job("def matmul(x, y):\n    return x @ y  # the student's code\n", entry=ENTRY, chip="v5e")
    return dataclasses.replace(job, rerun=True, mode="tpu", **fields)


def test_the_host_names_the_timed_case_not_the_kernels_process():
    assert rerun.timed_case(class_job()) == TIMED == ENTRY.cases[-1].name
    assert rerun.timed_case(dataclasses.replace(class_job(), entry=None)) == "scratch"
    smaller = new_event("exported", case=ENTRY.cases[0].name, program=PROGRAM)  # a smaller case's program
    backend = Rerunner(MEASURED)
    host = classify(class_job(), timed(class_job(), finished(passed_case(), smaller, on_chip=True), backend))
    assert backend.jobs == [] and host.host_timing is not None and host.host_timing.seconds is None
    assert "another case" in host.host_timing.note


def passed_case() -> Event:
    return new_event(
        "case", index=0, of=1, result=CaseResult("small", "float32", {}, (), None, True, (), 0.0)
    )


class Rerunner:
    """A backend that records the rerun job and answers with `report` (as a rerun job's process would)."""

    def __init__(self, report: ProgramRerun | None) -> None:
        self.report, self.jobs = report, []

    def run(self, job: Job, sink, cancel) -> Execution:
        self.jobs.append(job)
        events = [new_event("rerun", **vars(self.report))] if self.report else []
        for event in events:
            sink(event)
        return finished(*events)


TIMED = "bf16 4096x4096x4096 (TPU)"  # tiled_matmul's last case: the one a kernel's job on a chip times
MEASURED = ProgramRerun(TIMED, 7, True, device_seconds=2e-5, wall_median_seconds=6e-5, runs=40)


def timed(job: Job, execution: Execution, backend: Rerunner) -> Execution:
    return rerun.timed_by_host(backend, job, execution, threading.Event())  # type: ignore[arg-type]


def test_the_host_reruns_a_passed_class_run_with_the_lessons_code_on_a_fresh_seed():
    backend = Rerunner(MEASURED)
    sent = new_event("exported", case=TIMED, program=PROGRAM)
    ran = finished(passed_case(), sent, on_chip=True)
    first = timed(class_job(), ran, backend)
    timed(class_job(), ran, backend)
    job = backend.jobs[0]
    assert (job.role, job.mode, job.program, job.rerun_case) == ("rerun", "tpu", PROGRAM, TIMED)
    assert job.source == "" and job.entry == ENTRY.spec() and not job.rerun  # the entry's code only
    assert job.limits.wall_seconds >= 120 and job.limits.memory_bytes == class_job().limits.memory_bytes
    assert job.rerun_seed != backend.jobs[1].rerun_seed  # a seed the kernel's job never saw
    assert [e.kind for e in first.events] == ["started", "case", "done", "rerun"]  # the program is not kept
    host = classify(class_job(), first).host_timing
    assert host is not None and host.seconds == 2e-5 and host.wall_median_seconds == 6e-5 and host.runs == 40
    assert host.note.startswith("measured by the host") and host.chip == "v5e"


@pytest.mark.parametrize(
    ("facts", "events", "said"),
    [
        ({"on_chip": True}, ["exported"], rerun.NOT_PASSED),
        ({"on_chip": True}, ["case"], rerun.NOT_EXPORTED),
        ({"on_chip": True}, ["case", "unexportable"], "not measured by the host: its program could not be exported: refs"),
    ],
    ids=["not-passed", "no-program", "unexportable"],
)  # fmt: skip
def test_where_the_host_does_not_rerun_it_says_why(facts, events, said):
    made = {
        "case": passed_case(),
        "exported": new_event("exported", case=TIMED, program=PROGRAM),
        "unexportable": new_event("exported", case=TIMED, error="refs"),
    }
    backend = Rerunner(MEASURED)
    result = classify(class_job(), timed(class_job(), finished(*(made[e] for e in events), **facts), backend))
    assert backend.jobs == [] and result.host_timing is not None
    assert result.host_timing.seconds is None and result.host_timing.note == said


def test_a_simulated_run_or_one_that_is_not_the_lessons_gets_no_host_timing():
    ran = finished(passed_case(), new_event("exported", case=TIMED, program=PROGRAM), on_chip=True)
    backend = Rerunner(MEASURED)
    own_reference = dataclasses.replace(class_job(), entry=None, source="def reference(x): ...")
    for job in (dataclasses.replace(class_job(), rerun=False), own_reference):
        out = timed(job, ran, backend)
        assert [e.kind for e in out.events] == ["started", "case", "done"]
    simulated = timed(class_job(), dataclasses.replace(ran, on_chip=False), backend)
    assert classify(class_job(), simulated).host_timing is None  # the board takes its estimate
    assert backend.jobs == []


@pytest.mark.parametrize(
    ("report", "said"),
    [
        (None, "its rerun ended without a report (exit code 0)"),
        (dataclasses.replace(MEASURED, device_seconds=float("nan")), "its rerun reported no usable time"),
        (ProgramRerun("small", 7, False, "on new inputs the program's out does not match"), "on new inputs"),
    ],
    ids=["silent", "nan", "wrong-on-new-inputs"],
)
def test_a_rerun_that_gives_no_usable_time_ranks_nothing(report, said):
    ran = finished(passed_case(), new_event("exported", case=TIMED, program=PROGRAM), on_chip=True)
    host = classify(class_job(), timed(class_job(), ran, Rerunner(report))).host_timing
    assert host is not None and host.seconds is None and said in host.note


def test_a_rerun_job_with_the_largest_program_fits_what_the_job_runner_service_reads():
    program = "A" * (4 * -(-PROGRAM_BYTES // 3))  # PROGRAM_BYTES in base64
    job = rerun.rerun_job(class_job(), payload(new_event("exported", case=TIMED, program=program)), 1)
    assert len(json.dumps(to_json_dict(job))) < MAX_JOB_BYTES
    sent = new_event("exported", case=TIMED, program=program)
    kept = bounded(sent)
    assert kept is not None and payload(kept).program == program  # the checker's bounds keep it whole


def test_a_kernels_process_cannot_write_the_hosts_report():
    checker = checking.Checker(class_job(), None)
    assert checker.see(new_event("rerun", **vars(MEASURED))) == []


def test_the_rerun_job_refuses_a_program_before_running_anything(tmp_path):
    callback = "xla_ffi_python_cpu_callback"

    def escape(x, y):
        return jax.ffi.ffi_call(callback, jax.ShapeDtypeStruct(x.shape, x.dtype))(x)

    inputs = ENTRY.cases[0]
    shape = (inputs.dims["m"], inputs.dims["k"])
    a = jnp.ones(shape, inputs.dtype)
    b = jnp.ones((inputs.dims["k"], inputs.dims["n"]), inputs.dtype)
    program = exported(escape, a, b, checks=[jax.export.DisabledSafetyCheck.custom_call(callback)])
    job = rerun.rerun_job(class_job(), payload(new_event("exported", case=inputs.name, program=program)), 11)
    read, write = os.pipe()
    try:
        session = RerunSession(job, EventWriter(write))
        plan = session._load()
        report = session._rerun(None, plan)  # type: ignore[arg-type]  # refused before the chip is needed
        assert not report.passed and report.seed == 11 and report.case == inputs.name
        assert report.reason.startswith("the program was refused") and callback in report.reason
        missing = session._rerun(None, dataclasses.replace(plan, cases=()))  # type: ignore[arg-type]
        assert missing.reason == "the lesson has no such case to check"
    finally:
        os.close(read)
        os.close(write)
