"""What a scratch file declares is honoured end to end: DEVICES, TOLERANCE, and a reference that
cannot be jitted is still timed (eagerly) rather than turning a pass into an error."""

from __future__ import annotations

import pytest

from sandbox.jobs.build import make_job
from sandbox.protocol import RunStatus, Tolerance
from tests.sandbox.conftest import run_job

pytestmark = pytest.mark.slow

SOURCE = """
import jax, jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.sharding import PartitionSpec as P

DEVICES = 4
# The kernel computes in bfloat16; the reference in float32.
TOLERANCE = {"float32": {"rtol": 2e-2, "atol": 2e-2}}

def make_inputs(seed):
    return (jax.random.normal(jax.random.key(seed), (4 * 8, 128)),)

def reference(x):
    assert jax.device_count() == DEVICES
    if float(jnp.abs(x).max()) > 0:  # Python control flow on a value: not jittable
        return x * 3
    return x

def triple_kernel(x_ref, o_ref):
    o_ref[...] = (x_ref[...].astype(jnp.bfloat16) * 3).astype(o_ref.dtype)

def shard(x):
    return pl.pallas_call(triple_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)

def kernel(x):
    return jax.shard_map(shard, in_specs=P("x"), out_specs=P("x"), check_vma=False)(x)
"""


def test_a_scratch_file_gets_its_devices_its_tolerance_and_an_eagerly_timed_reference():
    job = make_job(SOURCE, timing_budget_seconds=0.05, trace=False)
    assert job.devices == 4
    result = run_job(job)
    assert result.status == RunStatus.PASSED, result.summary
    (output,) = result.cases[0].outputs
    assert output.tolerance == Tolerance(rtol=2e-2, atol=2e-2)
    assert output.max_abs_error and output.max_abs_error > 1e-4  # would fail the float32 default
    assert result.timing is not None and result.timing.reference is not None
    note = "The reference cannot be jit-compiled (ConcretizationTypeError), so it was timed without jax.jit."
    assert note in result.timing.note


# Code at the top of a file may ask for the chip, as it can on a TPU: every call into user code,
# the import too, runs in the chip's context (the reference's job imported it there, the kernel's
# job did not, and failed with "Unsupported TPU device kind: cpu").
CHIP_AT_THE_TOP = """
import jax, jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

ROWS = 8 if pltpu.get_tpu_info().vmem_capacity_bytes > 0 else 0

def make_inputs(seed):
    return (jnp.arange(ROWS * 128, dtype=jnp.float32).reshape(ROWS, 128),)

def reference(x):
    return x * 2

def double_kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...] * 2

def kernel(x):
    return pl.pallas_call(double_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)
"""


def test_a_scratch_file_may_ask_for_the_chip_at_its_top():
    result = run_job(make_job(CHIP_AT_THE_TOP, chip="v5e", mode="interpret", timing_budget_seconds=0.05))
    assert result.status == RunStatus.PASSED, result.summary
