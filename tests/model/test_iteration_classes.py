"""Long pipelines walked once per iteration class and simulated through their steady runs (`iteration_classes`,
`steady`).

Both shortcuts must give what walking and simulating every step gives: the same events, and the
same step rows to rounding. Then the catalog's `tiled_matmul` at the Tune tab's 4096^3 in
128-blocks (a 32,768-step `emit_pipeline`) estimates on every chip within a second.
"""

from __future__ import annotations

import functools
import time

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import sandbox.harness.model.control as control
import sandbox.harness.model.simulate as simulate
from sandbox.harness.model.cost import Rates
from sandbox.harness.model.estimate import chip_context, estimate, kernels, trace
from sandbox.harness.model.simulate import program_steps
from sandbox.protocol.chips import CHIPS, chip_info
from tests.model import published_kernels
from tests.model.test_kernels import kernel

FIELDS = ("start", "seconds", "compute", "copy", "copy_in", "copy_out", "flops", "vector")


def bf16(*shape: int) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(shape, jnp.bfloat16)


CASES = [
    ("tiled_matmul", "matmul", (bf16(1024, 1024), bf16(1024, 1024)), "v5e"),
    ("tiled_matmul", "matmul", (bf16(512, 2048), bf16(2048, 384)), "v6e"),
    ("megacore_matmul", "matmul", (bf16(1024, 2048), bf16(2048, 512)), "v5p"),
    ("emit_pipeline_nested", "mlp", (bf16(1024, 512), bf16(512, 1024), bf16(1024, 512)), "v6e"),
    ("hbm_manual_dma", "streamed_matmul", (bf16(1024, 256), bf16(256, 256)), "v5e"),
    ("core_semaphore_signal", "core_all_reduce", (bf16(2, 128, 256),), "v5p"),
    ("inplace_chunked_matmul", "inplace_matmul", (bf16(512, 384), bf16(384, 384)), "v6e"),
]


def _entry(slug: str, name: str):  # type: ignore[no-untyped-def]
    fn = getattr(kernel(slug), name)
    if slug != "inplace_chunked_matmul":
        return fn

    def run(x, w):  # type: ignore[no-untyped-def]
        ref = jax.new_ref(x)
        fn(ref, w)
        return ref[...]

    return run


def _plain(events):  # type: ignore[no-untyped-def]
    """Events without the step kinds the class walk tags its step markers with."""
    return [[e[:2] if e[0] == "step" else e for e in core] for core in events]


class _EveryStep(simulate.Tracker):
    def forward(self, state, at, done):  # type: ignore[no-untyped-def]
        return at  # never skip: the step-by-step simulation


@pytest.mark.parametrize(("slug", "name", "args", "chip"), CASES)
def test_iteration_classes_and_steady_runs_change_nothing(slug, name, args, chip, monkeypatch):
    _check_classes_and_steady_runs(_entry(slug, name), args, chip, monkeypatch)


def test_iteration_classes_keep_the_work_that_waits_for_a_dot(monkeypatch):
    """tokamax's cross-entropy stand-in: at the last hidden block, the logsumexp of the logits waits
    for that block's dot (`barriers`), so those steps' work events carry what waits."""
    fn = functools.partial(
        published_kernels.linear_softmax_cross_entropy, block_b=128, block_h=128, block_v=256
    )
    args = (
        jax.ShapeDtypeStruct((256, 256), jnp.float32),
        jax.ShapeDtypeStruct((256,), jnp.int32),
        jax.ShapeDtypeStruct((256, 1000), jnp.bfloat16),  # a ragged last vocabulary block
    )
    programs = _check_classes_and_steady_runs(fn, args, "tpu7x", monkeypatch)
    waits = [e for p in programs for core in p.events for e in core if e[0] == "work" and len(e) > 4 and e[4]]
    assert len(waits) == 2 * 4  # per batch block, one per vocabulary block: its last hidden step


def _check_classes_and_steady_runs(fn, args, chip, monkeypatch):  # type: ignore[no-untyped-def]
    info = chip_info(chip)
    closed = trace(fn, args, chip_context(info))
    monkeypatch.setattr(control, "MIN_ITERATIONS", 2)  # every stepped loop by class, short ones too
    by_class = kernels(closed, [None] * len(args), info)
    monkeypatch.setattr(control, "MIN_ITERATIONS", 1 << 30)
    by_step = kernels(closed, [None] * len(args), info)
    assert [_plain(p.events) for p in by_class] == [p.events for p in by_step]
    assert [p.notes for p in by_class] == [p.notes for p in by_step]
    rates = Rates.of(info)
    steady = [program_steps(p, rates) for p in by_class]
    monkeypatch.setattr(simulate, "Tracker", _EveryStep)
    every = [program_steps(p, rates) for p in by_class]
    for a, b in zip(steady, every, strict=True):
        assert a.total == pytest.approx(b.total, rel=1e-12) and a.labels == b.labels
        assert a.mxu_flops == b.mxu_flops and a.hbm_bytes == b.hbm_bytes
        for field in FIELDS:
            np.testing.assert_allclose(getattr(a, field), getattr(b, field), rtol=1e-9, atol=1e-15)
    return by_class


def test_tiled_matmul_at_4096_cubed_estimates_on_every_chip_within_a_second():
    matmul = kernel("tiled_matmul").matmul
    for chip in CHIPS:
        started = time.process_time()  # CPU time: the shared test machine's load does not count
        e = estimate(matmul, (bf16(4096, 4096), bf16(4096, 4096)), chip_info(chip), timeline=False)
        spent = time.process_time() - started
        (k,) = e.kernels
        assert k.steps == 32 * 32 * 32 and e.flops == 2 * 4096**3, chip
        # A guard against the per-step walk coming back (it took minutes), not a speed target: that is
        # bench/sweep_cost.py's, measured in one run; CPU time here varies with the machine's load.
        assert spent < 5.0, f"{chip}: {spent:.2f} s of CPU"
