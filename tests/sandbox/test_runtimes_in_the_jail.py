"""Every installed JAX runtime starts its warm pool in the hardened jail and runs a Pallas kernel on
its own JAX, as deployed (root, every jail layer).

Before, each runtime's job environment was checked against the server's own JAX pin, so every run on
an older runtime ended "internal error: the sandbox for jax 0.11.2 could not start" while the tests of
runtimes passed on the local backend.
"""

from __future__ import annotations

import pytest

from sandbox.backends import capability_report, default_backend_name
from sandbox.host.runtimes import discover
from sandbox.jobs.build import make_job
from sandbox.protocol import RunStatus
from tests.backends import hardened_suite_backend
from tests.sandbox.conftest import run_job_on

pytestmark = [
    pytest.mark.slow,
    pytest.mark.runtimes,
    pytest.mark.skipif(
        default_backend_name() != "hardened",
        reason=f"the hardened backend cannot run here (needs root and scripts/install-job-runtime): "
        f"{capability_report()}",
    ),
]
RUNTIMES = discover()
KERNEL = """
import jax
import numpy as np
from jax.experimental import pallas as pl

def make_inputs(seed):
    return (np.arange(8 * 128, dtype=np.float32).reshape(8, 128),)

def reference(x):
    return x * 2

def double_kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...] * 2

def kernel(x):
    return pl.pallas_call(double_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)
"""


@pytest.fixture(scope="module")
def backend():
    return hardened_suite_backend()  # a warm pool per runtime, started when its first job comes


def test_more_than_one_runtime_is_installed():
    assert len(RUNTIMES.names) >= 2, RUNTIMES.names


@pytest.mark.parametrize("name", RUNTIMES.names)
def test_every_runtime_runs_a_pallas_kernel_in_the_jail_on_its_own_jax(backend, name):
    job = make_job(KERNEL, chip="v5e", runtime=name, trace=False)
    result = run_job_on(backend, job)
    assert result.status is RunStatus.PASSED, (result.status, result.summary)
    assert result.versions is not None and result.versions.jax == name
