"""Every kernel family, in one list: how an estimate's kernels are classified, and how far it is trusted.

Every estimate says which family its kernels belong to (from what the traced kernel does: a
BlockSpec pipeline around one dot, scalar-prefetched block tables, a grid sized by the inputs,
softmax-like work, a hand-written DMA program) and, where published timings of that family on that
chip exist, the band of the model's error on them: "±4.5 % on 17 published kernels of this family
on v5e", and a range of times. Elsewhere it says "not validated for … on …" and gives no range.

The bands are the model's own errors on `tests/data/published_tpu_timings.toml` (the model's device
time, plus the measurements' host dispatch where the timing includes it, against the printed time;
the points a constant was fitted to left out), generated into `published.py` by
`python -m tests.model.bands --write`; `tests/model/test_validation.py` fails while that file is not
what the model gives today.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from sandbox.harness.model.families import (
    block_sparse,
    collective,
    elementwise,
    grouped,
    matmul,
    program,
    quantized_grouped,
    softmax_like,
    sparse_attention,
    sparse_core,
)
from sandbox.harness.model.families.base import Band, Family, Traits
from sandbox.harness.model.families.measured import MEASURED, XLA_MEASURED
from sandbox.harness.model.families.published import PUBLISHED

# Each traced kernel matches exactly one (tests/model/test_families.py checks every combination of
# `Traits`), so the order is only the order bands and docs list them in.
FAMILIES: tuple[Family, ...] = (
    matmul.FAMILY,
    block_sparse.FAMILY,
    softmax_like.FAMILY,
    grouped.FAMILY,
    quantized_grouped.FAMILY,
    sparse_attention.FAMILY,
    elementwise.FAMILY,
    sparse_core.FAMILY,
    program.SOFTMAX_LIKE,
    program.MATMUL,
    program.FAMILY,
    collective.FAMILY,
)

# The names every estimate shows (`Estimate.family`).
MATMUL = matmul.NAME
BLOCK_SPARSE = block_sparse.NAME
GROUPED = grouped.NAME
QUANTIZED_GROUPED = quantized_grouped.NAME
SOFTMAX_LIKE = softmax_like.NAME
SPARSE_ATTENTION = sparse_attention.NAME
ELEMENTWISE = elementwise.NAME
PROGRAM = program.NAME
PROGRAM_MATMUL = program.MATMUL_NAME
PROGRAM_SOFTMAX_LIKE = program.SOFTMAX_LIKE_NAME
COLLECTIVE = collective.NAME
SPARSE_CORE = sparse_core.NAME

# The model's error on published kernels, per family and chip, in the order of `FAMILIES`.
BANDS: tuple[Band, ...] = PUBLISHED


@dataclass(frozen=True)
class Validation:
    family: str
    text: str  # "±4.5 % on 17 published kernels of this family on v5e" or "not validated for …"
    band: Band | None


def classify(traits: Traits) -> str:
    """The name of the family a kernel with these traits belongs to."""
    return next(f.name for f in FAMILIES if f.matches(traits))


def validation(families: Iterable[str], chip: str, title: str) -> Validation:
    """What the estimate of kernels of these families on `chip` may be trusted to: the band on published
    kernels, and beside it the error measured on a real chip's Tune sweeps where there is one
    (`measured.MEASURED`); the band given for the time range covers both."""
    distinct = list(dict.fromkeys(f for f in families if f))
    if len(distinct) != 1:
        kinds = "; ".join(distinct) or "no kernel"
        return Validation("mixed", f"not validated as a whole: kernels of several families ({kinds})", None)
    family = distinct[0]
    published, on_chip = _band(PUBLISHED, family, chip), _band(MEASURED, family, chip)
    texts = []
    if published is not None:
        texts.append(
            f"{_worst(published)} on {published.points} published kernels of this family on {title} (seen {_seen(published)}; {published.source})"
        )
    if on_chip is not None:
        texts.append(
            f"{_worst(on_chip)} on {on_chip.points} configs of this family timed on a real {title} (seen {_seen(on_chip)}; {on_chip.source})"
        )
    if not texts:
        return Validation(family, f"not validated for {family} on {title}", None)
    bands = [b for b in (published, on_chip) if b is not None]
    band = (
        bands[0]
        if len(bands) == 1
        else Band(
            family,
            chip,
            min(b.low for b in bands),
            max(b.high for b in bands),
            sum(b.points for b in bands),
            "; ".join(b.source for b in bands),
        )
    )
    return Validation(family, "; ".join(texts), band)


def xla_validation(kind: str, chip: str, title: str) -> str:
    """What the costing of XLA's own op (`outside.xla_kind`'s `kind`, or `XLA_COMPILED`) was off the chip's time,
    where such ops were timed on it (`measured.XLA_MEASURED`)."""
    band = _band(XLA_MEASURED, kind, chip)
    if band is None:
        return f"{kind}: not timed on a real {title}"
    return (
        f"{kind}: this costing was {_seen(band)} off XLA's own time at {band.points} sizes timed "
        f"on a real {title}"
    )


def _band(bands: tuple[Band, ...], family: str, chip: str) -> Band | None:
    return next((b for b in bands if (b.family, b.chip) == (family, chip)), None)


def _worst(band: Band) -> str:
    return f"±{max(abs(band.low), abs(band.high)) * 100:.1f} %"


def _seen(band: Band) -> str:
    return f"{band.low * 100:+.1f} % to {band.high * 100:+.1f} %"


def seconds_range(seconds: float, band: Band | None) -> tuple[float | None, float | None]:
    """The times the real chip would take if the model errs as on the published kernels: an error
    e = estimate / real - 1 in [low, high] puts the real time in [estimate / (1 + high), estimate / (1 + low)]."""
    if band is None:
        return None, None
    return seconds / (1 + band.high), seconds / (1 + band.low)
