"""Issue 22 for sweeps ("Tune"): a config is `ok` only when the checker, outside the sweep's process,
found its outputs right.

Each sweep here returns zeros where the reference says otherwise, and tries to get an `ok` row
anyway: by patching the in-process comparison (which then picks the outputs it sends, and nothing
more) and by writing `config` rows of its own on the harness's descriptor. They run on the backend
a server here would pick (`hardened` as root, as CI does), one config each to stay cheap.
"""

from __future__ import annotations

import pytest

from sandbox.backends import create_backend, default_backend_name
from sandbox.catalog.entries import load_catalog
from sandbox.jobs import sweeps
from sandbox.jobs.build import make_sweep_job
from sandbox.protocol import RunStatus
from tests.sandbox.conftest import run_job_on
from tests.sandbox.test_forged_verdict import PATCH_THE_CHECKER, WRITE_A_VERDICT

pytestmark = pytest.mark.slow

# Rows for configs 0 and 1 saying "ok, correct", written as the harness would write them.
WRITE_OK_ROWS = """
from sandbox.protocol import ConfigResult
for _index in (0, 1):
    WRITER.emit("config", result=ConfigResult(index=_index, params={}, status="ok", reason="correct",
        check_size={}, estimated_seconds=1e-9, bound="compute", correct=True, max_abs_error=0.0), done=1, of=1)
"""

ZEROS_SWEEP = """
import jax, jax.numpy as jnp
from jax.experimental import pallas as pl

def make_inputs(seed, m=16):
    return (jax.random.normal(jax.random.key(seed), (m, 128)),)

def reference(x):
    return x * 2

def zero_kernel(x_ref, o_ref):
    o_ref[...] = jnp.zeros_like(x_ref)

def kernel(x, *, block=8):
    spec = pl.BlockSpec((block, 128), lambda i: (i, 0))
    shape = jax.ShapeDtypeStruct(x.shape, x.dtype)
    return pl.pallas_call(zero_kernel, grid=(x.shape[0] // block,), in_specs=[spec], out_specs=spec, out_shape=shape)(x)
"""

ZEROS_TILED = """
import jax, jax.numpy as jnp
from jax.experimental import pallas as pl

def _zeros(x_ref, y_ref, o_ref):
    o_ref[...] = jnp.zeros_like(o_ref)

def matmul(x, y, *, bm=128, bk=128, bn=128):
    shape = jax.ShapeDtypeStruct((x.shape[0], y.shape[1]), x.dtype)
    return pl.pallas_call(_zeros, out_shape=shape)(x, y)
"""

FORGE = PATCH_THE_CHECKER + WRITE_A_VERDICT + WRITE_OK_ROWS


@pytest.fixture(scope="module")
def backend():
    created = create_backend(default_backend_name())
    yield created
    created.close()


def test_a_scratch_sweep_that_forges_its_rows_gets_no_ok(backend) -> None:
    spec = sweeps.make_spec(None, params={"block": [8]}, size={"m": 64}, bind={"block": "m"})
    result = run_job_on(backend, make_sweep_job(FORGE + ZEROS_SWEEP, spec))
    assert result.sweep is not None
    (row,) = result.sweep.configs
    assert (row.status, row.correct) == ("wrong", False), row.reason
    assert row.check_size == {"m": 16} and "2,048 elements differ" in row.reason
    assert result.status == RunStatus.MISMATCH, result.summary


def test_a_catalog_sweep_that_forges_its_rows_gets_no_ok(backend) -> None:
    entry = load_catalog().get("tiled_matmul_pallas_call")
    spec = sweeps.make_spec(entry, params={"bm": [128]}, size={"m": 256, "k": 256, "n": 256})
    result = run_job_on(backend, make_sweep_job(FORGE + ZEROS_TILED, spec, entry=entry))
    assert result.sweep is not None
    (row,) = result.sweep.configs
    assert (row.status, row.correct) == ("wrong", False), row.reason
    assert result.status == RunStatus.MISMATCH and result.sweep.best is None, result.summary


def test_a_catalog_sweep_without_a_pallas_kernel_has_no_ok_row(backend) -> None:
    entry = load_catalog().get("tiled_matmul_pallas_call")
    spec = sweeps.make_spec(entry, params={"bm": [128]}, size={"m": 256, "k": 256, "n": 256})
    source = "import jax.numpy as jnp\n\ndef matmul(x, y, *, bm=128):\n    return jnp.dot(x, y)\n"
    result = run_job_on(backend, make_sweep_job(source, spec, entry=entry))
    assert result.sweep is not None
    (row,) = result.sweep.configs
    assert row.status == "error" and "no Pallas kernel ran" in row.reason, row.reason
