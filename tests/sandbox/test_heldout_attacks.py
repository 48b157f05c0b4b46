"""Issue 41 again, variants of its attack classes that earlier fixes did not name.

Checks that compared too little: every dtype as it is, and outputs laid out otherwise than the
reference's (a tuple of one array for an array; an output of another shape that the sampling of
large outputs cuts down to the expected shape). Channel fields the checker showed unbounded: a
case's mismatch hint and chip bands (16 MiB of note per case). The checker is driven directly
(milliseconds) and, where it matters end to end, through the session's backend with a victim beside.
"""

from __future__ import annotations

import json
import math
import time
from concurrent.futures import ThreadPoolExecutor

import ml_dtypes
import numpy as np
import pytest

from sandbox.backends import checking
from sandbox.jobs.build import make_job
from sandbox.protocol import Case, Event, RunResult, RunStatus, new_event, to_json_dict
from sandbox.protocol.events import CaseExpected
from sandbox.protocol.reading import ReportError, read_event
from sandbox.results.classify import classify
from sandbox.verdict import arrays, digests
from sandbox.verdict.compare import compare, tolerance_for
from sandbox.verdict.judge import Expected
from tests.executions import finished
from tests.sandbox.conftest import run_job_on
from tests.sandbox.hostile_corpus import PASSING_KERNEL

CASE = Case(name="c", dtype="float32", seed=0)
JOB = make_job("def kernel(x): ...\ndef reference(x): ...\n")


def _reference(named: list[tuple[str, np.ndarray]]) -> checking.Reference:
    event = CaseExpected(0, 1, CASE, "in", ((3, 4),), arrays.encode(named))
    return checking.Reference(expected={0: Expected.of(event)}, of=1, tolerances={})


def _ran(named: list[tuple[str, np.ndarray]], **fields: object) -> Event:
    """The event as the kernel's process may write it: any JSON at all in each field."""
    data = to_json_dict(new_event("case_outputs", index=0, case="c", seconds=0.1, inputs_digest="in",
                                  outputs=arrays.encode(named), kernels=1).data)  # fmt: skip
    return Event("case_outputs", {**data, **to_json_dict(fields)})


def _result(want: list[tuple[str, np.ndarray]], got: list[tuple[str, np.ndarray]], **fields: object):
    execution = finished(_ran(got, **fields))
    return classify(JOB, checking.Checker(JOB, _reference(want)).rewrite(execution))


# -- every dtype compared as what it is --------------------------------------------------------------

F8 = [ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2, ml_dtypes.float8_e4m3b11fnuz]
DIFFERENT = {
    "complex imaginary part": (np.array([1 + 2j], np.complex64), np.array([1 + 3j], np.complex64)),
    "complex NaN in the imaginary part": (
        np.array([complex(1, np.nan)], np.complex128),
        np.array([complex(1, 0)], np.complex128),
    ),
    "int64 at 2**62": (np.array([2**62 + 1], np.int64), np.array([2**62], np.int64)),
    "uint64 at 2**64 - 1": (np.array([2**64 - 1], np.uint64), np.array([2**64 - 2], np.uint64)),
    "int64 past float64's 2**53": (np.array([2**53 + 1], np.int64), np.array([2**53], np.int64)),
    "bool": (np.array([True, False]), np.array([True, True])),
    "int4": (np.array([1, -8], ml_dtypes.int4), np.array([1, 7], ml_dtypes.int4)),
    "uint4": (np.array([0, 15], ml_dtypes.uint4), np.array([0, 14], ml_dtypes.uint4)),
    "uint8": (np.array([255], np.uint8), np.array([254], np.uint8)),
    **{f"{np.dtype(t).name} by one step": (np.array([1.0, 2.0], t), np.array([1.0, 2.5], t)) for t in F8},
    "bfloat16 past its tolerance": (
        np.array([1.0], ml_dtypes.bfloat16),
        np.array([1.0625], ml_dtypes.bfloat16),
    ),
    "NaN in another place": (np.array([np.nan, 1.0], np.float32), np.array([1.0, np.nan], np.float32)),
    "an infinity of the other sign": (np.array([np.inf], np.float32), np.array([-np.inf], np.float32)),
    "an infinity for the largest finite": (np.array([np.inf], np.float16), np.array([65504], np.float16)),
    "a shape that broadcasts": (np.ones((1, 3), np.float32), np.ones((3,), np.float32)),
    "a 0-d array for one element": (np.array(1.0, np.float32), np.array([1.0], np.float32)),
    "a transposed empty array": (np.zeros((0, 3), np.float32), np.zeros((3, 0), np.float32)),
    "int32 that casts equal to float32": (np.array([1, 2], np.int32), np.array([1.0, 2.0], np.float32)),
    "float64 that casts equal to float32": (np.array([0.5], np.float64), np.array([0.5], np.float32)),
    "uint8 that views equal to int8": (np.array([1], np.uint8), np.array([1], np.int8)),
    "bool that casts equal to int8": (np.array([True]), np.array([1], np.int8)),
}


@pytest.mark.parametrize(("got", "want"), DIFFERENT.values(), ids=DIFFERENT.keys())
def test_outputs_that_differ_in_any_way_fail(got, want):
    check = compare("out", got, want, tolerance_for(str(want.dtype)))
    assert not check.passed, check
    result = _result([("out", want)], [("out", got)])
    assert result.status is RunStatus.MISMATCH, result.summary


SAME = {
    "complex with NaN parts": np.array([complex(np.nan, 1), complex(1, np.inf)], np.complex128),
    "uint64 extremes": np.array([0, 2**64 - 1], np.uint64),
    "int64 extremes": np.array([-(2**63), 2**63 - 1], np.int64),
    "float8 NaN": np.array([np.nan, 0.5], ml_dtypes.float8_e4m3fn),
    "-0.0": np.array([-0.0, 0.0], np.float32),
    "a zero-size array": np.zeros((0, 4), np.float32),
    "a 0-d array": np.array(3.0, np.float32),
    "int4": np.array([-8, 7], ml_dtypes.int4),
}


@pytest.mark.parametrize("want", SAME.values(), ids=SAME.keys())
def test_outputs_identical_to_the_reference_pass(want):
    assert compare("out", want.copy(), want, tolerance_for(str(want.dtype))).passed
    assert _result([("out", want)], [("out", want.copy())]).status is RunStatus.PASSED


# -- outputs laid out otherwise than the reference's ---------------------------------------------------

WANT = np.arange(12, dtype=np.float32).reshape(3, 4)


@pytest.mark.parametrize(
    "got_names",
    [["out[0]"], ["out['out']"], ["out.value"]],
    ids=["a tuple of one array", "a dict", "an attribute"],
)
def test_a_result_of_another_structure_is_a_mismatch(got_names):
    result = _result([("out", WANT)], [(name, WANT) for name in got_names])
    assert result.status is RunStatus.MISMATCH, result.summary
    assert "same structure" in result.cases[0].note
    two = _result([("out[0]", WANT), ("out[1]", WANT)], [("out['a']", WANT), ("out['b']", WANT)])
    assert two.status is RunStatus.MISMATCH, two.summary


def _cut(name: str, full: np.ndarray, stride: int) -> list[tuple[str, np.ndarray]]:
    """An output as `sampled.fit` sends one too large to send whole: every k-th row, and its sums."""
    return [(f"{name}[::{stride}]", full[::stride]), (arrays.SUMS_NAME, digests.table([(0, full)]))]


def test_an_output_of_another_shape_sampled_to_the_expected_shape_is_a_mismatch():
    """`sampled.fit` sends every k-th row of an output too large to send whole; a (4500, 1024) output
    cut every 3rd row is as many rows as a (3000, 1024) one cut every 2nd, and the checker compared
    shapes only after the cut."""
    six, nine = np.arange(24, dtype=np.float32).reshape(6, 4), np.arange(36, dtype=np.float32).reshape(9, 4)
    result = _result(_cut("out", six, 2), _cut("out", nine, 3))
    assert result.status is RunStatus.MISMATCH, result.summary
    assert "another shape" in result.cases[0].note
    same = _result(_cut("out", six, 2), _cut("out", six.copy(), 2))
    assert same.status is RunStatus.PASSED, same.summary


def test_an_in_place_entrys_mutated_input_stands_for_the_output():
    mutated = "input[0] (mutated in place)"
    assert _result([("out", WANT)], [(mutated, WANT)]).status is RunStatus.PASSED
    assert _result(_cut("out", WANT, 2), _cut(mutated, WANT, 2)).status is RunStatus.PASSED
    assert _result(_cut("out", WANT, 2), _cut(mutated, WANT, 3)).status is RunStatus.MISMATCH


# -- fields of a case's report, bounded before they are shown ------------------------------------------

HUGE = 1 << 20


def test_a_huge_mismatch_hint_and_chip_bands_are_cut():
    wrong = [("out", WANT * 1.01)]
    bands = (*((f"op{i}" * 50, 1.0) for i in range(10_000)), ("nan", math.nan), ("neg", -1.0))
    result = _result([("out", WANT)], wrong, mismatch_hint="h" * HUGE, chip_bands=bands)
    assert result.status is RunStatus.MISMATCH, result.summary
    note = result.cases[0].note
    assert len(note) < 10_000, len(note)
    assert "nan within" not in note and "neg within" not in note


@pytest.mark.parametrize(
    "fields",
    [
        {"seconds": "nan"},
        {"seconds": "-inf"},
        {"seconds": -5.0},
        {"kernels": -(10**30)},
        {"race_count": 10**30, "raced": True},
        {"index": -1},
        {"index": 10**30},
        {"index": "0"},
        {"outputs": "not a list"},
        {"outputs": [{"name": 1, "dtype": "float32", "shape": [3, 4], "data": ""}]},
        {"outputs": [{"name": "out", "dtype": "float32", "shape": [3.0, 4], "data": ""}]},
        {"outputs": [{"name": "out", "dtype": "float32", "shape": [True, 4], "data": ""}]},
        {"outputs": [{"name": "out", "dtype": ["float32"], "shape": [3, 4], "data": ""}]},
        {"outputs": [{"name": "out", "dtype": "float32", "shape": {"a": 1}, "data": ""}]},
        {"outputs": [{"name": "out", "dtype": "float32", "shape": [3, 4], "data": None}]},
        {"notes": ["n" * HUGE] * 100},
        {"case": "c" * HUGE},
        {"inputs_digest": 5},
    ],
    ids=lambda f: ",".join(f"{k}={str(v)[:20]}" for k, v in f.items()),
)
def test_a_case_report_of_any_shape_is_a_result_never_a_raise(fields):
    result = _result([("out", WANT)], [("out", WANT)], **fields)
    assert result.status in (RunStatus.PASSED, RunStatus.MISMATCH, RunStatus.ERROR), result.summary
    assert "internal error" not in result.summary.lower()
    assert all(math.isfinite(c.seconds) and c.seconds >= 0 for c in result.cases)
    assert len(result.summary) < 2000
    if "seconds" in fields or "kernels" in fields:
        assert result.status is RunStatus.PASSED, result.summary


@pytest.mark.parametrize("number", [10**400, -(10**400)], ids=["10**400", "-10**400"])
def test_an_integer_no_float_can_hold_is_an_unreadable_report_not_a_raise(number):
    """`float(10**400)` raises OverflowError, which the event reader did not catch: the watcher gave
    up on the job and the user read "internal error: the sandbox failed while it watched the job"."""
    line = json.dumps({"kind": "compiled", "data": {"first_call_seconds": number}}).encode()
    with pytest.raises(ReportError, match="expected a number"):
        read_event(line)


# -- end to end, on the session's backend, with a victim beside -----------------------------------------

ONE_TUPLE = """
import jax, jax.numpy as jnp
from jax.experimental import pallas as pl

def make_inputs(seed):
    return (jax.random.normal(jax.random.key(seed), (8, 128)),)

def reference(x):
    return x * 2

def double_kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...] * 2

def kernel(x):
    return (pl.pallas_call(double_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x),)
"""

# A scratch file whose kernel writes on the harness's event channel itself (its writer, found by gc).
FORGER = """
import gc, os, time
import numpy as np
from sandbox.verdict.arrays import encode

_writer = next(o for o in gc.get_objects() if type(o).__name__ == "EventWriter")

def make_inputs(seed):
    return (np.arange(8, dtype=np.float32),)

def reference(x):
    return x * 2
"""

HINT_FLOOD = (
    FORGER
    + """
def kernel(x):
    _writer.emit("case_outputs", index=0, case="scratch", seconds=float("nan"), inputs_digest="x",
                 kernels=1, outputs=encode([("out", np.zeros(8, np.float32))]),
                 mismatch_hint="h" * (12 << 20), chip_bands=(("exp", 1.0),) * 20000)
    time.sleep(30)
    return x * 2
"""
)

HUGE_NUMBER = (
    FORGER
    + """
def kernel(x):
    with _writer._lock:
        os.write(_writer._fd, b'{"kind":"compiled","data":{"first_call_seconds":1' + b'0' * 400 + b'}}\\n')
    time.sleep(30)
    return x * 2
"""
)

VICTIM = "import time\ntime.sleep(1.0)\n" + PASSING_KERNEL


@pytest.mark.slow
@pytest.mark.parametrize(
    ("source", "said"),
    [(ONE_TUPLE, "same structure"), (HINT_FLOOD, ""), (HUGE_NUMBER, "")],
    ids=["one-tuple", "hint-flood", "huge-number"],
)
def test_end_to_end_the_attack_is_its_own_runs_result_and_a_victim_passes(source, said):
    attacked = beside_a_victim(source)
    assert attacked.status in (RunStatus.MISMATCH, RunStatus.ERROR), attacked.summary
    assert "internal error" not in attacked.summary.lower(), attacked.summary
    notes = " ".join(c.note for c in attacked.cases)
    assert said in notes and len(notes) < 10_000, notes[:300]


def beside_a_victim(source: str) -> RunResult:
    """`source`'s result on the session's backend, run while a normal run is in flight there: the
    victim must pass, and afterwards the backend must be healthy and pass a normal kernel."""
    from tests.backends import suite_backend

    backend = suite_backend()
    with ThreadPoolExecutor(max_workers=2) as pool:
        victim = pool.submit(run_job_on, backend, make_job(VICTIM, timing_budget_seconds=0.0, trace=False))
        time.sleep(0.2)
        attacked = run_job_on(backend, make_job(source, timing_budget_seconds=0.0, trace=False))
        assert victim.result().status is RunStatus.PASSED, victim.result().summary
    assert backend.health().ok
    assert run_job_on(backend, make_job(PASSING_KERNEL, trace=False)).status is RunStatus.PASSED
    return attacked
