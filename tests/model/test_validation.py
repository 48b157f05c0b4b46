"""The model against published timings of Pallas kernels on real TPUs (tests/data/published_tpu_timings.toml).

Fit and validation (docs/tpu-time-model.md reports the same numbers):
- fitted (`calibration = true`, held to ±0.5 %): the matmul guide's 4096^3 128-block matmul on v5e
  (the step cost; `python -m tests.model.fit` solves it);
- validation, every other point: the matmul guide (17 dense points, the masked block-sparse one and
  the DSD one, v5e), JAX's flash attention at four sequence lengths (v5e; the 2024 stack ran its
  128-wide steps slower than the v5e sweeps' stack, whose fit half fits the v5e's reduction chain:
  held to its range so a change shows), and tokamax's autotuned
  grouped-matmul winners on v5e, v5p, v6e and TPU7x (half of the v6e and TPU7x ones fitted those
  chips' vector rate and MXU share: `calibration = true`; 4 fp8 TPU7x winners of an unmerged tokamax
  pull request, tokamax's quantized body costed, in that chip's band),
  and tokamax's Splash attention forward
  winners on v5p, v6e and TPU7x (on v5p a known miss; each held to its range so a change shows), and
  JAX's SparseCore guide on TPU7x (an add-one, mostly host dispatch, and a gather the model puts 38 %
  fast: a known miss, held to its range), and tokamax's fused linear + softmax cross-entropy forward
  winners on TPU7x (34, all within ±15 % since the model keeps work that waits for a dot after it:
  `sandbox/harness/model/barriers.py`).
The bands every estimate shows are generated from these errors (`python -m tests.model.bands --write`
writes `sandbox/harness/model/families/published.py`); the tests here fail while that file is not
what today's model gives.
The everyday tier checks the matmul, attention, SparseCore and cross-entropy points (seconds: the 34
cross-entropy points cost 0.1-1 s each); the grouped-matmul points cost
one host compile of their group tables each (5-10 s here) and run with `--runtimes` (CI passes it).
"""

from __future__ import annotations

import itertools

import pytest

from sandbox.harness.model import families
from sandbox.harness.model.families.measured import MEASURED
from sandbox.protocol.estimate import Estimate
from tests.model import bands
from tests.model.bands import FAMILY_OF
from tests.model.published import Measurement, load, model

MEASUREMENTS = load()
BAND = 0.15
QUICK = [m for m in MEASUREMENTS if m.kernel not in ("gmm", "quantized_gmm")]
GROUPED = [m for m in MEASUREMENTS if m.kernel in ("gmm", "quantized_gmm")]


# Costed with a host compile of their group tables each: checked with `--runtimes`.
GROUPED_FAMILIES = (families.GROUPED, families.QUANTIZED_GROUPED)


@pytest.fixture(scope="module")
def quick_estimates() -> dict[str, Estimate]:
    """Each everyday point costed once (the 34 cross-entropy points take ~7 s together)."""
    return {m.id: model(m) for m in QUICK}


@pytest.fixture(scope="module")
def quick(quick_estimates) -> dict[str, float]:
    return bands.errors(QUICK, quick_estimates)


@pytest.fixture(scope="module")
def grouped() -> dict[str, float]:
    return bands.errors(GROUPED, {m.id: model(m) for m in GROUPED})


@pytest.mark.parametrize("measurement", QUICK, ids=lambda m: m.id)
def test_estimate_within_band(measurement, quick):
    error = quick[measurement.id]
    if measurement.calibration:
        assert abs(error) < 0.005
    elif measurement.kernel == "dsd_matmul":  # the one memory-bound guide point: a known miss
        assert -0.35 < error < 0.0
    elif measurement.kernel == "flash_attention":  # the 2024 stack's steps, slower than the sweeps' (v5e)
        # -16 ... -13 % until XLA's four relayout copies at head dim 64 were counted (`model.layouts`)
        assert -0.16 < error < -0.05, f"{measurement.id}: model {error:+.1%} off the published time"
    elif measurement.kernel == "splash_attention":  # held to its range so a change shows
        assert -0.1 < error < 0.7, f"{measurement.id}: model {error:+.1%} off the published time"
    elif measurement.kernel == "sparsecore_gather":  # a known miss, 38 % fast (docs/tpu-time-model.md)
        assert -0.45 < error < -0.3, f"{measurement.id}: model {error:+.1%} off the published time"
    else:
        assert abs(error) < BAND, f"{measurement.id}: model {error:+.1%} off the published time"


def _keeps_ranking(
    points: list[Measurement], errors: dict[str, float], apart: float
) -> list[tuple[str, str]]:
    """Pairs of one family on one chip, published times more than `apart` apart, that the model swaps."""
    swapped = []
    for a, b in itertools.combinations(points, 2):
        if (FAMILY_OF[a.kernel], a.chip) != (FAMILY_OF[b.kernel], b.chip):
            continue
        if max(a.seconds, b.seconds) / min(a.seconds, b.seconds) <= apart:
            continue
        est_a, est_b = a.seconds * (1 + errors[a.id]), b.seconds * (1 + errors[b.id])
        if (a.seconds < b.seconds) != (est_a < est_b):
            swapped.append((a.id, b.id))
    return swapped


def test_estimates_keep_the_published_ranking(quick):
    """Within each family on each chip, any two points more than 15 % apart keep their order
    (45 % for pairs with the DSD point, whose own error is 29 %). Flash attention and the matmul guide
    are one family each on one chip, so this is the ranking within each family."""
    dsd = [m for m in QUICK if m.kernel == "dsd_matmul"]
    assert not _keeps_ranking([m for m in QUICK if m not in dsd], quick, 1.15)
    assert not _keeps_ranking(QUICK, quick, 1.45)


def test_bigger_blocks_win_as_the_guide_found(quick):
    """The guide's conclusion: 512/1024/1024 blocks reach ~80-90 % of peak where 128 blocks reach ~6 %."""
    by_id = {m.id: m for m in QUICK}
    for n in (4096, 8192):
        small, large = by_id[f"matmul {n}^3, 128/128/128"], by_id[f"matmul {n}^3, 512/1024/1024"]
        ratio = small.seconds * (1 + quick[small.id]) / (large.seconds * (1 + quick[large.id]))
        assert ratio > 10


def test_shown_bands_are_the_errors_on_the_published_points(quick):
    """The bands every estimate shows (`families.BANDS`, generated into published.py) are what the
    generator makes of today's errors on the published points."""
    shown = tuple(b for b in families.BANDS if b.family not in GROUPED_FAMILIES)
    assert bands.published_bands(quick) == shown, "run: python -m tests.model.bands --write"


@pytest.mark.runtimes
def test_grouped_matmul_points_and_their_bands(grouped, quick):
    """tokamax's grouped-matmul winners: published.py, every band and the share within ±15 % that
    docs/tpu-time-model.md states, is what the generator writes from every published point."""
    errors = {**quick, **grouped}
    assert bands.PUBLISHED.read_text() == bands.published_module(errors), (
        "run: python -m tests.model.bands --write"
    )
    # Ranking within each family on each chip: of the 887 grouped-matmul pairs more than 15 % apart
    # (bf16 and fp8 are families of their own), 5 are swapped: 4 with one of the points the model
    # misses by more than 15 %, and two fp8 points published 16 % apart.
    swapped = _keeps_ranking(GROUPED, errors, 1.15)
    assert len(swapped) <= 5, swapped
    for m in GROUPED:
        if m.kernel == "quantized_gmm":
            assert abs(errors[m.id]) < BAND, f"{m.id}: model {errors[m.id]:+.1%} off the published time"
    misses = {m.id for m in GROUPED if abs(errors[m.id]) > BAND}
    by_id = {m.id: m for m in GROUPED}
    near = [
        (a, b)
        for a, b in swapped
        if max(by_id[a].seconds, by_id[b].seconds) < 1.2 * min(by_id[a].seconds, by_id[b].seconds)
    ]
    assert all(a in misses or b in misses or (a, b) in near for a, b in swapped), swapped


def test_host_timed_points_take_off_their_chips_host_dispatch():
    """A host-timed source's dispatch (derived in the data file) is the one the chip table reports
    beside every estimate on that chip."""
    from sandbox.protocol.chips import chip_info

    host_timed = [m for m in MEASUREMENTS if m.host_seconds]
    assert {m.chip for m in host_timed} == {"v5e", "tpu7x"}
    for m in host_timed:
        assert m.host_seconds == chip_info(m.chip).host_dispatch_seconds, m.id


def test_each_published_kernel_is_put_in_its_family_and_says_its_band(quick_estimates):
    from sandbox.protocol.chips import chip_info

    for m in QUICK:
        e = quick_estimates[m.id]
        assert e.family == FAMILY_OF[m.kernel], m.id
        title = chip_info(m.chip).title
        assert e.validation.startswith("±") and f"published kernels of this family on {title}" in e.validation
        assert e.low_seconds is not None and e.high_seconds is not None
        # The range covers the published band and, where the chip's sweeps measured the family, theirs.
        bands = [b for b in (*families.BANDS, *MEASURED) if (b.family, b.chip) == (e.family, m.chip)]
        assert e.low_seconds == pytest.approx(e.seconds / (1 + max(b.high for b in bands)))
        assert e.high_seconds == pytest.approx(e.seconds / (1 + min(b.low for b in bands)))
    (matmul,) = [m for m in QUICK if m.calibration and m.kernel == "matmul"]
    assert quick_estimates[matmul.id].validation.startswith(
        "±4.5 % on 17 published kernels of this family on TPU v5e"
    )


def test_unvalidated_estimates_say_so_and_give_no_range():
    import functools

    import jax
    import jax.numpy as jnp

    from sandbox.harness.model.estimate import estimate
    from sandbox.protocol.chips import chip_info
    from tests.model.published_kernels import matmul

    x = jax.ShapeDtypeStruct((1024, 1024), jnp.bfloat16)
    e = estimate(
        functools.partial(matmul, bm=128, bk=128, bn=128), (x, x), chip_info("tpu7x"), timeline=False
    )
    assert e.validation == f"not validated for {families.MATMUL} on TPU7x (Ironwood)"
    assert e.low_seconds is None and e.high_seconds is None
