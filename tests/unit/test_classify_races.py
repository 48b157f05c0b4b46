"""classify() on cases the race detector failed: the summary says so and names the first race."""

from sandbox.limits import default_limits
from sandbox.protocol import (
    CaseResult,
    Event,
    InterpretOptions,
    Job,
    OutputCheck,
    Race,
    RaceAccess,
    RunStatus,
    Tolerance,
    new_event,
)
from sandbox.results.classify import classify
from tests.executions import finished as execution

JOB = Job(
    id="j",
    source="",
    chip="v5p",
    mode="auto",
    options=InterpretOptions(detect_races=True),
    limits=default_limits(wall_seconds=10),
)
MATCHING = OutputCheck(
    name="out",
    shape=(4,),
    dtype="float32",
    expected_shape=(4,),
    expected_dtype="float32",
    passed=True,
    max_abs_error=0.0,
    max_rel_error=0.0,
    mismatch_count=0,
    total=4,
    first_mismatches=(),
    nan_parity=True,
    inf_parity=True,
)
FIRST = Race(
    summary="write by a DMA (id 101) at kernel.py line 38 and read by device 0, core 1 at kernel.py line 40 "
    "overlap in VMEM buffer 102 of device 0, core 1 [0, 0:16, 0:128]",
    accesses=(
        RaceAccess(
            kind="write",
            buffer="VMEM buffer 102",
            region="[0]",
            by="a DMA (id 101)",
            file="kernel.py",
            line=38,
        ),
    ),
    text="RACE DETECTED ...",
)
SECOND = Race(summary="another race", accesses=(), text="RACE DETECTED ...")


def case(name: str, races: tuple[Race, ...], note: str = "") -> Event:
    result = CaseResult(
        name=name,
        dtype="float32",
        dims={},
        input_shapes=((4,),),
        tolerance=Tolerance(0, 0),
        passed=not races and not note,
        outputs=(MATCHING,),
        seconds=0.1,
        note=note,
        races=races,
    )
    return new_event("case", index=0, of=1, result=result)


def test_race_summary_names_the_first_race_of_the_first_failing_case():
    result = classify(JOB, execution(case("a", ()), case("b", (FIRST, SECOND)), case("c", (SECOND,))))
    assert result.status == RunStatus.MISMATCH
    assert result.summary == f"mismatch: data race detected (2/3 cases failed); case 'b': {FIRST.summary}"
    assert result.cases[1].races == (FIRST, SECOND)


def test_race_flag_without_a_parsed_report_still_says_data_race():
    note = "a data race detected by the interpret-mode race detector"
    result = classify(JOB, execution(case("a", (), note=note)))
    assert result.status == RunStatus.MISMATCH
    assert "data race detected" in result.summary
