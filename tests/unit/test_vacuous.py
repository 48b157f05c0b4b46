import numpy as np

from sandbox.protocol import Case, Tolerance
from sandbox.protocol.events import CaseExpected, CaseRan
from sandbox.verdict import arrays
from sandbox.verdict.judge import Expected, judge
from sandbox.verdict.vacuous import vacuous_note

TOL = Tolerance(rtol=1e-4, atol=1e-4)
CASE = Case(name="c", dtype="float32", seed=0, dims={"n": 8})


def _result(expected: np.ndarray, got: np.ndarray):
    want = CaseExpected(0, 1, CASE, "d", ((8, 8),), arrays.encode([("out", expected)]))
    ran = CaseRan(0, CASE.name, 0.0, "d", arrays.encode([("out", got)]), kernels=1)
    return judge(Expected.of(want), ran, {"*": TOL})


def test_zero_reference_for_zero_inputs_warns_vacuous():
    zeros = np.zeros((8, 8), np.float32)
    result = _result(zeros, zeros)
    assert result.passed
    assert "vacuous check: an all-zeros output would also pass" in result.note


def test_constant_reference_warns_vacuous():
    ones = np.full((4, 4), 3.0, np.float32)
    assert "a constant output would also pass" in vacuous_note([("out", ones)], lambda n, d: TOL)


def test_varying_reference_has_no_vacuous_note():
    want = np.linspace(-1, 1, 64, dtype=np.float32).reshape(8, 8)
    result = _result(want, want)
    assert result.passed and "vacuous" not in result.note


def test_vacuous_needs_every_output_to_pass():
    varying = np.arange(16, dtype=np.int32).reshape(4, 4)
    zeros = np.zeros((4, 4), np.float32)
    assert vacuous_note([("a", zeros), ("b", varying)], lambda n, d: TOL) == ""
