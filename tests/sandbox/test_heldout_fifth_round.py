"""Issue 41, a fifth round on the sandbox's side: a checker that cannot be wedged, kept references that
cannot be steered.

- An output of bytes (bool, int8, float8) of 8 MiB is 8 Mi elements, each widened to float64 with a
  dozen temporaries: one comparison cost the web server ~600 MB and seconds of CPU (a scratch file's
  reference and kernel both return one: 706 MB of server RSS for a 7 MB upload). `compare` now works
  by blocks of elements, with the very same result.
- A scratch file's `TOLERANCE` of NaN failed every element without saying why, one of infinity passed
  every finite element, and either reached the result as "nan" or "inf" where a number belongs.
- Mode `both` compared the two runs' outputs by the case index their processes reported: -1 named
  no case of a run that had none, the comparison raised out of `execute`, and the run was the queue's
  "internal error".
- Whether a run's reference was kept from another run was decided by a second lookup: a reference
  another run kept between the two was taken for this run's own, and what that run's `make_inputs`
  printed was given to this one.
"""

from __future__ import annotations

import threading
import tracemalloc

import ml_dtypes
import numpy as np
import pytest

from sandbox.backends import both, checking, pairing
from sandbox.backends.kept_references import cache_key, cache_of
from sandbox.jobs.build import make_job
from sandbox.protocol import (
    Case,
    InterpretOptions,
    RunResult,
    RunStatus,
    Tolerance,
    new_event,
    to_json_dict,
)
from sandbox.protocol.events import CaseExpected
from sandbox.verdict import arrays
from sandbox.verdict import compare as compare_module
from sandbox.verdict.compare import compare
from sandbox.verdict.tolerances import scratch_tolerances
from sandbox.verdict.vacuous import vacuous_note
from tests.api.fakes import FakeBackend
from tests.executions import finished
from tests.sandbox.test_heldout_attacks import beside_a_victim

CASE = Case(name="scratch", dtype="", seed=0)
JOB = make_job("def kernel(x): ...\ndef reference(x): ...\n")


# -- the checker's cost ------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, ml_dtypes.float8_e4m3fn], ids=str)
def test_an_output_of_bytes_is_compared_in_bounded_memory(dtype):
    """7 Mi elements (7 MiB, under the case's cap): ~540 MB at the peak before, with the vacuous check."""
    want = (np.arange(7 << 20) % 3).astype(dtype)
    got = want.copy()
    got[-1] = 2 if want[-1] != 2 else 1
    tracemalloc.start()
    try:
        check = compare("out", got, want, Tolerance(0.0, 0.0))
        vacuous_note([("out", want)], lambda name, dtype: Tolerance(0.0, 0.0))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert not check.passed and check.mismatch_count == 1
    assert check.first_mismatches[0].index == ((7 << 20) - 1,)
    assert peak < 200 << 20, f"{peak >> 20} MB"


def _wrong_everywhere(shape: tuple[int, ...], dtype: type) -> tuple[np.ndarray, np.ndarray]:
    want = (np.arange(int(np.prod(shape))) % 11 - 3).astype(dtype).reshape(shape)
    got = want.copy()
    flat = got.reshape(-1)
    if np.issubdtype(dtype, np.floating) or np.issubdtype(dtype, np.complexfloating):
        flat[[2, 9, 10, 31]] = [np.nan, np.inf, -np.inf, 100.0]
        flat[17] += 0.5
    else:
        flat[[2, 9, 10, 17, 31]] += 1
    return got, want


@pytest.mark.parametrize(
    ("shape", "dtype"),
    [
        ((5, 7), np.float32),
        ((40,), np.complex64),
        ((3, 4, 3), np.int64),
        ((2, 3, 7), np.uint8),
        ((), np.float64),
    ],
    ids=["f32", "c64", "i64", "u8", "0-d"],
)
def test_a_comparison_by_blocks_says_exactly_what_one_whole_comparison_said(monkeypatch, shape, dtype):
    """Blocks of 4 elements against one block: every field of the check is the same, error map,
    first mismatches, where the non-finite ones are and the worst errors included."""
    got, want = _wrong_everywhere(shape, dtype) if shape else (np.float64(np.nan), np.float64(1.0))
    tol = Tolerance(rtol=1e-3, atol=1e-3)
    whole = compare("out", got, want, tol)
    monkeypatch.setattr(compare_module, "BLOCK", 4)
    blocked = compare("out", got, want, tol)
    assert to_json_dict(blocked) == to_json_dict(whole)
    assert not whole.passed and whole.mismatch_count >= 1


# -- a scratch file's tolerance ----------------------------------------------------------------------


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -1e-3], ids=["nan", "inf", "negative"])
def test_a_tolerance_that_is_no_bound_is_refused(bad):
    with pytest.raises(ValueError, match="must be finite numbers and must not be negative"):
        scratch_tolerances({"rtol": bad, "atol": 1e-3})
    with pytest.raises(ValueError, match="must be finite numbers and must not be negative"):
        scratch_tolerances({"float32": (1e-3, bad)})


def test_a_tolerance_the_references_process_wrote_itself_is_its_error():
    """The harness refuses such a `TOLERANCE`; a forged `expected` event must be refused by the checker."""
    nan = Tolerance(rtol=float("nan"), atol=0.0)
    event = CaseExpected(
        0, 1, CASE, "in", ((8,),), arrays.encode([("out", np.ones(8))]), tolerances={"*": nan}
    )
    execution = finished(new_event("expected", **vars(event)))
    with pytest.raises(arrays.ChannelError, match="the reference's TOLERANCE: rtol and atol must be finite"):
        checking._reference(JOB, execution)


NAN_TOLERANCE = """
import numpy as np

TOLERANCE = {"rtol": float("nan"), "atol": 0.0}

def make_inputs(seed):
    return (np.arange(8, dtype=np.float32),)

def reference(x):
    return x * 2

def kernel(x):
    return x * 3
"""


@pytest.mark.slow
def test_end_to_end_a_nan_tolerance_is_the_users_error_and_a_victim_passes():
    attacked = beside_a_victim(NAN_TOLERANCE)
    assert attacked.status is RunStatus.ERROR, attacked.summary
    assert "TOLERANCE: rtol and atol must be finite numbers" in attacked.summary
    assert "internal error" not in attacked.summary


# -- mode both ---------------------------------------------------------------------------------------


def _case_outputs(index: int) -> object:
    return new_event(
        "case_outputs",
        index=index,
        case="scratch",
        seconds=0.0,
        inputs_digest="x",
        kernels=1,
        outputs=arrays.encode([("out", np.zeros(4, np.float32))]),
    )


@pytest.mark.parametrize("index", [-1, -(2**40), 2**40])
def test_mode_both_with_a_made_up_case_index_keeps_the_chips_result(index):
    job = make_job("x = 1", chip="v5e", mode="both")
    failed = RunResult(RunStatus.ERROR, "error: its report", "v5e", "tpu", InterpretOptions())

    def run_one(one, forward, outputs):
        outputs.append(_case_outputs(index))
        return failed, True

    result, _ = both.run_both(job, lambda kind, data: None, run_one)
    assert result.status is RunStatus.ERROR and result.summary == failed.summary
    assert result.both is not None and result.both.cases == ()
    side = both.side_by_side(
        both.Side(failed, {-1: [("out", np.zeros(2))]}), both.Side(failed, {-1: [("out", np.ones(2))]}), job
    )
    assert side.cases[0].name == "case -1"


# -- kept references ---------------------------------------------------------------------------------


def test_a_reference_kept_meanwhile_by_another_run_is_not_taken_for_this_runs_own():
    """`execute` looked once (nothing kept); another run kept one before this run's reference started:
    this run computes its own rather than taking that one for it (and giving its kernel's job what
    the other run's `make_inputs` printed)."""
    backend = FakeBackend()
    job = make_job("def make_inputs(seed): ...\ndef reference(x): ...\ndef kernel(x): ...\n")
    other = checking.Reference(expected={}, of=1, tolerances={})
    cache = cache_of(backend)
    key = cache_key(job)
    assert cache is not None and key is not None
    cache.put(key, other)
    found = pairing.start_reference(backend, job, threading.Event(), None, None)
    assert isinstance(found, checking.Reference) and found is not other
    assert [j.role for j in backend.reference_jobs] == ["reference"]
    assert pairing.start_reference(backend, job, threading.Event(), None, other) is other
