"""The differential corpus's judge (`bench/tpu/corpus/corpus_case.py`): the checker's rule against a float64
reference, the errors a verdict line reports, and bf16 outputs kept exactly in the .npz."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench" / "tpu" / "corpus"))

from corpus_case import BF16, Case, Tolerance, errors, judge, storable, widen, within


def case(**tol) -> Case:
    return Case("probe", lambda x: x, lambda rng: (rng.standard_normal(4),), lambda x: x, **tol)


def test_judge_passes_within_tolerance_and_reports_the_largest_errors():
    ref = np.array([1.0, -2.0, 4.0])
    out = np.array([1.0, -2.0 + 1e-5, 4.0], np.float32)
    verdict = judge(case(rtol=1e-4, atol=1e-4), (out,), (ref,))
    assert verdict["status"] == "passed"
    assert abs(verdict["max_abs_err"] - 1e-5) < 1e-7
    assert abs(verdict["max_rel_err"] - 5e-6) < 1e-7


def test_judge_reports_a_bf16_pass_dot_as_a_mismatch_at_the_f32_tolerance():
    """One bf16 MXU pass on N(0,1) data at K=256: the chip's f32 dot misses the f32 tolerance."""
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((64, 256)), rng.standard_normal((256, 64))
    one_pass = (widen(x.astype(BF16)) @ widen(y.astype(BF16))).astype(np.float32)
    assert judge(case(rtol=1e-4, atol=1e-4), (one_pass,), (x @ y,))["status"] == "mismatch"


def test_judge_mismatches_on_nan_shape_and_output_count():
    ref = np.ones(3)
    assert judge(case(rtol=1, atol=1), (np.array([1.0, np.nan, 1.0]),), (ref,))["status"] == "mismatch"
    assert judge(case(rtol=1, atol=1), (np.ones(4),), (ref,))["status"] == "mismatch"
    assert judge(case(rtol=1, atol=1), (ref, ref), (ref,))["status"] == "mismatch"


def test_within_matches_nan_where_the_reference_has_it():
    assert within(np.array([np.nan, 1.0]), np.array([np.nan, 1.0]), Tolerance(0.0, 0.0))


def test_errors_ignore_zero_references_for_the_relative_error():
    assert errors(np.array([0.5, 2.2]), np.array([0.0, 2.0])) == pytest.approx((0.5, 0.1))


def test_storable_keeps_bf16_exactly_as_float32():
    x = np.array([1.5, -3.25, 1e-3], BF16)
    kept = storable(x)
    assert kept.dtype == np.float32
    assert np.array_equal(kept.astype(BF16), x)


def test_seeds_are_stable_per_name():
    assert case(rtol=0, atol=0).seed == Case("probe", None, None, None, 0, 0).seed
    assert np.array_equal(case(rtol=0, atol=0).make_inputs()[0], case(rtol=0, atol=0).make_inputs()[0])
