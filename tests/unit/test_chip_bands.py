"""The v5e's transcendental bands in the chip table are what the chip gave (bench/tpu/v5e/corpus),
and the checker states them beside a check that is tighter."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from sandbox.protocol import Tolerance, chip_info
from sandbox.verdict.judge import _band_note

CORPUS = Path(__file__).resolve().parents[2] / "bench" / "tpu" / "corpus"
# The table's names for the corpus kernels that measured them.
MEASURED_BY = {
    "exp": "exp_f32",
    "tanh": "tanh_f32",
    "log": "log_f32",
    "logistic": "sigmoid_f32",
    "rsqrt": "rsqrt_f32",
    "reciprocal(approx=True)": "reciprocal_approx_f32",
}


@pytest.fixture(scope="module")
def chip_errors() -> dict[str, float]:
    sys.path.insert(0, str(CORPUS))
    import corpus_vector

    outputs = np.load(CORPUS.parent / "v5e" / "corpus" / "outputs.npz")
    cases = {c.name: c for c in corpus_vector.CASES}
    found = {}
    for band, name in MEASURED_BY.items():
        case = cases[name]
        want = case.expected(case.make_inputs())[0]
        got = outputs[f"{name}/0"].astype(np.float64)
        found[band] = float((np.abs(got - want) / np.maximum(np.abs(want), 1e-30)).max())
    return found


def test_the_v5e_bands_are_the_measured_errors_rounded_up(chip_errors):
    bands = dict(chip_info("v5e").transcendental_bands)
    assert set(bands) == set(MEASURED_BY)
    for name, measured in chip_errors.items():
        assert measured <= bands[name] <= measured * 1.1, (name, measured, bands[name])


def test_a_check_tighter_than_the_chips_tanh_is_told_so():
    note = _band_note((("exp", 5.0e-6), ("tanh", 8.2e-5)), Tolerance(rtol=1e-5, atol=1e-6))
    assert note.startswith(
        "the simulator computes these exactly; a TPU v5e (measured) gives tanh within 8.2e-05"
    )
    assert "exp" not in note and "rtol 1e-05" in note
    assert _band_note((("tanh", 8.2e-5),), Tolerance(rtol=1e-3, atol=1e-6)) == ""
