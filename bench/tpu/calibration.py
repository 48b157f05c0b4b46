"""The time model against the Tune sweeps timed on the v5e (`v5e/tune.jsonl`), per kernel family, with
a held-out part: what `docs/tpu-measured.md` reports and what the model's v5e bands are generated from.

- Every measured config belongs to one sweep (its kernel file and target size) and one family (the
  model's own classification, recorded beside it).
- The split is fixed by the config itself (a stable hash of file, size and params), about half each:
  `fit` and `held_out`; sweeps timed after the model's constants were last fitted (`NEVER_FITTED`) are
  held out whole. The only thing fitted is one time scale per family (the median of measured /
  estimated over its fit part): the held-out part says how far that scale carries, and the raw error
  how far the model is off without it. The model does not apply the scales yet (see the docs page).
- Per sweep: whether the model picks the config the chip found fastest, and of the pairs of configs
  whose measured times differ by more than 3 %, the share the model orders the same way.
"""

from __future__ import annotations

import hashlib
import json
import statistics
from collections import defaultdict
from dataclasses import dataclass
from itertools import combinations
from typing import Any

from sandbox.protocol.sweep import FASTER_THAN_ROOFLINE  # the bound a time missed part of a run by
from sandbox.results.measured import model_error

RANK_MARGIN = 0.03  # pairs closer than this on the chip are not ranked


def error(row: dict[str, Any], scale: float = 1.0) -> float:
    """The model's error on a measured row (`measured.model_error`, which the product's reader uses)."""
    found = model_error(row, scale)
    assert found is not None, "only rows with an estimate and a measured time (`measured()`)"
    return found


# Commits whose sweeps were timed after the model's constants were last fitted (2026-12-06: f32 at HIGHEST,
# int8, a bf16 RMS norm, flash attention at head dim 64, ragged paged attention; on-chip.sh sweeps-f and
# sweeps-g; 2026-12-07: flash attention at head dim 256 and 2048-row query blocks, splash at 16 heads of
# 2048, element-wise at 16384 x 4096; sweeps-i; flash at 16 heads with kv blocks to 4096, splash at 2 heads
# of 16384, timed against the serial share that grows with the reduced value; sweeps-j; a layer norm, column
# sums, a matmul with a GELU epilogue and a blocked transpose, kinds no sweep had timed; sweeps-k; the same
# cross-lane kinds at new shapes, timed against the dotless cross-lane cost chosen on sweeps-k; sweeps-l; blocks
# of equal bytes from whole rows to 128 lanes, element-wise and the DMA-driven copy; sweeps-m; the hand-written
# copy with its writes waited later and the emit_pipeline copy at whole rows, timed against the loop step and
# write latency fitted with sweeps-n; sweeps-o). Writes alone (sweeps-p, da658af), timed against the engine that
# takes copies in the order they become ready, were held out until the engine whose reads and writes share the
# HBM took its write rate from them (`chips_v5e.V5E_DMA_WRITE_EFFICIENCY`): fitted since. Their configs are always
# held out, so no fit may use them, and the docs report them apart. A read stream and a write stream side by side at
# 4 : 1, 1 : 1 and 1 : 4 of their bytes, timed against that engine (sweeps-q, 16c1dfd), and the same streams
# with the read or the write started first (sweeps-r, 78886ba) were held out until the engine's uneven shares,
# its switch and a read's tail were fitted on them with one read beside writes and one write beside reads
# (sweeps-s, 2d55c20): fitted since. The same streams at block sizes and ratios none of those has (sweeps-t,
# e552886), timed against that engine before it was chosen, are held out, and so are the copies and the streams
# at sizes no part has, timed against it after (sweeps-u, 855d024).
NEVER_FITTED = frozenset(
    {
        "b52deb4",
        "7e68a9b8daa4",
        "ef6d4b41d2df",
        "02c3795e8a1b",
        "0b299b2",
        "88c7ef5",
        "5d1c13b",
        "e552886",
        "855d024",
        "8c21ce3",
    }
)


def never_fitted(row: dict[str, Any]) -> bool:
    return row.get("commit") in NEVER_FITTED


def held_out(row: dict[str, Any]) -> bool:
    if never_fitted(row):
        return True
    key = json.dumps([row["file"], row["size"], row["params"]], sort_keys=True).encode()
    return hashlib.sha256(key).digest()[0] % 2 == 1


def faster_than_the_chip(row: dict[str, Any]) -> bool:
    """Measured under the roofline today's model gives its config (`reestimate`: a program's bytes those its
    copies move where fewer than its operands')."""
    roofline = row.get("roofline_seconds")
    return bool(roofline and row.get("measured_device_seconds")) and (
        roofline / row["measured_device_seconds"] > FASTER_THAN_ROOFLINE
    )


def measured(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The configs with an estimate and a plausible measured time (`faster_than_the_chip` left out)."""
    return [
        r
        for r in rows
        if r.get("estimated_seconds") and r.get("measured_device_seconds") and not faster_than_the_chip(r)
    ]


@dataclass(frozen=True)
class Errors:
    configs: int
    within_10: int
    within_15: int
    low: float
    high: float

    @staticmethod
    def of(values: list[float]) -> Errors:
        if not values:
            return Errors(0, 0, 0, 0.0, 0.0)
        return Errors(
            len(values),
            sum(abs(v) <= 0.10 for v in values),
            sum(abs(v) <= 0.15 for v in values),
            min(values),
            max(values),
        )

    def text(self) -> str:
        if not self.configs:
            return "–"
        n = self.configs
        return (
            f"{self.within_10}/{n} within ±10 %, {self.within_15}/{n} within ±15 %; "
            f"{percent(self.low)} to {percent(self.high)}"
        )


def percent(value: float) -> str:
    return f"{value * 100:+.1f} %"


@dataclass(frozen=True)
class FamilyReport:
    family: str
    kernels: tuple[str, ...]  # the sweeps' kernel files or entries
    raw: Errors  # every measured config, the model as it is
    scale: float  # fitted on the fit part
    held_out_raw: Errors
    held_out_scaled: Errors


def kernel_name(row: dict[str, Any]) -> str:
    return row.get("entry") or row["file"].rsplit("/", 1)[-1]


def families(rows: list[dict[str, Any]]) -> list[FamilyReport]:
    by_family: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in measured(rows):
        by_family[r["family"]].append(r)
    reports = []
    for family, group in sorted(by_family.items(), key=lambda kv: -len(kv[1])):
        fit = [r for r in group if not held_out(r)]
        test = [r for r in group if held_out(r)]
        scale = (
            statistics.median(r["measured_device_seconds"] / r["estimated_seconds"] for r in fit)
            if fit
            else 1.0
        )
        reports.append(
            FamilyReport(
                family=family,
                kernels=tuple(sorted({kernel_name(r) for r in group})),
                raw=Errors.of([error(r) for r in group]),
                scale=scale,
                held_out_raw=Errors.of([error(r) for r in test]),
                held_out_scaled=Errors.of([error(r, scale) for r in test]),
            )
        )
    return reports


@dataclass(frozen=True)
class SweepReport:
    kernel: str
    size: str
    configs: int
    best_right: bool  # the model's fastest config is the chip's fastest
    ranked_pairs: int  # pairs more than RANK_MARGIN apart on the chip
    ranked_right: int
    pick_loss: float = 0.0  # how much slower on the chip the model's fastest config is than the chip's


def size_text(row: dict[str, Any]) -> str:
    return ",".join(f"{k}={v}" for k, v in row["size"].items())


def sweeps(rows: list[dict[str, Any]]) -> list[SweepReport]:
    by_sweep: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for r in measured(rows):
        by_sweep[(kernel_name(r), size_text(r))].append(r)
    reports = []
    for (kernel, size), group in by_sweep.items():
        by_model = min(group, key=lambda r: r["estimated_seconds"])
        by_chip = min(group, key=lambda r: r["measured_device_seconds"])
        pairs = [
            (a, b)
            for a, b in combinations(group, 2)
            if abs(a["measured_device_seconds"] / b["measured_device_seconds"] - 1) > RANK_MARGIN
        ]
        right = sum(
            (a["measured_device_seconds"] < b["measured_device_seconds"])
            == (a["estimated_seconds"] < b["estimated_seconds"])
            for a, b in pairs
        )
        loss = by_model["measured_device_seconds"] / by_chip["measured_device_seconds"] - 1
        reports.append(SweepReport(kernel, size, len(group), by_model is by_chip, len(pairs), right, loss))
    return reports
