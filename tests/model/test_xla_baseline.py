"""XLA's own op as the baseline: the time model's estimate of each catalog entry's plain-jnp reference on
a v5e, against the device time the lent v5e measured for it (bench/tpu/v5e/cases.jsonl, JAX 0.12.0.1).

Measured 2026-12-05: -5.3 % ... -2.1 % on all six (4096^3 dots, two chained dots, block-sparse's dense
reference, f32-accumulated dots cast to bf16, which XLA fuses into the dot's output)."""

from __future__ import annotations

import json
import types
from pathlib import Path

import jax
import pytest

from sandbox.catalog.entries import load_catalog
from sandbox.harness.model.outside import XLA_COMPILED, XLA_PASSES
from sandbox.harness.model.runs import estimate_xla, xla_costing, xla_validation
from sandbox.harness.target import Target
from sandbox.protocol import InterpretOptions

RECORDS = Path(__file__).resolve().parents[2] / "bench" / "tpu" / "v5e" / "cases.jsonl"
BAND = 0.10  # every point within it, measured


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
    error = estimate / record["reference_device_seconds"] - 1
    assert abs(error) <= BAND, f"{entry.slug}: {error:+.1%}"


def test_an_estimate_of_xla_own_op_says_how_far_ops_of_its_kind_held_on_the_chip():
    # Dots and element-wise loops ran as the model costs them on the v5e; softmax's row reductions did
    # not (XLA reads and writes in several passes): the text says which, from the sweeps' records.
    x = jax.ShapeDtypeStruct((1024, 1024), jax.numpy.float32)
    v5e = Target(chip="v5e", interpret=True, options=InterpretOptions())
    dot = xla_validation(lambda a: a @ a + 1.0, (x,), v5e)
    assert dot.startswith("XLA's dots and element-wise ops: this costing was ") and "TPU v5e" in dot
    softmax = xla_validation(lambda a: jax.nn.softmax(a, axis=-1), (x,), v5e)
    assert softmax.startswith("XLA's reductions") and "% to " in softmax
    v6e = Target(chip="v6e", interpret=True, options=InterpretOptions())
    assert (
        xla_validation(lambda a: a @ a, (x,), v6e)
        == "XLA's dots and element-wise ops: not timed on a real TPU v6e (Trillium)"
    )


XLA_RECORDS = RECORDS.parent / "xla.jsonl"


def attention(q, k, v):
    """bench/tpu/sweeps/flash.py's `xla_baseline`, as the chip timed it: XLA's attention in bf16."""
    swap = (0, 2, 1, 3)
    return jax.nn.dot_product_attention(q.transpose(swap), k.transpose(swap), v.transpose(swap)).transpose(
        swap
    )


def xla_timed(file: str, size: dict[str, int]) -> float:
    rows = [json.loads(line) for line in XLA_RECORDS.read_text().splitlines() if line.strip()]
    return next(r["measured_device_seconds"] for r in rows if r["file"] == file and r["size"] == size)


@pytest.mark.parametrize(
    ("shape", "size"),
    [
        ((2, 8, 4096, 128), {"b": 2, "d": 128, "h": 8, "s": 4096}),
        ((4, 16, 2048, 64), {"b": 4, "d": 64, "h": 16, "s": 2048}),
    ],
)
def test_attention_in_xla_is_costed_by_libtpu_near_the_chips_time(monkeypatch, shape, size):
    """The model's one pass made XLA's attention 0.25x and 0.63x of the v5e's time; libtpu's cost analysis
    of the program it compiles for the v5e, off the chip, is within 10 % (bench/tpu/v5e/xla.jsonl)."""
    monkeypatch.setenv("JAX_PLATFORMS", "cpu")  # a job off a chip slot: the compile-only client
    q = jax.ShapeDtypeStruct(shape, jax.numpy.bfloat16)
    v5e = Target(chip="v5e", interpret=True, options=InterpretOptions())
    seconds, kind = xla_costing(attention, (q, q, q), v5e)
    assert kind == XLA_COMPILED
    assert seconds is not None
    error = seconds / xla_timed("bench/tpu/sweeps/flash.py", size) - 1
    assert abs(error) <= BAND, f"{error:+.1%}"
    model, model_kind = xla_costing(attention, (q, q, q), v5e, compiled=False)
    assert model_kind == XLA_PASSES and model is not None and model < 0.7 * seconds  # what it replaced
    text = xla_validation(attention, (q, q, q), v5e)
    assert text.startswith(f"{XLA_COMPILED}: this costing was ") and "sizes timed on a real TPU v5e" in text


def test_the_chips_own_costing_of_xla_attention_is_the_compile_only_clients(monkeypatch):
    """On the lent v5e (chip tier at 594478b, bench/tpu/v5e/xla-costed-native.json), a native job of
    bench/tpu/sweeps/flash.py costed XLA's attention beside it with the chip's own compile; here, off
    the chip, libtpu's compile-only client gives the same figure for the same shapes."""
    native = json.loads((RECORDS.parent / "xla-costed-native.json").read_text())
    assert native["status"] == "passed" and native["timing"]["simulated"] is False
    assert native["estimate"]["xla_validation"].startswith(XLA_COMPILED)
    monkeypatch.setenv("JAX_PLATFORMS", "cpu")
    q = jax.ShapeDtypeStruct((1, 2, 256, 128), jax.numpy.bfloat16)  # flash.py's make_inputs defaults
    v5e = Target(chip="v5e", interpret=True, options=InterpretOptions())
    seconds, kind = xla_costing(attention, (q, q, q), v5e)
    assert kind == XLA_COMPILED
    assert seconds == pytest.approx(native["estimate"]["xla_seconds"], rel=1e-6)
