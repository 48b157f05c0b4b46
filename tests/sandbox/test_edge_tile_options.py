"""The interpret options that catch (or allow) reads past an array's edge: `out_of_bounds_reads` and
`buffer_bounds`, from the job to JAX's `InterpretParams`, on one kernel whose last chunk reads past a
30-row input (rows 30 and 31 are masked away, so the answer does not depend on what they hold)."""

from __future__ import annotations

import pytest

from sandbox.jobs.build import make_job
from sandbox.protocol import InterpretOptions, RunStatus
from tests.sandbox.conftest import line_of, run_jobs

pytestmark = pytest.mark.slow

SOURCE = """
import jax, jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

def make_inputs(seed):
    return (jax.random.normal(jax.random.key(seed), (30, 128), jnp.float32),)

def reference(x):
    return jnp.pad(x, ((0, 2), (0, 0)))

def pad_kernel(x_hbm, o_ref, buf, sem):
    @pl.loop(0, 4)
    def _(chunk):
        pltpu.async_copy(x_hbm.at[pl.ds(8 * chunk, 8)], buf, sem).wait()
        rows = 8 * chunk + jax.lax.broadcasted_iota(jnp.int32, (8, 128), 0)
        o_ref[pl.ds(8 * chunk, 8), :] = jnp.where(rows < 30, buf[...], 0.0)

def kernel(x):
    return pl.pallas_call(pad_kernel, out_shape=jax.ShapeDtypeStruct((32, 128), x.dtype),
        in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
        scratch_shapes=[pltpu.VMEM((8, 128), x.dtype), pltpu.SemaphoreType.DMA])(x)
"""

OPTIONS = {
    "default": InterpretOptions(),
    "read the fill": InterpretOptions(out_of_bounds_reads="uninitialized"),
    "padded bounds": InterpretOptions(buffer_bounds="padded"),
}


@pytest.fixture(scope="module")
def results():
    jobs = [make_job(SOURCE, options=o, timing_budget_seconds=0.05, trace=False) for o in OPTIONS.values()]
    return dict(zip(OPTIONS, run_jobs(jobs), strict=True))


def test_by_default_a_read_past_the_edge_is_an_error_on_its_line(results):
    result = results["default"]
    assert result.status is RunStatus.ERROR
    assert (
        "a DMA reads `x_hbm` (input 1, f32[30, 128]) at rows 24:32, past the array's 30 rows"
        in result.summary
    )
    assert result.error is not None and result.error.line == line_of(SOURCE, "pltpu.async_copy(")


@pytest.mark.parametrize("name", ["read the fill", "padded bounds"])
def test_an_option_lets_the_masked_edge_read_run(results, name):
    assert results[name].status is RunStatus.PASSED, results[name].summary
    assert results[name].options == OPTIONS[name]
