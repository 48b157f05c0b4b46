"""The published measurements (`tests/data/published_tpu_timings.toml`) and the model's estimate of each."""

from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from sandbox.harness.model.estimate import estimate
from sandbox.protocol.chips import chip_info
from sandbox.protocol.estimate import Estimate
from tests.model import published_kernels as kernels

DATA = Path(__file__).resolve().parents[1] / "data" / "published_tpu_timings.toml"


@dataclass(frozen=True)
class Measurement:
    id: str
    chip: str
    seconds: float
    calibration: bool
    raw: dict[str, Any]


def load() -> tuple[float, list[Measurement]]:
    data = tomllib.loads(DATA.read_text())
    sources = data["sources"]
    found = [
        Measurement(m["id"], sources[m["source"]]["chip"], m["seconds"], m.get("calibration", False), m)
        for m in data["measurement"]
    ]
    return data["method"]["host_overhead_seconds"], found


def _abstract(*shape: int, dtype: Any = jnp.bfloat16) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(shape, dtype)


def model(measurement: Measurement) -> Estimate:
    """The model's device-time estimate for one measurement (traced abstractly: nothing is allocated)."""
    raw = measurement.raw
    size, blocks, chip = raw["size"], raw["blocks"], chip_info(measurement.chip)  # type: ignore[arg-type]
    m, k, n = size["m"], size["k"], size["n"]
    if raw["kernel"] == "matmul":
        options = raw.get("options", {})
        y = _abstract(n, k) if options.get("transpose_rhs") else _abstract(k, n)
        fn = functools.partial(kernels.matmul, **blocks, **options)
        return estimate(fn, (_abstract(m, k), y), chip, timeline=False)
    if raw["kernel"] == "dsd_matmul":
        rows, cols = np.asarray(raw["rows"], np.int32), np.asarray(raw["cols"], np.int32)
        b = blocks["block"]
        args = (rows, cols, _abstract(len(rows), b, b), _abstract(k, n), _abstract(m, n))
        return estimate(functools.partial(kernels.dsd_matmul, block=b), args, chip, timeline=False)
    if raw["kernel"] == "masked_matmul":
        tables = kernels.tril_prefetch_maps(m // blocks["bm"])
        args = (
            *tables,
            _abstract(m, k),
            _abstract(k, n),
            _abstract(2, blocks["bm"], blocks["bn"], dtype=jnp.int32),
        )
        return estimate(functools.partial(kernels.masked_matmul, **blocks), args, chip, timeline=False)
    raise ValueError(f"unknown kernel {raw['kernel']!r}")
