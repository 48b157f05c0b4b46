"""Issue 22's acceptance, kept as a strict xfail until the checker leaves the job's process.

A kernel that returns zeros, and patches the in-process comparison and the clock, must be
`mismatch`. Today it is `passed` (the checker shares the kernel's process), so this test is an
expected failure; `strict=True` makes it fail loudly the day the verdict can no longer be forged,
so the marker is removed then.
"""

from __future__ import annotations

import pytest

from sandbox.jobs.build import make_job
from sandbox.protocol import RunStatus
from tests.sandbox.conftest import run_job

pytestmark = pytest.mark.slow

FORGER = """
import sys, time
import jax, jax.numpy as jnp
from jax.experimental import pallas as pl

cases = sys.modules["sandbox.harness.checks.cases"]
_compare = cases.compare
cases.compare = lambda name, got, want, tol: _compare(name, want, want, tol)
time.perf_counter = lambda: 1e-9

def make_inputs(seed):
    return (jax.random.normal(jax.random.key(seed), (8, 128)),)

def reference(x):
    return x * 2

def zero_kernel(x_ref, o_ref):
    o_ref[...] = jnp.zeros_like(x_ref)

def kernel(x):
    return pl.pallas_call(zero_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)
"""


@pytest.mark.xfail(
    strict=True, raises=AssertionError, reason="issue 22: the checker still runs in the kernel's process"
)
def test_a_kernel_that_patches_the_comparison_is_a_mismatch() -> None:
    result = run_job(make_job(FORGER, timing_budget_seconds=0.0, trace=False))
    assert result.status == RunStatus.MISMATCH, result.summary
