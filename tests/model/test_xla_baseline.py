"""XLA's own op as the baseline: the time model's estimate of each catalog entry's plain-jnp reference on
a v5e, against the device time the lent v5e measured for it (bench/tpu/v5e/cases.jsonl, JAX 0.12.0.1).

Measured 2026-12-05: +6 % (block-sparse's dense reference) to +14 % (4096^3 dots) and +20 % (two dots),
but +61 % and +65 % for the two references whose f32 dot output is cast to bf16 after the dot: the model
costs the cast as a fusion of its own, where XLA fuses it into the dot's output. The bounds below hold
that state, so a change to the model's XLA costing shows here."""

from __future__ import annotations

import json
import types
from pathlib import Path

import jax
import pytest

from sandbox.catalog.entries import load_catalog
from sandbox.harness.model.runs import estimate_xla
from sandbox.harness.target import Target
from sandbox.protocol import InterpretOptions

RECORDS = Path(__file__).resolve().parents[2] / "bench" / "tpu" / "v5e" / "cases.jsonl"
# entry -> (lowest, highest) estimate / measured - 1, as measured (see the docstring).
BOUNDS = {
    "tiled_matmul": (0.0, 0.2),
    "tiled_matmul_pallas_call": (0.0, 0.2),
    "block_sparse_matmul": (0.0, 0.15),
    "emit_pipeline_nested": (0.0, 0.3),
    "hbm_manual_dma": (0.4, 0.8),
    "inplace_chunked_matmul": (0.4, 0.8),
}


def measured() -> list[dict]:
    rows = map(json.loads, RECORDS.read_text().splitlines())
    return [r for r in rows if r["kind"] == "case" and r.get("reference_device_seconds")]


@pytest.mark.parametrize("record", measured(), ids=lambda r: r["entry"])
def test_the_xla_baseline_estimate_against_the_chip(record):
    target = Target(chip="v5e", interpret=True, options=InterpretOptions())  # the chip context alone
    entry = load_catalog().get(record["entry"])
    module = types.ModuleType("reference")
    exec(compile(entry.reference_source, "reference.py", "exec"), module.__dict__)
    case = next(c for c in entry.cases if c.name == record["case"])
    view = types.SimpleNamespace(
        name=case.name, dtype=case.dtype, seed=case.seed, dims=dict(case.dims), **case.dims
    )
    # Shapes suffice, except where the reference's index tables are built with numpy from values.
    make = lambda: module.make_inputs(view)  # noqa: E731
    inputs = make() if entry.slug == "block_sparse_matmul" else jax.eval_shape(make)
    estimate = estimate_xla(module.reference, inputs, target)
    assert estimate is not None
    low, high = BOUNDS[entry.slug]
    error = estimate / record["reference_device_seconds"] - 1
    assert low <= error <= high, f"{entry.slug}: {error:+.1%}"
