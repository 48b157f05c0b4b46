"""classify() as a table: raw process facts in, the status and summary a user sees out."""

import pytest

from sandbox.limits import default_limits
from sandbox.protocol import (
    CaseResult,
    ErrorInfo,
    Event,
    Execution,
    InterpretOptions,
    Job,
    OutputCheck,
    RunStatus,
    Tolerance,
    new_event,
)
from sandbox.results.classify import classify, sanitize
from tests import executions

JOB = Job(
    id="j",
    source="",
    chip="v5p",
    mode="auto",
    options=InterpretOptions(),
    limits=default_limits(wall_seconds=10, output_kill_bytes=1 << 20),
)


def check(passed: bool, mismatches: int = 0) -> OutputCheck:
    return OutputCheck(
        name="out",
        shape=(4,),
        dtype="float32",
        expected_shape=(4,),
        expected_dtype="float32",
        passed=passed,
        max_abs_error=0.5 if mismatches else 0.0,
        max_rel_error=0.1,
        mismatch_count=mismatches,
        total=4,
        first_mismatches=(),
        nan_parity=True,
        inf_parity=True,
    )


def case_event(name: str, passed: bool) -> Event:
    result = CaseResult(
        name=name,
        dtype="float32",
        dims={},
        input_shapes=((4,),),
        tolerance=Tolerance(1e-4, 1e-4),
        passed=passed,
        outputs=(check(passed, 0 if passed else 3),),
        seconds=0.1,
    )
    return new_event("case", index=0, of=1, result=result)


def error_event(memory: bool = False) -> Event:
    info = ErrorInfo(type="ValueError", message="bad block shape", traceback="...", line=12, phase="kernel")
    return new_event("error", error=info, memory=memory)


STARTED, DONE = new_event("started", pid=1), new_event("done", peak_rss_bytes=0)


def execution(*events: Event, **facts) -> Execution:
    return executions.execution(*events, **{"wall_seconds": 2.0, **facts})


TABLE = [
    (
        "all cases pass",
        execution(STARTED, case_event("a", True), case_event("b", True), DONE),
        RunStatus.PASSED,
        "2/2 cases match",
        None,
    ),
    (
        "a case differs",
        execution(STARTED, case_event("a", True), case_event("b", False), DONE),
        RunStatus.MISMATCH,
        "case 'b': out differs in 3 of 4 elements",
        None,
    ),
    (
        "user code raised",
        execution(STARTED, error_event(), exit_code=0),
        RunStatus.ERROR,
        "ValueError: bad block shape (line 12)",
        None,
    ),
    (
        "no reference: ran",
        execution(STARTED, Event("outputs", {"outputs": []}), DONE),
        RunStatus.RAN,
        "no reference",
        None,
    ),
    (
        "wall clock",
        execution(STARTED, timed_out=True, signal=9, exit_code=None),
        RunStatus.TIMEOUT,
        "10 s wall-clock limit",
        "wall_seconds",
    ),
    (
        "timeout beats partial results",
        execution(STARTED, case_event("a", True), timed_out=True, signal=9),
        RunStatus.TIMEOUT,
        "1 case(s) checked",
        "wall_seconds",
    ),
    (
        "cancelled",
        execution(STARTED, cancelled=True, signal=9, exit_code=None),
        RunStatus.CANCELLED,
        "cancelled",
        None,
    ),
    (
        "output flood",
        execution(STARTED, output_limit_hit=True, signal=9, exit_code=None),
        RunStatus.RESOURCE_LIMIT,
        "more than 1 MiB",
        "output_bytes",
    ),
    (
        "allocation failed",
        execution(STARTED, error_event(memory=True)),
        RunStatus.RESOURCE_LIMIT,
        "memory limit",
        "memory_bytes",
    ),
    (
        "CPU limit",
        execution(STARTED, cpu_limit_hit=True, signal=24, exit_code=None),
        RunStatus.RESOURCE_LIMIT,
        "CPU limit",
        "cpu_seconds",
    ),
    (
        "crash in user code",
        execution(STARTED, signal=11, exit_code=None),
        RunStatus.ERROR,
        "SIGSEGV (a crash)",
        None,
    ),
    ("exit before finishing", execution(STARTED, exit_code=3), RunStatus.ERROR, "exit code 3", None),
    (
        "harness never started",
        execution(exit_code=1),
        RunStatus.ERROR,
        "internal error: the sandbox harness did not start",
        None,
    ),
    ("backend fault", execution(infra_error="pool died"), RunStatus.ERROR, "internal error: pool died", None),
]


@pytest.mark.parametrize(("name", "ex", "status", "phrase", "limit"), TABLE, ids=[row[0] for row in TABLE])
def test_classify_table(name, ex, status, phrase, limit):
    result = classify(JOB, ex)
    assert result.status == status, result.summary
    assert phrase in result.summary
    assert result.limit == limit


def test_classify_keeps_partial_stdout_on_timeout():
    result = classify(
        JOB, execution(STARTED, timed_out=True, stdout="step 1\nstep 2\n", stdout_truncated=False)
    )
    assert result.stdout == "step 1\nstep 2\n"


def test_sanitize_strips_terminal_escapes_but_keeps_text():
    assert sanitize("\x1b[31mred\x1b[0m\x1b]0;title\x07 ok\r\n\x00") == "red ok\n"
    assert sanitize("<img src=x onerror=alert(1)>") == "<img src=x onerror=alert(1)>"
