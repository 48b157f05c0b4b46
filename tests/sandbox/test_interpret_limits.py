"""What the catalog READMEs say does not work in interpret mode still fails, with the quoted error.

A child process tries each form on jax 0.12.0.1; the test compares its first error line with the
text the entry's README quotes. When JAX starts supporting a form, this test says which README to
update.
"""

import json
import subprocess
import sys

import pytest

from sandbox.catalog.entries import DEFAULT_ROOT

pytestmark = pytest.mark.slow

ATTEMPTS = """
import functools, json
import jax, jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import tpu_sc as plsc

pltpu.set_tpu_interpret_mode(pltpu.InterpretParams())
x = jnp.zeros((8, 128), jnp.float32)

def tc_body(x_hbm, o_hbm):
    pltpu.sync_copy(x_hbm, o_hbm)

def sc_body(x_hbm, o_hbm):
    pass

def mpmd(order):
    tc = pltpu.TensorCoreMesh(axis_name="core", num_cores=1)
    sc = plsc.ScalarSubcoreMesh(axis_name="sc", num_cores=1)
    bodies, meshes = ([tc_body, sc_body], [tc, sc]) if order == "tc_sc" else ([sc_body, tc_body], [sc, tc])
    return pl.kernel(body=bodies, mesh=meshes, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)

def vector_mesh(subcores):
    return plsc.VectorSubcoreMesh(core_axis_name="core", subcore_axis_name="subcore", num_cores=1,
                                  num_subcores=subcores)

def indexed_gather():
    ids = jnp.arange(8, dtype=jnp.int32).reshape(1, 8)
    def body(t_hbm, i_hbm, o_hbm, i_vmem, o_vmem):
        pltpu.sync_copy(i_hbm, i_vmem)
        pltpu.sync_copy(t_hbm.at[i_vmem.at[0]], o_vmem)
        pltpu.sync_copy(o_vmem, o_hbm)
    return pl.kernel(body, out_type=jax.ShapeDtypeStruct((8, 128), x.dtype), mesh=vector_mesh(1),
                     scratch_types=[pltpu.VMEM((1, 8), jnp.int32), pltpu.VMEM((8, 128), x.dtype)])(x, ids)

def subcore_barrier():
    def body(x_hbm, o_hbm):
        plsc.subcore_barrier()
    return pl.kernel(body, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype), mesh=vector_mesh(2))(x)

errors = {}
device = jax.sharding.AbstractDevice("TPU v5p", 1, "tpu")
with jax.sharding.use_abstract_mesh(jax.sharding.AbstractMesh((), (), abstract_device=device)):
    for name, attempt in [("mpmd_tc_sc", lambda: mpmd("tc_sc")), ("mpmd_sc_tc", lambda: mpmd("sc_tc")),
                          ("indexed_gather", indexed_gather), ("subcore_barrier", subcore_barrier)]:
        try:
            jax.block_until_ready(jax.jit(attempt)())
            errors[name] = None
        except Exception as exc:
            errors[name] = f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
print(json.dumps(errors))
"""

QUOTED = {
    "mpmd_tc_sc": (
        "sc_all_gather_overlap",
        "ValueError: Mesh self=TensorCoreMesh(axis_name='core', num_cores=1) is not compatible with "
        "other_mesh=ScalarSubcoreMesh(axis_name='sc', num_cores=1).",
    ),
    "mpmd_sc_tc": (
        "sc_all_gather_overlap",
        "ValueError: Multiple meshes with different default memory spaces are not supported.",
    ),
    "indexed_gather": (
        "sparsecore_gather",
        "ValueError: Triggering __jax_array__() during abstractification is no longer supported. To avoid "
        "this error, either explicitly convert your object using jax.numpy.array(), or register your object "
        "as a pytree.",
    ),
    "subcore_barrier": (
        "sparsecore_gather",
        "NotImplementedError: MLIR translation rule for primitive 'barrier' not found for platform cpu",
    ),
}


@pytest.fixture(scope="module")
def errors() -> dict[str, str | None]:
    done = subprocess.run(
        [sys.executable, "-c", ATTEMPTS], capture_output=True, text=True, timeout=180, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("attempt", sorted(QUOTED))
def test_readme_quotes_the_error_jax_gives(attempt: str, errors: dict[str, str | None]):
    slug, quoted = QUOTED[attempt]
    assert errors[attempt] == quoted
    readme = (DEFAULT_ROOT / slug / "README.md").read_text()
    assert f"`{quoted}`" in readme, f"{slug}/README.md no longer quotes {attempt}'s error"
