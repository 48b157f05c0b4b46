"""The bands every estimate shows, generated from measurements by one code path: a family's errors on one
chip become a `Band` (`band`), and bands become a Python module (`module`). Both generated modules are
written with it: `sandbox/harness/model/families/measured.py` from the v5e sweeps
(`python bench/tpu/tpu_records.py --write`), and `sandbox/harness/model/families/published.py` from
the published timings (`python -m tests.model.bands --write`, under a minute here: it costs every point of
tests/data/published_tpu_timings.toml; tests/model/test_validation.py checks the file is what it writes).

Which published points make a band: every point that fitted nothing (`calibration = true` points
fitted a constant, so they validate nothing), in the family its kernel's family module names it
(`Family.validation_points`), on its source's chip; known misses count like any other point.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from sandbox.harness.model import families
from sandbox.harness.model.families import Band
from sandbox.protocol.chips import CHIPS
from sandbox.protocol.estimate import Estimate
from tests.model.published import Measurement, load, model

PUBLISHED = Path(families.__file__).parent / "published.py"
WITHIN = 0.15  # the share of points within this error is stated beside the bands

# Each published kernel's family: the one its family module says its bands come from.
FAMILY_OF = {kernel: f.name for f in families.FAMILIES for kernel in f.validation_points}

# Where each family's published points on each chip come from, as every estimate names them; a note
# follows where the points were not costed as published or some of them fitted a constant (`{fitted}`:
# how many). A name here is a constant of the generated module.
TOKAMAX = (
    "tokamax's autotuned grouped-matmul winners (openxla/tokamax@783ea95), megablox gmm costed in their place"
)
SPLASH = (
    "tokamax's autotuned Splash attention forward winners (openxla/tokamax@783ea95), JAX's splash kernel "
    "costed in their place with XLA's transposes around it (docs/tpu-time-model.md)"
)
CONSTANTS = {"TOKAMAX": TOKAMAX, "SPLASH": SPLASH}
SOURCES: dict[tuple[str, str], str] = {
    (families.MATMUL, "v5e"): "the JAX Pallas TPU matmul guide (2024-02-27)",
    (families.BLOCK_SPARSE, "v5e"): "the JAX Pallas TPU block-sparse guide (2024-09-16)",
    (families.SOFTMAX_LIKE, "v5e"): "JAX's flash attention forward, jax-ml/jax#24633 (2024-10-31)",
    (families.GROUPED, "v5e"): TOKAMAX,
    (families.GROUPED, "v5p"): TOKAMAX,
    (families.GROUPED, "v6e"): TOKAMAX + "; the other {fitted} fitted v6e's vector rate and MXU share",
    (families.GROUPED, "tpu7x"): TOKAMAX + "; the other {fitted} fitted TPU7x's vector rate and MXU share",
    (families.QUANTIZED_GROUPED, "tpu7x"): (
        "tokamax's autotuned fp8 grouped-matmul winners of an unmerged pull request (openxla/tokamax#876), "
        "tokamax's quantized body costed (docs/tpu-time-model.md)"
    ),
    (families.SPARSE_ATTENTION, "v5p"): SPLASH,
    (families.SPARSE_ATTENTION, "v6e"): SPLASH,
    (families.SPARSE_ATTENTION, "tpu7x"): SPLASH,
    (families.SPARSE_CORE, "tpu7x"): (
        "JAX's SparseCore guide (2026-02-13), host-timed: an add-one, mostly host dispatch, and a gather "
        "the model puts 38 % too fast (a known miss, docs/tpu-time-model.md)"
    ),
    (families.PROGRAM_SOFTMAX_LIKE, "tpu7x"): (
        "tokamax's autotuned fused linear + softmax cross-entropy forward winners (openxla/tokamax@783ea95), "
        "a pl.kernel running one emit_pipeline (docs/tpu-time-model.md)"
    ),
}


def band(family: str, chip: str, errors: Sequence[float], source: str) -> Band:
    """The band of a family's errors (estimate / measured - 1) on one chip, to the 4 decimals a
    generated module holds (so a band computed here equals the one read back from it)."""
    return Band(family, chip, round(min(errors), 4), round(max(errors), 4), len(errors), source)


def module(
    doc: str,
    constants: Mapping[str, str],
    tables: Mapping[str, Sequence[Band]],
    after: Sequence[str] = (),
    *,
    path: Path,
) -> str:
    """A generated module: `doc`, the named source texts, each table as a tuple of bands (a band's
    source written as the constant it is or starts with), then the lines `after`; formatted as the
    repository's formatter would, since `ruff format --check` checks it."""
    lines = [f'"""{doc}"""', "", "from sandbox.harness.model.families.base import Band", ""]
    lines += [f"{name} = {text!r}" for name, text in constants.items()]
    for name, bands in tables.items():
        lines.append(f"{name}: tuple[Band, ...] = (")
        lines += [
            f"    Band({b.family!r}, {b.chip!r}, {b.low:.4f}, {b.high:.4f}, {b.points}, "
            f"{_source(b.source, constants)}),"
            for b in bands
        ]
        lines.append(")")
    formatted = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--stdin-filename", str(path), "-"],
        input="\n".join([*lines, *after]) + "\n",
        capture_output=True,
        text=True,
        check=True,
    )
    return formatted.stdout


def _source(text: str, constants: Mapping[str, str]) -> str:
    for name, value in constants.items():
        if text == value:
            return name
        if text.startswith(value):
            return f"{name} + {text[len(value) :]!r}"
    return repr(text)


def errors(points: Iterable[Measurement], estimates: Mapping[str, Estimate]) -> dict[str, float]:
    """Per measurement: the model's device time (plus host dispatch where the timing includes it)
    against the published time, as estimate / published - 1."""
    return {m.id: (estimates[m.id].seconds + m.host_seconds) / m.seconds - 1 for m in points}


def published_bands(found: Mapping[str, float]) -> tuple[Band, ...]:
    """The band of each family and chip with points among `found` (errors by measurement id), in the
    registry's order of families and the chip table's order of chips."""
    points = load()
    by_key: dict[tuple[str, str], list[float]] = {}
    fitted: dict[tuple[str, str], int] = {}
    for m in points:
        key = (FAMILY_OF[m.kernel], m.chip)
        if m.calibration:
            fitted[key] = fitted.get(key, 0) + 1
        elif m.id in found:
            by_key.setdefault(key, []).append(found[m.id])
    order, chips = [f.name for f in families.FAMILIES], list[str](CHIPS)
    keys = sorted(by_key, key=lambda k: (order.index(k[0]), chips.index(k[1])))
    return tuple(band(*k, by_key[k], SOURCES[k].format(fitted=fitted.get(k, 0))) for k in keys)


def within_share(found: Mapping[str, float]) -> tuple[int, int]:
    """Of the points that fitted nothing, how many the model puts within ±15 %, and how many there are."""
    checked = [found[m.id] for m in load() if not m.calibration]
    return sum(abs(e) <= WITHIN for e in checked), len(checked)


def published_module(found: Mapping[str, float]) -> str:
    """sandbox/harness/model/families/published.py, from the errors on every published point."""
    within, checked = within_share(found)
    doc = (
        "The time model's error on published kernels, per family and chip: every point of\n"
        "tests/data/published_tpu_timings.toml that fitted nothing, costed by the model. Generated by\n"
        "`python -m tests.model.bands --write`; do not edit (tests/model/test_validation.py checks it).\n"
        "`registry.validation` shows it, and beside it the chip's measured band (`measured.py`)."
    )
    after = [
        f"# Of every published point that fitted nothing ({checked}), the share the model puts within ±15 %.",
        f"WITHIN_15_PERCENT = {within} / {checked}",
    ]
    return module(doc, CONSTANTS, {"PUBLISHED": published_bands(found)}, after, path=PUBLISHED)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help=f"write {PUBLISHED.name} (else print it)")
    args = parser.parse_args()
    points = load()
    text = published_module(errors(points, {m.id: model(m) for m in points}))
    if args.write:
        PUBLISHED.write_text(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
