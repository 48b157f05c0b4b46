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


# Issue 41, item 4: every dtype compared as what it is.
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_compare_checks_both_parts_of_a_complex_output(dtype):
    expected = (np.arange(6) + 1j * np.arange(6, 12)).astype(dtype)
    assert compare("out", expected.copy(), expected, TOL).passed
    wrong_imag = expected.real.astype(dtype)  # the real part right, the imaginary part lost
    check = compare("out", wrong_imag, expected, TOL)
    assert not check.passed and check.mismatch_count == 6
    assert (check.first_mismatches[0].got, check.first_mismatches[0].expected) == (0.0, 6.0)
    assert not compare("out", np.conj(expected), expected, TOL).passed
    assert compare("out", expected + 5e-4j, expected, TOL).passed  # within tolerance on each part


def test_compare_keeps_nan_and_inf_parity_per_complex_part():
    expected = np.array([complex(np.nan, 1.0), complex(2.0, np.inf)])
    assert compare("out", expected.copy(), expected, TOL).passed
    for got in ([complex(np.nan, 3.0), complex(2.0, np.inf)], [complex(np.nan, 1.0), complex(2.0, -np.inf)]):
        assert not compare("out", np.array(got), expected, TOL).passed, got


@pytest.mark.parametrize(
    ("dtype", "values"),
    [
        (np.int64, [2**60, -(2**62), 2**53 + 1]),
        (np.int64, [np.iinfo(np.int64).max, np.iinfo(np.int64).min, 0]),
        (np.uint64, [2**64 - 2, 2**63, 2**53]),
        (np.int32, [2**31 - 2, -(2**31), 7]),
    ],
)
def test_compare_matches_integers_exactly(dtype, values):
    expected = np.array(values, dtype)
    assert compare("out", expected.copy(), expected, tolerance_for(str(expected.dtype))).passed
    got = expected.copy()
    got[0] -= 1  # off by one where float64 cannot tell the two apart
    check = compare("out", got, expected, tolerance_for(str(expected.dtype)))
    assert not check.passed and check.mismatch_count == 1 and check.max_abs_error == 1.0


def test_compare_measures_integers_far_apart_exactly():
    info = np.iinfo(np.int64)
    check = compare("out", np.array([info.max]), np.array([info.min]), tolerance_for("int64"))
    assert not check.passed and check.max_abs_error == float(2**64 - 1)


def test_compare_applies_a_declared_integer_tolerance():
    expected = np.array([10, 2**60], np.int64)
    assert compare("out", expected + 1, expected, Tolerance(rtol=0.0, atol=1.0)).passed
    assert not compare("out", expected + 2, expected, Tolerance(rtol=0.0, atol=1.0)).passed
