"""The `lowering` event through classify(): a kernel passes only if the TPU compiler for its chip accepts it."""

import dataclasses
import json

import pytest

from sandbox.jobs.build import JobError, make_job
from sandbox.limits import default_limits
from sandbox.protocol import (
    CHIPS,
    CaseResult,
    ErrorInfo,
    Event,
    InterpretOptions,
    IrText,
    Job,
    LoweringCheck,
    OutputCheck,
    RunResult,
    RunStatus,
    Tolerance,
    from_json_dict,
    new_event,
    to_json_dict,
)
from sandbox.protocol.reading import read_event
from sandbox.results.classify import classify
from tests.executions import finished

JOB = Job(id="j", source="", chip="v5e", mode="auto", options=InterpretOptions(), limits=default_limits())
ELEMENT_ERROR = ErrorInfo(
    type="NotImplementedError",
    message="All block dimensions must be Elements or none of them can be Elements.",
    traceback="...",
    line=15,
    phase="TPU lowering",
)
TWO_CORES = "kernel 'body': TensorCoreMesh has num_cores=2, but a TPU v5e device has 1 TensorCore"


def report(chip="v5e", lowers=True, warnings=(), error=None) -> LoweringCheck:
    mosaic = IrText(text="module {\n}\n", truncated=False, total_chars=11, source_lines=((1, 15),))
    return LoweringCheck(
        chip=chip,
        lowers=lowers,
        seconds=0.1,
        error=error,
        mosaic=mosaic if lowers else None,
        kernels=1 if lowers else 0,
        warnings=tuple(warnings),
    )


def lowering_event(mine: LoweringCheck, *listed: LoweringCheck) -> Event:
    # Through JSON, as on the events fd.
    event = new_event("lowering", check=mine, warnings=mine.warnings, checks=listed)
    return read_event(json.dumps(to_json_dict(event)).encode())


def case(passed: bool) -> Event:
    out = OutputCheck(
        name="out",
        shape=(4,),
        dtype="float32",
        expected_shape=(4,),
        expected_dtype="float32",
        passed=passed,
        max_abs_error=0.0 if passed else 0.5,
        max_rel_error=0.0,
        mismatch_count=0 if passed else 2,
        total=4,
        first_mismatches=(),
        nan_parity=True,
        inf_parity=True,
    )
    result = CaseResult(
        name="c",
        dtype="float32",
        dims={},
        input_shapes=((4,),),
        tolerance=Tolerance(1e-4, 1e-4),
        passed=passed,
        outputs=(out,),
        seconds=0.1,
    )
    return new_event("case", index=0, of=1, result=result)


def run(*events: Event) -> RunResult:
    return classify(JOB, finished(*events))


def test_correct_in_the_simulator_but_rejected_by_the_compiler_is_rejected():
    result = run(case(True), lowering_event(report(lowers=False, error=ELEMENT_ERROR)))
    assert result.status == RunStatus.REJECTED
    assert result.summary == (
        "rejected by the TPU compiler for v5e: NotImplementedError: All block dimensions must be Elements "
        "or none of them can be Elements. (line 15); in the simulator the outputs match the reference "
        "(1/1 cases), but this kernel would not compile for a TPU"
    )
    assert result.lowering is not None and result.lowering.lowers is False
    assert result.lowering.error.message == ELEMENT_ERROR.message and result.lowering.error.line == 15


def test_another_chip_rejecting_leaves_a_pass_on_the_jobs_chip():
    mine, other = report("v5e"), report("v6e", lowers=False, error=ELEMENT_ERROR)
    result = run(case(True), lowering_event(mine, mine, other))
    assert result.status == RunStatus.PASSED
    assert result.summary.endswith(
        "match the reference (max abs error 0); rejected by the TPU compiler for v6e"
    )


def test_rejected_lowering_on_a_mismatch_does_not_claim_a_pass():
    result = run(case(False), lowering_event(report(lowers=False, error=ELEMENT_ERROR)))
    assert result.status == RunStatus.MISMATCH
    assert result.summary.endswith("; rejected by the TPU compiler for v5e")
    assert "passes in the simulator" not in result.summary


def test_chip_warnings_are_counted_in_the_summary_and_listed():
    result = run(case(True), lowering_event(report(warnings=[TWO_CORES])))
    assert result.summary.endswith("match the reference (max abs error 0); 1 chip-check warning for v5e")
    assert result.chip_warnings == (TWO_CORES,)
    assert result.lowering.mosaic.source_lines == ((1, 15),)


def test_a_lowering_that_could_not_run_is_not_a_rejection():
    result = run(
        case(True), lowering_event(dataclasses.replace(report(), lowers=None, note="built at import"))
    )
    assert result.summary.endswith("; TPU lowering not checked for v5e")
    assert "rejected" not in result.summary


def test_all_chips_side_by_side():
    listed = [
        report(c, lowers=c not in ("v5e", "v6e"), error=None if c not in ("v5e", "v6e") else ELEMENT_ERROR)
        for c in CHIPS
    ]
    result = run(case(True), lowering_event(listed[0], *listed))
    assert [r.chip for r in result.lowerings] == list(CHIPS)
    assert [r.lowers for r in result.lowerings] == [c not in ("v5e", "v6e") for c in CHIPS]
    assert result.status == RunStatus.REJECTED
    assert result.summary.startswith("rejected by the TPU compiler for v5e: NotImplementedError")
    assert result.summary.endswith("would not compile for a TPU; also rejected for v6e")


def test_no_lowering_event_leaves_the_result_as_before():
    result = run(case(True))
    assert result.lowering is None and result.lowerings == () and result.chip_warnings == ()
    assert result.summary == "passed: 1/1 cases match the reference (max abs error 0)"


def test_run_result_with_lowerings_round_trips_through_json():
    result = run(case(True), lowering_event(report(warnings=[TWO_CORES]), report("v5p")))
    back = from_json_dict(RunResult, json.loads(json.dumps(to_json_dict(result))))
    assert back == result


def test_job_lower_chips_round_trip():
    job = dataclasses.replace(JOB, lower_chips=("v5e", "tpu7x"))
    assert from_json_dict(Job, json.loads(json.dumps(to_json_dict(job)))) == job


def test_make_job_dedupes_lower_chips_and_rejects_unknown_ones():
    assert make_job("x = 1", chip="v5e", lower_chips=("v6e", "v5e", "v6e")).lower_chips == ("v6e", "v5e")
    with pytest.raises(JobError, match=r"unknown chip\(s\) to lower for: v4"):
        make_job("x = 1", lower_chips=("v4",))


def test_the_chips_compile_time_vmem_refusal_is_rejected_as_in_the_simulator():
    """On a TPU the compiler's E1001 arrives as the job's error (`harness.errors.chip.scoped_vmem`); the
    simulator predicts the same refusal through the lowering check. Both are `rejected`."""
    refused = ErrorInfo(
        type="VmemLimitExceeded",
        message="the TPU compiler refused the kernel (E1001): it needs 18.36 MiB of scoped VMEM, over the "
        "limit of 16.00 MiB by 2.36 MiB",
        traceback="...",
        line=None,
        phase="compile",
    )
    native = dataclasses.replace(JOB, mode="tpu")
    started, done = new_event("started", pid=1), new_event("done", peak_rss_bytes=0)
    result = classify(native, finished(started, new_event("error", error=refused), done))
    assert result.status is RunStatus.REJECTED
    assert result.summary.startswith(
        "rejected by the TPU compiler for v5e: error in compile: VmemLimitExceeded"
    )
    assert result.error is not None and result.error.type == "VmemLimitExceeded"


def test_the_compilers_vmem_refusal_is_not_a_memory_limit():
    """XLA raises E1001 with RESOURCE_EXHAUSTED, as it does an allocation that failed; on the lent v5e
    the run then read "memory limit: the job needed more than 6 GiB" (resource_limit), not `rejected`."""
    from sandbox.harness.phases import is_memory_error

    refused = RuntimeError(
        "RESOURCE_EXHAUSTED: E1001: CompileTimeScopedVmemOom: Ran out of memory in memory space vmem while "
        "allocating on stack for %custom-call. Scoped allocation with size 18.36M and limit 16.00M exceeded "
        "scoped vmem limit by 2.36M."
    )
    assert not is_memory_error(refused)
    assert is_memory_error(RuntimeError("RESOURCE_EXHAUSTED: Error allocating device buffer: 17.00G"))
    assert is_memory_error(MemoryError())
