"""End to end: an output too large to send whole is still checked over every element (issue 41).

A (2, 1114112) float32 output is 8.9 MB, past the 8 MiB a case may send, so both jobs send every
2nd row and the table of per-group sums (`sandbox.harness.sampled`). The tester's kernel writes row
0 right and 12345.0 on row 1: it passed as "max abs error 0". Both jobs run for real (the session's
backend), the checker judges them as the server does.
"""

from __future__ import annotations

import pytest

from sandbox.jobs.build import make_job
from sandbox.protocol import RunStatus
from tests.sandbox.conftest import run_jobs

SOURCE = """
import numpy as np
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

N = 16384 * 68  # (2, N) float32: 8.9 MB of output

def make_inputs(seed):
    return (np.random.default_rng(seed).standard_normal((2, N)).astype(np.float32),)

def reference(x):
    return x * 2

def _body(x_ref, o_ref):
    o_ref[0:1, :] = x_ref[0:1, :] * 2
    o_ref[1:2, :] = ROW_ONE

def kernel(x):
    spec = pl.BlockSpec((2, 16384), lambda j: (0, j))
    return pl.pallas_call(_body, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), grid=(N // 16384,),
                          in_specs=[spec], out_specs=spec)(x)
"""
WRONG = SOURCE.replace("ROW_ONE", "jnp.full((1, 16384), 12345.0, jnp.float32)")
RIGHT = SOURCE.replace("ROW_ONE", "x_ref[1:2, :] * 2")


@pytest.mark.slow
def test_a_kernel_wrong_on_the_rows_not_sent_fails_and_a_right_one_passes():
    wrong, right = run_jobs([make_job(s, timing_budget_seconds=0.0, trace=False) for s in (WRONG, RIGHT)])
    assert wrong.status is RunStatus.MISMATCH, wrong.summary
    assert "of row 1 of out: their sum differs from the reference's by" in wrong.summary, wrong.summary
    assert "beyond what the tolerance allows" in wrong.summary
    (output,) = wrong.cases[0].outputs
    assert output.name == "out[::2]" and not output.passed
    assert right.status is RunStatus.PASSED, right.summary
    assert "every 2nd row compared element by element, all 2,228,224 elements by the sums" in right.summary
