import ml_dtypes
import numpy as np
import pytest

from sandbox.protocol import Tolerance
from sandbox.verdict.compare import FIRST_MISMATCHES, compare, tolerance_for

TOL = Tolerance(rtol=1e-3, atol=1e-3)


def test_compare_passes_within_tolerance():
    expected = np.linspace(-1, 1, 64, dtype=np.float32).reshape(8, 8)
    check = compare("out", expected + 5e-4, expected, TOL)
    assert check.passed and check.mismatch_count == 0
    assert check.max_abs_error == pytest.approx(5e-4, rel=1e-3)


def test_compare_reports_first_mismatches_with_indices():
    expected = np.zeros((4, 5), np.float32)
    got = expected.copy()
    got[1, 2], got[3, 4] = 7.0, -2.0
    check = compare("out", got, expected, TOL)
    assert not check.passed and check.mismatch_count == 2 and check.total == 20
    assert [(m.index, m.got, m.expected) for m in check.first_mismatches] == [
        ((1, 2), 7.0, 0.0),
        ((3, 4), -2.0, 0.0),
    ]
    assert check.max_abs_error == 7.0


def test_compare_caps_listed_mismatches():
    check = compare("out", np.ones(100, np.float32), np.zeros(100, np.float32), TOL)
    assert check.mismatch_count == 100 and len(check.first_mismatches) == FIRST_MISMATCHES


def test_compare_nan_must_match_nan():
    expected = np.array([1.0, np.nan, np.inf], np.float32)
    assert compare("out", expected.copy(), expected, TOL).passed
    got = np.array([1.0, 0.0, np.inf], np.float32)
    check = compare("out", got, expected, TOL)
    assert not check.passed and not check.nan_parity and check.mismatch_count == 1


def test_compare_infinity_sign_matters():
    check = compare("out", np.array([-np.inf]), np.array([np.inf]), TOL)
    assert not check.passed and not check.inf_parity


def test_compare_shape_mismatch_is_reported():
    check = compare("out", np.zeros((2, 3)), np.zeros((3, 2)), TOL)
    assert not check.passed and "shape differs" in check.note


def test_compare_dtype_mismatch_fails_even_if_values_match():
    check = compare("out", np.zeros(4, np.float32), np.zeros(4, np.float64), TOL)
    assert not check.passed and "dtype differs" in check.note


def test_compare_handles_bfloat16():
    expected = np.arange(16, dtype=np.float32).astype(ml_dtypes.bfloat16)
    check = compare("out", expected.copy(), expected, tolerance_for("bfloat16"))
    assert check.passed and check.dtype == "bfloat16"


def test_error_map_lights_the_wrong_block():
    expected = np.zeros((64, 64), np.float32)
    got = expected.copy()
    got[16:32, 48:64] = 1.0  # one 16x16 block wrong
    emap = compare("out", got, expected, TOL).error_map
    assert len(emap) == 16 and len(emap[0]) == 16
    lit = {(r, c) for r, row in enumerate(emap) for c, v in enumerate(row) if v > 1}
    assert lit == {(r, c) for r in range(4, 8) for c in range(12, 16)}


def test_tolerance_defaults_and_declared():
    assert tolerance_for("int32") == Tolerance(0.0, 0.0)
    assert tolerance_for("float32", {"float32": Tolerance(1.0, 2.0)}) == Tolerance(1.0, 2.0)


def test_nan_rows_a_kernel_never_wrote_are_counted_and_placed():
    expected = np.ones((256, 128), np.float32)
    got = expected.copy()
    got[192:] = np.nan
    check = compare("out", got, expected, TOL)
    assert check.mismatch_count == check.nonfinite_mismatches == 64 * 128
    assert check.nonfinite_where == "NaN in rows 192–255 (all 128 columns)"
    assert check.max_abs_error == 0.0  # over finite pairs only: the reason NaN needs its own count
    assert check.tolerance == TOL


def test_scattered_non_finite_values_are_summarised():
    expected = np.zeros((16, 16), np.float32)
    got = expected.copy()
    got[:, 5] = np.inf
    got[3, 7] = np.nan
    got[9, 11] = np.nan
    check = compare("out", got, expected, TOL)
    assert check.nonfinite_mismatches == 18
    assert check.nonfinite_where == "NaN or Inf in all 16 rows (columns 5, 7, 11)"
