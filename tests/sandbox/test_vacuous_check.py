"""A reference that returns zeros for zero inputs: the run passes, and says its check is vacuous.

Run end to end (real harness, real classify) on the local backend and, where it can run, on the
hardened one, because the warning must reach the user from either.
"""

from __future__ import annotations

import pytest

from sandbox.backends import default_backend_name
from sandbox.jobs.build import make_job
from sandbox.protocol import RunStatus
from tests.sandbox.conftest import run_job

pytestmark = pytest.mark.slow

SOURCE = """
import jax, jax.numpy as jnp
from jax.experimental import pallas as pl

def make_inputs(seed):
    return (jnp.zeros((8, 128), jnp.float32),)

def reference(x):
    return x * 2

def double_kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...] * 2

def kernel(x):
    return pl.pallas_call(double_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)
"""

BACKENDS = [
    "local",
    pytest.param(
        "hardened",
        marks=pytest.mark.skipif(
            default_backend_name() != "hardened", reason="the hardened backend cannot run here"
        ),
    ),
]


@pytest.mark.parametrize("backend", BACKENDS)
def test_zero_reference_for_zero_inputs_warns_that_the_check_is_vacuous(backend: str) -> None:
    result = run_job(make_job(SOURCE, timing_budget_seconds=0.0, trace=False), backend)
    assert result.status == RunStatus.PASSED, result.summary
    (case,) = result.cases
    assert "vacuous check: an all-zeros output would also pass this case" in case.note
