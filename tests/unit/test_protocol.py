import json
import math

from sandbox.limits import default_limits
from sandbox.protocol import (
    Case,
    EntrySpec,
    InterpretOptions,
    Job,
    Mismatch,
    RunResult,
    RunStatus,
    Tolerance,
    from_json_dict,
    to_json_dict,
)


def test_job_round_trips_through_json():
    job = Job(
        id="j1",
        source="print(1)",
        chip="v6e",
        mode="interpret",
        options=InterpretOptions(detect_races=True, random_seed=3),
        limits=default_limits(),
        entry=EntrySpec(
            slug="s",
            entry_point="f",
            reference_source="",
            tolerances={"float32": Tolerance(1e-3, 0)},
            cases=(Case(name="c", dtype="float32", seed=1, dims={"m": 8}),),
            mutable_inputs=(0,),
        ),
    )
    assert from_json_dict(Job, json.loads(json.dumps(to_json_dict(job)))) == job


def test_non_finite_floats_travel_as_strings():
    data = to_json_dict(Mismatch(index=(0,), got=math.nan, expected=math.inf))
    text = json.dumps(data, allow_nan=False)
    back = from_json_dict(Mismatch, json.loads(text))
    assert math.isnan(back.got) and back.expected == math.inf


def test_case_dims_read_as_attributes():
    case = Case(name="c", dtype="float32", seed=0, dims={"m": 128})
    assert case.m == 128


def test_unknown_fields_are_rejected():
    try:
        from_json_dict(Tolerance, {"rtol": 1, "atol": 1, "evil": 2})
    except ValueError as exc:
        assert "evil" in str(exc)
    else:
        raise AssertionError("unknown field accepted")


def test_run_result_status_is_an_enum_value():
    result = RunResult(
        status=RunStatus.PASSED, summary="ok", chip="v5p", mode="interpret", options=InterpretOptions()
    )
    assert to_json_dict(result)["status"] == "passed"
