"""The published measurements (`tests/data/published_tpu_timings.toml`) and the model's estimate of each."""

from __future__ import annotations

import dataclasses
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
    host_seconds: float = 0.0  # the one call's host dispatch the printed time includes (0: device time)

    @property
    def kernel(self) -> str:
        return str(self.raw["kernel"])


def load() -> list[Measurement]:
    data = tomllib.loads(DATA.read_text())
    return [
        Measurement(
            m["id"],
            data["sources"][m["source"]]["chip"],
            m["seconds"],
            m.get("calibration", False),
            m,
            _host_seconds(data, data["sources"][m["source"]]),
        )
        for m in data["measurement"]
    ]


def _host_seconds(data: dict[str, Any], source: dict[str, Any]) -> float:
    """A host-timed source's dispatch per call: its own (measured on its chip) or the v5e one."""
    if not source.get("host_dispatch", True):
        return 0.0
    return source.get("host_overhead_seconds", data["method"]["host_overhead_seconds"])


def group_sizes(raw: dict[str, Any]) -> np.ndarray:
    """A gmm point's group sizes: as published, or drawn as tokamax draws them (see the data file)."""
    if "group_sizes" in raw:
        return np.asarray(raw["group_sizes"], np.int32)
    draw = raw["group_draw"]
    ids = np.random.default_rng(draw["seed"]).choice(draw["groups"], (draw["rows"],), replace=True)
    return np.bincount(ids, minlength=draw["groups"]).astype(np.int32)


def _abstract(*shape: int, dtype: Any = jnp.bfloat16) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(shape, dtype)


def model(measurement: Measurement) -> Estimate:
    """The model's device-time estimate for one measurement (traced abstractly: nothing is allocated)."""
    fn, args = call(measurement)
    chip = chip_info(measurement.chip)  # type: ignore[arg-type]
    if measurement.kernel in ("gmm", "quantized_gmm"):
        # tokamax's ragged_dot is a gridless pallas_call (its dimension_semantics emptied) whose body
        # runs `pltpu.emit_pipeline` over megablox's grid without a `core_axis`, so its grid is not
        # split between a megacore's TensorCores (`custom_buffered_pallas_call` in tokamax/_src/
        # mosaic_tpu.py, openxla/tokamax@783ea95; `_partition_grid` in JAX's pipeline.py). Megablox's
        # own pallas_call, costed in its place, would be: cost it on one core, as tokamax runs.
        # XLA's own ops around it (the group metadata, relayout copies) still run on the whole device.
        one_core = estimate(fn, args, dataclasses.replace(chip, megacore=False), timeline=False)
        if not chip.megacore:
            return one_core
        whole = estimate(fn, args, chip, timeline=False)
        seconds = one_core.seconds - one_core.outside_seconds + whole.outside_seconds
        return dataclasses.replace(one_core, seconds=seconds, outside_seconds=whole.outside_seconds)
    return estimate(fn, args, chip, timeline=False)


def _quantized_gmm(raw: dict[str, Any]) -> tuple[Any, tuple[Any, ...]]:
    """fp8 values and bf16 scales, one per `per_scale` values along K (the stand-in repeats them)."""
    size, tiling, per = raw["size"], raw["tiling"], raw["per_scale"]
    m, k, n, g = size["m"], size["k"], size["n"], size["groups"]
    fp8 = jnp.float8_e4m3fn
    args = (
        _abstract(m, k, dtype=fp8),
        _abstract(m, k // per),
        _abstract(g, k, n, dtype=fp8),
        _abstract(g, k // per, n),
        group_sizes(raw),
    )
    tiles = (tiling["tm"], tiling["tk"], tiling["tn"])
    return functools.partial(kernels.quantized_gmm, tiling=tiles, per_scale=per), args


def call(measurement: Measurement) -> tuple[Any, tuple[Any, ...]]:
    """The published kernel as a function and its (abstract, or small concrete) arguments."""
    raw = measurement.raw
    if raw["kernel"] == "sparsecore_add_one":
        x = _abstract(raw["shape"]["rows"], raw["shape"]["cols"], dtype=jnp.int32)
        fn = functools.partial(kernels.sparsecore_add_one, block=tuple(raw["block"]), lanes=raw["lanes"])
        return fn, (x,)
    if raw["kernel"] == "sparsecore_gather":
        shape = raw["shape"]
        x = _abstract(shape["rows"], shape["cols"], dtype=jnp.int32)
        indices = _abstract(shape["indices"], dtype=jnp.int32)
        return functools.partial(kernels.sparsecore_gather, window=raw["window"]), (x, indices)
    if raw["kernel"] == "flash_attention":
        shape = raw["shape"]
        q = _abstract(shape["batch"], shape["heads"], shape["seq"], shape["head_dim"])
        return kernels.flash_attention, (q, q, q)
    if raw["kernel"] == "splash_attention":
        shape, blocks = raw["shape"], raw["blocks"]
        q = _abstract(shape["batch"], shape["seq"], shape["heads"], shape["head_dim"])
        fn = functools.partial(
            kernels.splash_attention, causal=raw["causal"], layouts=tuple(raw["layouts"]), **blocks
        )
        return fn, (q, q, q)
    if raw["kernel"] == "gmm":
        size, tiling = raw["size"], raw["tiling"]
        m, k, n, g = size["m"], size["k"], size["n"], size["groups"]
        rhs = _abstract(g, n, k) if raw["transpose_rhs"] else _abstract(g, k, n)
        fn = functools.partial(
            kernels.gmm, tiling=(tiling["tm"], tiling["tk"], tiling["tn"]), transpose_rhs=raw["transpose_rhs"]
        )
        return fn, (_abstract(m, k), rhs, group_sizes(raw))
    if raw["kernel"] == "quantized_gmm":
        return _quantized_gmm(raw)
    if raw["kernel"] == "linear_softmax_cross_entropy":
        shape = raw["shape"]
        b, h, v = shape["batch"], shape["hidden"], shape["vocab"]
        args = (_abstract(b, h, dtype=jnp.float32), _abstract(b, dtype=jnp.int32), _abstract(h, v))
        return functools.partial(kernels.linear_softmax_cross_entropy, **raw["blocks"]), args
    size, blocks = raw["size"], raw["blocks"]
    m, k, n = size["m"], size["k"], size["n"]
    if raw["kernel"] == "matmul":
        options = raw.get("options", {})
        y = _abstract(n, k) if options.get("transpose_rhs") else _abstract(k, n)
        return functools.partial(kernels.matmul, **blocks, **options), (_abstract(m, k), y)
    if raw["kernel"] == "dsd_matmul":
        rows, cols = np.asarray(raw["rows"], np.int32), np.asarray(raw["cols"], np.int32)
        b = blocks["block"]
        args = (rows, cols, _abstract(len(rows), b, b), _abstract(k, n), _abstract(m, n))
        return functools.partial(kernels.dsd_matmul, block=b), args
    if raw["kernel"] == "masked_matmul":
        tables = kernels.tril_prefetch_maps(m // blocks["bm"])
        args = (
            *tables,
            _abstract(m, k),
            _abstract(k, n),
            _abstract(2, blocks["bm"], blocks["bn"], dtype=jnp.int32),
        )
        return functools.partial(kernels.masked_matmul, **blocks), args
    raise ValueError(f"unknown kernel {raw['kernel']!r}")
