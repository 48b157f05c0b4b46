"""Issue 41, a fourth round of held-out variants on the job's side of the channel.

A kernel the TPU compiler rejects passed when its process dropped its own `lowering` event; a
process's event time of NaN reached the run's event stream in the checker's `case` and `config`
events; a simulated run said mode "tpu" and showed a made-up device time as a chip's; and a
schema-valid 15.8 MB `trace` of millions of ints cost the host ~18 s to decode and bound, outside
the job's limits. The checker is driven directly (milliseconds) and, end to end, through the
session's backend with a victim beside.
"""

from __future__ import annotations

import json
import math
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import pytest

from sandbox.backends import checking, execute
from sandbox.backends.watch import Report
from sandbox.jobs.build import make_job
from sandbox.protocol import Event, RunStatus, Timing, Versions, new_event, to_json_dict
from sandbox.protocol.codec import Budget
from sandbox.protocol.events import payload
from sandbox.protocol.reading import REPORT_VALUES, ReportError, read_event
from sandbox.protocol.sweep import SweepSpec
from sandbox.results import compiler
from tests.executions import DONE, STARTED, execution
from tests.sandbox.conftest import run_job_on
from tests.sandbox.test_heldout_attacks import FORGER, JOB, VICTIM, WANT, _ran, _reference, beside_a_victim

NOT_REPORTED = "the TPU compiler's verdict was not reported"
SIMULATED = new_event(
    "versions", versions=Versions("3.12", "0.12", "0.12", None, "TPU v5e (interpret mode)"), interpret=True
)
LOWERED = new_event("lowering", check={"chip": "v5p", "lowers": True, "seconds": 0.1}, warnings=(), checks=())


def _finished(*events: Event, **facts: object) -> execute.Finished:
    """The kernel job's report, as its harness writes it (started, its target, ...), checked and classified."""
    ran = execution(STARTED, SIMULATED, *events, DONE, **facts)
    return execute.finish(
        JOB, checking.Checker(JOB, _reference([("out", WANT)])).rewrite(ran), cancelled=False
    )


def _strict(value: object) -> str:
    return json.dumps(value, allow_nan=False)


# -- a compiler verdict the process owed and withheld ----------------------------------------------------


def test_a_withheld_compiler_verdict_is_an_error_never_a_cached_pass():
    withheld = _finished(_ran([("out", WANT)]))
    assert withheld.result.status is RunStatus.ERROR, withheld.result.summary
    assert NOT_REPORTED in withheld.result.summary and "v5p" in withheld.result.summary
    assert withheld.result.error is not None and withheld.result.error.type == compiler.UNREPORTED_TYPE
    assert not withheld.reusable
    sent = _finished(_ran([("out", WANT)]), LOWERED)
    assert sent.result.status is RunStatus.PASSED and sent.reusable, sent.result.summary


def test_a_withheld_verdict_beside_a_mismatch_is_said_and_the_mismatch_stands():
    wrong = _finished(_ran([("out", WANT * 3)]))
    assert wrong.result.status is RunStatus.MISMATCH and wrong.result.summary.endswith(
        "so whether this kernel compiles for a TPU is not known"
    )
    assert not wrong.reusable


@pytest.mark.parametrize(
    ("facts", "job"),
    [
        ({"on_chip": True}, JOB),  # on a chip the compile is the verdict: no lowering check runs
        ({}, replace(JOB, role="rerun")),
        ({}, replace(JOB, sweep=SweepSpec(params={"b": (1,)}, size={}))),
    ],
    ids=["on a chip", "a rerun's job", "a sweep"],
)
def test_no_verdict_is_owed_where_the_harness_checks_none(facts, job):
    ran = execution(
        STARTED, SIMULATED, new_event("case", index=0, of=1, result=_passed_case()), DONE, **facts
    )
    assert not compiler.owed(job, ran) and not compiler.unreported(job, ran)
    assert compiler.owed(JOB, execution(STARTED, SIMULATED, DONE))


def test_no_verdict_is_owed_when_the_harness_never_said_it_simulates():
    """The harness announces its target (`versions`) before it imports user code, so the first one is
    the harness's: without it no user code ran (the API tests' fakes send none, and pass as before)."""
    ran = execution(STARTED, new_event("case", index=0, of=1, result=_passed_case()), DONE)
    assert not compiler.owed(JOB, ran)


def _passed_case():
    ran = _finished(_ran([("out", WANT)]), LOWERED)
    return ran.result.cases[0]


# -- event times the checker copies into its own events -------------------------------------------------


@pytest.mark.parametrize("t", ["nan", "inf", "-inf", -5.0, 1e300, 2e9])
def test_a_process_time_in_a_verdict_is_bounded(t):
    forged = Event("case_outputs", _ran([("out", WANT)]).data, t=float(t))
    checker = checking.Checker(JOB, _reference([("out", WANT)]))
    (case,) = checker.see(forged)
    assert case.kind == "case" and case.t == 0.0
    broken = Event("case_outputs", {**forged.data, "outputs": "not a list"}, t=float(t))
    (error,) = checking.Checker(JOB, _reference([("out", WANT)])).see(broken)
    assert error.kind == "error" and error.t == 0.0
    followed = execute.forwarded(case.kind, case.data, float(t))
    assert followed is not None and followed["t"] == 0.0 and _strict(followed)


def test_a_sweep_configs_time_is_bounded():
    job = replace(JOB, sweep=SweepSpec(params={"b": (1, 2)}, size={}))
    row = {"index": 0, "params": {"b": 1}, "status": "ok", "reason": "", "check_size": {}}
    forged = Event("config_outputs", {"result": row, "done": 1, "of": 2}, t=math.nan)
    (config,) = checking.Checker(job, None).see(forged)
    assert config.kind == "config" and config.t == 0.0 and _strict(to_json_dict(config))


# -- where the kernel ran: the host's word -------------------------------------------------------------

CHIP_TIME = Timing(
    first_call_seconds=0.1, compile_seconds=None, kernel=None, reference=None, ratio_to_reference=None,
    simulated=False, roofline_seconds=None, flops=None, bytes_accessed=None, case="scratch",
    note="measured on a TPU v5e by the profiler", device_seconds=2e-6, host_dispatch_seconds=1e-6,
)  # fmt: skip
NATIVE = new_event(
    "versions", versions=Versions("3.12", "0.12", "0.12", "0.0.50", "TPU v5 lite"), interpret=False
)


def test_a_simulated_run_is_simulated_whatever_its_process_says():
    said = _finished(_ran([("out", WANT)]), LOWERED, NATIVE, new_event("timing", timing=CHIP_TIME))
    result = said.result
    assert result.status is RunStatus.PASSED and result.mode == "interpret" and not result.ran_on_chip
    assert result.timing is not None and result.timing.simulated and result.timing.device_seconds is None
    assert result.timing.host_dispatch_seconds is None and "simulated on the CPU" in result.timing.note
    on_chip = execute.finish(
        JOB,
        execution(STARTED, NATIVE, new_event("timing", timing=CHIP_TIME), DONE, on_chip=True),
        cancelled=False,
    ).result
    assert on_chip.mode == "tpu" and on_chip.timing == CHIP_TIME


# -- what reading a report costs the host -------------------------------------------------------------


def _trace_line(events: list[dict]) -> bytes:
    return json.dumps({"kind": "trace", "data": {"trace": {"available": True, "events": events}}}).encode()


BARE = {"t": 0, "kind": "", "device": None, "core": None}  # a trace event, its required fields only
MEMORY = dict.fromkeys(
    ("peak_rss_bytes", "hbm_input_bytes", "hbm_output_bytes", "vmem_bytes", "smem_bytes", "semaphores",
     "vmem_capacity_bytes", "smem_capacity_bytes", "hbm_capacity_bytes"),
    0,
)  # fmt: skip


@pytest.mark.parametrize(
    ("line", "said"),
    [
        (lambda: _trace_line([{**BARE, "dma": [0] * 7_900_000}]), "a trace event of"),  # the probe's 15.8 MB
        (lambda: _trace_line([BARE] * 355_555), "a trace event of"),
        (lambda: _trace_line([{**BARE, "dma": [0] * 300_000}]), "more than 250,000 values"),
        (lambda: _trace_line([BARE] * 11_000), "more than 250,000 values"),  # 23 fields each, defaults too
        (
            lambda: json.dumps(
                {"kind": "memory", "data": {"memory": {**MEMORY, "warnings": [""] * 30_000}}}
            ).encode(),
            "more than 20,000 values",
        ),
        (
            lambda: b'{"data": {"pid": 1}, "kind": "started", "pad": "' + b"y" * (70 << 10) + b'"}',
            "an event of",
        ),
        (lambda: b'{"kind": "trace", "data": {"pid": 1}, "kind": "started"}', "names two kinds"),
    ],
    ids=[
        "7.9M ints",
        "355k events",
        "300k ints",
        "11k events",
        "30k warnings",
        "kind not first",
        "two kinds",
    ],
)
def test_an_event_over_its_kinds_caps_is_refused_before_it_is_built(line, said):
    written = line()
    started = time.process_time()
    with pytest.raises(ReportError, match=said):
        read_event(written)
    assert time.process_time() - started < 0.5  # the old reader took ~9 s, and bounding it ~9 s more


def test_the_largest_trace_the_harness_makes_fits_its_caps():
    """2,000 events with every field, as many steps and block visits (the harness keeps no more)."""
    full = {**BARE, "dur": 0.1, "step": 1, "phase": "copy_in", "bytes": 4096, "src": "in0", "src_space": "hbm",
            "src_region": "[0:128, 0:128]", "dst": "vmem#3", "dst_space": "vmem", "dst_region": "[...]",
            "dst_device": 0, "dst_core": 0, "semaphore": 2, "value": 1, "dma": [7], "grid_point": [1, 2, 3],
            "block": [1, 2], "label": "matmul", "core_kind": "tensor_core"}  # fmt: skip
    step = {"index": 0, "kind": "grid", "device": 0, "core": 0, "number": 0, "t": 0.0, "t_end": 0.1,
            "grid_point": [1, 2, 3], "kernel": "matmul", "core_kind": "tensor_core"}  # fmt: skip
    visit = {"access": "read", "region": "[0:128, 0:128]", "t": 0.1, "device": 0, "core": 0, "step": 1,
             "grid_point": [1, 2, 3], "block": [1, 2], "revisit": False}  # fmt: skip
    blocks = {"name": "in0", "role": "input", "kernel": "matmul", "launch": 0, "device": 0,
              "shape": [4096, 4096], "dtype": "float32", "visits": [visit] * 2000}  # fmt: skip
    trace = {
        "available": True,
        "events": [full] * 2000,
        "steps": [step] * 2000,
        "grid": {"operands": [blocks]},
    }
    event = read_event(json.dumps({"kind": "trace", "data": {"trace": trace}}).encode())
    assert (
        len(event.data["trace"]["events"]) == 2000
        and len(payload(event).trace.grid.operands[0].visits) == 2000
    )


def test_a_jobs_report_is_bounded_in_all_and_not_read_past_its_deadline():
    line = _trace_line([{**BARE, "dma": [0] * 240_000}]) + b"\n"
    report = Report(lambda event: None)
    report.feed(line * 5)
    assert (
        len(report.events) == 4 and report.error is not None and f"{REPORT_VALUES:,} values" in report.error
    )
    late = Report(lambda event: None, deadline=time.monotonic() - 1)
    late.feed(b'{"kind": "started", "data": {"pid": 1}}\n')
    assert late.overdue and late.events == [] and late.error is None
    budget = Budget(REPORT_VALUES)
    read_event(line.strip(), budget)
    assert 0 < REPORT_VALUES - budget.left <= 250_000


# -- end to end, on the session's backend, with a victim beside -----------------------------------------

REJECTED = """
import gc
import jax
import numpy as np
from jax.experimental import pallas as pl

_writer = next(o for o in gc.get_objects() if type(o).__name__ == "EventWriter")
_emit = _writer.emit


def _without_the_compilers_verdict(kind, **data):
    if kind != "lowering":
        _emit(kind, **data)


_writer.emit = _without_the_compilers_verdict


def make_inputs(seed):
    return (np.arange(8 * 128, dtype=np.float32).reshape(8, 128) + seed,)


def reference(x):
    return x * 2


def _body(x_ref, o_ref):
    o_ref[...] = x_ref[...] * 2


def kernel(x):
    spec = pl.BlockSpec((4, 128), lambda i: (i, 0))  # 4 rows of f32: the TPU compiler wants 8
    return pl.pallas_call(_body, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), grid=(2,),
                          in_specs=[spec], out_specs=spec)(x)
"""

FORGED_PLACE = (
    FORGER
    + """
_emit = _writer.emit


def _on_a_chip(kind, **data):
    if kind == "versions":
        data["interpret"] = False
    if kind == "timing":
        data["timing"] = type(data["timing"])(**{**data["timing"].__dict__, "simulated": False,
                                                 "device_seconds": 2e-6})
    _emit(kind, **data)


_writer.emit = _on_a_chip
_writer._t0 = float("nan")  # every later event's time: NaN


def kernel(x):
    return x * 2
"""
)

DECODE_HOG = (
    FORGER
    + """
_sent = []


def kernel(x):
    if not _sent:
        _sent.append(True)
        event = {"t": 0, "kind": "", "device": None, "core": None, "dma": [0] * 7_900_000}
        trace = {"kind": "trace", "data": {"trace": {"available": True, "events": [event]}}}
        line = json.dumps(trace, separators=(",", ":")) + "\\n"  # 15.8 MB, as the probe's
        with _writer._lock:
            for _ in range(3):
                view = memoryview(line.encode())
                while view:
                    view = view[os.write(_writer._fd, view):]
    return x * 2
"""
).replace("import gc, os, time", "import gc, json, os, time")


@pytest.mark.slow
def test_end_to_end_a_withheld_verdict_is_an_error_and_a_victim_passes():
    attacked = beside_a_victim(REJECTED)
    assert attacked.status is RunStatus.ERROR and NOT_REPORTED in attacked.summary, attacked.summary


@pytest.mark.slow
def test_end_to_end_a_forged_place_and_time_change_nothing_and_a_victim_passes():
    from tests.backends import suite_backend

    seen: list[Event] = []
    with ThreadPoolExecutor(max_workers=2) as pool:
        victim = pool.submit(
            run_job_on, suite_backend(), make_job(VICTIM, timing_budget_seconds=0.0, trace=False)
        )
        time.sleep(0.2)
        attacked = run_job_on(suite_backend(), make_job(FORGED_PLACE, trace=False), seen.append)
        assert victim.result().status is RunStatus.PASSED, victim.result().summary
    assert attacked.status is RunStatus.PASSED, attacked.summary
    assert attacked.mode == "interpret" and attacked.timing is not None and attacked.timing.simulated
    assert attacked.timing.device_seconds is None
    assert [e.kind for e in seen if e.kind == "case"] == ["case"]
    for event in seen:  # as the event stream sends them: strict JSON, times bounded
        assert 0 <= event.data["t"] < 1e9 and _strict(event.data)


@pytest.mark.slow
def test_end_to_end_a_decode_hog_costs_the_host_little_and_a_victim_passes():
    started = time.thread_time()  # the backend reads and checks the job's report in this thread
    attacked = beside_a_victim(DECODE_HOG)
    spent = time.thread_time() - started
    assert attacked.status is RunStatus.ERROR and "a trace event of" in attacked.summary, attacked.summary
    assert spent < 5.0, f"the host spent {spent:.1f} s of CPU on one job's report"
