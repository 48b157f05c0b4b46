"""The harness's `sparsecore_axis_index` fix: without it jax 0.12.0.1 gives every SparseCore index 0.

Both halves run real child processes: the harness (which applies the fix) gets the right answer, and
a bare interpreter (no fix) shows the bug, so a JAX that fixes or changes it makes this test say so.
"""

import json
import subprocess
import sys

import pytest

from sandbox.harness.jaxapi.interpret_fixes import SPARSECORE_AXIS_INDEX
from sandbox.jobs.build import make_job
from sandbox.protocol import RunStatus
from tests.backends import suite_backend
from tests.sandbox.conftest import run_job_on

pytestmark = pytest.mark.slow

# Each SparseCore copies its own row: out[c] = x[c] + c, which needs lax.axis_index("core") == c.
KERNEL = """
import jax, jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import tpu_sc as plsc

def per_core_kernel(x_hbm, o_hbm, row_smem, sem):
    core = jax.lax.axis_index("core")
    pltpu.async_copy(x_hbm.at[core], row_smem, sem).wait()
    row_smem[0] = row_smem[0] + core
    pltpu.async_copy(row_smem, o_hbm.at[core], sem).wait()

def make_inputs(seed):
    return (jnp.arange(2 * 8, dtype=jnp.int32).reshape(2, 8) * 10 + seed,)

def reference(x):
    return x.at[:, 0].add(jnp.arange(2, dtype=jnp.int32))

def kernel(x):
    return pl.kernel(per_core_kernel, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
                     mesh=plsc.ScalarSubcoreMesh(axis_name="core", num_cores=2),
                     scratch_types=[pltpu.SMEM((8,), jnp.int32), pltpu.SemaphoreType.DMA])(x)
"""

BARE = (
    KERNEL
    + """
import json
pltpu.set_tpu_interpret_mode(pltpu.InterpretParams(uninitialized_memory="zero"))
device = jax.sharding.AbstractDevice("TPU7x", 1, "tpu")
with jax.sharding.use_abstract_mesh(jax.sharding.AbstractMesh((), (), abstract_device=device)):
    (x,) = make_inputs(0)
    print(json.dumps({"got": jax.jit(kernel)(x).tolist(), "want": reference(x).tolist()}))
"""
)


def test_harness_gives_each_sparsecore_its_own_index():
    job = make_job(KERNEL, chip="tpu7x", timing_budget_seconds=0.1)
    result = run_job_on(suite_backend(), job)
    assert result.status == RunStatus.PASSED, result.summary
    assert result.versions is not None and SPARSECORE_AXIS_INDEX in result.versions.interpret_fixes


def test_without_the_fix_every_sparsecore_computes_core_zeros_row():
    done = subprocess.run(
        [sys.executable, "-c", BARE], capture_output=True, text=True, timeout=120, check=True
    )
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["got"][0] == out["want"][0]
    # Core 1 ran with index 0 too: it redid row 0 and row 1 kept its (zero) fill.
    assert out["got"][1] == [0] * 8 != out["want"][1]
