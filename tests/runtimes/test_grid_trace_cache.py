"""JAX 0.11.2 reuses a `pallas_call` kernel body traced for another grid (why `tiled_matmul_pallas_call`'s
one-block case is a mismatch there, `kernels_catalog/runtimes.toml`).

One scratch file calls the same kernel body with a grid of 2, then of 1; the body stores
`pl.num_programs(0)` at its last step only. On jax 0.11.2 the second call runs the body traced for
the first grid (`num_programs` is folded in as 2, and the grid is not in JAX's trace-cache key
there), so its last step never stores: NaN. Other runtimes give 2 and 1. If a runtime upgrade fixes
or changes this, this test says so, and the record and the entry's README must change with it.
"""

from __future__ import annotations

import pytest

from sandbox.host.runtimes import RuntimeSet
from sandbox.jobs.build import make_job
from sandbox.protocol import RunStatus
from tests.runtimes.conftest import run_on_runtimes

pytestmark = [pytest.mark.runtimes, pytest.mark.slow]

TWO_GRIDS = """
import jax, jax.numpy as jnp
from jax.experimental import pallas as pl

def make_inputs(seed):
    return (jnp.zeros((16, 128), jnp.float32),)

def last_step_says_its_grid(x_ref, o_ref):
    @pl.when(pl.program_id(0) == pl.num_programs(0) - 1)
    def _():
        o_ref[...] = jnp.full_like(o_ref, pl.num_programs(0))

def on_grid(x, n):
    spec = pl.BlockSpec((8, 128), lambda i: (0, 0))
    out = jax.ShapeDtypeStruct((8, 128), jnp.float32)
    return pl.pallas_call(last_step_says_its_grid, grid=(n,), in_specs=[spec], out_specs=spec, out_shape=out)(x)

def kernel(x):
    return on_grid(x, 2), on_grid(x, 1)

def reference(x):
    return jnp.full((8, 128), 2.0), jnp.full((8, 128), 1.0)
"""
BROKEN = "0.11.2"


def test_only_jax_0_11_2_reuses_a_body_traced_for_another_grid(runtimes: RuntimeSet) -> None:
    names = runtimes.names
    jobs = [make_job(TWO_GRIDS, timing_budget_seconds=0.0, trace=False, runtime=name) for name in names]
    results = dict(zip(names, run_on_runtimes(runtimes, jobs), strict=True))
    for name, result in results.items():
        if name != BROKEN:
            assert result.status is RunStatus.PASSED, (name, result.summary)
            continue
        assert result.status is RunStatus.MISMATCH, result.summary
        first, second = result.cases[0].outputs
        assert first.passed and not second.passed and second.mismatch_count == 8 * 128, result.summary
        assert "NaN" in result.summary
