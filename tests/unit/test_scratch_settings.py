"""What a scratch file sets at module level: `DEVICES` (read before the job starts) and `TOLERANCE`."""

import pytest

from sandbox.jobs.build import MAX_DEVICES, JobError, make_job, scratch_devices
from sandbox.protocol import Tolerance
from sandbox.verdict.tolerances import output_tolerance, scratch_tolerances


@pytest.mark.parametrize(
    ("source", "devices"),
    [
        ("DEVICES = 4\n", 4),
        ("import jax\n\nDEVICES: int = 2\n", 2),
        ("x = 1\n", 1),
        ("def f():\n    DEVICES = 8\n", 1),  # only a module-level assignment counts
        ("def broken(:\n", 1),  # a syntax error is reported by the run, not here
    ],
)
def test_scratch_devices(source: str, devices: int):
    assert scratch_devices(source) == devices


def test_scratch_jobs_get_the_devices_they_ask_for():
    assert make_job("DEVICES = 4\n").devices == 4


@pytest.mark.parametrize("source", ["DEVICES = 2 * 2\n", "DEVICES = '4'\n", "DEVICES = True\n"])
def test_devices_must_be_a_whole_number(source: str):
    with pytest.raises(JobError, match="DEVICES must be set to a whole number"):
        scratch_devices(source)


@pytest.mark.parametrize("count", [0, MAX_DEVICES + 1])
def test_devices_out_of_range(count: int):
    with pytest.raises(JobError, match=f"DEVICES = {count}: the playground simulates 1 to {MAX_DEVICES}"):
        scratch_devices(f"DEVICES = {count}\n")


def test_one_tolerance_for_every_output():
    table = scratch_tolerances({"rtol": 1e-2, "atol": 1e-3})
    assert output_tolerance("out[0]", "float32", table) == Tolerance(1e-2, 1e-3)
    assert output_tolerance("out[1]", "bfloat16", table) == Tolerance(1e-2, 1e-3)


def test_tolerances_per_dtype_and_per_output_name():
    table = scratch_tolerances({"float32": (1e-3, 1e-3), "out[1]": {"rtol": 0.1, "atol": 0.2}})
    assert output_tolerance("out[0]", "float32", table) == Tolerance(1e-3, 1e-3)
    assert output_tolerance("out[1]", "float32", table) == Tolerance(0.1, 0.2)
    # Not declared: the default for the dtype.
    assert output_tolerance("out[2]", "bfloat16", table) == Tolerance(2e-2, 2e-2)


@pytest.mark.parametrize(
    "value", [0.01, {"float32": 0.01}, {"rtol": 0.1}, {"float32": {"rtol": "x", "atol": 1}}]
)
def test_a_malformed_tolerance_says_what_it_must_be(value: object):
    with pytest.raises(TypeError, match="TOLERANCE must be"):
        scratch_tolerances(value)


def test_a_negative_tolerance_is_refused():
    with pytest.raises(ValueError, match="must not be negative"):
        scratch_tolerances({"rtol": -1, "atol": 0})
