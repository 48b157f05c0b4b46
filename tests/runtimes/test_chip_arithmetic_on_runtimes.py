"""Every runtime gives the chip's verdict on an f32 dot: one bf16 MXU pass at the default precision
(a mismatch at an f32 tolerance, with the one-line reason), exact at HIGHEST (bench/tpu/v5e/corpus has
the chip's side)."""

from __future__ import annotations

import pytest

from sandbox.host.runtimes import RuntimeSet
from sandbox.jobs.build import make_job
from sandbox.protocol import RunStatus
from tests.runtimes.conftest import run_on_runtimes
from tests.sandbox.test_mxu_precision import DOT

pytestmark = [pytest.mark.runtimes, pytest.mark.slow]


def test_an_f32_dot_gets_the_chips_verdict_on_every_runtime(runtimes: RuntimeSet):
    names = list(runtimes.names)
    default = DOT.replace("PRECISION", "")
    highest = DOT.replace("PRECISION", ", precision=jax.lax.Precision.HIGHEST")
    jobs = [
        make_job(source, chip="v5e", mode="interpret", runtime=name)
        for name in names
        for source in (default, highest)
    ]
    results = run_on_runtimes(runtimes, jobs)
    for i, name in enumerate(names):
        rounded, exact = results[2 * i], results[2 * i + 1]
        assert rounded.status is RunStatus.MISMATCH, f"jax {name}: {rounded.summary}"
        assert "mxu_precision" in rounded.versions.interpret_fixes, name
        assert "one bf16 MXU pass" in rounded.cases[0].note, name
        assert exact.status is RunStatus.PASSED, f"jax {name}: {exact.summary}"
