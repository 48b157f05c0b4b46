"""classify() says what the harness's new facts mean: NaN in a mismatch, how far a timed-out kernel got."""

import dataclasses

from sandbox.limits import default_limits
from sandbox.protocol import (
    CaseResult,
    Event,
    Execution,
    InterpretOptions,
    Job,
    OutputCheck,
    RunStatus,
    Tolerance,
)
from sandbox.protocol.events import new_event
from sandbox.results.classify import classify
from tests import executions
from tests.executions import STARTED, finished

JOB = Job(
    id="j",
    source="",
    chip="v5p",
    mode="auto",
    options=InterpretOptions(),
    limits=default_limits(wall_seconds=60),
)


def output(mismatches: int, nonfinite: int = 0, where: str = "", max_abs: float | None = 0.0) -> OutputCheck:
    return OutputCheck(
        name="out",
        shape=(256, 128),
        dtype="float32",
        expected_shape=(256, 128),
        expected_dtype="float32",
        passed=mismatches == 0,
        max_abs_error=max_abs,
        max_rel_error=0.0,
        mismatch_count=mismatches,
        total=32_768,
        first_mismatches=(),
        nan_parity=nonfinite == 0,
        inf_parity=True,
        nonfinite_mismatches=nonfinite,
        nonfinite_where=where,
    )


def case(*outputs: OutputCheck) -> Event:
    result = CaseResult(
        name="scratch",
        dtype="",
        dims={},
        input_shapes=(),
        tolerance=Tolerance(1e-4, 1e-4),
        passed=all(o.passed for o in outputs),
        outputs=outputs,
        seconds=0.1,
    )
    return new_event("case", index=0, of=1, result=result)


def execution(*events: Event, timed_out: bool = False) -> Execution:
    if not timed_out:
        return finished(*events)
    return executions.execution(STARTED, *events, exit_code=None, signal=9, timed_out=True, wall_seconds=60.0)


def test_nan_mismatches_are_in_the_headline_with_where_they_are():
    nan_rows = output(8_192, 8_192, "NaN in rows 192–255 (all 128 columns)")
    result = classify(JOB, execution(case(nan_rows)))
    assert result.status == RunStatus.MISMATCH
    assert result.summary == (
        "mismatch: 1/1 cases differ from the reference; case 'scratch': out differs in 8,192 of 32,768 "
        "elements: all NaN in rows 192–255 (all 128 columns). NaN marks memory the kernel never wrote "
        "(the simulator fills it with NaN), or values computed from it, such as an accumulator that was "
        "never zeroed"
    )


def test_nan_and_finite_mismatches_are_told_apart():
    mixed = output(100, 40, "NaN in rows 0–3 (all 128 columns)", max_abs=2.5)
    summary = classify(JOB, execution(case(mixed))).summary
    assert "out differs in 100 of 32,768 elements: 40 of them NaN in rows 0–3 (all 128 columns); " in summary
    assert "the other 60: max abs error 2.5" in summary


def test_no_nan_hint_when_uninitialised_memory_is_zero():
    job = dataclasses.replace(JOB, options=InterpretOptions(uninitialized_memory="zero"))
    summary = classify(job, execution(case(output(8, 8, "NaN in rows 0–0 (columns 0–7)")))).summary
    assert "NaN marks memory" not in summary


def progress(**counts: float) -> Event:
    data = {"phase": "kernel", "case": "scratch", "seconds": 55.0, "grid_steps": 0, "block_copies": 0}
    data.update({"dmas": 0, "ref_ops": 0, "semaphore_ops": 0, **counts})
    return new_event("progress", **data)


def test_a_timeout_says_how_far_the_kernel_got_and_what_a_step_costs():
    steps = progress(grid_steps=1_100, block_copies=2_200, ref_ops=3_300)
    result = classify(JOB, execution(progress(grid_steps=5), steps, timed_out=True))
    assert result.status == RunStatus.TIMEOUT and result.limit == "wall_seconds"
    assert result.summary == (
        "timeout: stopped after the 60 s wall-clock limit while running the kernel (case 'scratch'): "
        "1,100 grid steps, 5,500 ref and semaphore operations in 55.0 s, about 50 ms per grid step. "
        "Interpret mode runs every ref access, DMA and semaphore operation as a host callback of about "
        "1–2 ms, so the run time grows with the number of steps: bigger blocks mean fewer steps"
    )


def test_a_pipeline_that_times_out_is_costed_per_dma():
    summary = classify(JOB, execution(progress(dmas=500, ref_ops=100), timed_out=True)).summary
    assert "500 DMAs, 100 ref and semaphore operations in 55.0 s, about 110 ms per DMA" in summary


def test_a_timeout_while_compiling_says_nothing_had_run():
    summary = classify(JOB, execution(progress(seconds=4.0), timed_out=True)).summary
    assert summary == (
        "timeout: stopped after the 60 s wall-clock limit while compiling and starting the kernel "
        "(case 'scratch'): no step had run 4.0 s into it"
    )


def test_a_timeout_before_any_kernel_ran_keeps_the_old_wording():
    summary = classify(JOB, execution(timed_out=True)).summary
    assert summary == "timeout: stopped after the 60 s wall-clock limit (user code was running)"
